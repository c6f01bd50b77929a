"""Per-candidate work of a night: a bounded thread pool where one candidate's failure is data, not a raise.

In a run over many partitions one exception would lose every partition (DESIGN §3); so every task's
exception becomes a `RunError` record for that candidate and the others go on.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import Generic, TypeVar

from opportunity_assets.records import RunError

In = TypeVar("In")
Out = TypeVar("Out")


@dataclass(frozen=True)
class Outcome(Generic[Out]):
    as_of: date
    candidate_id: str
    result: Out | None
    error: RunError | None
    seconds: float


def error_record(as_of: date, candidate_id: str, node: str, exc: Exception) -> RunError:
    """The candidate's error record for an exception raised in `node`: type, message and where it was raised."""
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {frame.name}:{frame.lineno}" if frame else ""
    return RunError(as_of=as_of, candidate_id=candidate_id, node=node, error=f"{type(exc).__name__}: {exc}{where}")


def run_bounded(items: Sequence[tuple[date, str, In]], work: Callable[[In], Out], *, node: str,
                max_workers: int) -> list[Outcome[Out]]:
    """Apply `work` to each item with at most `max_workers` threads; results in input order. A raise is the
    item's `node` error record."""

    def one(item: tuple[date, str, In]) -> Outcome[Out]:
        as_of, candidate_id, payload = item
        start = time.perf_counter()
        try:
            return Outcome(as_of, candidate_id, work(payload), None, time.perf_counter() - start)
        except Exception as exc:
            return Outcome(as_of, candidate_id, None, error_record(as_of, candidate_id, node, exc),
                           time.perf_counter() - start)

    if not items:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(items)))) as pool:
        return list(pool.map(one, items))
