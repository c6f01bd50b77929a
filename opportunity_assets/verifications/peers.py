"""A column tonight's entities carry alike: one series repeated in every entity's rows (a national index in each
state's, `Candidate.shared_levels`), which an entity's own history cannot judge but its peers' same figures can.

An entity whose figure was the shared one (or a fixed multiple of it) in nearly every past period and is not in a
judged period has a feed of its own that froze, fell behind or was rescaled: its own changes (+0.9% a quarter, within
a floor of 0.5%) say nothing, the others' exact figure does. An entity whose figure is a fixed multiple of a unit
slip's size of everyone else's in every period is in other units throughout, with no break in its history to find.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from opportunity_assets.verifications.integrity_spec import IntegritySpec
from opportunity_assets.verifications.series import MIN_SAMPLE, Findings, format_number, period_span

HELD = 0.9
"""Share of its past periods whose figure must be the shared one times the entity's fixed factor for the column to
be judged against its peers: a state whose occupancy happened to equal the most common value a few times is no
copy of it."""
_SAME = 1e-6
"""Relative difference within which two figures are the same figure written twice."""


def _shared(length: int, levels: Mapping[str, float]) -> np.ndarray:
    """Per period (index 0 oldest), the value more than half tonight's entities hold alike, by `levels`' periods
    back; NaN where they do not."""
    out = np.full(length, np.nan)
    for back, value in levels.items():
        t = length - 1 - int(back)
        if 0 <= t < length:
            out[t] = value
    return out


def _moved(values: np.ndarray, t: int) -> str:
    """The figure's move into `t` as a percent, or nothing where the one before is not known."""
    if t < 1 or not (math.isfinite(values[t - 1]) and values[t - 1] != 0 and math.isfinite(values[t])):
        return "?"
    return f"{values[t] / values[t - 1] - 1:+.1%}"


def in_step(found: Findings, spec: IntegritySpec, column: str, levels: Mapping[str, float] | None) -> None:
    """A judged figure off the value tonight's entities carry alike, where the entity's figure was that value times a
    fixed factor in `HELD` of its `MIN_SAMPLE` or more past periods and that value moved in at least half of them
    (a national index, not a constant every entity keeps: a schedule of 162 games, a rate set by law); and, with no
    judged figure off, a factor a unit slip's size from 1 (`out_of_range.factor`'s square root or more either way)."""
    if not levels:
        return
    series = found.series
    raw = series.values[column]
    shared = _shared(series.length, levels)
    past = np.flatnonzero(np.isfinite(raw[: series.judged_from]) & np.isfinite(shared[: series.judged_from])
                          & (shared[: series.judged_from] != 0))
    if len(past) < MIN_SAMPLE or np.mean(np.diff(shared[past]) != 0) < 0.5:
        return
    factor = float(np.median(raw[past] / shared[past]))
    if factor <= 0:
        return
    with np.errstate(all="ignore"):
        held = np.abs(raw - factor * shared) <= _SAME * np.abs(factor * shared)
    if np.mean(held[past]) < HELD:
        return
    judged = np.arange(series.judged_from, series.length)
    judged = judged[np.isfinite(raw[judged]) & np.isfinite(shared[judged])]
    times = "" if abs(factor - 1) <= _SAME else f"{format_number(factor)} times "
    since = (f"as it was in {int(held[past].sum())} of its {len(past)} past periods with one since "
             f"{series.periods[int(past[0])]}")
    off = [int(t) for t in judged if not held[t]]
    if off:
        t = off[-1]
        others = f"; {len(off) - 1} more judged period{'s' if len(off) > 2 else ''} off" if len(off) > 1 else ""
        found.add("off_peers", spec.level_shift.effect, column, off, float(raw[t]), float(len(off)),
                  f"{column} {format_number(float(raw[t]))} in {series.periods[t]} is not {times}the "
                  f"{format_number(float(shared[t]))} most of tonight's entities carry alike, {since}: it moved "
                  f"{_moved(raw, t)} into it while theirs moved {_moved(shared, t)}{others}",
                  f"confirm {period_span([series.periods[i] for i in off])} {column} with the source")
        return
    if len(judged) and abs(math.log(factor)) >= 0.5 * math.log(spec.out_of_range.factor):
        t = int(judged[-1])
        found.add("off_peers", spec.out_of_range.effect, column, [t], float(raw[t]), factor,
                  f"{column} {format_number(float(raw[t]))} in {series.periods[t]} is {times}the "
                  f"{format_number(float(shared[t]))} most of tonight's entities carry alike, {since}: in other units "
                  "than theirs throughout (a unit slip?)",
                  f"confirm the units of {column} with the source")
