"""What a command stopped by its user says: Ctrl-C or a stop signal (SIGTERM, as `kill` and service managers send),
wherever it lands (importing, checking, reading the source, inside a Dagster step), is one line, never a traceback.
A night run again replaces its own, so the line says what to do: run the command again."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

STOPPED = ("interrupted (Ctrl-C or a stop signal) before it finished: run the same command again (a night run again "
           "replaces its own; a backfill's nights already stored are kept)")
"""The words of a stopped command, and of a Dagster step it interrupted (`night.execute_job`)."""

QUERY_INTERRUPTED = "Query interrupted"
"""DuckDB's error for a query that Ctrl-C stopped: it raises this in place of the KeyboardInterrupt."""


def stop_on_sigterm() -> None:
    """A stop signal raises KeyboardInterrupt, as Ctrl-C does (Python's default for SIGTERM ends the process at
    once, mid-write and without a word), so that both are told and end alike."""
    signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


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

