"""`opportunity check`: how far back the source's history reaches against what the pack reads (pure): metric
windows past the history, an `outcome` past the data, rows of a coarser grain than the pack's, and a period column
whose every row starts a coarser period than the grain."""

from __future__ import annotations

import calendar
from datetime import date, timedelta
from typing import TYPE_CHECKING

from opportunity_assets.criteria import CriteriaPack, MetricSpec

if TYPE_CHECKING:
    from opportunity_assets.sources.facts import CoarserRows
    from opportunity_assets.sources.snapshot import SourceSnapshot


def windows_past(pack: CriteriaPack, night: date, reach: int, beyond: list[tuple[str, MetricSpec]]) -> str:
    """One line for the metrics whose windows reach past the history the night reads (`reach` + 1 periods at
    most), naming the first's key; with several (an early `--as-of`: trial 22 had five lines, one per window, of
    one cause), the others' keys and windows, and the first night from which every window fits, if the history
    goes on as it has."""
    grain = pack.grain
    (name, spec), *more = beyond
    line = (f"key `metrics.{name}.window`: got {list(spec.window)}; expected a window within the source's history: "
            f"on {night} no entity has more than {grain.count(reach + 1)} published (windows count "
            f"{grain.plural}, `source.grain`)")
    if not more:
        return line
    deepest = max(s.window[1] for _, s in beyond)
    later = grain.later(night, deepest - reach)
    if grain.name in ("month", "quarter", "year") and (night + timedelta(days=1)).day == 1:
        later = date(later.year, later.month, calendar.monthrange(later.year, later.month)[1])
    others = ", ".join(f"`metrics.{n}.window` {list(s.window)}" for n, s in more)
    return (f"{line}; so do {len(more)} more ({others}): the night is too early for the pack, whose windows need "
            f"{deepest + 1} {grain.plural} published, from {later} on if the history goes on as it has")


def rows_of_a_coarser_grain(pack: CriteriaPack, rows: CoarserRows) -> str:
    """`source.grain`'s line for rows one in each period of a coarser grain, a varying number of the pack's periods
    apart (`facts.CoarserRows`: months read by the week)."""
    grain = pack.grain
    (fewest, most), (entity, periods) = rows.steps, rows.example
    return (f"key `source.grain`: got {grain.name!r}; every entity's rows lie {fewest} to {most} {grain.plural} "
            f"apart, one in each {rows.grain} (e.g. {entity!r}: {', '.join(grain.label(p) for p in periods)}), so a "
            f"window of {grain.plural} finds a row in one {grain.name} of {fewest} at most: expected "
            f"`grain: {rows.grain}`, the grain the rows come in")


def history_held(pack: CriteriaPack, reach: int, snapshot: SourceSnapshot) -> int:
    """Periods back (0 = the latest) of the whole history published by the night: the snapshot's `reach` unless
    the snapshot was cut at `history_reach`, when the history may go further back (trial 32: AirPassengers' 144
    months were "no entity has more than 72 months published", and an outcome window of 100 months was warned
    that no outcome could be measured)."""

    anchor, first = snapshot.anchor_period, snapshot.first_period
    if reach < pack.history_reach or anchor is None or first is None or pack.outcome is None:
        return reach
    return max(reach, pack.grain.between(pack.grain.start(first), anchor))


def outcome_out_of_reach(pack: CriteriaPack, night: date, reach: int) -> list[str]:
    """A warning when `outcome.window_periods` is longer than the history the night reads (`reach` + 1 periods at
    most): no outcome of this night, or of any night before it, can be measured, each a gap in the backtest. A
    warning, not a problem: an outcome never changes a verdict, and the night runs."""
    outcome = pack.outcome
    if outcome is None:
        return []
    grain, plural, held = pack.grain, pack.grain.plural, reach + 1
    if pack.source.known_at is not None:
        # (trial 125: a table of car models was told "a horizon of at most 0 years", which the pack refuses)
        return [f"key `outcome`: got metric {outcome.metric!r}; `source.known_at` dates every row alike, one "
                f"{grain.name} per entity, so no later figure comes and no night's outcome can ever be measured (each "
                "pending in the backtest): expected no `outcome` for a file with no dates, or a source of dated rows "
                "(`period_column`)"]
    if outcome.window_periods <= held < outcome.window_periods + outcome.horizon_periods:
        # (trial 21: 200 weeks on 62 weeks of bookings said ok) the later window lies past every night's data
        room = held - outcome.window_periods
        fix = (f"a horizon of at most {grain.count(room)} (it counts `source.grain`'s periods)" if room else
               f"a shorter `outcome.window_periods` (the window and the horizon both within the {grain.count(held)})")
        return [f"key `outcome.horizon_periods`: got {outcome.horizon_periods}; on {night} no entity has more than "
                f"{grain.count(held)} published, so no night's outcome, its {grain.count(outcome.window_periods)} "
                f"ending {grain.count(outcome.horizon_periods)} after the night's latest, can be measured within them "
                f"(each a gap in the backtest): expected {fix}, or a longer history"]
    if outcome.window_periods <= held:
        return []
    return [f"key `outcome.window_periods`: got {outcome.window_periods}; on {night} no entity has more than "
            f"{grain.count(reach + 1)} published, so no outcome of this night or an earlier one can be measured "
            f"(each a gap in the backtest): expected a window within the source's history (it counts {plural}, "
            "`source.grain`)"]


def grain_finer_than_starts(pack: CriteriaPack, starts: str | None) -> list[str]:
    """A line naming `source.grain` when every row of the period column falls at the start of a coarser period
    than the grain (`SourceFacts.first_days`: each a January, or each quarter's or month's first day, period after
    period): a column of years, quarters or months read at a finer grain puts every row on its first day, and
    windows between them find nothing."""
    src = pack.source
    column = f"`source.period_column` {src.period_column!r}" if src.period_column else \
        f"`source.month_column` {src.month_column!r}"
    if starts == "year":
        return [f"key `source.grain`: got {src.grain!r}; every row of {column} falls in a January, year after year: "
                "expected `grain: year` for a column of years (a finer grain puts every row in January)"]
    if starts == "quarter":
        return [f"key `source.grain`: got {src.grain!r}; every row of {column} falls on the first day of a month, one "
                "month of each quarter, quarter after quarter: expected `grain: quarter` for a column of quarters (a "
                f"finer grain puts every row on the 1st, and windows of {pack.grain.plural} between them find nothing)"]
    if starts == "month":
        return [f"key `source.grain`: got {src.grain!r}; every row of {column} falls on the first day of a month, "
                "month after month: expected `grain: month` for a column of months (a finer grain puts every row on "
                "the 1st, and windows of days between them find nothing)"]
    return []
