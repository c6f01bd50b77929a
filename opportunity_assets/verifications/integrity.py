"""Is the source itself believable? The skeptic's checks on the rows, not on the arithmetic (DESIGN §7b).

Pure: takes a candidate's as_of-filtered rows (its metric windows and `integrity.history_periods` of history) and
the night's cross-section, returns findings. Every numeric column the source declares is judged, scored or not,
over the periods the metrics read (the judged span: 0 to the widest window back), each against the entity's own
history before that span: robust statistics (median and MAD of its past period-on-period and year-on-year
changes), so a volatile small market and a steady large one are each their own yardstick.

- a level that moved (`shifts.py`): a level shift or unit change, a change far outside the entity's past changes
  that stays (on a daily grain, also a step over the last days, each weekday's own level taken out); a spike, a
  one-period spike or drop reverted the next period; out of range, a value many times beyond every earlier value
  of the entity's (a unit slip where the history is too short or noisy for its changes to be a yardstick);
- figures too regular to be measured (`regularity.py`): a column unchanged for a run its own past makes
  improbable, a row that repeats another exactly, a value written with more decimals than the column ever had or
  a run on a coarser grid than its past made likely, changes that echo a year earlier's, figures on a straight
  line or a constant rate (filled in);
- staleness: a column that stopped reporting while the entity's latest period goes on;
- identities declared in the pack (ratios that hold in the domain): exactly, to the rounding of a derived column,
  where the entity's own past holds them so (`exact.py`); else against the entity's own band of the ratio, and
  against the declared band when the own history is short or was itself off throughout;
- cross-section: the latest change far outside that night's distribution across all scanned entities; a column
  most entities carry alike (a national index) off their figure (`peers.py`).

Integrity findings (the rows contradict each other or themselves) are reported under INPUTS, plausibility
findings (a value far outside what this entity or tonight's entities do) under ASSUMPTIONS. What a finding does
is its rule's `effect` in the pack; code applies it (logic.py), never a model.

Changes are measured on a log scale (a unit slip of 1000 is the same size at any level). "MADs" are robust
standard deviations: 1.4826 × the median absolute deviation, which equals the standard deviation for normal
data and is not moved by the few broken periods it is meant to catch.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np

from opportunity_assets import expressions
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import times
from opportunity_assets.records import AbsorbedEvents, Candidate, CopiedFigures, DataFinding, Refusal, RepeatedEvents
from opportunity_assets.text import first_of
from opportunity_assets.verifications import exact, regularity, shifts
from opportunity_assets.verifications.integrity_spec import Identity, IntegritySpec
from opportunity_assets.verifications.peers import in_step, levels, off_level
from opportunity_assets.verifications.proportions import off_ratio
from opportunity_assets.verifications.series import (
    COUNT_OFFSET,
    MIN_SAMPLE,
    MIN_SCALE,
    Findings,
    Series,
    as_percent,
    decimals,
    format_number,
    on_grid,
    on_grid_each,
    period_changes,
    period_span,
    resolution,
    robust,
    series_of,
    unit_sized,
    yardstick,
)
from opportunity_assets.verifications.shifts import ColumnFacts

MIN_PEERS = 8
"""Fewest scanned entities for a cross-section."""


def _stale(found: Findings, spec: IntegritySpec, column: str, latest_row: int, published_behind: int = 0,
           silent: np.ndarray | None = None) -> None:
    """A column whose latest value is `stale.periods` behind the latest published period, or missing from the
    entity's own latest row while its other columns report; `published_behind`: the periods a joined table's column
    trails the source by its publication lag alone (`_published_behind`), which are no silence; `silent`: for an
    events source, the periods in which the entity had no event, where an average, a share or a maximum has no value
    and no feed fell silent (a borough without a murder in the latest week read "age last reported 2009-W40,
    while the entity's other columns report 2009-W41": the count's 0 was its other column)."""
    series = found.series
    raw = series.values[column]
    present = np.flatnonzero(np.isfinite(raw))
    if not len(present):
        return
    last = int(present[-1])
    lag = series.length - 1 - last if silent is None else int((~silent[last + 1:]).sum())
    if published_behind and lag <= published_behind:
        return
    # the fill before the judged span; with a short history, up to its last value where `MIN_SAMPLE` periods lead
    # to it (its own silence since is what is judged, not a gap in its past), else over every period
    if series.judged_from >= spec.min_history:
        past = np.isfinite(raw[: series.judged_from])
    else:
        past = np.isfinite(raw[: last + 1] if last + 1 >= MIN_SAMPLE else raw)
    fill = float(past.mean()) if len(past) else 0.0
    if fill < spec.stale.min_fill or lag == 0 or (lag < spec.stale.periods and last >= latest_row):
        return
    behind = (f"{lag} period{'s' if lag > 1 else ''}{'' if silent is None else ' with events'} behind the latest "
              f"{series.periods[-1]}")
    found.add("stale", spec.stale.effect, column, [last], float(raw[last]), float(lag),
              f"{column} last reported {series.periods[last]}, {behind}"
              + ("" if last >= latest_row else
                 f", while the entity's other columns report {series.periods[latest_row]}")
              + f", though it was filled in {fill:.0%} of past periods",
              f"obtain {column} after {series.periods[last]} from the source")


def _published_behind(pack: CriteriaPack, column: str, as_of: date) -> int:
    """The periods a joined table's column trails the source's latest published period on the night `as_of` by the
    two lag rules alone (its `publication_lag_days` longer than the source's): rows not yet known, not a column that
    stopped reporting (trial 40: a yearly population joined 400 days after each month, beside weather 5 days after,
    was "last reported 2016-11, 13 periods behind" for every city, each STRONG doubted). None for the source's own
    columns, or where either is dated otherwise (`published_column`, `known_at`)."""
    src = pack.source
    joined = next((j for j in src.join if column in j.columns), None)
    if joined is None or joined.published_column or joined.known_at or src.published_column or src.known_at:
        return 0
    grain = pack.grain

    def latest(lag: int) -> date:  # the latest period ended `lag` days before the night
        known = as_of - timedelta(days=lag)
        period = grain.start(known)
        return period if grain.end(period) <= known else grain.back(period, 1)

    return max(0, grain.between(latest(joined.publication_lag_days), latest(src.publication_lag_days)))


def _exact_fit(series: Series, spec: IntegritySpec, identity: Identity) -> exact.ExactFit | None:
    """The identity's exact fit on the entity's own past (`exact.fit`), where one side is a bare column written
    rounded; None where it has no such form or the past does not hold it to the rounding."""
    form = identity.rounded
    if form is None or form.column not in series.values:
        return None
    values = series.values[form.column]
    past = values[: series.judged_from]
    if decimals(past, 6) is None:
        return None
    other = expressions.evaluate_series(form.other, series.values)
    return exact.fit(values, other, resolution(past, math.inf), series.judged_from, spec.min_history)


def _exact_identity(found: Findings, identity: Identity, fit: exact.ExactFit) -> bool:
    """Judged periods where the identity's rounded column is not the value the other columns give, rounded; True
    where there are any (a finding added)."""
    series = found.series
    assert identity.rounded is not None
    column, other = identity.rounded.column, identity.rounded.other.text
    off = [t for t in range(series.judged_from, series.length) if not fit.holds(t)]
    if not off:
        return False
    latest, worst = off[-1], max(off, key=lambda t: float(fit.off[t]))
    value = float(series.values[column][latest])
    since = series.periods[int(np.flatnonzero(np.isfinite(fit.off))[0])]
    more = "" if len(off) == 1 else (
        f"; {len(off) - 1} earlier judged period{'s' if len(off) > 2 else ''} off too"
        + ("" if worst == latest else f", the most {float(fit.off[worst]):.1f} steps in {series.periods[worst]}"))
    names = "/".join(sorted(identity.parsed.names))
    past = f"all {fit.checked}" if fit.held == fit.checked else f"{fit.held} of the {fit.checked}"
    found.add(f"exact:{identity.name}", identity.effect, column, off, value, float(fit.off[latest]),
              f"{column} {format_number(value)} in {series.periods[latest]} is not {other} = "
              f"{format_number(float(fit.implied[latest]))} written to {format_number(fit.step)}: it is "
              f"{float(fit.off[latest]):.2f} steps of {format_number(fit.step)} away, more than rounding allows, "
              f"though {past} of its past periods since {since} were within rounding ({identity.name}){more}",
              f"confirm {period_span([series.periods[t] for t in off])} {names} with the source")
    return True


def _tight_identity(found: Findings, spec: IntegritySpec, identity: Identity, ratio: np.ndarray, level: np.ndarray,
                    judged: np.ndarray) -> bool:
    """Judged periods where an identity that held in the entity's past far tighter than a band of MADs can judge
    (`exact.tight`) is off its past's bound; True where there are any (a finding added)."""
    series = found.series
    tight = exact.tight(level, series.judged_from, spec.min_history, MIN_SCALE)
    if tight is None:
        return False
    rounding = _rounding(series, identity, level)
    off = [int(t) for t in judged if tight.off(float(level[t]), float(rounding[t]))]
    if not off:
        return False
    latest, usual = off[-1], math.exp(tight.centre)
    since = series.periods[int(np.flatnonzero(np.isfinite(level[: series.judged_from]))[0])]
    distance = abs(float(level[latest]) - tight.centre)
    past = f"all {tight.checked}" if tight.held == tight.checked else f"{tight.held} of the {tight.checked}"
    more = "" if len(off) == 1 else f"; {len(off) - 1} earlier judged period{'s' if len(off) > 2 else ''} off too"
    found.add(f"identity:{identity.name}", identity.effect, identity.name, off, float(ratio[latest]),
              distance / max(tight.bound, 1e-12),
              f"{identity.name} ({identity.ratio}) is {format_number(float(ratio[latest]))} in "
              f"{series.periods[latest]}, {as_percent(float(level[latest]) - tight.centre)} off its usual "
              f"{format_number(usual)}, though {past} of its past periods since {since} were within "
              f"±{math.expm1(tight.bound):.4%} of it{more}",
              f"confirm {period_span([series.periods[t] for t in off])} "
              f"{'/'.join(sorted(identity.parsed.names))} with the source")
    return True


def _rounding(series: Series, identity: Identity, level: np.ndarray) -> np.ndarray:
    """Per period, how far (log scale) the rounding of the identity's figures alone can move its log ratio
    (`level`): each column moved half its step (`resolution` of its past; of its past read at single precision's 7
    significant digits where it is on no decimal grid, a float's 24.13999938964844 being 24.14) up and down, in every
    period alike and in turn (a column and its lag moved apart), the largest move the ratio makes, summed over the
    columns. Infinite where a moved figure leaves the ratio undefined."""
    total = np.zeros(series.length)
    turns = np.where(np.arange(series.length) % 2 == 0, 1.0, -1.0)
    for name in sorted(identity.parsed.names):
        values = series.values.get(name)
        if values is None:
            continue
        past = values[: series.judged_from]
        past = past[np.isfinite(past)]
        step = resolution(past, math.inf) if len(past) else 0.0
        if math.isinf(step):  # single-precision floats (24.13999938964844): read at their 7 significant digits
            step = resolution(np.array([float(f"{x:.7g}") for x in past.astype(np.float32)]), math.inf)
        worst = np.zeros(series.length)
        for moved in (step / 2, -step / 2, step / 2 * turns, -step / 2 * turns):
            ratio = expressions.evaluate_series(identity.parsed, {**series.values, name: values + moved})
            with np.errstate(all="ignore"):
                move = np.abs(np.where(ratio > 0, np.log(ratio), np.nan) - level)
            worst = np.fmax(worst, np.where(np.isnan(move), np.inf, move))
        total = total + worst
    return total


def _identity_bounds(identity: Identity, judged: np.ndarray, latest: int) -> np.ndarray:
    """Per judged period, how far out (in MADs of the entity's own ratio) it must lie to be a finding: the span's
    `threshold_mads`, bounding the largest of every judged period's distances, and for the night's latest period
    (`latest`, its index), seen tonight first, `latest_mads`, a bound on that one distance alone (trial 52: a
    median ×0.8, ×1.3 or borrowed from another market, 4.5 to 6 MADs of volume / (sales × median) in the month it
    starts, reached act-on the night that month was published; no clean act-on pick's latest period is beyond 3.4)."""
    return np.where(judged == latest, min(identity.latest_mads, identity.threshold_mads), identity.threshold_mads)


def _identity(found: Findings, spec: IntegritySpec, identity: Identity,
              fit: exact.ExactFit | None = None) -> None:
    series = found.series
    ratio = expressions.evaluate_series(identity.parsed, series.values)
    with np.errstate(all="ignore"):
        level = np.where(ratio > 0, np.log(ratio), np.nan)
    columns = "/".join(sorted(identity.parsed.names))
    judged = np.arange(series.judged_from, series.length)
    judged = judged[np.isfinite(level[judged])]
    if fit is not None and _exact_identity(found, identity, fit):
        return  # exact to the rounding in the entity's past: a band of MADs would only blur it
    if fit is None and _tight_identity(found, spec, identity, ratio, level, judged):
        return  # tighter in the entity's past than the floor of a band of MADs: judged to its own past's bound
    if not len(judged):
        return
    own = yardstick(series, level, spec.min_history, start=0)
    own_history = own is not None and np.isfinite(level[: series.judged_from]).sum() >= spec.min_history
    if own is not None and fit is None:
        z = np.array([own.z(level[t]) for t in judged])
        bounds = _identity_bounds(identity, judged, series.length - 1)
        single = int(np.argmax(np.abs(z) / bounds))
        persistent = (0.0, 0)
        for s in range(len(judged) - 2):
            tail = z[s:]
            typical = float(np.median(tail))
            stat = abs(typical) * math.sqrt(len(tail)) / 1.2533  # the median of k values, in its own SDs
            if abs(typical) >= 2 and stat > abs(persistent[0]):
                persistent = (math.copysign(stat, typical), s)
        usual = math.exp(own.median)
        if abs(z[single]) >= bounds[single]:
            t = int(judged[single])
            latest = "" if abs(z[single]) >= identity.threshold_mads else (
                f"; the night's latest period, judged alone, where {bounds[single]:g} MADs are enough to ask for it "
                "to be confirmed")
            found.add(f"identity:{identity.name}", identity.effect, identity.name, [t], float(ratio[t]),
                      float(abs(z[single])),
                      f"{identity.name} ({identity.ratio}) is {format_number(float(ratio[t]))} in {series.periods[t]}: "
                      f"{abs(z[single]):.1f} MADs {'above' if z[single] > 0 else 'below'} its usual "
                      f"{format_number(usual)} "
                      f"(± {own.scale:.1%}) since {own.since}{latest}",
                      f"confirm {series.periods[t]} {columns} with the source")
            return
        if abs(persistent[0]) >= identity.threshold_mads:
            indices = [int(t) for t in judged[persistent[1]:]]
            typical_ratio = float(np.median(ratio[indices]))
            # a run from the first judged period may have begun before it (trial 57: the seat-belt law's 1983-02
            # move of rear / front read "has been 0.689 since 1983-10", where the judged span began)
            since = f"since at least {series.periods[indices[0]]}, the first period judged" if persistent[1] == 0 \
                else f"since {series.periods[indices[0]]}"
            found.add(f"identity:{identity.name}", identity.effect, identity.name, indices, typical_ratio,
                      float(abs(persistent[0])),
                      f"{identity.name} ({identity.ratio}) has been {format_number(typical_ratio)} {since} "
                      f"(the median of those {len(indices)} periods), off its usual "
                      f"{format_number(usual)} (± {own.scale:.1%}) since {own.since}: {abs(persistent[0]):.1f} MADs "
                      "as a run",
                      f"confirm {columns} since {series.periods[indices[0]]} with the source")
            return
    if identity.expected is None:
        return
    low, high = identity.expected
    recent = float(np.median(ratio[judged]))
    own_inside = own_history and own is not None and low <= math.exp(own.median) <= high
    if not low <= recent <= high and not own_inside:
        indices = [int(t) for t in judged]
        found.add(f"identity:{identity.name}", identity.effect, identity.name, indices, recent, None,
                  f"{identity.name} ({identity.ratio}) is {format_number(recent)} over "
                  f"{period_span([series.periods[i] for i in indices])}, "
                  f"outside the domain's band {format_number(low)}-{format_number(high)}"
                  + ("" if own_history else " (too little own history to judge it against)"),
                  f"confirm {columns} with the source")


def _count_z(before: float, now: float) -> float:
    """How many standard deviations of its own Poisson noise a count moved from `before` to `now` events, on the
    square-root scale where that noise is the same at any count (the log's √(1/n) understates it at a few events);
    infinite for figures that are no counts (whole and not negative), which only the night's spread judges."""
    pair = np.array([before, now])
    if not (np.isfinite(pair).all() and on_grid(pair, 1.0) and pair.min() >= 0):
        return math.inf
    return math.sqrt(2) * abs(math.sqrt(now) - math.sqrt(before))


def _cross_section(found: Findings, spec: IntegritySpec, column: str, peers: Mapping[str, float]) -> None:
    """The latest change far outside tonight's entities' changes: a note (`cross_section`), or, where the entity's
    own past holds too few changes for `level_shift` to judge it (fewer than `MIN_SAMPLE` before the periods
    judged: an annual panel's first nights, a new entity) and the move between two positive figures is the size of a
    unit change (`unit_sized`), the finding `off_move` at `out_of_range`'s effect: tonight's entities are then the
    only yardstick there is. Trial 137: survey wages written unlogged from a year on (×5) were "53.8 MADs above
    tonight's 531 entities", a note, and three such men stayed in "Act on these"; on that panel's clean nights
    `off_move` fell on 1 of 4,256 entity-nights and on no act-on pick."""
    series = found.series
    if peers.get("count", 0) < MIN_PEERS:
        return
    values = series.values[column]
    change = latest_change(values)
    if change is None:
        return
    z = (change - peers["median"]) / max(peers["scale"], MIN_SCALE)
    # A sparse source's night is no yardstick of a count's noise: most of London's 32 boroughs had no murder two
    # weeks running, the night's spread of changes was near 0, and one borough's 1 -> 0 was "8.5 MADs below
    # tonight's entities" (trial 51). A count's move must also lie beyond its own noise.
    if abs(z) >= spec.cross_section.threshold_mads and _count_z(values[-2], values[-1]) >= \
            spec.cross_section.threshold_mads:
        last = series.length - 1
        past = int(np.isfinite(period_changes(values)[1:series.judged_from]).sum())
        message = (f"{column} {shifts.moved_by(values, last)} into {series.periods[last]}: {abs(z):.1f} MADs "
                   f"{'above' if z > 0 else 'below'} tonight's {int(peers['count'])} entities (typically "
                   f"{as_percent(peers['median'])} ± {max(peers['scale'], MIN_SCALE):.1%})")
        if past < MIN_SAMPLE and min(values[-2], values[-1]) > 0 and unit_sized(change, spec.out_of_range.factor):
            found.add("off_move", spec.out_of_range.effect, column, [last - 1, last], float(values[last]), abs(z),
                      f"{message}, a move the size of a unit change on an own past of {past} "
                      f"change{'' if past == 1 else 's'}, too few to judge it by")
        else:
            found.add("cross_section", spec.cross_section.effect, column, [last - 1, last], float(values[last]),
                      abs(z), message)


def _copied(found: Findings, spec: IntegritySpec, column: str, copied: CopiedFigures) -> None:
    """The scan found the column's latest figures in other entities' (`verifications.copies`)."""
    series = found.series
    values = series.values.get(column)
    if values is None:
        return
    last = series.length - 1
    indices = list(range(last - copied.periods + 1, last + 1))
    shown = ", ".join(format_number(float(values[i])) for i in indices)
    whose = first_of(copied.others, 3)
    span = period_span([series.periods[i] for i in indices])
    what = (f"are {whose}'s figures exactly, period for period: another entity's data (a join on the wrong key?)"
            if copied.scale is None else
            f"are {whose}'s figures times {copied.scale:.3g}, change for change within rounding: another entity's "
            "data rescaled (imputed from a donor, a borrowed history?)")
    found.add("copied", spec.copied.effect, column, indices, float(values[last]), float(copied.periods),
              f"{column} {shown} in {span} {what}; the chance of such a coincidence is {copied.chance:.1g} "
              f"({copied.basis})",
              f"confirm {span} {column} with the source: it matches {whose}'s")


def _refused(found: Findings, spec: IntegritySpec, refused: Sequence[Refusal]) -> None:
    """The entity's figures in the periods judged that the source refused when read: one finding per column (or
    for whole rows), naming its periods and why."""
    index = {period: i for i, period in enumerate(found.series.periods)}
    by_column: dict[str, list[Refusal]] = {}
    for refusal in refused:
        if refusal.period in index:
            for column in refusal.columns or ["row"]:
                by_column.setdefault(column, []).append(refusal)
    for column, refusals in sorted(by_column.items()):
        indices = sorted({index[r.period] for r in refusals})
        periods = [found.series.periods[i] for i in indices]
        what = "the whole row" if column == "row" else column
        why = "; ".join(dict.fromkeys(r.why for r in refusals))
        found.add("refused", spec.refused.effect, column, indices, None, float(len(indices)),
                  f"{what} in {period_span(periods)} was refused when the source was read ({why}): the night reads "
                  f"{'it' if len(indices) == 1 else 'them'} as a gap, but the feed wrote a bad figure in a period the "
                  "metrics reach",
                  f"confirm {period_span(periods)} {'rows' if column == 'row' else column} with the source")


def _events_read(series: Series, periods: Sequence[RepeatedEvents]) -> np.ndarray:
    """Per period of the series, the events the source read of the entity's then (`periods` lists the periods with
    a row): a share's denominator; NaN where none were, where a share is no figure at all and a count or a sum is 0
    by construction, not a figure a feed wrote."""
    read = {p.period: float(p.events) for p in periods if p.events > 0}
    return np.array([read.get(period, np.nan) for period in series.periods])


def _copies_scale(spread: float, rate: float, events: int) -> float:
    """The yardstick of a period's share of copied rows: its past periods' spread, at least the binomial noise of
    the period's rows at the entity's past rate of copies (a past with none is no yardstick of zero width; until
    stop 54 a flat 2 points, which hid a day exported twice in a month, 3% of its rows, in a feed that never had a
    copy)."""
    return max(spread, math.sqrt(rate * (1 - rate) / events))


def _repeated_events(found: Findings, spec: IntegritySpec, periods: Sequence[RepeatedEvents]) -> None:
    """The judged period whose share of rows repeating another far exceeds the entity's past periods' shares (or
    with too few past periods to tell their spread, is half or more), and, where it has a past, whose copies are
    improbable at the entity's past rate of them (`regularity.chance_of_repeats`; a past without copies counts as
    one in its events and one more: a few hundred events without any make one among four no feed sent twice)."""
    rule = spec.repeated_events
    index = {period: i for i, period in enumerate(found.series.periods)}
    dated = [(index[p.period], p) for p in periods if p.period in index and p.events > 0]
    past = [(t, p.repeated / p.events) for t, p in dated if t < found.series.judged_from]
    stick = robust(np.array([share for _, share in past]), found.series.periods[past[0][0]]) if past else None
    before = [p for t, p in dated if t < found.series.judged_from]
    rate = (sum(p.repeated for p in before) + 1) / (sum(p.events for p in before) + 2)
    worst: tuple[float, int, RepeatedEvents, float] | None = None
    for t, p in dated:
        share = p.repeated / p.events
        if t < found.series.judged_from or share < rule.min_share:
            continue
        # (with a past too short to judge a share against too: trial 103's Toyota, 1 of 2 new models a copy of the
        # other after 3 without one, was "sent twice?"; at its past's rate, 1 in 5, that is a chance of 36%)
        if before and regularity.chance_of_repeats(p.repeated, p.events, rate) >= rule.max_probability:
            continue
        scale = _copies_scale(stick.scale, rate, p.events) if stick is not None else math.nan
        z = (share - stick.median) / scale if stick is not None else math.inf
        if (z >= rule.threshold_mads if stick is not None else share >= 0.5) and (worst is None or z > worst[0]):
            worst = (z, t, p, scale)
    if worst is None:
        return
    z, t, p, scale = worst
    share = p.repeated / p.events
    against = (f"against {stick.median:.0%} ± {scale:.1%} in its past periods since "
               f"{stick.since} ({z:.1f} MADs above)") if stick is not None else "with too few past periods to judge "\
        "against, and every row having a twin on average"
    found.add("repeated_events", rule.effect, "events", [t], share, None if stick is None else z,
              f"{p.repeated} of the {p.events} rows read in {p.period} repeat another of them in every column the "
              f"night reads ({share:.0%}), {against}: a feed loaded twice counts each copy again in every count and "
              "sum", f"confirm {p.period}'s rows with the source (sent twice?)")


def _partial_period(found: Findings, spec: IntegritySpec, cut_short: str | None, reads: frozenset[int]) -> None:
    """The night's latest period cut short in the feed (`Candidate.latest_cut_short`), where a metric reads it:
    its counts and sums are a part of the period's for every entity alike, a drop no entity made."""
    if cut_short is None or 0 not in reads:
        return
    latest = found.series.length - 1
    period = found.series.periods[latest]
    found.add("partial_period", spec.partial_period.effect, "events", [latest], None, None,
              f"{cut_short}: the metrics read {period} as a whole period",
              f"confirm {period}'s events with the source (the extract may end early)")


def _absorbed(found: Findings, spec: IntegritySpec, column: str, absorbed: AbsorbedEvents) -> None:
    """The scan found the column risen, from some period on, by what another entity's fell from the same period
    (`verifications.absorbed`): that entity's events counted as this one's."""
    series = found.series
    values = series.values.get(column)
    if values is None or absorbed.periods > series.length:
        return
    last = series.length - 1
    indices = list(range(last - absorbed.periods + 1, last + 1))
    span = period_span([series.periods[i] for i in indices])
    other = absorbed.other
    found.add("absorbed", spec.absorbed.effect, column, indices, float(values[last]), absorbed.rise_sds,
              f"{column} rose by {format_number(absorbed.rise)} over its level before in {span} "
              f"({absorbed.rise_sds:.1f} robust SDs of its own noise) as {other}'s fell by "
              f"{format_number(absorbed.fall)} from the same period ({absorbed.fall_sds:.1f} of its own), and no other "
              f"entity's moved so: {other}'s events counted as this one's (a category recoded, two ids merged?)",
              f"confirm {span} {column} with the source: {other}'s fell by as much")


def _scored_periods(pack: CriteriaPack) -> dict[str, frozenset[int]]:
    """Per source column, the periods back the score reads it in: the windows of the metrics the required inputs
    are computed from (a coverage or an age reads no figure)."""
    out: dict[str, set[int]] = {}
    for required in pack.required_inputs:
        for name in pack.base_metrics(required):
            metric = pack.metrics[name]
            if metric.agg in ("coverage", "age_days"):
                continue
            for column in (metric.column, *(metric.columns or ())):
                if column is not None:
                    out.setdefault(column, set()).update(range(metric.window[0], metric.window[1] + 1))
    return {column: frozenset(periods) for column, periods in out.items()}


def _read_periods(pack: CriteriaPack) -> frozenset[int]:
    """The periods back any metric reads a figure in (every window's, scored or not; a coverage or an age reads
    none): where a run of too-regular figures can move a number the night shows."""
    return frozenset(back for metric in pack.metrics.values() if metric.agg not in ("coverage", "age_days")
                     for back in range(metric.window[0], metric.window[1] + 1))


# ---- public surface --------------------------------------------------------------------------------------
def latest_change(values: np.ndarray) -> float | None:
    """The latest period-on-period change (log scale), if both periods have a value."""
    if len(values) < 2 or not (math.isfinite(values[-1]) and math.isfinite(values[-2])):
        return None
    return float(period_changes(values)[-1])


def two_period_changes(before: np.ndarray, now: np.ndarray) -> np.ndarray:
    """`latest_change` of each pair (before, now) at once: NaN where either is missing or not positive enough (the
    night's cross-section takes one per entity and column: tens of thousands on a wide night)."""
    positive = (before > 0).astype(float) + (now > 0).astype(float)
    with np.errstate(all="ignore"):  # (two values near the largest float overflow their sum: an infinite offset)
        total = np.where(before > 0, before, 0.0) + np.where(now > 0, now, 0.0)
        offset = np.where(positive > 0, 0.01 * total / np.maximum(positive, 1.0), 1.0)
        offset = np.where(on_grid_each(before, 1.0) & on_grid_each(now, 1.0), np.maximum(offset, COUNT_OFFSET),
                          offset)
        valid = np.isfinite(before) & np.isfinite(now) & (before + offset > 0) & (now + offset > 0)
        return np.where(valid, np.log(now + offset) - np.log(before + offset), np.nan)


def night_peers(before: Mapping[str, np.ndarray], now: Mapping[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """The night's cross-section: per column, the median, robust scale and count of every scanned entity's latest
    period-on-period change (`before` and `now`: each column's two latest values, one entity a position), and of
    their latest levels (`peers.levels`). A reference distribution, never a ranking."""
    out: dict[str, dict[str, float]] = {}
    for column, latest in now.items():
        stick = robust(two_period_changes(before[column], latest), "")
        if stick is not None:
            out[column] = {"median": stick.median, "scale": stick.scale, "count": float(stick.count)}
        level = levels(latest)
        if level:
            out.setdefault(column, {}).update(level)
    return out


def check(pack: CriteriaPack, candidate: Candidate) -> list[DataFinding]:
    """Every integrity and plausibility finding on the candidate's rows, each with its rule's effect."""
    spec = pack.integrity
    columns = pack.columns
    series = series_of(candidate, columns, pack.max_window + 1, pack.grain)
    if series is None:
        return []
    found = Findings(series)
    filled = np.column_stack([np.isfinite(series.values[c]) for c in columns]).sum(axis=1)
    rows_reported = np.flatnonzero(filled >= max(1, len(columns) - 1))
    latest_row = int(rows_reported[-1]) if len(rows_reported) else -1  # the entity's latest (nearly) full row
    fits = {i.name: _exact_fit(series, spec, i) for i in spec.identities}
    signed = pack.source.signed_panel_columns
    read = {c for m in pack.metrics.values() for c in [m.column, *(m.columns or [])] if c is not None}
    material = _scored_periods(pack)
    reads = _read_periods(pack)
    counted = _events_read(series, candidate.repeated_events)
    silent = np.isnan(counted) if pack.source.shape == "events" else None
    unwritten = silent if candidate.repeated_events else None  # (the periods read known: no event is no figure)
    shares, summed = pack.source.share_columns, pack.source.summed_columns
    quotients = pack.source.quotient_columns
    counts = set(pack.source.counted_columns)
    for column in columns:
        if np.isfinite(series.values[column]).sum() < 2:
            continue
        share = column in shares  # its changes on their own scale: the night's shared moves are log changes
        facts = ColumnFacts(column, material.get(column, frozenset()),
                            None if share else candidate.shared_changes.get(column),
                            None if share else candidate.shared_spreads.get(column), column in signed,
                            candidate.typical_scales.get(column), counted if share else None,
                            unwritten if column in summed else None)
        shifts.shifts(found, spec, facts)
        shifts.out_of_range(found, spec, facts)
        shifts.stays(found, spec, facts)
        regularity.stuck(found, spec, column, [fit for i in spec.identities if (fit := fits[i.name]) is not None
                                     and i.rounded is not None and i.rounded.column == column], reads, silent,
                       counted if column in shares else None, facts.shared, column in counts,
                       counted if column in quotients else None)
        _stale(found, spec, column, latest_row, _published_behind(pack, column, candidate.as_of), unwritten)
        if column not in quotients:  # a quotient's decimals are its count of events', no feed's
            regularity.precision(found, spec, column, candidate.shared_decimals.get(column))
        regularity.echoed(found, spec, column)
        regularity.interpolated(found, spec, column, column not in quotients)
        regularity.rounded(found, spec, column, reads, column not in quotients, column in read)
        if column in candidate.peers:
            _cross_section(found, spec, column, candidate.peers[column])
            if column not in candidate.shared_levels:  # (a figure they carry alike is `in_step`'s to judge)
                off_level(found, spec, column, candidate.peers[column])
        in_step(found, spec, column, candidate.shared_levels.get(column))
    off_ratio(found, spec, candidate.peer_ratios, candidate.shared_levels)
    for column, copied in sorted(candidate.copies.items()):
        _copied(found, spec, column, copied)
    if pack.source.shape != "events":
        _refused(found, spec, candidate.refused)
    else:
        _repeated_events(found, spec, candidate.repeated_events)
        _partial_period(found, spec, candidate.latest_cut_short, reads)
        for column, absorbed in sorted(candidate.absorbed.items()):
            _absorbed(found, spec, column, absorbed)
    if len(columns) >= spec.repeated_rows.min_columns:
        regularity.repeated_rows(found, spec, columns, silent)
    regularity.interpolated_row(found, spec, columns, frozenset(pack.source.quotient_columns))
    for identity in spec.identities:
        _identity(found, spec, identity, fits[identity.name])
    return found.items


_WHAT = {"level_shift": "level shift", "spike": "one-period spike or drop", "cross_section": "outlier against tonight's"
         " entities", "off_move": "a unit change's size against tonight's entities, on a short past"}


def headline(finding: DataFinding, *, blinded: bool = False) -> str:
    """The finding in a few words, with only numbers its record holds (value, size) and its periods, or with
    periods counted back from the latest when `blinded` (a model prompt holds no calendar dates)."""
    def when(i: int) -> str:
        return f"{finding.periods_back[i]} periods back" if blinded else finding.periods[i]

    if finding.rule.startswith("red_flag:"):
        return f"red flag {finding.column}"
    if finding.rule == "repeated_row":
        return f"the row {when(-1)} repeats the row {when(0)}"
    if finding.rule == "stuck":
        return f"{finding.column} unchanged for {finding.size:.0f} periods to {when(-1)}"
    if finding.rule == "precision":
        return f"{finding.column} has more decimals than ever from {when(0)}"
    if finding.rule == "rounded":
        return f"{finding.column} on a coarser grid than ever for {finding.size:.0f} values to {when(-1)}"
    if finding.rule == "echoed":
        return f"{finding.column} moving as a year earlier for {finding.size:.0f} changes to {when(-1)}"
    if finding.rule == "interpolated":
        return f"{finding.column} moving by an even step for {finding.size:.0f} periods to {when(-1)}"
    if finding.rule == "absorbed":
        return f"{finding.column} up by what another entity's fell, {len(finding.periods)} periods to {when(-1)}"
    if finding.rule == "copied":
        return f"{finding.column} equals another entity's figures for the {finding.size:.0f} periods to {when(-1)}"
    if finding.rule.startswith("exact:"):
        return (f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)} is {finding.size:.1f} rounding "
                f"steps from what its identity {finding.rule.removeprefix('exact:')} gives, more than rounding allows")
    if finding.rule == "repeated_events":
        return f"rows of {when(-1)}: {finding.value or 0.0:.0%} of them copies of another"
    if finding.rule == "partial_period":
        return f"events of {when(-1)} end early in the feed: a part of the period read as a whole"
    if finding.rule == "refused":
        what = "the whole row" if finding.column == "row" else finding.column
        where = when(-1) if len(finding.periods) == 1 else f"{when(0)} to {when(-1)}"
        return f"{what} in {where} refused when read"
    if finding.rule == "out_of_range":
        # below the smallest positive value before it (`shifts.out_of_range` says which side in its message): trial
        # 78's 3 deaths in a year of earthquakes, after years of 63 and more, read "21 times beyond every earlier value"
        if shifts.BELOW_EVERY in finding.message:
            return (f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)}: "
                    f"1/{times(finding.size or 0.0)} of every earlier positive value")
        return (f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)}: "
                f"{times(finding.size or 0.0)} times beyond every earlier value")
    if finding.rule == "off_level":
        return f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)}: {finding.size:.1f} MADs off " \
            "tonight's entities' levels, beyond every other's"
    if finding.rule == "off_ratio":
        return f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)}: {finding.size:.1f} MADs off " \
            "the proportion to other columns tonight's entities hold, beyond every other's"
    if finding.rule == "off_peers":
        return f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)}: off the figure tonight's " \
            "entities carry alike"
    if finding.rule == "stale":
        return f"{finding.column} last reported {when(-1)}, {finding.size:.0f} periods behind"
    if finding.rule in ("cross_section", "off_move"):  # a change: its value is the later period's (trial 119 read
        # "institutions 40.57 in 1995 to 1996" for 0 in 1995 and 40.57 in 1996)
        return (f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)}, moved from {when(0)}: "
                f"{finding.size or 0.0:.1f} MADs, {_WHAT[finding.rule]}")
    value = "" if finding.value is None else f" {format_number(finding.value)}"
    where = when(-1) if len(finding.periods) == 1 else f"{when(0)} to {when(-1)}"
    if finding.size is None:
        return f"{finding.column}{value} over {where}, outside the domain's band"
    what = _WHAT.get(finding.rule, "off its own band")
    return f"{finding.column}{value} in {where}: {finding.size:.1f} MADs, {what}"


def history_summary(pack: CriteriaPack, candidate: Candidate) -> dict[str, dict[str, Any]]:
    """A compact, dateless summary of each column's own history for the model verifier: the latest value, its
    latest period-on-period change and how that compares with the entity's past changes."""
    series = series_of(candidate, pack.columns, pack.max_window + 1, pack.grain)
    if series is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    signed = pack.source.signed_panel_columns
    for column in pack.columns:
        raw = series.values[column]
        present = np.flatnonzero(np.isfinite(raw))
        if not len(present):
            continue
        step = period_changes(raw, column in signed)
        stick = yardstick(series, step, pack.integrity.min_history)
        last = int(present[-1])
        entry: dict[str, Any] = {"latest": float(raw[last]), "periods_back": series.back(last),
                                 "periods_kept": len(present)}
        if stick is not None and math.isfinite(step[last]):
            entry["latest_change"] = as_percent(step[last])
            entry["typical_change"] = f"{as_percent(stick.median)} ± {stick.scale:.1%}"
            entry["latest_change_mads"] = round(stick.z(step[last]), 1)
        out[column] = entry
    return out
