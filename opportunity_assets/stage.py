"""What the two per-candidate assets share: their config, reading their inputs from the store, and
per-partition metadata. The assets stay thin; the work is in each stage's `logic.py`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, TypeVar

import dagster as dg
from pydantic import Field

from opportunity_assets.fanout import Outcome
from opportunity_assets.partitions import candidate_key, split_candidate_key
from opportunity_assets.records import Analysis, Candidate, RunError
from resources.store import ResultStore

Out = TypeVar("Out")


class PerCandidateConfig(dg.Config):
    max_workers: int = Field(default=8, ge=1, le=64,
                             description="Threads per run over a night's candidates (model calls wait in them).")


def load_night_inputs(store: ResultStore, domain: str, keys: Sequence[str], *, node: str,
                      needs_analysis: bool = False) -> tuple[list[tuple[Candidate, Analysis | None]], list[RunError]]:
    """The scanned candidate (and its analysis) for each partition key; a key without them is an error record,
    except a candidate whose analysis already failed (its `analyze` error stands for it)."""
    by_night: dict[date, list[str]] = defaultdict(list)
    for key in keys:
        as_of, candidate_id = split_candidate_key(key)
        by_night[as_of].append(candidate_id)
    found: list[tuple[Candidate, Analysis | None]] = []
    missing: list[RunError] = []
    with store.session():
        nights = {as_of: (store.candidates(domain, as_of, went_on_only=True),
                          store.analyses(domain, as_of) if needs_analysis else [],
                          store.errors(domain, as_of)) for as_of in by_night}
    for as_of, ids in sorted(by_night.items()):
        stored_candidates, stored_analyses, stored_errors = nights[as_of]
        scanned = {c.id: c for c in stored_candidates}
        analyzed = {a.candidate_id: a for a in stored_analyses}
        failed_before = {e.candidate_id for e in stored_errors if e.node == "analyze"}
        for candidate_id in ids:
            if candidate_id not in scanned:
                missing.append(RunError(as_of=as_of, candidate_id=candidate_id, node=node,
                                        error=f"no scanned candidate going on for {as_of}|{candidate_id}: "
                                              "re-run candidates for that night"))
            elif needs_analysis and candidate_id in failed_before:
                continue  # its analysis failed and says so in its own error record; nothing to verify
            elif needs_analysis and candidate_id not in analyzed:
                missing.append(RunError(as_of=as_of, candidate_id=candidate_id, node=node,
                                        error="no analysis to verify (the analysis failed or has not run)"))
            else:
                found.append((scanned[candidate_id], analyzed.get(candidate_id)))
    return found, missing


def record_outcomes(context: dg.AssetExecutionContext, outcomes: Sequence[Outcome[Out]],
                    missing: Sequence[RunError], describe: Callable[[Out], dict[str, Any]]) -> None:
    """Per-partition metadata: what each candidate got, and how long it took."""
    for o in outcomes:
        metadata: dict[str, Any] = {"seconds": round(o.seconds, 4)}
        metadata.update(describe(o.result) if o.result is not None else {"error": o.error.error if o.error else ""})
        context.add_asset_metadata(metadata, partition_key=candidate_key(o.as_of, o.candidate_id))
    for e in missing:
        context.add_asset_metadata({"error": e.error}, partition_key=candidate_key(e.as_of, e.candidate_id))
