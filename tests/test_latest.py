"""The latest-result slot a command's second ask reads (`opportunity_assets.latest`): one night's value is never given
for another night's key, whichever threads ask."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl
import pytest

from opportunity_assets.latest import Latest, identical_frames


@pytest.fixture
def switching_often() -> Iterator[None]:
    """Threads switched every microsecond, so a read between two steps of another thread's replace is likely."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_a_value_is_given_back_for_its_own_key_only() -> None:
    latest: Latest[str] = Latest()
    assert latest.get(("2015-06-30",)) is None
    assert latest.put(("2015-06-30",), "June") == "June"
    assert latest.get(("2015-06-30",)) == "June"
    assert latest.get(("2015-07-31",)) is None
    assert latest.get(None) is None
    latest.put(None, "unkeyed")  # what it depends on is unknown: nothing kept, and the slot emptied
    assert latest.get(("2015-06-30",)) is None


def test_frames_in_a_key_are_the_very_frames() -> None:
    frame = pl.DataFrame({"sales": [1.0]})
    latest: Latest[str] = Latest(identical_frames)
    latest.put((frame, 1), "scanned")
    assert latest.get((frame, 1)) == "scanned"
    assert latest.get((frame.clone(), 1)) is None  # an equal frame is another read
    assert latest.get((frame,)) is None  # a key of another length
    latest.put((None, 1), "no frame")
    assert latest.get((frame, 1)) is None and latest.get((None, 1)) == "no frame"  # a frame where none was kept


@dataclass(frozen=True)
class _Night:
    """A key part compared by Python code (as a pack is), so a thread can be switched out within the comparison."""

    name: str


def test_threads_asking_for_different_nights_never_take_each_others_values(switching_often: None) -> None:
    """A slot read twice (its key compared, then its value taken) gave another thread's value 1 to 38 times in
    300,000 asks here (three runs); read once under the lock, never."""
    latest: Latest[str] = Latest()
    wrong: list[tuple[str, str]] = []

    def night(name: str) -> None:
        for _ in range(50_000):
            latest.put((_Night(name),), name)
            found = latest.get((_Night(name),))
            if found is not None and found != name:
                wrong.append((name, found))

    threads = [threading.Thread(target=night, args=(f"night-{k}",)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
