"""Outcomes and the backtest, in pure code: what became known after a verdict, and how the verdicts fared.

An outcome is the pack's `outcome:` measured twice for one candidate: `agg` of `metric` over the
`window_periods` ending at the night's latest published period t0 (rows published by as_of), and over the same
window ending at t0 + `horizon_periods`, as known on the outcome date, as_of + `horizon_periods` (rows published
by then only: the point-in-time query filters them, and this module refuses a row published later).
No outcome while the horizon has not passed (PENDING: the outcome date is after today, or the source has not
published t0 + horizon by then), and none when a period of either window has no value (GAP): nothing is
estimated.

Outcomes are read by the backtest and the calibration gate, never by a verdict: no module on a verdict's path
imports this package (tests/test_outcomes.py checks it).
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from enum import StrEnum
from typing import Any, Literal, TypeVar

from opportunity_assets.criteria import OutcomeSpec
from opportunity_assets.formatting import signed, significant
from opportunity_assets.periods import MONTH, Grain, window_label
from opportunity_assets.records import FrozenRecord, Status, Verdict

T = TypeVar("T")


class OutcomeStatus(StrEnum):
    KNOWN = "known"
    PENDING = "pending"
    """The horizon has not passed: the outcome date is after today, or t0 + horizon is not published by then."""
    GAP = "gap"
    """A period of either window has no value: no outcome (never estimated)."""


class Outcome(FrozenRecord):
    """What became of one candidate of one night, measured as the pack's `outcome:` says."""

    as_of: date
    candidate_id: str
    outcome_date: date
    """as_of + horizon: the later window is read as known on this date, and only so."""
    status: OutcomeStatus
    value: float | None
    """The change: relative (0.05 = +5%) or a difference, as the pack says; None unless KNOWN."""
    start_value: float | None
    """The aggregate over the window ending at t0, as known on as_of."""
    end_value: float | None
    """The aggregate over the window ending at t0 + horizon, as known on the outcome date."""
    start_window: str
    """Months of the first window, e.g. `2009-09..2009-11`."""
    end_window: str
    end_published_at: date | None
    """Latest publication date among the later window's rows; never after outcome_date."""
    reason: str
    """What the value is, or why there is none, in one line."""
    anchor: date | None = None
    """t0, the night's latest published period: two nights of one t0 judged the same rows. None where nothing
    was published, and in outcomes stored before it was recorded."""


def outcomes_said(statuses: Sequence[OutcomeStatus], spec: OutcomeSpec | None = None,
                  plural: str = "periods") -> str:
    """A backtest night's outcomes in its line: how many are known, pending and gaps (trial 107: every night said
    "outcomes measured", those whose horizon lay past the data's end too, whose outcomes all stayed pending and
    count in no hit rate; only the report's `pending` column told them apart). A night whose every outcome is a gap
    under a window of several periods names `outcome.window_periods` (trial 135: visits every 6 months read by
    quarter, a 2-quarter window never filled at both ends; 840 gaps and no key named)."""
    if not statuses:
        return "no outcome to measure (no candidate analyzed)"
    known, pending, gaps = (sum(s == status for s in statuses)
                            for status in (OutcomeStatus.KNOWN, OutcomeStatus.PENDING, OutcomeStatus.GAP))
    said = [f"{known} known"] if known else []
    if pending:
        said.append(f"{pending} pending (their horizon's data not published yet: in no hit rate)")
    if gaps:
        said.append(f"{gaps} with a gap in a window (never measured)")
        if gaps == len(statuses) and spec is not None and (n := spec.window_periods) > 1:
            said[-1] += (f": every one, as `outcome.window_periods` {n} needs each of its {n} {plural} filled at both "
                         f"ends (rows only some {plural}: a shorter window)")
    return "outcomes " + ", ".join(said)


def add_months(day: date, months: int) -> date:
    """The same day `months` later (the month's last day when it is shorter: 2008-02-29 + 12 = 2009-02-28)."""
    return MONTH.later(day, months)


def outcome_date(spec: OutcomeSpec, as_of: date, grain: Grain = MONTH) -> date:
    """When a night's outcome is known: as_of + the horizon, in the source's periods."""
    return grain.later(as_of, spec.horizon_periods)


def _as_date(value: Any) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


def _window_value(spec: OutcomeSpec, rows: Iterable[Mapping[str, Any]], last_period: date,
                  known_on: date, grain: Grain) -> tuple[float | None, list[str]]:
    """`agg` of the metric over the window ending at `last_period`, and the periods that lack a value."""
    by_period: dict[date, float | None] = {}
    for row in rows:
        published = _as_date(row["published_at"])
        if published > known_on:
            raise ValueError(f"row of {grain.label(_as_date(row['period']))} published {published} was given for a "
                             f"window known on {known_on}: the point-in-time query must not return it")
        by_period[_as_date(row["period"])] = row.get(spec.metric)
    periods = [grain.back(last_period, back) for back in range(spec.window_periods - 1, -1, -1)]
    values = [by_period.get(period) for period in periods]
    missing = [grain.label(period) for period, value in zip(periods, values, strict=True) if value is None]
    if missing:
        return None, missing
    filled = [float(v) for v in values if v is not None]
    aggregate: dict[str, Callable[[list[float]], float]] = {
        "sum": sum, "avg": lambda xs: sum(xs) / len(xs), "min": min, "max": max, "last": lambda xs: xs[-1]}
    return aggregate[spec.agg](filled), []


def measure_outcome(spec: OutcomeSpec, *, as_of: date, candidate_id: str, anchor: date | None,
                    start_rows: Iterable[Mapping[str, Any]], end_rows: Iterable[Mapping[str, Any]],
                    end_anchor: date | None, today: date, grain: Grain = MONTH, latest: date | None = None
                    ) -> Outcome:
    """One candidate's outcome. `anchor` is t0 (latest period published by as_of), `start_rows` its rows as known
    on as_of; `end_rows` and `end_anchor` as known on the outcome date (empty and None when it is after today).
    `latest`: the source's latest period as known today, where t0 + horizon was not published by the outcome
    date: a source that has published periods past it since skips that period, and the outcome is a gap, not
    pending (trial 55: the terrorism extract's 1993, which it never holds, read "pending" on nights 30 years old)."""
    when = outcome_date(spec, as_of, grain)
    window = (0, spec.window_periods - 1)
    if anchor is None:
        return Outcome(as_of=as_of, candidate_id=candidate_id, outcome_date=when, status=OutcomeStatus.GAP,
                       value=None, start_value=None, end_value=None, start_window=window_label(None, window, grain),
                       end_window=window_label(None, window, grain), end_published_at=None,
                       reason=f"nothing was published by {as_of}")
    end_period = grain.back(anchor, -spec.horizon_periods)
    start_rows, end_rows = list(start_rows), list(end_rows)
    start_value, start_missing = _window_value(spec, start_rows, anchor, as_of, grain)
    base: dict[str, Any] = {"as_of": as_of, "candidate_id": candidate_id, "outcome_date": when, "anchor": anchor,
                            "start_value": start_value, "start_window": window_label(anchor, window, grain),
                            "end_window": window_label(end_period, window, grain)}

    def without(status: OutcomeStatus, reason: str) -> Outcome:
        return Outcome(**base, status=status, value=None, end_value=None, end_published_at=None, reason=reason)

    if start_value is None:
        return without(OutcomeStatus.GAP, f"no {spec.metric} for {', '.join(start_missing)} as known on {as_of}")
    if when > today:
        return without(OutcomeStatus.PENDING, f"horizon not passed: the outcome date {when} is after today")
    if (end_anchor is None or end_anchor < end_period) and latest is not None and latest >= end_period:
        return without(OutcomeStatus.GAP, f"{grain.label(end_period)} was not published by the outcome date {when}, "
                                          f"and the source has published to {grain.label(latest)} since: a period "
                                          "it skips, or published late")
    if end_anchor is None or end_anchor < end_period:
        return without(OutcomeStatus.PENDING, f"{grain.label(end_period)} was not published by the outcome date {when}")
    end_value, end_missing = _window_value(spec, end_rows, end_period, when, grain)
    if end_value is None:
        return without(OutcomeStatus.GAP, f"no {spec.metric} for {', '.join(end_missing)} as known on {when}")
    if spec.change == "relative" and start_value == 0:
        return without(OutcomeStatus.GAP, f"{spec.agg} {spec.metric} is 0 over {base['start_window']}: "
                                          "a relative change is undefined")
    value = end_value / start_value - 1 if spec.change == "relative" else end_value - start_value
    first_period = grain.back(end_period, spec.window_periods - 1)
    published = max(_as_date(r["published_at"]) for r in end_rows
                    if first_period <= _as_date(r["period"]) <= end_period)
    return Outcome(**base, status=OutcomeStatus.KNOWN, value=value, end_value=end_value,
                   end_published_at=published,
                   reason=f"{spec.agg} {spec.metric} {significant(start_value, 6)} over {base['start_window']} → "
                          f"{significant(end_value, 6)} over {base['end_window']} (known on {when})")


# ---- the backtest ------------------------------------------------------------------------------------------
class VerdictOutcome(FrozenRecord):
    """One past verdict and what became of it."""

    as_of: date
    candidate_id: str
    verdict: Verdict | None
    """None: the candidate passed the hard filters but the cap left it out (not analyzed). It has no verdict to
    score, but it is one of the night's candidates: the median candidate is taken over them too."""
    verification: Status | None
    """The verifier's status; None when the verification failed (an error record)."""
    outcome: Outcome


def advantage(value: float, median: float, direction: str) -> float:
    """How much better than the night's median candidate an outcome is (positive: better)."""
    return value - median if direction == "higher_is_better" else median - value


def night_medians(rows: Iterable[VerdictOutcome], *, analyzed_only: bool = False, least: int = 1
                  ) -> dict[date, float]:
    """Per night, the median known outcome over every row: the night's candidates that passed the hard filters,
    analyzed or capped (the median candidate, whatever the cap's order). `analyzed_only`: over the analyzed ones
    alone (the median analyzed candidate, which moves with the cap's order: a cap by score analyzes the
    best-scored, and their median is itself a high scorer). `least`: nights with fewer known outcomes are left
    out (one candidate is its own median: nothing to beat)."""
    values: dict[date, list[float]] = defaultdict(list)
    for row in rows:
        if row.outcome.value is not None and (row.verdict is not None or not analyzed_only):
            values[row.as_of].append(row.outcome.value)
    return {as_of: statistics.median(vs) for as_of, vs in values.items() if len(vs) >= least}


COMPARED = 2
"""Known outcomes a night needs before its picks are held against its median candidate: a night of one candidate
(a source of one entity) is its own median, and its STRONG pick "beat" it on no date, by +0.00, with an interval of
+0.00 to +0.00 (trial 51's island of turnips), as if that had been measured."""


class GroupStats(FrozenRecord):
    """Outcomes of a group of verdicts (statistics over the known outcomes only)."""

    group: str
    known: int
    """Verdicts with a known outcome."""
    pending: int
    gap: int
    mean: float | None
    median: float | None
    mean_advantage: float | None
    """Mean of (outcome − that night's median candidate outcome), signed so that positive is better."""
    beat_share: float | None
    """Share of these verdicts whose outcome beat their night's median candidate."""


class StrongHitRate(FrozenRecord):
    """Does STRONG beat the median candidate? Per date, the STRONG picks' mean outcome against the median."""

    dates: int
    """Dates with at least one STRONG verdict whose outcome is known."""
    hits: int
    """Dates on which the STRONG picks' mean outcome beat the night's median candidate (of those that passed the
    hard filters)."""
    rate: float | None
    hits_vs_analyzed: int = 0
    """The same against the night's median *analyzed* candidate (the yardstick of earlier releases)."""
    rate_vs_analyzed: float | None = None
    picks: int
    picks_beat: int
    """STRONG verdicts whose own outcome beat their night's median candidate."""
    mean_advantage: float | None
    """Mean over dates of (STRONG picks' mean − night median)."""
    interval: tuple[float, float] | None
    """90% interval of mean_advantage, resampling dates (bootstrap); None with fewer than 2 dates."""


class VerifierLift(FrozenRecord):
    """Does the verifier add signal? Among STRONG verdicts: CONFIRMED against REJECTED or UNCERTAIN."""

    confirmed: GroupStats
    doubted: GroupStats
    """STRONG verdicts the verifier REJECTED or left UNCERTAIN."""
    lift: float | None
    """confirmed.mean_advantage − doubted.mean_advantage; positive: the verifier's doubts point at worse picks."""
    interval: tuple[float, float] | None
    """90% interval of the lift, resampling dates (bootstrap); None when a group is empty."""


class NightPoint(FrozenRecord):
    as_of: date
    known: int
    """Candidates of the night with a known outcome."""
    median: float | None
    strong: int
    """STRONG verdicts of the night with a known outcome."""
    strong_advantage: float | None
    """The STRONG picks' mean outcome minus the night's median; None without STRONG."""


class PeriodReport(FrozenRecord):
    label: str
    """`design` (as_of up to the pack's design_until), `held-out` (after it) or `all` (no design_until)."""
    first: date | None
    last: date | None
    nights: int
    by_verdict: list[GroupStats]
    by_verification: list[GroupStats]
    hit_rate: StrongHitRate
    lift: VerifierLift
    per_night: list[NightPoint]


class BacktestReport(FrozenRecord):
    domain: str
    criteria_fingerprint: str
    outcome: str
    """The outcome definition, in words."""
    change: Literal["relative", "difference"]
    direction: Literal["higher_is_better", "lower_is_better"]
    design_until: date | None
    nights: list[date]
    """Nights asked for."""
    missing: list[date]
    """Nights asked for without a stored night and outcomes for these criteria (not in the report)."""
    repeated: list[date]
    """Nights whose latest period an earlier night of the range read (not in the figures: the same picks and
    outcomes again)."""
    periods: list[PeriodReport]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _group(name: str, rows: Sequence[VerdictOutcome], medians: Mapping[date, float], direction: str) -> GroupStats:
    known = [r for r in rows if r.outcome.value is not None]
    values = [r.outcome.value for r in known if r.outcome.value is not None]
    edges = [advantage(r.outcome.value, medians[r.as_of], direction) for r in known
             if r.outcome.value is not None and r.as_of in medians]
    return GroupStats(group=name, known=len(known),
                      pending=sum(r.outcome.status == OutcomeStatus.PENDING for r in rows),
                      gap=sum(r.outcome.status == OutcomeStatus.GAP for r in rows),
                      mean=_mean(values), median=statistics.median(values) if values else None,
                      mean_advantage=_mean(edges), beat_share=_mean([float(e > 0) for e in edges]))


def bootstrap_interval(blocks: Sequence[T], statistic: Callable[[Sequence[T]], float | None], *,
                       resamples: int = 2000, seed: int = 0) -> tuple[float, float] | None:
    """5th and 95th percentile of `statistic` over resamples of whole blocks (dates), with replacement.
    Deterministic (fixed seed); None with fewer than two blocks or no defined statistic."""
    if len(blocks) < 2:
        return None
    rng = random.Random(seed)
    stats = sorted(s for s in (statistic([rng.choice(blocks) for _ in blocks]) for _ in range(resamples))
                   if s is not None)
    if not stats:
        return None
    return stats[int(0.05 * (len(stats) - 1))], stats[int(0.95 * (len(stats) - 1))]


def _pooled_difference(blocks: Sequence[tuple[list[float], list[float]]]) -> float | None:
    first = [x for a, _ in blocks for x in a]
    second = [x for _, b in blocks for x in b]
    return sum(first) / len(first) - sum(second) / len(second) if first and second else None


def _mean_of_means(blocks: Sequence[list[float]]) -> float | None:
    return _mean([sum(b) / len(b) for b in blocks if b])


def period_report(label: str, rows: Sequence[VerdictOutcome], nights: Sequence[date], direction: str) -> PeriodReport:
    medians = night_medians(rows, least=COMPARED)
    analyzed_medians = night_medians(rows, analyzed_only=True)
    strong = [r for r in rows if r.verdict == Verdict.STRONG]
    strong_edges: dict[date, list[float]] = defaultdict(list)
    strong_values: dict[date, list[float]] = defaultdict(list)
    for r in strong:
        if r.outcome.value is not None and r.as_of in medians:
            strong_edges[r.as_of].append(advantage(r.outcome.value, medians[r.as_of], direction))
            strong_values[r.as_of].append(r.outcome.value)
    per_date = [strong_edges[d] for d in sorted(strong_edges)]
    hits = sum(1 for edges in per_date if sum(edges) / len(edges) > 0)
    hits_vs_analyzed = sum(1 for d, values in strong_values.items()
                           if advantage(sum(values) / len(values), analyzed_medians[d], direction) > 0)
    picks = [e for edges in per_date for e in edges]
    hit_rate = StrongHitRate(
        dates=len(per_date), hits=hits, rate=hits / len(per_date) if per_date else None,
        hits_vs_analyzed=hits_vs_analyzed, rate_vs_analyzed=hits_vs_analyzed / len(per_date) if per_date else None,
        picks=len(picks),
        picks_beat=sum(e > 0 for e in picks), mean_advantage=_mean_of_means(per_date),
        interval=bootstrap_interval(per_date, _mean_of_means))

    confirmed = [r for r in strong if r.verification == Status.CONFIRMED]
    doubted = [r for r in strong if r.verification in (Status.REJECTED, Status.UNCERTAIN)]
    lift_blocks: dict[date, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for side, group in ((0, confirmed), (1, doubted)):
        for r in group:
            if r.outcome.value is not None and r.as_of in medians:
                lift_blocks[r.as_of][side].append(advantage(r.outcome.value, medians[r.as_of], direction))
    confirmed_stats = _group("STRONG, CONFIRMED", confirmed, medians, direction)
    doubted_stats = _group("STRONG, REJECTED or UNCERTAIN", doubted, medians, direction)
    blocks = [lift_blocks[d] for d in sorted(lift_blocks)]
    lift_value = _pooled_difference(blocks)
    lift = VerifierLift(confirmed=confirmed_stats, doubted=doubted_stats, lift=lift_value,
                        interval=bootstrap_interval(blocks, _pooled_difference) if lift_value is not None else None)

    by_night: dict[date, list[VerdictOutcome]] = defaultdict(list)
    for r in rows:
        by_night[r.as_of].append(r)
    per_night = [NightPoint(as_of=d, known=sum(r.outcome.value is not None for r in by_night[d]),
                            median=medians.get(d), strong=len(strong_edges.get(d, [])),
                            strong_advantage=_mean(strong_edges.get(d, [])))
                 for d in sorted(nights)]
    return PeriodReport(
        label=label, first=min(nights, default=None), last=max(nights, default=None), nights=len(nights),
        by_verdict=[_group(v.value, [r for r in rows if r.verdict == v], medians, direction) for v in Verdict],
        by_verification=[_group(s.value, [r for r in rows if r.verification == s], medians, direction)
                         for s in Status],
        hit_rate=hit_rate, lift=lift, per_night=per_night)


def _figures(spec: OutcomeSpec, grain: Grain) -> str:
    """What the report's figures are in, where they carry no sign of it: a difference is in its column's own unit
    (trial 78: earthquakes' "mean advantage -1.562" with no word of what, beside relative changes' % and pp)."""
    if spec.change == "relative":
        return ""
    return (f"; figures are differences of the {spec.agg} of {spec.metric} over {grain.count(spec.window_periods)}, "
            f"in the unit of {spec.metric}, not percent")


def repeated_nights(rows: Iterable[VerdictOutcome]) -> list[date]:
    """Nights whose latest period (t0) an earlier night already read: a source published every few periods,
    backtested every period, judges the same rows night after night, and counting each copy as a date makes the
    hit rate and its interval claim evidence that is not there (trial 122: 4 census years read as 20 dates).
    A night of no recorded t0 (nothing published, or outcomes stored before t0 was) is never a repeat."""
    anchors: dict[date, set[date]] = defaultdict(set)
    for r in rows:
        if r.outcome.anchor is not None:
            anchors[r.as_of].add(r.outcome.anchor)
    seen: set[date] = set()
    repeats = []
    for night in sorted(anchors):
        if len(anchors[night]) == 1 and anchors[night] <= seen:
            repeats.append(night)
        seen |= anchors[night]
    return repeats


def build_report(*, domain: str, fingerprint: str, spec: OutcomeSpec, rows: Sequence[VerdictOutcome],
                 nights: Sequence[date], missing: Sequence[date], grain: Grain = MONTH) -> BacktestReport:
    """The backtest over the nights asked for, split into the design and held-out periods when the pack says;
    a night repeating an earlier one's latest period is counted once, on its first night."""
    stored = set(nights) - set(missing)
    repeated = repeated_nights(r for r in rows if r.as_of in stored)
    present = sorted(stored - set(repeated))
    if spec.design_until is None:
        splits = [("all", present)]
    else:
        until = spec.design_until
        splits = [("design", [d for d in present if d <= until]), ("held-out", [d for d in present if d > until])]
    periods = [period_report(label, [r for r in rows if r.as_of in set(part)], part, spec.direction)
               for label, part in splits if part]
    over = grain.count(spec.window_periods)
    words = spec.description or f"{spec.change} change of {spec.agg} {spec.metric} over {over}"
    return BacktestReport(
        domain=domain, criteria_fingerprint=fingerprint,
        outcome=f"{words}; {grain.count(spec.horizon_periods)} after as_of, read as known then"
                + _figures(spec, grain),
        change=spec.change, direction=spec.direction, design_until=spec.design_until, nights=sorted(nights),
        missing=sorted(missing), repeated=repeated, periods=periods)


# ---- how the backtest reads ---------------------------------------------------------------------------------
def format_outcome(value: float | None, change: str) -> str:
    if value is None:
        return "–"
    return f"{value * 100:+.1f}%" if change == "relative" else signed(value)


def format_edge(value: float | None, change: str) -> str:
    """An advantage over the median: percentage points for relative changes."""
    if value is None:
        return "–"
    return f"{value * 100:+.2f} pp" if change == "relative" else signed(value)


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _interval(interval: tuple[float, float] | None, change: str) -> str:
    if interval is None:
        return ""
    return f" (90% interval {format_edge(interval[0], change)} to {format_edge(interval[1], change)})"


def _table(title: str, groups: Sequence[GroupStats], change: str) -> list[str]:
    lines = [f"| {title} | known | pending | gap | mean | median | vs night median | beat median |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {g.group} | {g.known} | {g.pending} | {g.gap} | {format_outcome(g.mean, change)} | "
              f"{format_outcome(g.median, change)} | {format_edge(g.mean_advantage, change)} | {_share(g.beat_share)} |"
              for g in groups]
    return lines


_ALONE = f", on no night of {COMPARED} candidates or more with a known outcome"
"""Why the verifier's lift is not measurable when both of its groups have known outcomes."""


def _no_comparison(strong_known: int) -> str:
    """The hit rate's line when no STRONG pick could be held against its night's median candidate."""
    if not strong_known:
        return "No STRONG verdict with a known outcome."
    return (f"STRONG's {strong_known} known outcome{'s' if strong_known > 1 else ''} cannot be held against the "
            f"night's median candidate: no night of a STRONG pick had {COMPARED} candidates or more with a known "
            "outcome (a source of one entity is its own median); read the verdicts' own means above.")


def period_markdown(period: PeriodReport, change: str) -> str:
    h, lift = period.hit_rate, period.lift
    hit = (f"STRONG beat the night's median candidate (of those that passed the hard filters) on {h.hits} of "
           f"{h.dates} dates ({_share(h.rate)}; the median analyzed candidate on {h.hits_vs_analyzed}, "
           f"{_share(h.rate_vs_analyzed)}); "
           f"{h.picks_beat} of {h.picks} STRONG picks beat their night's median; mean advantage "
           f"{format_edge(h.mean_advantage, change)}{_interval(h.interval, change)}.") if h.dates else \
        _no_comparison(next(g.known for g in period.by_verdict if g.group == Verdict.STRONG.value))
    verifier = (f"Verifier lift among STRONG: CONFIRMED {format_edge(lift.confirmed.mean_advantage, change)} vs "
                f"the night's median (n={lift.confirmed.known}), REJECTED/UNCERTAIN "
                f"{format_edge(lift.doubted.mean_advantage, change)} (n={lift.doubted.known}); lift "
                f"{format_edge(lift.lift, change)}{_interval(lift.interval, change)}.") if lift.lift is not None else \
        (f"Verifier lift: not measurable (STRONG with a known outcome: {lift.confirmed.known} CONFIRMED, "
         f"{lift.doubted.known} REJECTED/UNCERTAIN{_ALONE if lift.confirmed.known and lift.doubted.known else ''}).")
    span = f"{period.first} → {period.last}" if period.first else "no nights"
    return "\n".join([
        f"### {period.label}: {span}, {period.nights} nights", "",
        *_table("verdict", period.by_verdict, change), "",
        *_table("verification", period.by_verification, change), "",
        *_table("among STRONG", [lift.confirmed, lift.doubted], change), "",
        f"- {hit}", f"- {verifier}"])


def _repeats(repeated: Sequence[date]) -> str:
    """The header's word on nights left out as repeats, naming the first few."""
    if not repeated:
        return ""
    named = ", ".join(str(d) for d in repeated[:3]) + (" and others" if len(repeated) > 3 else "")
    verb = "repeats" if len(repeated) == 1 else "repeat"
    left = "is" if len(repeated) == 1 else "are"
    return (f"; {len(repeated)} {verb} an earlier night's latest period ({named}) and {left} left out: each period "
            "counted once, on its first night")


def report_markdown(report: BacktestReport) -> str:
    head = [f"## Backtest — {report.domain} (criteria {report.criteria_fingerprint})", "",
            f"Outcome: {report.outcome}. Nights: {len(report.nights)} asked"
            + (f", {report.nights[0]} → {report.nights[-1]}" if report.nights else "")
            + (f"; {len(report.missing)} without stored outcomes for these criteria (left out)" if report.missing
               else "") + _repeats(report.repeated) + "."]
    return "\n\n".join(["\n".join(head), *(period_markdown(p, report.change) for p in report.periods)]) + "\n"
