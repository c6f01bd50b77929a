"""`opportunity check`: the source's latest periods against the night (pure over its rows and quarantine): a latest
period cut short (an extract's end), a night long after the data ends, the latest rows refused, figures that end
before the periods do. Each is one line naming the pack key."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import date, datetime, timedelta

import polars as pl

from opportunity_assets.candidates.quarantine import joined_reason
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.latest import Latest
from opportunity_assets.periods import Grain
from opportunity_assets.sources.connection import file_key
from opportunity_assets.sources.csv_rows import Rejected
from opportunity_assets.sources.facts import rows_after
from opportunity_assets.sources.formats import describe_location
from opportunity_assets.sources.partial_period import CutShort, latest_cut_short
from opportunity_assets.sources.spec import (
    SourceSpec,
)
from opportunity_assets.text import first_of


def source_key(src: SourceSpec) -> str:
    """The key that names where the source's rows come from: its `query`, its PostgreSQL `table`, else its file."""
    return "source.query" if src.query else "source.table" if src.format == "postgres" else "source.path"


_LAST_CUT: Latest[tuple[CutShort | None]] = Latest()
"""The latest `cut_short` asked and what it depends on (the pack and its files' bytes, the night, the period)."""


def cut_short(pack: CriteriaPack, night: date, anchor: date | None) -> CutShort | None:
    """`partial_period.latest_cut_short`, asked once of the same files, night and period: a check asks it to choose
    its night and again to warn, and the night's scan step a third time (trial 117: 15,666 patients' events, 0.3 s
    each)."""
    files = file_key(pack)
    key = None if files is None else (*files, night, anchor)
    if (kept := _LAST_CUT.get(key)) is not None:
        return kept[0]
    return _LAST_CUT.put(key, (latest_cut_short(pack, night, anchor),))[0]


def latest_period_cut_short(pack: CriteriaPack, night: date, anchor: date | None) -> list[str]:
    """A warning: an events source dated by a `period_column` whose events the night reads end well before its
    latest period does (`partial_period.latest_cut_short`: an extract's end, a file cut short: MovieLens's ratings
    stop on 2016-10-16, Minneapolis's stops on 2018-01-01, a Monday), though they filled the previous period to its
    end. That period's counts and sums are then a part of it: a drop the formula reads as the domain's, and the
    verifier doubts (`partial_period`). Names a night that reads whole periods only."""
    src, grain = pack.source, pack.grain
    if src.shape != "events" or not src.period_column or grain.name == "day" or anchor is None:
        return []
    if (unfinished := _latest_period_unfinished(pack, night, anchor)) is not None:
        return [unfinished]
    cut = cut_short(pack, night, anchor)
    if cut is None:
        return []
    if cut.published_by is not None:
        return [_latest_days_unpublished(pack, night, cut)]
    where = f"`source.query` of {src.path}" if src.query and src.path else describe_location(pack)
    key = source_key(src)
    published = "" if src.published_column else \
        f" (`--as-of` before {grain.end(anchor) + timedelta(days=src.publication_lag_days)})"
    return [f"key `{key}`: {where}: its events end {cut.ends}, {cut.short} of the {cut.days} days of the latest "
            f"period {grain.label(anchor)} before it ends ({grain.end(anchor)}), {cut.why}: "
            f"{grain.label(anchor)}'s counts and sums are a part of it, read as a drop "
            f"(an extract's end, a file cut short?): expected a night whose latest period the rows fill, one "
            f"before {grain.label(anchor)} is published{published}"]


def _latest_days_unpublished(pack: CriteriaPack, night: date, cut: CutShort) -> str:
    """The warning for events read as they are published (`published_column`) whose latest period the night reads
    ends early because its last days' events are published after the night (`CutShort.published_by`), not because
    the source ends: that key, with the day they are all published by. Trial 70: births published 5 days after
    them, read on each month's last night, were told `source.path` "an extract's end, a file cut short?" every
    night."""
    src, grain = pack.source, pack.grain
    label, by = grain.label(cut.period), cut.published_by
    return (f"key `source.published_column`: got {src.published_column!r}; the night {night} reads {label}'s events "
            f"as they are published, and those after {cut.last}, of its last {cut.short} days, are "
            f"published after the night, the last on {by}: {label}'s counts and sums are a part of it, read as a "
            f"drop: expected a night on or after {by}, when {label}'s events are published, or one before "
            f"{label}'s first events are published")


def _latest_period_unfinished(pack: CriteriaPack, night: date, anchor: date) -> str | None:
    """The warning for events read as they are published (`published_column`) on a night inside their latest
    period: that period has not ended, so its counts and sums are a part of it whatever the events' density. Trial
    38: house sales known 14 days after them, on 2010-10-15, read 2010-Q4's one sale as a quarter's beside full
    quarters a year before, and check said ok (the sparse sales had left 2010-Q3's last days empty, so the test of an
    extract's end did not hold)."""
    src, grain = pack.source, pack.grain
    if src.published_column is None or night >= grain.end(anchor):
        return None
    label, days = grain.label(anchor), (grain.end(anchor) - anchor).days + 1
    return (f"key `source.published_column`: got {src.published_column!r}; the night {night} falls inside the "
            f"latest period {label} ({(night - anchor).days + 1} of its {days} days), whose events it reads as they "
            f"are published: {label}'s counts and sums are a part of it, read as a drop: expected a night on or after "
            f"{grain.end(anchor)}, when {label} has ended, or one before {label}'s first events are published")


STALE_PERIODS = 2
"""Periods after the latest one that the lag rule says are published by a night, and that no row holds, from which
the night lies after the data's end."""
STALE_DAYS = 180
"""Days since the first period no row holds was due by the lag rule from which the night lies after the data's end
however few periods that is: a year's figures due nine months ago (trial 79: young men's wages to 1987, read on
1989-12-31 with a lag of 90 days, 1988 due on 1989-03-31, said nothing; a month grain's second missing month comes
first)."""


CADENCE_GAPS = 4
"""The latest runs of empty periods between the source's periods with rows that tell its cadence: when two or more
of them are as long as the run after its latest period, that run is the source skipping periods as it does (a
survey held every other year), not its end."""


def skips_as_it_does(held: list[tuple[date, int]], anchor: date, missing: int, grain: Grain) -> bool:
    """Whether `missing` empty periods after the latest one, `anchor`, are as many as the source skips by its own
    cadence: two or more of its latest `CADENCE_GAPS` runs of empty periods, up to `anchor` and within its latest
    year of periods, as long. Trial 101: the GSS, held every other year since 1994, read on 2019-06-28 (its latest
    year 2016, 2017 due by the lag rule and held by no row) was warned "a night after the data ends, or a feed that
    stopped?", on half of all nights. Trial 112: a rate quoted on trading days, read on Monday 2 January (Friday's
    rows published that morning, Saturday "due" by their one-day lag), was warned the same: the days in a row between
    its weekends are no runs, and had hidden the weekends from its latest four."""
    periods = sorted({p for p, _ in held if p <= anchor})[-max(CADENCE_GAPS + 1, grain.per_year):]
    runs = [gap for a, b in itertools.pairwise(periods) if (gap := grain.between(a, b) - 1) > 0][-CADENCE_GAPS:]
    return sum(run >= missing for run in runs) >= 2


def published_lag(history: pl.DataFrame | None, grain: Grain) -> timedelta | None:
    """A source dated by `published_column`: the days from a period's end to its rows' first publication, the median
    over the periods the night reads (none below 0: events published as they happen), the lag its own rows keep.
    None for fewer than two periods."""
    if history is None or not history.height or "published_at" not in history.columns:
        return None
    firsts = history.group_by("period").agg(pl.col("published_at").min()).drop_nulls()
    days = sorted(max(0, (_day(first) - grain.end(_day(period))).days) for period, first in firsts.iter_rows())
    return timedelta(days=days[len(days) // 2]) if len(days) >= 2 else None


def _day(value: date) -> date:
    """A date, or a timestamp's day."""
    return value.date() if isinstance(value, datetime) else value


def night_after_the_data(pack: CriteriaPack, night: date, anchor: date | None,
                         quarantined_latest: date | None = None,
                         held: list[tuple[date, int]] | None = None,
                         history: pl.DataFrame | None = None) -> list[str]:
    """A warning: a night after the source's data ends, `STALE_PERIODS` or more periods after its latest one that
    the lag rule (`publication_lag_days`) says were published by then having no row (Victoria's 2014 electricity
    demand read on 2016-03-01; car exports to 2014 on 2021-06-30). Every window counts back from the latest period,
    so the night's metrics are that period's, as if current: check said ok, or told an `age_days` filter that
    refused every candidate it was "on another scale". A source dated by `published_column` or `known_at` says when
    its rows come itself: one by `published_column` is judged by the lag its rows keep (`published_lag`, trial 103:
    Michigan districts' yearly scores, each year published the next September, read on 2005-12-31 acted on 1998's
    as current without a word); one by `known_at` is not judged. `quarantined_latest`, the latest period of the
    night's quarantined rows: when they reach the periods due, the data did not end, its rows were refused (trial
    23: `entity_id: continent` refused 3,293 of 3,313 rows as duplicated keys, and the 20 left, ending in 2004, were
    told "a feed that stopped?" beside the problem naming `source.entity_id`). `held`, each period with rows and its
    entities: no more empty periods than the source skips by its own cadence are no end (`skips_as_it_does`)."""
    stale = _stale(pack, night, anchor, quarantined_latest, held, history)
    if stale is None or anchor is None:
        return []
    grain, (rule, lag, due, missing) = pack.grain, stale
    after = grain.back(anchor, -1)
    return [f"key `{source_key(pack.source)}`: {describe_location(pack)}: its latest period is {grain.label(anchor)}, "
            f"but by this night, {night}, {rule} published "
            f"{grain.count(missing)} after it, to {grain.label(due)}, and no row holds one: the night's metrics are "
            f"{grain.label(anchor)}'s, its latest values {(night - grain.end(anchor)).days} days old (a night after "
            f"the data ends, or a feed that stopped?): expected a night before {grain.end(after) + lag}, when "
            f"{grain.label(after)} would be published, or the source's newer rows"]


def stale_night_note(pack: CriteriaPack, night: date, anchor: date | None, quarantined: pl.DataFrame,
                     history: pl.DataFrame) -> str | None:
    """The run summary's note of `night_after_the_data`, for whoever reads the brief and not the command's warnings
    (trial 105: a night 181 days after the data ended was said on the command's stderr only, and a scheduled night,
    the one a feed that stopped leaves, said nothing): each period's entities (`held`) from the night's history."""
    latest = quarantined.select(pl.col("period").max()).item() if quarantined.height else None
    if _stale(pack, night, anchor, latest, None, history) is None:  # (most nights: no cadence to count)
        return None
    held = [(period, int(n)) for period, n in history.group_by("period").agg(pl.col("entity_id").n_unique())
            .sort("period").iter_rows()]
    stale = _stale(pack, night, anchor, latest, held, history)
    if stale is None or anchor is None:
        return None
    grain, (_, _, due, missing) = pack.grain, stale
    return (f"the source's latest period is {grain.label(anchor)}, though {grain.count(missing)} after it, to "
            f"{grain.label(due)}, would be published by tonight and no row holds one: tonight's figures are "
            f"{grain.label(anchor)}'s, {(night - grain.end(anchor)).days} days old, read as if current (a feed that "
            "stopped, or a night after the data ends?)")


def _stale(pack: CriteriaPack, night: date, anchor: date | None, quarantined_latest: date | None,
           held: list[tuple[date, int]] | None, history: pl.DataFrame | None
           ) -> tuple[str, timedelta, date, int] | None:
    """Where the night falls after the source's data ends (`night_after_the_data`): the rule that says when a
    period is published, its lag, the latest period due and how many are missing; else None."""
    src, grain = pack.source, pack.grain
    if anchor is None or src.known_at is not None:
        return None
    if src.published_column:
        if (lag := published_lag(history, grain)) is None:
            return None
        rule = (f"the rows' own publication dates (`source.published_column` {src.published_column!r}: a "
                f"{grain.name}'s first rows published a median {lag.days} days after it ends) would have")
    else:
        lag = timedelta(days=src.publication_lag_days)
        rule = f"the lag rule (`publication_lag_days: {src.publication_lag_days}`) has"
    due = grain.start(night - lag)  # the latest period the lag rule has published by the night
    if grain.end(due) + lag > night:
        due = grain.back(due, 1)
    missing = grain.between(anchor, due)
    after = grain.back(anchor, -1)
    late = missing >= 1 and (night - (grain.end(after) + lag)).days >= STALE_DAYS
    refused_later = quarantined_latest is not None and quarantined_latest > anchor and \
        grain.between(quarantined_latest, due) < STALE_PERIODS
    if (missing < STALE_PERIODS and not late) or refused_later or skips_as_it_does(held or [], anchor, missing, grain):
        return None
    return rule, lag, due, missing


STRAY_GAP = 2
"""Empty periods, at the least, between the source's latest rows and the rest for those rows to be strays (and
more than any earlier run of empty periods: a survey held every few years is not)."""


def stray_tail(held: list[tuple[date, int]], grain: Grain) -> tuple[date, date, int] | None:
    """The last period before a run of empty periods, the first after it, and the entities of the one before, when
    the rows after it (the latest ones) lie `STRAY_GAP` or more periods after the rest, further than any earlier
    gap, and no period after it has half the entities the last one before it had: a few rows dated far after every
    other (a year mistyped, test rows left in an export). `held`: each period with rows, earliest first, and its
    entities. None otherwise."""
    periods = [p for p, _ in held]
    gaps = [grain.between(a, b) - 1 for a, b in itertools.pairwise(periods)]
    if not gaps:
        return None
    longest = max(gaps)  # (once: per gap, it was a minute over a century of days, trial 64)
    last = max(i for i, g in enumerate(gaps) if g == longest)  # the latest of the longest runs of empty periods
    before = held[last][1]
    if gaps[last] < STRAY_GAP or any(g >= gaps[last] for g in gaps[:last]) \
            or 2 * max(n for _, n in held[last + 1:]) > before:
        return None
    return periods[last], periods[last + 1], before


def latest_rows_stray(pack: CriteriaPack, night: date, held: list[tuple[date, int]]) -> str | None:
    """The source's latest rows told as a few strays (`stray_tail`), with no more entities among them all than half
    the rest's latest period has: trial 62's 5 rows dated 8 months after the rest made check judge their night,
    41 of 46 entities with no row in any window, and suggest `min_rows: 1`. One line naming the source's key, the
    rows, their entities and a night before them; None when there are none. `held`: each period with rows the night
    sees and its entities (`SourceFacts.held`)."""
    grain, src = pack.grain, pack.source
    if (tail := stray_tail(held, grain)) is None:
        return None
    rest, first, before = tail
    after = rows_after(pack, night, rest)
    if 2 * after.entities > before:
        return None
    names = first_of(after.names, len(after.names), total=after.entities)
    dated_by_lag = not (src.published_column or src.known_at)
    earlier = f", `--as-of {grain.end(rest) + timedelta(days=src.publication_lag_days)}`" if dated_by_lag else ""
    return (f"key `{source_key(src)}`: {describe_location(pack)}: its latest {after.rows:,} "
            f"row{'s' if after.rows != 1 else ''}, of {after.entities} of the entities ({names}), from "
            f"{grain.label(first)}, lie {grain.count(grain.between(rest, first))} after every other row (the latest "
            f"{grain.label(rest)}, {before} entities) with no row between, so the night {night} reads windows only "
            f"they reach and the other entities look gone: expected their dates checked (a year mistyped?) and kept "
            f"out by `source.where` if wrong, or a night before them{earlier}")


def latest_rows_refused(pack: CriteriaPack, night: date, anchor: date | None, quarantined: pl.DataFrame) -> list[str]:
    """A warning: every row of the periods after the night's latest one is quarantined (not a row of a period after
    today, which no night sees), so the night's latest period is an earlier one and its metrics are that period's,
    as if current. Trial 32: AirPassengers with its last three months written twice read September 1960 on a night
    that had December published, and check said ok with a quarantine fact. On a panel one entity's refused rows
    leave the latest period where it is (that entity's windows are gaps, flagged): only rows refused for every
    entity move it."""
    refused = _refused_latest(pack, night, anchor, quarantined)
    if refused is None or anchor is None:
        return []
    grain, (span, periods, reasons, rows) = pack.grain, refused
    return [f"key `{source_key(pack.source)}`: {describe_location(pack)}: every row of its latest "
            f"{grain.count(periods)} published, {span}, is quarantined ({reasons}: source rows {rows}), so the night's "
            f"latest period is {grain.label(anchor)} and its metrics are that {grain.name}'s, as if current: expected "
            "those rows mended (the quarantine says why)"]


def latest_refused_note(pack: CriteriaPack, night: date, anchor: date | None, quarantined: pl.DataFrame) -> str | None:
    """The run summary's note of `latest_rows_refused`, for whoever reads the brief and not the command's warnings
    (trial 104: a year's rows sent twice left the night a year behind, said on the command's stderr only; a
    scheduled night said nothing)."""
    refused = _refused_latest(pack, night, anchor, quarantined)
    if refused is None or anchor is None:
        return None
    grain, (span, periods, reasons, _) = pack.grain, refused
    latest = grain.name if periods == 1 else grain.count(periods)
    return (f"the source's latest {latest} published, {span}, is quarantined in every row ({reasons}), so "
            f"tonight's latest period is {grain.label(anchor)}, its figures read as if current (the quarantine says "
            "why)")


def _refused_latest(pack: CriteriaPack, night: date, anchor: date | None,
                    quarantined: pl.DataFrame) -> tuple[str, int, str, str] | None:
    """Where every row after the night's latest period is quarantined (`latest_rows_refused`): those periods as
    words, their count, the reasons and the first source rows; else None."""
    if anchor is None or not quarantined.height:
        return None
    later = quarantined.filter((pl.col("period") > anchor) & (pl.col("period") <= night)
                               & ~pl.col("reason").str.starts_with("period after today")
                               # a joined table's rows never move the source's latest period (trial 61)
                               & pl.col("reason").map_elements(lambda r: joined_reason(r) is None,
                                                               return_dtype=pl.Boolean)).sort("source_row")
    if not later.height:
        return None
    grain = pack.grain
    last = later["period"].max()
    assert isinstance(last, date)
    periods = grain.between(anchor, last)
    reasons = Counter(r.split(" (")[0].split(":")[0] for r in later["reason"].to_list())
    rows = ", ".join(str(r) for r in later["source_row"].to_list()[:3]) + (", ..." if later.height > 3 else "")
    span = grain.label(grain.back(anchor, -1)) + ("" if periods == 1 else f" to {grain.label(last)}")
    return span, periods, ", ".join(reasons), rows


def default_night_before_refused(pack: CriteriaPack, night: date, anchor: date | None,
                                 refused: list[Rejected]) -> list[str]:
    """A warning: the default night (the latest the well-formed rows support) stops before lines the source refused
    that date later periods, so no night check offers reads them and the latest period looks current (trial 92: a
    grants feed that wrote a field more on every line from 2008-06 on was "ok (night 2008-06-10)", its latest six
    months unseen and unsaid; with that night's `--as-of` given, `latest_rows_refused` said so)."""
    later = sorted((r for r in refused if anchor is None or (r.period is not None and r.period > anchor)),
                   key=lambda r: r.line)
    if not later:
        return []
    grain = pack.grain
    periods = sorted({r.period for r in later if r.period is not None})
    span = grain.label(periods[0]) + ("" if len(periods) == 1 else f" to {grain.label(periods[-1])}")
    reasons = Counter(r.reason.split(" (")[0].split(":")[0] for r in later)
    rows = ", ".join(str(r.line) for r in later[:3]) + (", ..." if len(later) > 3 else "")
    return [f"key `{source_key(pack.source)}`: {describe_location(pack)}: the default night {night} is the latest "
            f"its readable rows support, but {len(later):,} line{'s' if len(later) != 1 else ''} of later periods, "
            f"{span}, {'were' if len(later) != 1 else 'was'} refused ({', '.join(reasons)}: source rows {rows}), so "
            f"no night reads them and {grain.label(anchor) if anchor else 'its latest period'} looks current: "
            "expected those lines mended (the quarantine of a later night, `--as-of`, says why)"]


def figures_ended(pack: CriteriaPack, night: date, history: pl.DataFrame, quarantined: pl.DataFrame) -> str | None:
    """A problem: the night's latest periods have rows, but no figure in any column the pack reads, for any
    entity: the source wrote rows for periods it has no figures of yet (the College Scorecard's last two years,
    every earnings and count empty), so every window counts back from an empty period and each metric is a gap,
    which check blamed on the required inputs and filters that read them (trial 21). Names the source and the night
    before the first empty period is published; None otherwise (an events source's counts are never empty, and
    cells quarantined in those periods, text or out of bounds, are what is wrong there: their lines say so)."""
    src, grain = pack.source, pack.grain
    read = sorted(({c for m in pack.metrics.values() for c in [m.column, *(m.columns or [])] if c}
                   | set(pack.columns)) & set(history.columns))  # (one column filled: a series stopped, said apart)
    if not read or not history.height or "periods_ago" not in history.columns:
        return None
    filled = history.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in read))
    if not filled.height:
        return None  # no figure at all: another problem says why
    empty = int(filled["periods_ago"].min())  # type: ignore[arg-type]
    latest = history.filter((pl.col("periods_ago") == 0) & pl.col("source_row").is_not_null())["period"] \
        if "source_row" in history.columns else history.filter(pl.col("periods_ago") == 0)["period"]
    if empty < 1 or not latest.len():  # (a latest period of no row at all: `night_after_the_data`'s)
        return None
    anchor = latest[0]
    last, first_empty = grain.back(anchor, empty), grain.back(anchor, empty - 1)
    if quarantined.height and quarantined.filter(pl.col("period") >= first_empty).height:
        return None
    key = source_key(src)
    span = grain.label(first_empty) if empty == 1 else f"{grain.label(first_empty)}..{grain.label(anchor)}"
    night_before = "" if src.published_column or src.known_at else \
        f" (`--as-of` before {grain.end(first_empty) + timedelta(days=src.publication_lag_days)})"
    return (f"key `{key}`: {describe_location(pack)}: on {night} its rows of the latest {empty} "
            f"{grain.plural if empty > 1 else grain.name} ({span}) hold no figure of any column the pack reads "
            f"({', '.join(read)}) for any entity, its latest figures being of {grain.label(last)}, so every window "
            f"counts back from an empty {grain.name} and each metric is a gap: expected a night whose latest "
            f"{grain.name} has figures, one before {grain.label(first_empty)} is published{night_before}, or the "
            "source's figures")
