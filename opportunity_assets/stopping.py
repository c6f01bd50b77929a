"""What a command stopped by its user says: Ctrl-C or a stop signal (SIGTERM, as `kill` and service managers send),
wherever it lands (importing, checking, reading the source, inside a Dagster step), is one line, never a traceback.
A night run again replaces its own, so the line says what to do: run the command again."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sys import UnraisableHookArgs

STOPPED = ("interrupted (Ctrl-C or a stop signal) before it finished: run the same command again (a night run again "
           "replaces its own; a backfill's nights already stored are kept)")
"""The words of a stopped command, and of a Dagster step it interrupted (`night.execute_job`)."""

QUERY_INTERRUPTED = "Query interrupted"
"""DuckDB's error for a query that Ctrl-C stopped: it raises this in place of the KeyboardInterrupt."""


_stops: list[int] = []
"""The signals `_interrupt` took (`stop_arrived`)."""


def stop_on_sigterm() -> None:
    """A stop signal raises KeyboardInterrupt, as Ctrl-C does (Python's default for SIGTERM ends the process at
    once, mid-write and without a word), so that both are told and end alike; and both are remembered
    (`stop_arrived`)."""
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    sys.unraisablehook = _stop_kept_quiet


def _stop_kept_quiet(unraisable: UnraisableHookArgs) -> None:
    """Python prints an exception raised where none can be (a callback, a finalizer) as "Exception ignored in" and its
    traceback, and goes on: a stop landing in importlib's module-lock callback did so, and the command ran on to its
    end. `_interrupt` has remembered it (`stop_arrived`, which the command reads once imported); it is not printed."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _stops.append(signum)
    raise KeyboardInterrupt


def stop_arrived() -> bool:
    """Whether Ctrl-C or a stop signal reached `_interrupt`. Its KeyboardInterrupt may come out as another error:
    CI's run of 248022b saw pydantic-core, building a validator while the command imported, raise it as a
    `SchemaError` ("KeyboardInterrupt" in its text), and the command printed that traceback."""
    return bool(_stops)


def is_interruption(exc: BaseException) -> bool:
    """Whether `exc` is a user's stop: Ctrl-C or a stop signal, a DuckDB query they interrupted, or Dagster's
    interruption raised outside a step (named, not imported: this module is imported before Dagster is)."""
    return isinstance(exc, KeyboardInterrupt) or names_an_interruption(type(exc).__name__, str(exc))


def names_an_interruption(cls_name: str | None, message: str) -> bool:
    """Whether an error, by its class's name and message (a live one, or one Dagster recorded for a step or a run),
    is a user's stop: KeyboardInterrupt, Dagster's interruption, or DuckDB's query interrupted."""
    return cls_name in ("KeyboardInterrupt", "DagsterExecutionInterruptedError") or (
        cls_name == "RuntimeError" and message.strip().endswith(QUERY_INTERRUPTED))


@contextlib.contextmanager
def stops_witnessed() -> Iterator[None]:
    """Raise KeyboardInterrupt on leaving if Ctrl-C or a stop signal arrived inside, whatever handler took it. Dagster
    takes SIGINT while it runs a job and, a signal landing after its last checkpoint, forgets it as the run ends
    (`capture_interrupts` clears its flag): a backfill stopped 4 s in went on to its end and exited 0. The kernel's
    wakeup file descriptor (`signal.set_wakeup_fd`) sees every signal, below any handler. Main thread only (the only
    one a signal reaches); elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    try:
        before = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except ValueError:  # (no wakeup fd where signals cannot be set)
        os.close(read)
        os.close(write)
        yield
        return
    try:
        yield
    finally:
        signal.set_wakeup_fd(before)
        try:
            seen = os.read(read, 1024)
        except BlockingIOError:
            seen = b""
        os.close(read)
        os.close(write)
    if {signal.SIGINT, signal.SIGTERM} & set(seen):
        raise KeyboardInterrupt

