"""The process's latest result of one computation, kept by what it depends on, for a command's second ask.

`opportunity run` checks the night, then runs it: the check's source read, snapshot and scan are the night's, given
again rather than computed twice (a wide source's: seconds each). The per-candidate steps of a night run in threads
of one process, as do a code server's runs, so the key and its value are read and replaced together under a lock:
a thread never takes one night's value for another night's key, nor finds the slot emptied between two reads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import polars as pl

V = TypeVar("V")


def _equal(kept: Sequence[Any], asked: Sequence[Any]) -> bool:
    return kept == asked


class Latest(Generic[V]):
    """One slot: the latest value put and its key (a tuple), given back for an equal key."""

    def __init__(self, same: Callable[[Sequence[Any], Sequence[Any]], bool] = _equal) -> None:
        self._same = same
        """Whether a kept key is the one asked for (default: equal; a key holding frames compares them by
        identity, which `==` on a frame does not answer)."""
        self._slot: tuple[Sequence[Any], V] | None = None
        self._lock = threading.Lock()

    def get(self, key: Sequence[Any] | None) -> V | None:
        """The value kept under a key the same as `key`, or None (none kept, another key, or no `key`)."""
        if key is None:
            return None
        with self._lock:
            slot = self._slot
        if slot is None or len(slot[0]) != len(key) or not self._same(slot[0], key):
            return None
        return slot[1]

    def put(self, key: Sequence[Any] | None, value: V) -> V:
        """Keep `value` under `key`, replacing the latest; a None key (what it depends on unknown) keeps nothing
        and empties the slot. Gives `value` back."""
        with self._lock:
            self._slot = None if key is None else (key, value)
        return value

    def clear(self) -> None:
        """Forget the latest value (a test that reads anew)."""
        with self._lock:
            self._slot = None


def identical_frames(kept: Sequence[Any], asked: Sequence[Any]) -> bool:
    """Keys the same item by item, a frame by identity (the very frame, held by the key so no other frame takes its
    id) and anything else by equality."""
    return all(a is b or (not isinstance(a, pl.DataFrame) and not isinstance(b, pl.DataFrame) and a == b)
               for a, b in zip(kept, asked, strict=True))

