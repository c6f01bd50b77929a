"""A column tonight's entities carry alike: one series repeated in every entity's rows (a national index in each
state's, `Candidate.shared_levels`), which an entity's own history cannot judge but its peers' same figures can.

An entity whose figure was the shared one (or a fixed multiple of it) in nearly every past period and is not in a
judged period has a feed of its own that froze, fell behind or was rescaled: its own changes (+0.9% a quarter, within
a floor of 0.5%) say nothing, the others' exact figure does. An entity whose figure is a fixed multiple of a unit
slip's size of everyone else's in every period is in other units throughout, with no break in its history to find.

A column whose levels tonight's entities hold within a narrow band (a rate, a price, an income a head) judges an
entity's latest figure against them (`off_level`): far outside their band and beyond every other entity's, it is in
other units than theirs, from however long ago (×10 in every row leaves the entity's own history looking like itself).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from opportunity_assets.verifications.integrity_spec import IntegritySpec
from opportunity_assets.verifications.series import (
    MIN_SAMPLE,
    MIN_SCALE,
    Findings,
    format_number,
    period_span,
    robust,
    unit_sized,
)

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
    if len(judged) and unit_sized(math.log(factor), spec.out_of_range.factor):
        t = int(judged[-1])
        found.add("off_peers", spec.out_of_range.effect, column, [t], float(raw[t]), factor,
                  f"{column} {format_number(float(raw[t]))} in {series.periods[t]} is {times}the "
                  f"{format_number(float(shared[t]))} most of tonight's entities carry alike, {since}: in other units "
                  "than theirs throughout (a unit slip?)",
                  f"confirm the units of {column} with the source")


_MIN_LEVELS = 8
"""Fewest scanned entities with a positive latest figure for their levels to be a yardstick (`integrity.MIN_PEERS`)."""


def levels(latest: np.ndarray) -> dict[str, float]:
    """Tonight's entities' latest levels of a column (`latest`: one entity a position): the median and robust scale
    of their logs, their count, and the two largest and two smallest figures (so that an entity's own figure can be
    told beyond every other's); none with fewer than `_MIN_LEVELS` positive figures."""
    figures = np.sort(latest[np.isfinite(latest) & (latest > 0)])
    stick = robust(np.log(figures), "") if len(figures) >= _MIN_LEVELS else None
    if stick is None:
        return {}
    return {"level_median": stick.median, "level_scale": stick.scale, "level_count": float(len(figures)),
            "level_top": float(figures[-1]), "level_second": float(figures[-2]), "level_bottom": float(figures[0]),
            "level_next": float(figures[1])}


def beyond_others(own: float, above: bool, stats: Sequence[float]) -> tuple[float, float]:
    """The nearest other entity's figure (log) on the own figure's side of tonight's (`above` their median or
    below), and how far (log) the own one lies beyond it (negative: not beyond every other's); `stats` are
    tonight's two largest and two smallest figures (logs), one of which may be the entity's own."""
    top, second, bottom, following = stats
    if above:
        other = second if abs(own - top) <= _SAME else top
        return other, own - other
    other = following if abs(own - bottom) <= _SAME else bottom
    return other, other - own


def off_level(found: Findings, spec: IntegritySpec, column: str, peers: Mapping[str, float]) -> None:
    """The entity's latest figure `level_shift.threshold_mads` or more robust scales of tonight's entities' log
    levels (`levels`, the scale at least `MIN_SCALE`) from their median, and beyond every other entity's figure by a
    unit slip's size (`out_of_range.factor`'s square root, ×3.2 for the default 10): in other units than theirs (a
    rate written as a percent, a price in cents), with `out_of_range`'s effect. A column of sizes (sales, population)
    spreads its entities over orders of magnitude, so only a column they hold within a band is judged so; a move into
    it is `shifts`' to name (judged once). Trial 67: a state's income a head, or its unemployment rate, ×10 in every
    row had no break in its own history, and reached act-on. Stop 49's held-out firms: the largest firm's investment,
    10 times the typical firm's where seven of ten sit within 20% of each other, is 1.4 times the next firm's: no
    unit slip."""
    if peers.get("level_count", 0) < _MIN_LEVELS:
        return
    series = found.series
    raw = series.values[column]
    last = series.length - 1
    value = float(raw[last])
    if not (math.isfinite(value) and value > 0) or any(
            f.column == column and f.rule in ("level_shift", "spike", "out_of_range") for f in found.items):
        return
    z = (math.log(value) - peers["level_median"]) / max(peers["level_scale"], MIN_SCALE)
    other, gap = beyond_others(math.log(value), z > 0, [math.log(peers[k]) for k in (
        "level_top", "level_second", "level_bottom", "level_next")])
    if abs(z) < spec.level_shift.threshold_mads or not (gap > 0 and unit_sized(gap, spec.out_of_range.factor)):
        return
    typical = math.exp(peers["level_median"])
    side = "above" if z > 0 else "below"
    found.add("off_level", spec.out_of_range.effect, column, [last], value, abs(z),
              f"{column} {format_number(value)} in {series.periods[last]} is {abs(z):.1f} MADs {side} the levels of "
              f"tonight's {int(peers['level_count'])} entities (typically {format_number(typical)}, spread by a "
              f"factor of {math.exp(peers['level_scale']):.2f}) and {math.exp(gap):.1f} times {side} every other "
              f"entity's ({format_number(math.exp(other))}): in other units than theirs (a unit slip?)",
              f"confirm the units of {column} with the source")
