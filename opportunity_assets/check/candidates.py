"""`opportunity check`'s problems that only the night's candidates show: a formula component (or a derived metric it
or a hard filter reads) with no value for any of them, an identity band most of them lie outside. `run` stops on them
too (the check before a night scans, and the night's scan step is given the same result).
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from opportunity_assets import expressions
from opportunity_assets.check.grains import trading_days
from opportunity_assets.criteria import CriteriaPack, HardFilter
from opportunity_assets.formatting import format_value, significant, written
from opportunity_assets.periods import rows_in_window
from opportunity_assets.records import Candidate, FilterResult
from opportunity_assets.sources.spec import Condition


def problems(pack: CriteriaPack, found: list[Candidate], held: frozenset[int] | None = None
             ) -> tuple[list[str], dict[str, Undefined]]:
    """Every problem the night's candidates show (`unknown_for_all`, `undefined_components`, `identities_off_band`,
    `ranges_in_another_unit`), and the undefined expressions among them by their problem's text (`check` asks the
    nights before whether each had a value). `held`: the periods back the night's rows are in (`unknown_for_all`)."""
    refusing = filters_refusing_all(pack, found)
    unclear_only = filters_passing_only_unclear(pack, found, skip={p.split("`")[1] for p in refusing})
    # a derived metric with no value for the few candidates such a filter leaves (UNCLEAR) is not the pack's fault
    undefined = {u.problem: u for u in ([] if unclear_only else undefined_components(pack, found))}
    return unknown_for_all(pack, found, held=held) + refusing + unclear_only + list(undefined) \
        + identities_off_band(pack, found) + ranges_in_another_unit(pack, found), undefined


FILTER_APART = 10.0
"""A hard filter's bound this many times nearer zero than every candidate's value it passes (or further from zero
than every value, for an upper bound) refuses none: a warning, the bound likely in another unit."""
RANGE_APART = 50.0
"""A formula range whose ends lie this many times further from zero than every candidate's value: another unit."""
ENOUGH = 3
"""Candidates with a value a unit judgment needs."""
TONIGHT = "every candidate's"
"""Whose values a unit judgment reads, as its message says: the night's candidates (`check` passes another wording
for a source of fewer entities, whose candidates it pools over earlier nights: `over_nights`)."""


_EVERY = ", every candidate's"


def over_nights(nights: int) -> str:
    """Whose values a unit judgment reads when they are the candidates of this night and `nights` before it."""
    return f"on this night and the {nights} before it{_EVERY}"


def unit_judgments(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> tuple[list[str], list[str]]:
    """(problems, warnings) of the unit judgments alone (filters, ranges and red flags in another unit): the night's
    warnings,
    and both for candidates pooled over nights (the night's own problems are among `problems`')."""
    return (filters_refusing_all(pack, found, whose) + ranges_in_another_unit(pack, found, whose),
            filters_in_another_unit(pack, found, whose) + filters_out_of_reach(pack, found, whose)
            + filters_beyond_a_share(pack, found, whose)
            + ranges_at_zero_end(pack, found, whose) + ranges_out_of_reach(pack, found, whose)
            + red_flags_firing_for_all(pack, found, whose) + red_flags_out_of_reach(pack, found, whose))


def _values(expression: expressions.Expression, candidates: list[Candidate]) -> list[float]:
    """The expression's finite values for these candidates (those where it has none left out), all at once: a red
    flag's condition, 1.0 where it holds (a wide night's 8,594 candidates going on each walked the flag's tree in
    Python, 0.6 s of its check)."""
    if not candidates:
        return []
    columns = {name: np.array([np.nan if (v := c.metrics.get(name)) is None else v for c in candidates], dtype=float)
               for name in expression.names}
    values, undefined = expressions.evaluate_many(expression, columns)
    return [float(v) for v in values[~undefined]]


_FINITE: list[tuple[list[Candidate], dict[str, list[float]]]] = []
"""The latest candidates' finite values by metric (`_finite_values`), with the list they were read from."""


def _finite_values(found: list[Candidate], metric: str) -> list[float]:
    """The finite values of `metric` among `found`, in order: read once per list of candidates and metric, not once
    per filter and judgment (a wide night's 10,718 candidates were walked 46 times, 0.5 s of its check)."""
    cached = _FINITE[0] if _FINITE else None
    if cached is None or cached[0] is not found:  # (a local reference: another thread's list never answers this one)
        cached = (found, {})
        _FINITE[:] = [cached]
    by_metric = cached[1]
    if metric not in by_metric:
        by_metric[metric] = [v for c in found if isinstance(v := c.metrics.get(metric), int | float)
                             and math.isfinite(v)]
    return by_metric[metric]


def _judged_filters(pack: CriteriaPack, found: list[Candidate]) -> Iterator[tuple[int, HardFilter, list[float]]]:
    """Hard filters with a positive bound and at least `ENOUGH` scanned candidates' values of their metric, none
    negative and not all zero (zeros have no scale: the counts of makers that built nothing in ten years are no
    sign that `built_10y >= 20` is on another scale): (index, filter, the values), what a unit judgment of the
    bound needs."""
    for n, f in enumerate(pack.hard_filters):
        values = _finite_values(found, f.metric)
        if len(values) >= ENOUGH and f.value > 0 and min(values) >= 0 and max(values) > 0:
            yield n, f, values


def _lying_within(n: int, f: HardFilter, values: list[float], whose: str, most: bool = False) -> str:
    """The start every filter unit judgment says: the key, the bound and the values' range (`most`: 9 in 10 of
    them, not all, that far)."""
    share = f"{MOST_FAR:.0%} or more of them " if most else ""
    return (f"key `hard_filters.{n}.value`: got {written(f.value)}; {whose} {f.metric} lies within "
            f"[{significant(min(values))}, {significant(max(values))}], {share}{FILTER_APART:g} times or more")


MOST_FAR = 0.9
"""The share of the values a share's lower bound over percents must lie `FILTER_APART` times below for a unit slip
when not every value does: real percents reach near zero (shares on free lunch from 0.19 up)."""


def _unit_slipped_filters(pack: CriteriaPack, found: list[Candidate]
                          ) -> Iterator[tuple[int, HardFilter, list[float], bool, bool, int]]:
    """Hard filters whose bound lies `FILTER_APART` times or more from every scanned candidate's value (at least
    `ENOUGH`), a share's bound over percents or a percent's over fractions of 1: (index, filter, the values, whether
    the bound is a share's, whether it passes the candidates, how many it refuses). A bound far from values of
    another kind (`days_since_data <= 62`, every market 1 day old) is a guard, not a unit slip, and is not one of
    them. A share's lower bound under `MOST_FAR` of values that are percents (some above 1) is one too, refusing
    the few near zero (trial 36: `lunch_now >= 0.3` for 30%, over shares on free lunch from 0 to 100, refused 38
    of 1,745 schools, and check said ok)."""
    for n, f, values in _judged_filters(pack, found):
        far = sum(v >= FILTER_APART * f.value for v in values)
        share_under_percents = f.value <= 1 and max(values) <= 100 and not _floor_of_counts(f, values) and (
            far == len(values) or (f.op in (">=", ">") and max(values) > 1 and far >= MOST_FAR * len(values)))
        percent_over_shares = 1 < f.value <= 100 and max(values) <= 1 \
            and not all(float(v).is_integer() for v in values) and f.value >= FILTER_APART * max(values)
        if share_under_percents or percent_over_shares:
            passes = (f.op in (">=", ">")) == share_under_percents
            refused = sum(not f.holds(v) for v in values) if passes else len(values)
            yield n, f, values, share_under_percents, passes, refused
    for n, f, values in _signed_filters(pack, found):  # a change, a growth: `mom_3m > -5` for -5% over shares
        largest = max(abs(v) for v in values)
        if 1 < abs(f.value) <= 100 and largest <= 1 and not all(float(v).is_integer() for v in values) \
                and abs(f.value) >= FILTER_APART * largest:
            yield n, f, values, False, f.value < 0 if f.op in (">=", ">") else f.value > 0, 0


def _floor_of_counts(f: HardFilter, values: list[float]) -> bool:
    """A lower bound of 0 or 1 over whole numbers (`events_today >= 1`, "at least one"): a count's floor, never a
    share's bound, which is a fraction (trial 37 was asked whether 1 stood for 100 on a day's 48 readings)."""
    return f.op in (">=", ">") and f.value in (0, 1) and all(float(v).is_integer() for v in values)


def _signed_filters(pack: CriteriaPack, found: list[Candidate]) -> Iterator[tuple[int, HardFilter, list[float]]]:
    """Hard filters `_judged_filters` leaves out as signed (a bound below zero, or values below it: a change),
    with at least `ENOUGH` scanned candidates' values of their metric, not all zero: (index, filter, values)."""
    for n, f in enumerate(pack.hard_filters):
        values = _finite_values(found, f.metric)
        if len(values) >= ENOUGH and (f.value < 0 or min(values) < 0) and any(values):
            yield n, f, values


def filters_in_another_unit(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a hard filter every scanned candidate passes by `FILTER_APART` times or more, its bound a share's
    over percents (`college >= 0.2` on a metric in percent, 7 to 48) or a percent's over fractions of 1 (`<= 40` on
    shares): it refuses none, and the bound's unit is the likely cause. A warning, not a problem: a filter that
    refuses nothing tonight spoils nothing (one that refuses every candidate so is `filters_refusing_all`'s)."""
    warnings = []
    for n, f, values, share_bound, passes_all, refused in _unit_slipped_filters(pack, found):
        if not passes_all:
            continue
        other = "a share for a percent" if share_bound else "a percent for a share"
        example = f"{significant(f.value, 4)} for {significant(f.value * 100, 4)}" if share_bound else \
            f"{significant(f.value, 4)} for {significant(f.value / 100, 4)}"
        refuses = f"only {refused} of {len(values)}" if refused else "none"
        warnings.append(
            f"{_lying_within(n, f, values, whose, most=refused > 0)} {'beyond' if share_bound else 'within'} it, so "
            f"the filter refuses {refuses}: is the bound in another unit than the metric ({other}, {example})? "
            "expected a bound in the metric's unit")
    return warnings


def filters_refusing_all(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """A hard filter that refuses every scanned candidate with a value by `FILTER_APART` times or more, its bound a
    percent's over shares (`internet_share >= 50` on fractions of 1) or a share's over percents (`<= 0.1` on a
    metric in percent, 3 to 15): no candidate could pass it, and the night would judge only those the filter cannot
    judge (UNCLEAR). A problem: unlike a filter that refuses none, it spoils the night."""
    problems = []
    for n, f, values, share_bound, passes_all, _ in _unit_slipped_filters(pack, found):
        if passes_all:
            continue
        other = f"a share for a percent, {significant(f.value, 4)} for {significant(f.value * 100, 4)}" \
            if share_bound else f"a percent for a share, {significant(f.value, 4)} for {significant(f.value / 100, 4)}"
        problems.append(
            f"{_lying_within(n, f, values, whose)} {'above' if share_bound else 'below'} it, so the filter refuses "
            f"every one: is the bound in another unit than the metric ({other})? expected a bound in the metric's unit")
    return problems


def filters_out_of_reach(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a hard filter whose bound no scanned candidate's value (at least `ENOUGH`, none negative) comes
    within `FILTER_APART` times of, on the side the filter passes, and that is no share's or percent's slip
    (`filters_refusing_all`'s problem): `rating_1y >= 80` over ratings out of 5, `<= 0.5` over counts from 12 up.
    No candidate passes tonight; most likely the bound is on another scale, but a filter for a rare event (a
    surge 10 times the usual) refuses every candidate on a quiet night by design, and an empty brief is that
    night's answer: a warning, so the night runs. A bound within 10 times of the values (sales `>= 600` on a slow
    night) is a filter doing its work, and not one of them."""
    slipped = {n for n, *_ in _unit_slipped_filters(pack, found)}
    said = slipped | {n for n, *_ in _beyond_a_share(pack, found, slipped)}
    warnings = []
    for n, f, values in _judged_filters(pack, found):
        if n not in said and ((f.op in (">=", ">") and f.value >= FILTER_APART * max(values))
                                 or (f.op in ("<=", "<") and f.value * FILTER_APART <= min(values))):
            if pack.metrics[f.metric].agg == "age_days":  # days against days: no scale to mistake, but time
                warnings.append(
                    f"{_lying_within(n, f, values, whose)} {'below' if f.op in ('>=', '>') else 'above'} it, so the "
                    "filter refuses every one: each candidate's latest value is that many days old on this night (its "
                    "latest period ended then, and a period is known `source.publication_lag_days` after it ends): "
                    "expected a bound in days that the source's freshest values meet, or a night the data reaches")
                continue
            warnings.append(
                f"{_lying_within(n, f, values, whose)} {'below' if f.op in ('>=', '>') else 'above'} it, so the filter "
                "refuses every one: is the bound on another scale than the metric (a score out of 100 for a rating "
                "out of 5, a total for an average)? expected a bound in the metric's unit, that some values reach (a "
                "filter for a rare event refuses every candidate on a night without one)")
    return warnings


def _beyond_a_share(pack: CriteriaPack, found: list[Candidate], slipped: set[int] | None = None
                    ) -> Iterator[tuple[int, HardFilter, list[float]]]:
    """Hard filters no value from 0 to 1 meets, on a metric of `unit: share` whose scanned candidates' values (at
    least `ENOUGH`) all lie from 0 to 1, and no share's or percent's slip (`slipped`, the indexes of
    `_unit_slipped_filters`, found here when not given): (index, filter, the values)."""
    if slipped is None:
        slipped = {n for n, *_ in _unit_slipped_filters(pack, found)}
    for n, f in enumerate(pack.hard_filters):
        values = _finite_values(found, f.metric)
        if n not in slipped and pack.metrics[f.metric].unit == "share" and len(values) >= ENOUGH \
                and all(0 <= v <= 1 for v in values) and not f.holds(0.0) and not f.holds(1.0):
            yield n, f, values


def filters_beyond_a_share(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a hard filter that no value from 0 to 1 meets (`>= 3`, `< -0.2`), on a metric the pack writes as a
    share (`unit: share`) whose scanned candidates' values (at least `ENOUGH`) are fractions of 1 too: it refuses
    every candidate on every night (trial 105: the share of working days in a week filtered `>= 3`, told only "0
    pass", 3 being under `FILTER_APART` times the values). A filter another unit judgment names is left to it; a
    share the data writes in percent is `shares_beyond_one`'s."""
    warnings = []
    for n, f, values in _beyond_a_share(pack, found):
        side = "beyond" if f.op in (">=", ">") else "below"
        warnings.append(
            f"key `hard_filters.{n}.value`: got {written(f.value)}; {f.metric} is written as a share "
            f"(`metrics.{f.metric}.unit: share`) and {whose} {f.metric} lies within [{significant(min(values))}, "
            f"{significant(max(values))}], so `{f.op} {written(f.value)}` never holds: the bound lies {side} what a "
            "share reaches, 0 to 1 (90% is 0.9): expected a bound from 0 to 1, or the metric's unit if it is no share")
    return warnings


def _carried(candidate: Candidate) -> bool:
    """Whether any of the candidate's metrics has a value: one with none (an entity whose rows stopped before every
    window, lately: those stopped for longer are not judged at all, `Candidate.gone`) tells nothing of a filter's
    bound, where one whose cells were quarantined in reach does (trial 55: 56 clubs gone for decades outnumbered the
    30 a filter refused, and check said ok). A row of no period is in every window's reach: its entity's metrics
    are unknown for that row (trial 74: 50 sales of 2,884 with the month written in full left 19 neighbourhoods
    UNCLEAR, and the filter was blamed on the 7 small ones left)."""
    return bool(candidate.refused) or any(v is not None for v in candidate.metrics.values()) \
        or any(_UNDATED in gap for gap in candidate.data_gaps)


def filters_passing_only_unclear(pack: CriteriaPack, found: list[Candidate], skip: set[str]) -> list[str]:
    """A hard filter that refuses every scanned candidate with a value of its metric (at least `ENOUGH`) on a night
    whose candidates going on all pass only as UNCLEAR (a filter's metric has no value for them): the night would
    judge only the candidates the filters cannot judge. `murder_growth >= 5` for 5% over shares of -1 to 3 left the
    two counties of no growth (a division by zero) and check blamed the growth's expression. `skip`: the filters'
    keys `filters_refusing_all` already names."""
    passing = [c for c in found if c.went_on or c.capped]
    if not passing or any(all(r == FilterResult.PASS for r in c.filters.values()) for c in passing):
        return []
    problems = []
    for n, f in enumerate(pack.hard_filters):
        key = f"hard_filters.{n}.value"
        others = [c for c in found if _carried(c)
                  and all(r != FilterResult.FAIL for name, r in c.filters.items() if name != f.name)]
        judged = [c for c in others if c.filters.get(f.name) != FilterResult.UNCLEAR]
        values = [v for c in judged if isinstance(v := c.metrics.get(f.metric), int | float) and math.isfinite(v)]
        # most of those the other filters pass must have its value: where most lack it (their cells quarantined,
        # grouped numbers with no `thousands_separator`), the few judged are no sign of the bound's fault
        if key in skip or len(values) < ENOUGH or 2 * len(judged) < len(others) \
                or any(c.filters.get(f.name) != FilterResult.FAIL for c in judged):
            continue
        problems.append(
            f"key `{key}`: got {written(f.value)}; it refuses every one of the {len(judged)} candidates the other "
            f"filters pass with a value of {f.metric} (within [{significant(min(values))}, "
            f"{significant(max(values))}]), and the {len(passing)} left pass only as UNCLEAR (a filter's metric with "
            f"no value), so the night would judge only those: expected a bound that some candidates meet, in the "
            f"metric's unit"
            + (" (a percent for a share?)" if f.value > 1 and float(np.median(np.abs(values))) < 1
               and not all(float(v).is_integer() for v in values) else ""))
    return problems


def ranges_in_another_unit(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """A formula component whose `range` is in another unit than its values, for every candidate going on (at
    least 3): its ends `RANGE_APART` times further from zero than every value (a percent range over a share), or
    every value beyond one end by 10 times the range's width or more (a share range over a percent). Either way
    each candidate gets the same points from the component: its weight scores nothing."""
    going = [c for c in found if c.went_on or c.capped]
    problems = []
    for n, component in enumerate(pack.formula.components):
        values = _values(component.parsed, going)
        if len(values) < ENOUGH:
            continue
        low, high = component.range
        least, greatest = min(values), max(values)
        got = f"key `formula.components.{n}.range`: got [{low:g}, {high:g}]; {whose} value lies within " \
            f"[{significant(least)}, {significant(greatest)}]"
        expected = "expected the range the values lie in, in the expression's unit"
        largest = max(abs(v) for v in values)
        end = max(abs(low), abs(high))
        if pack.share_component(component) is not None or at_zero_end(component.range, values):
            continue  # (a share's range is judged at load; a range at whose zero end the values sit, `warnings`)
        if largest > 0 and end >= RANGE_APART * largest:
            which = f" (a percent for a share: {significant(end, 4)} for {significant(end / 100, 4)})" \
                if largest <= 1 < end else ""
            problems.append(f"{got}, {RANGE_APART:g} times or more nearer zero than the range's ends, so each gets "
                            f"the same points from it: is the range in another unit than the expression{which}? "
                            f"{expected}")
            continue
        # A few outliers (a county of 2 murders, then 6: +200%) keep the rule above from firing while most values
        # sit at the range's middle: half 50 times nearer zero than its ends and 9 in 10 ten times nearer, the
        # values fractions of 1 and the ends beyond 1 (a percent's range over shares; a quiet night of small
        # changes in a range of the values' own unit is no unit slip, and is not stopped).
        typical, most = (float(np.percentile([abs(v) for v in values], q)) for q in (50, 90))
        if 0 < typical <= 1 < end and end >= RANGE_APART * typical and end >= 10 * most:
            problems.append(f"{got}, but half of them within ±{significant(typical)} and 9 in 10 within "
                            f"±{significant(most)}, {RANGE_APART:g} and 10 times or more nearer zero than the range's "
                            f"ends, so nearly all get the same points from it: is the range in another unit than the "
                            f"expression (a percent for a share: {significant(end, 4)} for "
                            f"{significant(end / 100, 4)})? {expected}")
            continue
        outside = sum(1 for v in values if not low <= v <= high)
        if end > 0 and typical >= 10 * end and 10 * outside >= 9 * len(values) and least < low and greatest > high:
            # the mirror (trial 23: a growth times 100, -33 to +152, scored over [-0.1, 0.5]): values on both sides
            # of a narrow range, each past an end, get none or all of its points
            which = f" (a share for a percent: {significant(end, 4)} for {significant(end * 100, 4)})" \
                if end <= 1 < typical <= 100 else ""
            problems.append(f"{got}, half of them beyond ±{significant(typical)}, 10 times or more further from zero "
                            f"than the range's ends, and {outside} of {len(values)} outside it, so nearly all get "
                            f"none or all of its points: is the range in another unit than the expression{which}? "
                            f"{expected}")
            continue
        width = high - low
        beyond_high, beyond_low = least - high >= 10 * width, low - greatest >= 10 * width
        if beyond_high or beyond_low:
            which = f" (a share for a percent: {significant(end, 4)} for {significant(end * 100, 4)})" \
                if 0 < end <= 1 < largest <= 100 else ""
            problems.append(f"{got}, beyond its {'high' if beyond_high else 'low'} end by 10 times its width or "
                            f"more, so each gets the same points from it: is the range in another unit than the "
                            f"expression{which}? {expected}")
    return problems


NEAR_END_APART = 5.0
"""A range whose nearer end lies this many times further from zero than every value, on their side of zero, is out
of their reach whatever its width (`[500, 1000]` over ozone of 10 to 60 parts per billion)."""


def _beyond(low: float, high: float, values: list[float]) -> str | None:
    """Where every value lies beyond a range, out of its reach (`ranges_out_of_reach`), in words: beyond one end by
    the range's width or more, or with that end `NEAR_END_APART` times or more further from zero than every value on
    their side of zero; None when within reach."""
    width, least, greatest = high - low, min(values), max(values)
    largest = max(abs(v) for v in values)
    for side, gap, end in (("below its low end", low - greatest, low), ("above its high end", least - high, high)):
        if gap > 0 and gap >= width:
            return f"{side} by its width or more"
        if gap > 0 and all(v * end >= 0 for v in values) and abs(end) >= NEAR_END_APART * largest:
            return f"{side}, which lies {NEAR_END_APART:g} times or more further from zero than every value"
    return None


WITHIN_AT_LEAST = 0.05
"""The share of the candidates going on whose values a formula range should hold (`_nearly_all_miss`)."""


def _nearly_all_miss(low: float, high: float, values: list[float]) -> str | None:
    """Where a range holds fewer than `WITHIN_AT_LEAST` of the values (at least 20 of them), none of its ends out
    of their reach, in words with the span most of them lie in (5th to 95th percentile); None otherwise. Trial 79:
    firms' output growth, mostly -0.5 to 0.5, scored over `[1, 2.5]`: 2 of 738 within it, the rest all none of its
    points, and check said ok (`_beyond` asks every value to miss)."""
    inside = sum(1 for v in values if low <= v <= high)
    if len(values) < 20 or inside >= WITHIN_AT_LEAST * len(values):
        return None
    p5, p95 = (float(q) for q in np.percentile(values, [5, 95]))
    return (f"only {inside} of the {len(values)} candidates' values lie within it, 90% of them within "
            f"[{significant(p5)}, {significant(p95)}]")


def _straddled(low: float, high: float, values: list[float]) -> str | None:
    """Where every value lies outside a range on both sides, half of them by its width or more, in words; None
    otherwise, and where `ranges_in_another_unit` says so (half of them 10 times further from zero than its ends).
    Trial 35: a momentum times 100 (-4.28, +0.30, -0.32) scored over `[-0.05, 0.05]` gave one currency all the
    component's points and the others none, and check said ok (`_beyond` judges one side)."""
    below, above = sum(1 for v in values if v < low), sum(1 for v in values if v > high)
    far = sum(1 for v in values if v < low - (high - low) or v > high + (high - low))
    typical, end = float(np.median([abs(v) for v in values])), max(abs(low), abs(high))
    if not below or not above or below + above < len(values) or 2 * far < len(values) or \
            (end > 0 and typical >= 10 * end):
        return None
    return (f"outside it on both sides, none within ({below} below its low end, {above} above its high end), "
            f"{far} of {len(values)} by its width or more")


def ranges_out_of_reach(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a formula range beyond whose one end every candidate going on (at least `ENOUGH`) lies out of reach
    (`_beyond`), but by less than `ranges_in_another_unit`'s 10 widths: `range: [50, 70]` over ratings out of 10,
    each 5.4 to 5.8, the range of a score out of 100; `[500, 1000]` over ozone of 10 to 60 (trial 24: below the low
    end by less than the range's width, and check said ok). Each candidate gets the same points from the component
    (none, or all of its weight), so it ranks no one. A warning, as for a filter no value reaches
    (`filters_out_of_reach`): a night of values all past a range in the pack's own unit can happen."""
    going = [c for c in found if c.went_on or c.capped]
    warnings = []
    for n, component in enumerate(pack.formula.components):
        values = _values(component.parsed, going)
        if len(values) < ENOUGH or pack.share_component(component) is not None \
                or at_zero_end(component.range, values):
            continue
        low, high = component.range
        width, least, greatest = high - low, min(values), max(values)
        if (straddled := _straddled(low, high, values)) is not None:
            warnings.append(
                f"key `formula.components.{n}.range`: got [{low:g}, {high:g}]; {whose} value lies within "
                f"[{significant(least)}, {significant(greatest)}], {straddled}, so each gets none or all of its "
                "points and it ranks them by the side they lie on alone: is the range in another unit than the "
                "expression (a share for a percent)? expected the range the values lie in, in the expression's unit")
            continue
        side = _beyond(low, high, values)
        if side is None and whose == TONIGHT and (missed := _nearly_all_miss(low, high, values)) is not None:
            warnings.append(f"key `formula.components.{n}.range`: got [{low:g}, {high:g}]; {missed}, so the rest get "
                            "none or all of its points alike and it ranks them by the side they lie on alone: "
                            "expected a range over the values' spread, in the expression's unit")
            continue
        if side is None or max(low - greatest, least - high) >= 10 * width:
            continue  # (within reach, or so far beyond it that `ranges_in_another_unit` says so)
        points = "none of its weight" if side.startswith("below") == (component.direction == "higher_is_better") \
            else "all of its weight"
        warnings.append(
            f"key `formula.components.{n}.range`: got [{low:g}, {high:g}]; {whose} value lies within "
            f"[{significant(least)}, {significant(greatest)}], {side}, so each gets the same points from it "
            f"({points}) and it ranks no one: is the range on another scale than the expression (a score out of 100 "
            "for a rating out of 10)? expected the range the values lie in, on the expression's scale")
    return warnings


_UNDATED = "is quarantined (period unparseable)"
"""A gap line's words for a row whose period does not parse (`periods.undated_at_fault` reads them)."""
_INPUT_GAP = re.compile(r"^(\w+): no value: its input (\w+) is a gap$")


def _root_gap(name: str, gaps: dict[str, str], blank_inputs: Mapping[str, list[str]] | None = None) -> str:
    """A metric's gap line, or, for a derived metric whose input is a gap, that input's (and so on down).
    `blank_inputs`: a derived metric's inputs that no candidate has, followed before the input its line names (the
    first it lacks): trial 29's `goals_now - goals_prev`, its `goals_prev` window past the history, was said to
    lack `goals_now`, which the teams out of the league that season lacked too."""
    line = gaps.get(name, f"{name}: no value")
    while match := _INPUT_GAP.match(line):
        step = next((i for i in (blank_inputs or {}).get(match.group(1), []) if i in gaps), match.group(2))
        if step not in gaps:
            break
        line = gaps[step]
    return line


def root_gap(candidate: Candidate, name: str) -> str:
    """A candidate's gap line for a metric, traced down to the input at its root (`_root_gap`)."""
    return _root_gap(name, {g.split(":")[0]: g for g in candidate.data_gaps})


def _any_of(scanned: int) -> str:
    """The candidates a metric has no value for, as a line says it: `any of the 3 candidates scanned`, or `the one
    candidate scanned` (a source of one series)."""
    return "the one candidate scanned" if scanned == 1 else f"any of the {scanned} candidates scanned"


def unknown_for_all(pack: CriteriaPack, found: list[Candidate], least: int = ENOUGH, *,
                    held: frozenset[int] | None = None) -> list[str]:
    """A required input or a hard filter's metric with no value for any scanned candidate (at least `least`): a
    column empty in the window tonight (a series the source stopped filling, its latest period not yet out), a sum
    over cells all NA. Every candidate going on would be archived as a data gap, or go on with the filter UNCLEAR;
    said with the commonest gap of the metric, down to the input that is missing. A derived metric whose inputs are
    there but whose arithmetic has no value is `undefined_components`'. `check` asks it of a source of fewer
    entities than `ENOUGH` too (`least` 1), for warnings: one series' gap tonight is no unit's mistake to stop
    nights for, but its line names the key that explains the gap (`min_rows`, a window)."""
    read = {name: f"required_inputs.{n}" for n, name in reversed(list(enumerate(pack.required_inputs)))}
    filtered = {f.metric: f"hard_filters.{n}.metric" for n, f in reversed(list(enumerate(pack.hard_filters)))}
    problems: list[str] = []
    blank = [name for name in {**filtered, **read} if not any(
        isinstance(v := c.metrics.get(name), int | float) and math.isfinite(v) for c in found)]
    nowhere = {name for name in pack.metrics if not any(
        isinstance(v := c.metrics.get(name), int | float) and math.isfinite(v) for c in found)}
    blank_inputs = {name: sorted(set(spec.parsed.names) & nowhere) for name, spec in pack.metrics.items()
                    if spec.agg == "derived"}
    for name, key in {**filtered, **read}.items():
        if len(found) < max(least, 1) or name not in blank:
            continue
        lines = [_root_gap(name, {g.split(":")[0]: g for g in c.data_gaps}, blank_inputs) for c in found]
        derived = name in pack.metrics and pack.metrics[name].agg == "derived"
        if derived and any("undefined" in line.split(":", 2)[1] for line in lines):
            continue  # its inputs are there for some: `undefined_components` says why it has no value
        if derived and set(pack.metrics[name].parsed.names) & set(blank):
            continue  # an input no candidate has is said on its own line (trial 24: `climb` from a rank that
            # every candidate lacked was blamed on the other input, its commonest gap)
        line = _cause_for_all(lines)
        effect = "each going on would be archived as a data gap" if key.startswith("required_inputs.") else \
            "the filter is UNCLEAR for each, and none is refused or passed by it"
        said = f"key `{key}`: got {name!r}; it has no value for {_any_of(len(found))} ({line}), so {effect}"
        problem = _bounds_at_fault(pack, name, key, line, len(found), effect) or \
            _too_few_filled(pack, name, key, lines, found, effect, held) or _cells_refused(pack, said, line, found) or \
            f"{said}: {_gap_expected(pack, line)}"
        if not any(problem.split(";")[0] == p.split(";")[0] for p in problems if p.startswith("key `source.")):
            problems.append(problem)
    return problems


_ROW = re.compile(r"source row \d+")


def _commonest(lines: list[str]) -> str:
    """The commonest of the candidates' gap lines, counted without their row numbers (each entity's quarantined row
    is its own, `source row 260188`; a reason shared by every entity must outnumber a window a few leave empty), as
    the first candidate writes it."""
    counted = Counter(_ROW.sub("source row N", line) for line in lines)
    common, _ = counted.most_common(1)[0]
    return next(line for line in lines if _ROW.sub("source row N", line) == common)


def _cause_for_all(lines: list[str]) -> str:
    """The gap line that says why no candidate has a metric: the undated rows' (each blanks its entity's every
    metric, its own words per entity and metric: one cause) when their entities are at least as many as any other
    line's, so that mending the periods changes the night (trial 21: ISO weeks beside a pattern blanked 2 of 3
    entities, a quiet one the third); else `_commonest` of the others. Not the undated rows of a few entities
    before all: trial 129's 2 launches of one socket without a date (1 of 18) were blamed for a `momentum` that
    the 17 others lacked for their windows (9 for a quarter no socket filled, `min_rows`), and, those rows kept out,
    the night was told of the window only then."""
    undated = [line for line in lines if _UNDATED in line]
    rest = [line for line in lines if _UNDATED not in line]
    if not rest:
        return _commonest(lines)
    common = _commonest(rest)
    if undated and len(undated) >= sum(_ROW.sub("source row N", line) == _ROW.sub("source row N", common)
                                       for line in rest):
        return undated[0]
    return common


def _bounds_at_fault(pack: CriteriaPack, name: str, key: str, line: str, scanned: int, effect: str) -> str | None:
    """`source.bounds.X` when the gap every candidate has is a cell of X its bounds refused (a refused cell's reason
    is `column X` alone; no number, negative and not finite are said): bounds in another unit (`[0, 1]` over answers
    from 1 to 10) that refuse a minority of the cells, too few for `values.py`, but one in every entity's window,
    as on an events source, where one refused cell leaves its period's aggregates of the column unknown."""
    match = _QUARANTINED.match(line)
    column = match.group(1).removeprefix("column ") if match and match.group(1).startswith("column ") else None
    if column is None or column not in pack.source.bounds:
        return None
    low, high = ("null" if b is None else f"{b:g}" for b in pack.source.bounds[column])
    events = " (an events period with a refused cell has its aggregates of the column unknown)" \
        if pack.source.shape == "events" else ""
    return (f"key `source.bounds.{column}`: got [{low}, {high}]; cells of {column} outside it are refused in every "
            f"candidate's reach{events}, so {name} has no value for {_any_of(scanned)} ({line}; "
            f"`{key}`: {effect}): expected bounds in the column's unit, that its values lie within")


def _condition(condition: Condition) -> str:
    """A `where` condition as a pack writes it in YAML's flow style."""
    if condition.op is not None:
        return f"{{column: {condition.column}, op: '{condition.op}', value: {condition.value:g}}}"
    key, values = ("in", condition.in_) if condition.in_ is not None else ("not_in", condition.not_in)
    return f"{{column: {condition.column}, {key}: {list(values or [])}}}"


def bounds_blanking_most(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """`source.bounds.X` when cells of X its bounds refuse blank a required input for most candidates going on, but
    not for every one scanned (that is `_bounds_at_fault`'s problem). Trial 101: `bounds: {realrinc: [0, 100000]}`
    over the GSS's incomes, to keep a few top earners out, refused 715 of 37,887 cells (2%), one in most occupations'
    survey years: an events period with a refused cell has its average unknown, so 6 of the 7 occupations going on
    lost their income growth, the night's act-on pick among them archived as a data gap, while check said ok. On
    events a `where` leaves such events out of every aggregate instead, which is what capping outliers means."""
    if not pack.source.bounds:
        return []
    going = [c for c in found if c.went_on]
    warnings: list[str] = []
    for n, name in enumerate(pack.required_inputs):
        if not any(isinstance(v := c.metrics.get(name), int | float) and math.isfinite(v) for c in found):
            continue  # no candidate has it: `unknown_for_all` names the bounds, a problem
        blanked: dict[str, list[tuple[Candidate, str]]] = {}
        for candidate in going:
            line = root_gap(candidate, name)
            match = _QUARANTINED.match(line)
            column = match.group(1).removeprefix("column ") if match and match.group(1).startswith("column ") \
                else None
            if column in pack.source.bounds:
                blanked.setdefault(str(column), []).append((candidate, line))
        for column, lost in blanked.items():
            if len(lost) < 2 or 2 * len(lost) <= len(going):
                continue
            bounds = pack.source.bounds[column]
            low, high = ("null" if b is None else f"{b:g}" for b in bounds)
            events = pack.source.shape == "events"
            cause = " (an events period with a refused cell has its aggregates of the column unknown)" if events \
                else ""
            keep = [f"{{column: {column}, op: '{op}', value: {b:g}}}"
                    for op, b in zip((">=", "<="), bounds, strict=True) if b is not None]
            reading = [(agg, spec) for agg, spec in (pack.source.aggregates or {}).items() if spec.column == column]
            fix = ""
            for agg, spec in reading[:1] if events else []:  # (not `source.where`: an empty cell matches no
                held = [_condition(c) for c in spec.where]  # condition, and it also counts the events)
                fix = (f": drop the bounds, `source.aggregates.{agg}.where` already leaves such events out of it"
                       if set(keep) <= set(held) else
                       f", or, to leave such events out of the aggregate instead, `source.aggregates.{agg}.where: "
                       f"[{', '.join([*held, *(k for k in keep if k not in held)])}]`")
            example, line = lost[0]
            warnings.append(
                f"key `source.bounds.{column}`: got [{low}, {high}]; cells of {column} outside it are refused in the "
                f"reach of {len(lost)} of the {len(going)} candidates going on{cause}, so {name} has no value for "
                f"them (e.g. {example.name}: {line}; `required_inputs.{n}`: each would be archived as a data gap): "
                f"expected bounds that only impossible values lie outside{fix}")
    return warnings


_FILLED = re.compile(r"^(?P<metric>\w+): (?P<filled>\d+) of (?P<length>\d+) (?P<periods>\w+) of .+ filled in "
                     r"(?P<label>.+); needs (?P<needs>\d+)$")
"""A metric's gap line when its window is filled in part: `level_now: 5 of 7 days of level filled in
2018-03-24..2018-03-30; needs 7` (the label one period alone for a window of one)."""


def _too_few_filled(pack: CriteriaPack, name: str, key: str, lines: list[str], found: list[Candidate], effect: str,
                    held: frozenset[int] | None = None) -> str | None:
    """The metric's own `min_rows` when its window needs more periods filled than any candidate has, though some
    have some: a window over a period no entity has rows in (nlswork's surveys skip 1986: a window of 1986-88 needing
    all 3 years has no value for anyone); its `window` when no entity has a row in it at all (`[2, 2]`, 1986 alone).
    The required input or filter reading it is not what is wrong. Judged on the metric most candidates' gaps name,
    when they are most (trial 26: a growth over two stocks, a few entities lacking the first for empty cells, the
    rest the second for its default `min_rows`, was told `required_inputs.1`). Rows in the window are told by
    `held`, the periods back the night's rows are in, when given: only a candidate going on carries its rows, so
    with none going on (a column empty in every row, each filter UNCLEAR) the candidates alone said "no entity has a
    row" of windows full of rows (trial 59)."""
    filled = [m for m in map(_FILLED.match, lines) if m]
    if not filled:
        return None
    commonest = Counter(m["metric"] for m in filled).most_common(1)[0][0]
    matches = [m for m in filled if m["metric"] == commonest]
    if 2 * len(matches) <= sum(_UNDATED not in line for line in lines):
        return None  # (an entity's undated rows say nothing of the window: trial 129's one socket of 18)
    best, scanned = max(int(m["filled"]) for m in matches), len(found)
    metric, length, label, needs = (matches[0]["metric"], int(matches[0]["length"]), matches[0]["label"],
                                    int(matches[0]["needs"]))
    if metric not in pack.metrics:
        return None
    spec, plural = pack.metrics[metric], pack.grain.plural
    via = "" if metric == name else f", so {name} has none either"
    if best == 0:
        lo, hi = spec.window
        if any(rows_in_window(c.raw_data, spec.window) for c in found) or any(lo <= p <= hi for p in held or ()):
            return None  # rows there, the column empty in them: a series the source stopped filling
        if any(_QUARANTINED.match(line) for line in lines):
            return None  # rows there, their cells refused (a bound in another unit): `_cells_refused`'s to say
        first, _, last = label.partition("..")
        skipped = (_weekend_missing(pack, first, last or first, length) if _trading_days(found) else "") or \
            "perhaps a period the source skips: a survey not held that year"  # (trial 64: a weekend's days)
        return (f"key `metrics.{metric}.window`: got {list(spec.window)}; no entity has a row in {label} ({skipped}), "
                f"so {metric} has no value for "
                f"{_any_of(scanned)}{via} (`{key}`: {effect}): expected a window over {plural} the source "
                "has rows in")
    default = "" if spec.min_rows is not None else " (every period of its window, by default)"
    first, _, last = label.partition("..")
    why = _weekend_missing(pack, first, last, length - best) if last and _trading_days(found) else ""
    why = why or _joined_later(pack, spec.column) or (
        "perhaps rows of them published after the night, by `source.published_column`, or a period no entity has "
        "rows in" if pack.source.published_column else
        "perhaps a period no entity has rows in: a survey not held that year, an extract's gap")
    return (f"key `metrics.{metric}.min_rows`: got {needs}{default}; no candidate has more than {best} of the "
            f"{length} {plural} of {spec.column} filled in {label} ({why}), so {metric} has no value for "
            f"{_any_of(scanned)}{via} (`{key}`: {effect}): expected `min_rows: {best}` or less, or a window "
            f"over {plural} the source fills")


def _joined_later(pack: CriteriaPack, column: str | None) -> str | None:
    """Why a joined column's window is filled in part for every candidate when its table is known later than the
    source by the lag rule: its latest periods are not yet published on the night. Trial 73: deaths joined with
    `publication_lag_days: 60` beside diagnoses' 45 were told "perhaps a period no entity has rows in: a survey not
    held that year", of a table holding every quarter."""
    main = pack.source
    if column is None or main.published_column is not None or main.known_at is not None:
        return None
    for i, joined in enumerate(main.join):
        if (column in joined.columns and joined.published_column is None and joined.known_at is None
                and joined.publication_lag_days > main.publication_lag_days):
            return (f"the joined table is known later than the source: `source.join.{i}.publication_lag_days` is "
                    f"{joined.publication_lag_days}, the source's {main.publication_lag_days}, so its latest "
                    f"{pack.grain.plural} are not yet published on the night")
    return None


_BEFORE_FIRST = re.compile(r"^(?P<metric>\w+): \d+ of \d+ \w+ of .+ known in (?P<label>.+): nothing is known of "
                           r"the entity before its first event, in (?P<first>[^ ]+) ")
"""A metric's gap line when its window reaches before the entity's first event (`logic._gap`)."""


def before_first_events(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """A warning naming `source.events_from`: an events source (without it) where the windows of a tenth or more of
    the candidates scanned (two at least) reach before the entity's first event, so that a metric the filters or
    the formula read is unknown for them, though the source may record every entity's events from its start (trial
    78: 11 of 38 regions' 30 years of deadly earthquakes unknown, their first quake inside them, every filter
    UNCLEAR; a catalogue of earthquakes since 1902 knows a region's quiet years). A warning, not a problem: a
    source of entities that begin (firms founded, routes opened) knows nothing of them before. Not when every
    candidate's window reaches before its first event: a window before the source's own start."""
    src = pack.source
    if src.shape != "events" or src.events_from is not None:
        return []
    read = set(pack.required_inputs) | {f.metric for f in pack.hard_filters}
    before = [(c, m) for c in found for line in c.data_gaps
              if (m := _BEFORE_FIRST.match(line)) and m["metric"] in read]
    entities = {c.id for c, _ in before}
    if len(entities) < 2 or 10 * len(entities) < len(found) or len(entities) == len(found):
        return []  # (every candidate's window before its first event: the source's own start, `windows_past`'s)
    candidate, gap = before[0]
    return [f"key `source.events_from`: not set; for {len(entities)} of the {len(found)} candidates scanned "
            f"{gap['metric']} or another metric read is unknown, its window reaching before the entity's first event "
            f"(e.g. {candidate.name}: {gap['label']}, its first event in {gap['first']}), and nothing is known of an "
            "entity before it: if the source records every entity's events from a day on (a register, a catalogue "
            "of every earthquake), expected `events_from: <that day>`, each period without an event a 0; an entity "
            "that begins (a firm founded, a route opened) is rightly unknown before"]


def _windows_most_lack(found: list[Candidate], lacks: Callable[[Candidate, re.Match[str]], bool]
                       ) -> list[tuple[str, list[tuple[Candidate, re.Match[str]]]]]:
    """The metrics whose window more than half of the scanned candidates lack as `lacks` says of their gap lines
    (`_FILLED`), though some candidate has a value for it, in the order first met; each with the (candidate, gap
    line) pairs that lack it."""
    lacking: dict[str, list[tuple[Candidate, re.Match[str]]]] = {}
    for c in found:
        for line in c.data_gaps:
            if (m := _FILLED.match(line)) and lacks(c, m):
                lacking.setdefault(m["metric"], []).append((c, m))
    return [(name, seen) for name, seen in lacking.items() if 2 * len(seen) > len(found)
            and any(isinstance(v := c.metrics.get(name), int | float) and math.isfinite(v) for c in found)]


def windows_filled_in_part(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """A warning: metrics whose window most scanned candidates (at least `ENOUGH`) fill in part, fewer periods than
    `min_rows` needs, though some fill it (trial 23: gapminder's countries have a row every 5 years, a few every
    year; `window: [0, 4]` needing all 5 left 169 of 187 countries unknown and ranked the 18 annual ones, while
    check said ok). One line, the first such metric's `min_rows` with the filled count most of them have, and the
    others' keys. A metric no candidate has is `unknown_for_all`'s."""
    if len(found) < ENOUGH:
        return []
    short = _windows_most_lack(found, lambda _, m: 0 < int(m["filled"]) < int(m["needs"])
                               and m["metric"] in pack.metrics)
    if not short:
        return []
    (first, seen), others = short[0], [f"`metrics.{name}.min_rows`" for name, _ in short[1:]]
    candidate, gap = seen[0]
    spec, plural = pack.metrics[first], pack.grain.plural
    filled = Counter(int(m["filled"]) for _, m in seen).most_common(1)[0][0]
    default = "" if spec.min_rows is not None else " (every period of its window, by default)"
    more = f"; so do {len(others)} more ({', '.join(others)})" if others else ""
    # a sum of fewer periods is a smaller figure, compared as if whole (trial 135: 3 of 4 weeks against a year
    # before's 4 read -25% to -32%): its fix is the average of the periods filled
    fix = (f"`agg: avg` with `min_rows: {filled}` (a sum of {filled} of the window's {gap['length']} {plural} is a "
           f"smaller figure, compared as if of all {gap['length']})" if spec.agg == "sum" else
           f"`min_rows: {filled}` (the {plural} most of them fill)")
    return [f"key `metrics.{first}.min_rows`: got {gap['needs']}{default}; {len(seen)} of the {len(found)} "
            f"candidates scanned fill fewer of its window's {gap['length']} {plural} of {spec.column} (e.g. "
            f"{candidate.name}: {gap['filled']} of {gap['length']}, in {gap['label']}), so {first} has no value for "
            f"them and they would be archived as data gaps or left UNCLEAR{more}: a source whose entities have "
            f"rows only some {plural} (a survey every few years)? expected {fix}, or a window the rows fill"]


def windows_before_latest_rows(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """A warning: a metric the filters or the formula read whose window most scanned candidates (at least `ENOUGH`)
    fill not at all, though other metrics of theirs have values and some candidates fill it: a panel whose entities'
    latest rows are of different periods, its window too short to reach them (trial 80: gun homicide by country,
    25 countries reporting to 2014..2017; `gdp_pc` over `window: [0, 0]` was unknown for the 22 without a 2017 row,
    its filter UNCLEAR for them, and check said ok, `windows_filled_in_part` counting only windows filled in part).
    Not for events (a period without one is a count of 0); one line, the first such metric's `window`."""
    if len(found) < ENOUGH or pack.source.shape == "events":
        return []
    read = set(pack.required_inputs) | {f.metric for f in pack.hard_filters}
    short = _windows_most_lack(found, lambda c, m: int(m["filled"]) == 0 and m["metric"] in read
                               and pack.metrics[m["metric"]].window is not None
                               and any(isinstance(v, int | float) for v in c.metrics.values()))
    if not short:
        return []
    first, seen = short[0]
    candidate, gap = seen[0]
    spec, plural = pack.metrics[first], pack.grain.plural
    window = spec.window or (0, 0)
    wider = f"[{window[0]}, {window[1] + 2}]"
    return [f"key `metrics.{first}.window`: got [{window[0]}, {window[1]}]; {len(seen)} of the {len(found)} "
            f"candidates scanned have no row of {spec.column} in it (e.g. {candidate.name}: {gap['filled']} of "
            f"{gap['length']}, in {gap['label']}), though other metrics of theirs have values, so {first} has no value "
            f"for them and they would be archived as data gaps or left UNCLEAR: a source whose entities' latest rows "
            f"are of different {plural} (some reported late, or not every {pack.grain.name})? expected a window that "
            f"reaches their latest rows, `window: {wider}` with `min_rows: 1` (`agg: last` takes the latest)"]


_QUARANTINED = re.compile(r"^\w+: unknown: source row \d+ is quarantined \((.+)\), in its reach$")


_MENDED = "expected the source's rows mended"


def says_rows_mended(problem: str) -> bool:
    """Whether a problem is `unknown_for_all`'s for a metric whose window holds quarantined rows (`_gap_expected`)."""
    return f": {_MENDED}: " in problem


def _cells_refused(pack: CriteriaPack, said: str, line: str, found: list[Candidate]) -> str | None:
    """`said` (a metric with no value for any candidate) with its cause, when the gap is its window of a column
    whose cells some candidates have refused there (`Candidate.refused`) and the others have no figure of either:
    cells that are no number are read as empty, so the window is "0 of 1 weeks filled" (trial 24: chart ranks
    written `#5` in the latest weeks alone, a minority of the file, were told "expected a metric the night's rows
    fill", the column's figures being there)."""
    match = _FILLED.match(line)
    spec = pack.metrics.get(match["metric"]) if match else None
    if match is None or spec is None or spec.column is None:
        return None
    first, _, last = match["label"].partition("..")
    column, last = spec.column, last or first
    whys = [why for c in found if (why := next((r.why for r in c.refused
                                                 if column in r.columns and first <= r.period <= last), None))]
    if not whys:
        return None
    whose = "every candidate's window" if len(whys) == len(found) else \
        f"the window of {len(whys)} of the {len(found)} candidates (the others have no figure there either)"
    return (f"{said}: {_MENDED}: cells of {column} in {whose} are quarantined ({Counter(whys).most_common(1)[0][0]}; "
            "`check` lists them under 'quarantined for'), not a metric in error")


def _gap_expected(pack: CriteriaPack, line: str) -> str:
    """What a metric with no value for any candidate needs, from its commonest gap line: the quarantined rows in its
    reach mended (a period sent twice: each entity's rows of it refused as a duplicated key); a window the rows
    fill in part, the aggregate's `min_rows` (`_fewer_rows`); else rows that fill its window."""
    if match := _QUARANTINED.match(line):
        return (f"{_MENDED}: rows in every candidate's window are quarantined "
                f"({match.group(1)}; `check` lists them under 'quarantined for'), not a metric in error")
    if (match := _FILLED.match(line)) and ".." in match["label"] and int(match["filled"]) > 0 \
            and match["metric"] in pack.metrics:
        return _fewer_rows(pack, match)
    return "expected a metric the night's rows fill (a column with figures in its window)"


def _trading_days(found: list[Candidate]) -> bool:
    """Whether the candidates' rows are a source of trading days (`grains.trading_days`; trial 65: a daily source with
    rows every day, its latest weekend's published late, was told "a source of trading days has no rows then")."""
    days = [date.fromisoformat(str(r["period"])[:10]) for c in found for r in c.raw_data]
    return trading_days(sum(1 for d in days if d.weekday() >= 5), len(days))


def _weekend_missing(pack: CriteriaPack, first: str, last: str, missing: int) -> str:
    """On a day grain, the clause saying a window's `missing` days are exactly its Saturdays and Sundays (a source of
    trading days has no rows then); empty otherwise."""
    if pack.source.grain != "day":
        return ""
    try:
        start, end = date.fromisoformat(first), date.fromisoformat(last)
    except ValueError:
        return ""
    weekend = sum(1 for k in range((end - start).days + 1) if (start + timedelta(days=k)).weekday() >= 5)
    if not weekend or weekend != missing:
        return ""
    return (f"the {weekend} missing {'is' if weekend == 1 else 'are'} on a Saturday or Sunday: a source of trading "
            "days has no rows then")


def _fewer_rows(pack: CriteriaPack, gap: re.Match[str]) -> str:
    """A window every candidate fills in part (3 of 5 days): by default an aggregate needs every period of its
    window, so a source with no rows on some periods (trading days: none on Saturdays and Sundays) never fills one.
    The metric's `min_rows` at most the filled count is the key that lets it; on a day grain, the window's
    weekend days are named when they are exactly the periods missing."""
    filled, length = int(gap["filled"]), int(gap["length"])
    first, _, last = gap["label"].partition("..")
    weekend = _weekend_missing(pack, first, last, length - filled)
    weekend = f"; {weekend}" if weekend else ""
    return (f"expected `metrics.{gap['metric']}.min_rows` of at most {filled} (it needs {gap['needs']} of the "
            f"window's {length} {gap['periods']} filled, and the candidates fill fewer{weekend}), or a window the "
            "rows fill")


SHARE_FAR_BEYOND = 10.0
"""A `share` metric whose candidates' values are above 1 (`MOST_FAR` of them) and this far beyond it at their median
is no fraction of 1: dollars or percents, written by the brief as 1500% or 3500%."""


def shares_beyond_one(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a metric of `unit: share` (the brief writes 0.35 as 35%) whose scanned candidates' values (at
    least `ENOUGH`) are above 1, `MOST_FAR` of them, their median `SHARE_FAR_BEYOND` or more: a premium of $15 a
    tonne with `unit: share` read "the premium there averages 1500% a tonne" in the act-on list, and check said ok;
    so did shares on free lunch in percent, 0 to 100, written "9777% on free lunch", a few schools at 0 sparing it
    (trial 36). A warning: the night's numbers stand, only their writing is wrong. `whose` as `unit_judgments`
    says it (a source of one series: its candidates of earlier nights too, trial 87)."""
    warnings = []
    for name, spec in pack.metrics.items():
        if spec.unit != "share":
            continue
        values = [abs(v) for v in _finite_values(found, name)]
        # a 0 fits any unit and says nothing of it (trial 133: two age groups not surveyed that year, counting 0,
        # spared 10 of 12 counts of children under `unit: share`)
        telling = [v for v in values if v != 0]
        beyond = sum(v > 1 for v in values)
        if len(telling) < ENOUGH or beyond < MOST_FAR * len(telling) \
                or float(np.median(telling)) < SHARE_FAR_BEYOND:
            continue
        example = float(np.median(values))
        lie = f"{whose} {name} lies" if beyond == len(values) else \
            f"{_nights_of(whose)}{beyond} of the {len(values)} candidates' {name} lie"
        warnings.append(f"key `metrics.{name}.unit`: got 'share'; {lie} beyond 1 (within "
                        f"[{significant(min(values))}, {significant(max(values))}]), and a share is a fraction of 1 "
                        f"that the brief writes as a percent ({significant(example, 6)} as "
                        f"{significant(example * 100, 6)}%): expected the unit of its values (`usd`, `count`, "
                        "`number`; a column in percent is `number`)")
    return warnings


def coarser_figures_read_alike(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """Warnings: two metrics over one column of a joined table of a coarser grain (`grain: year` beside months),
    their windows apart, that read the same figure for every candidate with both: each period takes its own year's
    figure once published, else the latest known, so the latest months carry the year before's, the figure the
    months a year back read as their own. Trial 87: a population a year back, `window: [12, 12]`, beside the latest
    month's, made a population growth of 0 for every candidate and every night, and check said ok. A change of a
    yearly figure is the joined table's own column (a `query` computing it over its years)."""
    coarser = {column: (index, joined.grain) for index, (joined, wider) in
               enumerate(zip(pack.source.join, pack.source.joins_coarser, strict=True)) if wider
               for column in joined.columns}
    warnings = []
    said: set[str] = set()
    specs = [(name, spec) for name, spec in pack.metrics.items() if spec.column in coarser and spec.agg != "derived"]
    for k, (first, one) in enumerate(specs):
        for second, other in specs[k + 1:]:
            if other.column != one.column or tuple(other.window) == tuple(one.window) or second in said:
                continue
            pairs = [(a, b) for c in found if isinstance(a := c.metrics.get(first), int | float)
                     and isinstance(b := c.metrics.get(second), int | float)]
            if not pairs or any(a != b for a, b in pairs):
                continue
            said.add(second)
            index, grain = coarser[str(one.column)]
            whose = "the one candidate" if len(pairs) == 1 else f"every one of the {len(pairs)} candidates"
            warnings.append(
                f"key `metrics.{second}.window`: got {list(other.window)}; {second} and {first} (window "
                f"{list(one.window)}) read {one.column!r}, a figure a {grain} of `source.join.{index}` (`grain: "
                f"{grain}`), and for {whose} with both they read the same figure ({significant(pairs[0][0])}): each "
                f"{pack.source.grain} takes its own {grain}'s figure once published, else the latest known, so the "
                f"latest {pack.source.grain}s carry the {grain} before's, the one the {pack.source.grain}s a {grain} "
                f"back read as their own, and a change between them is 0: expected the change as a column of the "
                f"joined table, computed over its own {grain}s by a `query` (`lag({one.column}) OVER (PARTITION BY "
                f"<its entity_id> ORDER BY <its {grain}>)`)")
    return warnings


WHOLE_UNITS = {"usd": "whole dollars ($0 or $1", "count": "whole numbers (0 or 1", "days": "whole days (0 or 1"}
"""The units the brief writes without decimals (`formatting.format_value`), and how it writes a fraction of 1."""


def _nights_of(whose: str) -> str:
    """The nights part of `whose` ("on this night and the 7 before it, "), empty for the night's candidates."""
    return whose.removesuffix(TONIGHT) if whose != TONIGHT else ""


def fractions_in_whole_units(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a metric of a unit the brief writes whole (`usd`, `count`, `days`) whose scanned candidates' values
    (at least `ENOUGH`) are most of them fractions, half or more within ±1: trial 28's share of graduates working,
    `working / (working + not_working)` under `unit: usd`, read "$1 working" for every college in the act-on list,
    and check said ok (a share by construction is refused at load only for a coverage or an events share); trial
    78's patent growth `patents_2y / patents_2y_prev - 1` under `unit: usd`, +168% written "$2" and +56% "$1", was
    spared by its few values beyond 1. The mirror of `shares_beyond_one`; a count of 0 or 1 (an indicator) is whole,
    and said nothing of. `whose` as `shares_beyond_one` says it."""
    warnings = []
    for name, spec in pack.metrics.items():
        if spec.unit not in WHOLE_UNITS:
            continue
        values = _finite_values(found, name)
        fractions = [v for v in values if v != round(v)]
        within = sum(abs(v) <= 1 for v in values)
        # a 0 fits any unit and says nothing of it, as in `shares_beyond_one` (trial 134: a share of graduates
        # working under `unit: count`, 4 colleges at 0 and 2 at 1 beside 6 fractions, was spared): both halves are
        # judged among the values that are not 0
        telling = [v for v in values if v != 0]
        if len(telling) < ENOUGH or 2 * sum(abs(v) <= 1 for v in telling) < len(telling) \
                or 2 * len(fractions) <= len(telling):
            continue
        example = float(np.median([abs(v) for v in fractions if abs(v) <= 1]))
        lie = f"{whose} {name} lies within [{significant(min(values))}, {significant(max(values))}]" \
            if within == len(values) else f"{_nights_of(whose)}{within} of the {len(values)} candidates' {name} lie " \
            f"within ±1 (all within [{significant(min(values))}, {significant(max(values))}])"
        warnings.append(f"key `metrics.{name}.unit`: got {spec.unit!r}; {lie}, fractions of 1 that the brief "
                        f"writes as {WHOLE_UNITS[spec.unit]}: {significant(example)} as "
                        f"{format_value(example, spec.unit)}): expected the unit of its values (`share` for a "
                        "fraction of 1, written as a percent; `number`)")
    return warnings


def at_zero_end(bounds: tuple[float, float], values: list[float]) -> bool:
    """Whether every value lies within a range one of whose ends is 0, on that end's side: a dry week's rain, a
    clear month's share of foggy hours, next to a range `[0, 2]`. A night's values sit there in the pack's unit as
    well as in another: said as a warning, never a problem (it would stop every quiet night)."""
    low, high = bounds
    return (low == 0 and min(values) >= 0 and max(values) <= high) or \
        (high == 0 and max(values) <= 0 and min(values) >= low)


def ranges_at_zero_end(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a formula range at whose zero end every candidate going on (at least 3) sits, `RANGE_APART` times
    or more nearer zero than its other end, so each gets about the same points from it tonight: on a quiet night in
    the pack's unit, or every night in another (`[0, 30]` over shares). A share by construction is judged at load."""
    going = [c for c in found if c.went_on or c.capped]
    warnings = []
    for n, component in enumerate(pack.formula.components):
        values = _values(component.parsed, going)
        if len(values) < ENOUGH or pack.share_component(component) is not None \
                or not at_zero_end(component.range, values):
            continue
        low, high = component.range
        largest, other = max(abs(v) for v in values), abs(high if low == 0 else low)
        if largest > 0 and other >= RANGE_APART * largest:
            which = f" (a percent for a share: {significant(other, 4)} for {significant(other / 100, 4)})" \
                if largest <= 1 < other <= 100 else ""
            warnings.append(
                f"key `formula.components.{n}.range`: got [{low:g}, {high:g}]; {whose} value lies within "
                f"[{significant(min(values))}, {significant(max(values))}], at its 0 end, {RANGE_APART:g} times or "
                f"more nearer zero than its other end, so each gets about the same points from it tonight: if the "
                f"range is in another unit than the expression{which}, expected the range the values lie in, in the "
                "expression's unit")
    return warnings


def _expressions_read(pack: CriteriaPack) -> list[tuple[str, str, expressions.Expression]]:
    """(key, text, parsed) of the formula's components and the derived metrics it or a hard filter reads, directly or
    through another derived metric (trial 27: `unit_cost`, dividing by zero for every airline, read only by
    `unit_cost_change`, a filter's and an input's, was said by no line and check said ok), each after those it
    reads."""
    read = {d for name in [*pack.required_inputs, *(f.metric for f in pack.hard_filters)] if name in pack.metrics
            for d in pack.derived_metrics(name)}
    derived = [(f"metrics.{name}.expression", pack.metrics[name].expression or "", pack.metrics[name].parsed)
               for name in pack.derived_order if name in read]
    components = [(f"formula.components.{n}.expression", c.expression, c.parsed)
                  for n, c in enumerate(pack.formula.components)]
    return [*derived, *components]


def has_value(pack: CriteriaPack, key: str, found: list[Candidate]) -> bool:
    """Whether the expression at `key` (`undefined_components`' key) has a value for a candidate that passed the
    hard filters."""
    parsed = next(p for k, _, p in _expressions_read(pack) if k == key)
    with_inputs = [c for c in found if (c.went_on or c.capped) and all(
        isinstance(v := c.metrics.get(name), int | float) and math.isfinite(v) for name in parsed.names)]
    return any(expressions.why_undefined(parsed, c.metrics) is None for c in with_inputs)


@dataclass(frozen=True)
class Undefined:
    """An expression with no value for any candidate that passed the hard filters with its inputs."""

    key: str
    """Its pack key (`metrics.NAME.expression`, `formula.components.N.expression`)."""
    text: str
    """The expression as written."""
    candidates: int
    """The candidates that passed the hard filters with its inputs."""
    why: str
    """The commonest reason it had no value (`expressions.why_undefined`)."""

    @property
    def _said(self) -> str:
        return (f"key `{self.key}`: got {self.text!r}; it has no value for any of the {self.candidates} candidates "
                f"that pass the hard filters with its inputs ({self.why})")

    @property
    def problem(self) -> str:
        return f"{self._said}, so each would be archived as a data gap: expected an expression with a value for them"

    def tonight_only(self, grain: str, valued: list[date], nights: int) -> str:
        """The warning when it had a value on `valued` of the `nights` nights before (latest first): the data's."""
        return (f"{self._said}, so each is archived as a data gap tonight; it had a value on {len(valued)} of the "
                f"{nights} nights before, a {grain} apart (the latest {valued[0]}), so tonight's data, not the "
                "expression, leaves it none (a period of zeros: a strike, a closure?): expected nothing to mend if "
                "the source says so")


def undefined_components(pack: CriteriaPack, found: list[Candidate]) -> list[Undefined]:
    """A formula component, or a derived metric the formula or a hard filter reads, with no value for any candidate
    that passed the hard filters although its inputs are all there (a division by zero for each): every one of them
    would be a data gap. Evaluated as the analyzer does (`expressions.why_undefined`)."""
    passing = [c for c in found if c.went_on or c.capped]
    problems = []
    for key, text, parsed in _expressions_read(pack):
        reasons = []  # one per candidate with its inputs, until one has a value (a wide night's first, mostly)
        for candidate in passing:
            if not all(isinstance(candidate.metrics.get(name), int | float)
                       and math.isfinite(candidate.metrics[name] or 0.0) for name in parsed.names):
                continue
            if (undefined := expressions.why_undefined(parsed, candidate.metrics)) is None:
                break
            reasons.append(str(undefined))
        else:
            if reasons:
                problems.append(Undefined(key, text, len(reasons), Counter(reasons).most_common(1)[0][0]))
    return problems


def red_flags_firing_for_all(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a red flag that doubts or rejects and holds for every candidate going on with its metrics (at least
    `ENOUGH`): `tenure_now >= 0` (the comparison the wrong way round, a bound in another unit) sends every STRONG
    verdict to "needs your judgment", or archives each REJECTED, and check said ok. A warning, not a problem: a rule
    may hold for every candidate on some night by design. A source of fewer entities is judged over its earlier
    nights' candidates too (trial 24: `wind_3d >= 0` doubted one city's every night, and check said ok)."""
    going = [c for c in found if c.went_on or c.capped]
    warnings = []
    for n, rule in enumerate(pack.red_flags):
        if rule.effect == "note":
            continue
        held = [bool(value) for value in _values(rule.parsed, going)]
        if len(held) >= ENOUGH and all(held):
            what = "its STRONG verdict doubted, so none reaches \"act on these\"" if rule.effect == "doubt" else \
                "REJECTED and archived, so none reaches the brief"
            when = "" if whose == TONIGHT else f" {whose.removesuffix(_EVERY)}"
            warnings.append(
                f"key `red_flags.{n}.when`: got {rule.when!r}; it holds{when} for every one of the {len(held)} "
                f"candidates going on with its metrics, each {what} (`effect: {rule.effect}`): is the comparison "
                "the wrong way round, or its bound in another unit? expected a condition that singles out some "
                "candidates (or `effect: note`)")
    return warnings


def _compared(parsed: expressions.Expression) -> tuple[expressions.Expression, float] | None:
    """A red flag's `when` as (the side it measures, the number it is compared with), for a comparison of an
    expression with a plain number (`win_share > 0.65`, `-0.15 > dip`); None for another shape."""
    body = parsed.tree.body
    if not isinstance(body, ast.Compare):
        return None
    sides = (body.left, body.comparators[0])
    plain = [side for side in sides if not _names(side)]
    if len(plain) != 1:
        return None
    measured = next(side for side in sides if _names(side))
    bound = expressions.evaluate_compiled(expressions.parse(ast.unparse(plain[0])), {})
    return expressions.parse(ast.unparse(measured)), bound


def _names(node: ast.AST) -> set[str]:
    """The metric names an expression's node reads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def red_flags_out_of_reach(pack: CriteriaPack, found: list[Candidate], whose: str = TONIGHT) -> list[str]:
    """Warnings: a red flag comparing an expression with a number `RANGE_APART` times or more further from zero
    than every value of it among the candidates going on (at least `ENOUGH`, not all zero), so that it holds for
    none: `win_share > 65` over shares of 0.3 to 0.65 (trial 55: a flag in percent over a share never fired, and
    check said ok). A flag is for the rare candidate, so only a bound on another scale than every value is said."""
    going = [c for c in found if c.went_on or c.capped]
    warnings = []
    for n, rule in enumerate(pack.red_flags):
        if (compared := _compared(rule.parsed)) is None:
            continue
        side, bound = compared
        values = _values(side, going)
        held = [bool(v) for v in _values(rule.parsed, going)]
        largest = max((abs(v) for v in values), default=0.0)
        if len(values) < ENOUGH or largest == 0 or any(held) or abs(bound) < RANGE_APART * largest:
            continue
        warnings.append(
            f"key `red_flags.{n}.when`: got {rule.when!r}; {whose} {side.text} lies within "
            f"[{significant(min(values))}, {significant(max(values))}], {RANGE_APART:g} times or more nearer zero than "
            f"{written(bound)}, so the flag holds for none: is the bound in another unit (a percent for a share: "
            f"{written(bound / 100)} for {written(bound)})? expected a bound in the unit of {side.text}")
    return warnings


def identities_off_band(pack: CriteriaPack, found: list[Candidate], nights: int = 0) -> list[str]:
    """An identity whose `expected` band most candidates going on lie outside (at least 3 of them, more than half):
    the band is the pack's mistake (a ratio written per thousand, a band for another unit), not every entity's
    data; judged as the skeptic would, each candidate by the median of its ratio over its kept history. `nights`:
    `found` pools the candidates of this night and that many before it (a source of fewer entities than the
    judgment needs, whose one series' band in percent doubted every night's candidate: trial 57)."""
    from opportunity_assets.verifications.series import series_of

    banded = [(n, identity) for n, identity in enumerate(pack.integrity.identities) if identity.expected is not None]
    if not banded:
        return []
    going = [s for c in found if c.went_on and (s := series_of(c, pack.columns, pack.max_window + 1, pack.grain))]
    problems = []
    for n, identity in banded:
        assert identity.expected is not None
        ratios = [expressions.evaluate_series(identity.parsed, series.values) for series in going]
        typical = [float(np.nanmedian(r)) for r in ratios if np.isfinite(r).any()]
        low, high = identity.expected
        outside = [r for r in typical if not low <= r <= high]
        if len(outside) >= 3 and len(outside) > len(typical) / 2:
            problems.append(
                f"key `integrity.identities.{n}.expected`: got {list(identity.expected)}; the ratio "
                f"`{identity.ratio}` lies outside it for {len(outside)} of the {len(typical)} candidates going on "
                f"{f'over this night and the {nights} before it ' if nights else ''}"
                f"(their typical value {significant(float(np.median(typical)), 4)}): expected the band the ratio "
                "lies in across the domain (its 5-95% range, in the ratio's own unit), or no `expected`: each "
                "entity is then judged against its own history alone")
    return problems
