"""What stands in for a period the sensitivity check leaves out of a window: the window's other periods' average, or
the period's own season a year away, moved as the other periods moved, whichever predicted the entity's own past
better.

Leaving a month out of a window asks "what if this month had been what the others say?". The average of the other
months is what they say when the series has no season. Across a seasonal peak it is wrong by the season: a
November left out between October and a December peak, read as their average, raised the quarter by a quarter and
turned a SKIP into "without 2014-11 turns it STRONG" (trial 126, ABS departures: 189 of 262 clean STRONG nights
fragile so). The same month a year earlier, scaled by the other months' ratio to theirs, is what they say when the
season holds; on a noisy count with no season (pet licences by ZIP code) one count scaled by a ratio of other counts
moves more than an average does, and stood in everywhere it made every STRONG of the README's first pack fragile
(stop 62, reverted). So each entity's own past decides, metric by metric: the windows moved back over its history,
each of their periods left out and stood in for both ways, the stand-in with the smaller mean error wins: the mean,
not the median, because the check flips on the few periods a stand-in misses by much (one count scaled by a ratio
of counts), not on the many it nearly gets: on 25 nights of real Seattle pet licences (2017-01..2019-01, the README's
first pack), 629 STRONG entity-nights had 27 fragile with the average everywhere, 51 with the median's choice, 29
with the mean's. A past too short to tell keeps the average. Pure.
"""

from __future__ import annotations

from typing import Any

from opportunity_assets.criteria import MetricSpec

SEASONS = (4, 12)
"""Periods in a year of the grains whose periods are seasons (quarters, months); other grains keep the average."""

YEARS_TRIED = 5
"""How far back the windows are moved to compare the stand-ins: the latest five years, the entity as it is now."""


def _figures(spec: MetricSpec, raw_data: list[dict[str, Any]]) -> dict[int, float]:
    """The metric's column by periods back, where filled."""
    return {int(r["periods_ago"]): float(r[spec.value_column]) for r in raw_data
            if r.get(spec.value_column) is not None}


def _by_season(figures: dict[int, float], left_out: int, others: list[int], year: int) -> float | None:
    """The period `left_out` as its season a year earlier (else a year later) moved as `others` moved over that year
    (the ratio of their sums). None where a figure is missing or not positive: a ratio of signed sums means
    nothing."""
    for away in (year, -year):
        season = figures.get(left_out + away)
        then = [figures.get(p + away) for p in others]
        if season is None or any(t is None for t in then):
            continue
        now = [figures[p] for p in others]
        before = sum(t for t in then if t is not None)
        if season > 0 and before > 0 and all(v > 0 for v in now):
            return season * sum(now) / before
    return None


def _season_predicts_better(figures: dict[int, float], window: tuple[int, int], year: int) -> bool:
    """Whether, over the windows moved back one to `YEARS_TRIED` years' periods, the season a year away predicted
    the periods left out with a smaller mean error than the other periods' average; at least a year's worth of
    comparisons, else no."""
    lo, hi = window
    average_errors, season_errors = [], []
    for shift in range(1, YEARS_TRIED * year + 1):
        periods = range(lo + shift, hi + shift + 1)
        if any(p not in figures for p in periods):
            continue
        for left_out in periods:
            others = [p for p in periods if p != left_out]
            season = _by_season(figures, left_out, others, year)
            if season is None:
                continue
            truth = figures[left_out]
            average_errors.append(abs(sum(figures[p] for p in others) / len(others) - truth))
            season_errors.append(abs(season - truth))
    # (plain sums: a corrupt feed's 1e308 overflows to inf, and no stand-in wins, where an exact sum would raise)
    return len(season_errors) >= year and sum(season_errors) < sum(average_errors)


def seasonal_stand_ins(spec: MetricSpec, raw_data: list[dict[str, Any]], per_year: int) -> dict[str, float]:
    """The stand-in for each period of the metric's window that may be left out, by its period (as the rows carry
    it), where the entity's past says its season predicts better than the average; empty where the average stands
    in (no season at the grain, a sum or average neither, a past too short or better read by the average)."""
    lo, hi = spec.window
    if per_year not in SEASONS or spec.agg not in ("sum", "avg") or lo == hi:
        return {}
    figures = _figures(spec, raw_data)
    if not _season_predicts_better(figures, spec.window, per_year):
        return {}
    periods = {int(r["periods_ago"]): str(r["period"]) for r in raw_data if lo <= int(r["periods_ago"]) <= hi}
    window = [p for p in range(lo, hi + 1) if p in figures]
    stood = {left_out: _by_season(figures, left_out, [p for p in window if p != left_out], per_year)
             for left_out in window}
    return {periods[p]: value for p, value in stood.items() if value is not None and p in periods}
