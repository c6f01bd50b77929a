"""An events source's latest period cut short: its events end well before the period does, so its counts and sums
are a part of the period's, read as a drop. Told by `opportunity check` (`check/latest.py`) and doubted by the
verifier for every candidate whose metrics read that period (`Candidate.latest_cut_short`). Over the typed rows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.periods import MONTH
from opportunity_assets.sources import shapes
from opportunity_assets.sources.probes import latest_by_period, rows_matching

CUT_SHORT = 0.1
"""An events source whose rows end this share of its latest period (at least a day) before the period does, where
they reached the previous period's last tenth, is cut short: the latest period's counts and sums are partial."""


@dataclass(frozen=True)
class CutShort:
    """The latest period of an events source whose events end early."""

    period: date
    """The latest period (its first day)."""
    ends: str
    """Where its events end, in words: `on 2016-10-16`, or `with 2015-03 (each dated by its month's first day)`."""
    last: date
    """The last day its events reach (a month's last day for events dated by their month's first)."""
    short: int
    """Days of the period after `last`."""
    days: int
    """Days in the period."""
    why: str
    """Why that is no chance of the feed's: `though they reach the end of 2008-07`, or the silence's improbability.
    Empty when `published_by` is set."""
    published_by: date | None = None
    """For events read as they are published (`published_column`): the day the period's later events are all
    published, after the night. The night came early, and the feed is whole: no doubt of the data."""

    @property
    def feed_cut(self) -> bool:
        """Whether the feed itself ends early (an extract's end, a file cut short), not the night."""
        return self.published_by is None


def latest_cut_short(pack: CriteriaPack, night: date, anchor: date | None) -> CutShort | None:
    """The latest period `anchor` of an events source dated by a `period_column`, if the events the night reads end
    well before it does (`CUT_SHORT` of it, a day at least) though they filled the period before to its end, or
    after a silence longer than the previous period's end had, improbable at the feed's own rate; or where, read as
    they are published, its last days' events are published after the night (`CutShort.published_by`). None for
    other sources, a day grain, a night inside a period read as published (the period has not ended), events dated
    by their period alone (every one on its quarter's or year's first day), a period its events fill, or one whose
    same period a year before ended as early (a season's quiet end: grant applications stop for Christmas each
    December)."""
    src, grain = pack.source, pack.grain
    if src.shape != "events" or not src.period_column or grain.name == "day" or anchor is None:
        return None
    if src.published_column is not None and night < grain.end(anchor):
        return None
    previous, year_before = grain.back(anchor, 1), grain.back(anchor, grain.per_year)
    day = shapes.date_sql(f"__written_{src.period_column}", src.period_format)  # (`shapes.written`, unquoted)
    last = latest_by_period(pack, day, f"{shapes.IN_SCOPE} AND {shapes.PUBLISHED} <= DATE '{night.isoformat()}'",
                            list(dict.fromkeys([anchor, previous, year_before])))
    if anchor not in last or previous not in last:
        return None
    ends = f"on {last[anchor]}"
    if grain.name in ("quarter", "year") and _on_first_days(pack, day, grain.name):
        return None  # dated by their period alone (a bare year `1988`): nothing says where inside it they end
    if grain.name in ("quarter", "year") and _on_first_days(pack, day):
        # events dated by their month's first day (trial 60's leftover): each reaches its month's end
        ends = f"with {MONTH.label(last[anchor])} (each dated by its month's first day)"
        last = {period: MONTH.end(MONTH.start(moment)) for period, moment in last.items()}
    days = (grain.end(anchor) - anchor).days + 1
    short, before = (grain.end(anchor) - last[anchor]).days, (grain.end(previous) - last[previous]).days
    slack = max(1.0, CUT_SHORT * days)
    if short < slack:
        return None
    if year_before != previous and year_before in last and \
            (grain.end(year_before) - last[year_before]).days >= short - slack:
        return None  # the season's: the same period a year before ended as early (trial 92: grants before Christmas)
    if (by := _published_after(pack, anchor, day, last[anchor])) is not None:
        return CutShort(anchor, ends, last[anchor], short, days, "", by)
    if before <= CUT_SHORT * ((grain.end(previous) - previous).days + 1):
        why = f"though they reach the end of {grain.label(previous)}"
    elif (improbable := _silence_improbable(pack, night, anchor, short - before)) is not None:
        why = f"{short - before} days longer than {grain.label(previous)}'s silence at its end, {improbable}"
    else:
        return None
    return CutShort(anchor, ends, last[anchor], short, days, why)


def cut_short_words(pack: CriteriaPack, cut: CutShort) -> str:
    """The feed's cut in words, for a finding: where its events end and why that is no chance of the feed's."""
    label = pack.grain.label(cut.period)
    return (f"the feed's events end {cut.ends}, {cut.short} of the {cut.days} days of the latest period {label} "
            f"before it ends, {cut.why}: {label}'s counts and sums are a part of it, read as a drop")


def _on_first_days(pack: CriteriaPack, day: str, unit: str = "month") -> bool:
    """Whether every row in scope whose SQL `day` is a date falls on a `unit`'s first day (events dated by month, or
    by the grain's period itself: trial 140's registry rows dated by a bare year, all on 1 January)."""
    dated = f"{shapes.IN_SCOPE} AND {day} IS NOT NULL"
    elsewhere, rows = rows_matching(pack, [f"{dated} AND CAST({day} AS DATE) <> date_trunc('{unit}', {day})", dated])
    return rows > 0 and elsewhere == 0


def _silence_improbable(pack: CriteriaPack, night: date, anchor: date, longer: int) -> str | None:
    """A clause saying that a silence `longer` days longer at the latest period's end than at the end of the period
    before is a chance below `shapes.QUIET_CHANCE` at the feed's own rate of events a day over the periods before
    the latest (a year's, at least `shapes.RATE_PERIODS`: as a silence inside the history is judged), or None.
    Trial 60: HHS breach reports, ~0.7 a day, stopped 16 days before 2014-Q4 ended and 33 before 2015-Q1 did; the
    test that the period before was filled to its end did not hold, and 2015-Q1's 25 reports were read as a
    quarter's. Events that end each period alike (dated on each month's first day, read by the quarter) are not."""
    if longer <= 0:
        return None
    grain = pack.grain
    recent = max(grain.per_year, shapes.RATE_PERIODS)
    start = grain.back(anchor, recent)
    (events,) = rows_matching(pack, [f"{shapes.IN_SCOPE} AND {shapes.PUBLISHED} <= DATE '{night.isoformat()}' AND "
                                     f"{shapes.PERIOD} >= DATE '{start.isoformat()}' AND "
                                     f"{shapes.PERIOD} < DATE '{anchor.isoformat()}'"])
    rate = events / max(1, (anchor - start).days)
    if math.exp(-rate * longer) >= shapes.QUIET_CHANCE:
        return None
    return (f"a chance below {shapes.QUIET_CHANCE:.0%} at the feed's rate over the {recent} {grain.name}s before "
            f"({events:,} events, {rate:.2g} a day)")


def _published_after(pack: CriteriaPack, anchor: date, day: str, last: date) -> date | None:
    """For events read as they are published (`published_column`): the day the latest period's events after `last`
    are all published by, where the source holds such events (published after the night: trial 70's births, read
    on each month's last night, were told "a file cut short"); None otherwise (the extract's end)."""
    if pack.source.published_column is None:
        return None
    after = f"{shapes.IN_SCOPE} AND {day} > DATE '{last.isoformat()}' AND {shapes.PUBLISHED} IS NOT NULL"
    known = latest_by_period(pack, f"CAST({shapes.PUBLISHED} AS DATE)", after, [anchor])
    return known.get(anchor)
