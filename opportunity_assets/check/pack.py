"""`opportunity check`: a pack against its source's actual data, before any night runs.

The pack's own keys are validated when it loads (criteria.py: names, expressions, templates). Here the data is
read as a night would read it (the latest night the data supports, or `as_of`): the file opens in its format, the
declared columns exist, each numeric column parses, and the facts a new user wants first are counted. Every problem
is one line naming the pack key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

import polars as pl

from opportunity_assets.candidates.quarantine import bad_cells
from opportunity_assets.check import candidates as check_candidates
from opportunity_assets.check.causes import (
    QUARANTINING_KEYS,
    READING_KEYS,
    lacking_of_few,
    one_cause_once,
    undated_of_few,
    warnings_said_once,
)
from opportunity_assets.check.cells import (
    MOSTLY_TEXT,
    as_long_values,
    cell_problems,
    empty_columns,
    empty_event_columns,
    grouped_in_reach,
    numeric_columns,
    wide_columns_counting,
    wide_columns_empty,
    wide_columns_of_text,
)
from opportunity_assets.check.cut_short import file_cut_short
from opportunity_assets.check.entities import (
    ids_continued,
    ids_of_dates,
    ids_of_structures,
    ids_renamed,
    ids_spelt_two_ways,
    ids_zero_padded,
    measure_in_key,
    names_changing,
    names_finer,
    names_per_row,
    names_shared,
    names_together,
    total_rows,
    totals_by_sum,
    without_padded_twins,
)
from opportunity_assets.check.facts import (
    cells_refused,
    flagged_capped,
    gaps_of,
    most_failed,
    not_utf8,
    past_cap,
    quarantined_for,
    read_fact,
    rows_numbered,
    rows_of_no_period,
    unclear_said,
    undated_of_no_entity,
)
from opportunity_assets.check.grains import (
    coarser_periods_joined,
    coverage_past_trading_days,
    grain_finer_than_rows,
    outcome_past_trading_days,
    periods_read_as_vintages,
    rows_dated_after_known,
    sundays_starting_weeks,
    weeks_not_iso,
    year_spans_read_as_months,
    years_beside_periods,
    zoned_elsewhere,
    zoned_in_a_database,
)
from opportunity_assets.check.joins import (
    join_published_later,
    join_rows_undated,
    join_undated_at_fault,
    joined_tables,
    read_metric,
)
from opportunity_assets.check.keys import (
    copies_by_nature,
    dated_apart,
    duplicated_keys,
    duplicates_blank_inputs,
    event_id_lines,
    events_from_after,
    events_sent_again_line,
    events_written_twice_line,
    few_keys_shared,
    ids_of_rows,
    revisions_unread,
    rows_appended,
    rows_copied,
)
from opportunity_assets.check.latest import (
    default_night_before_refused,
    figures_ended,
    latest_period_cut_short,
    latest_rows_refused,
    latest_rows_stray,
    night_after_the_data,
)
from opportunity_assets.check.patterns import calendar_week_patterns, iso_weeks_read_by_calendar
from opportunity_assets.check.periods import (
    UNPARSED_PERIODS,
    cadence_read_by_pattern,
    commonest_values,
    day_and_month_swapped,
    periods_unparsed,
    published_unparsed,
    published_unparsed_few,
    two_digit_years,
    two_digit_years_by_pattern,
    two_digit_years_over_the_turn,
    undated_at_fault,
    unix_time_of_no_time,
)
from opportunity_assets.check.reach import (
    grain_finer_than_starts,
    history_held,
    outcome_out_of_reach,
    rows_of_a_coarser_grain,
    windows_past,
)
from opportunity_assets.check.reading import (
    before_the_night,
    json_keys_spelt_otherwise,
    no_period_problem,
    source_problem,
    text_among_numbers_compared,
)
from opportunity_assets.check.units import units_changed_alike, units_in_a_column
from opportunity_assets.check.values import (
    ages_of_counts,
    ages_within_a_period,
    aggregates_over_empty_cells,
    bounds_in_another_unit,
    columns_missing_from_files,
    files_left_by_the_query,
    listed_values_spelt_two_ways,
    listed_values_stopped,
    listed_values_unmatched,
    long_names_spelt_two_ways,
    long_names_unmatched,
    shares_of_every_event,
    shares_over_empty_cells,
    sheets_left_unread,
)
from opportunity_assets.check.written import periods_written_otherwise
from opportunity_assets.criteria import CriteriaPack, MetricSpec
from opportunity_assets.latest import Latest
from opportunity_assets.periods import GRAINS, last_possible_night
from opportunity_assets.records import Candidate
from opportunity_assets.sources import shapes
from opportunity_assets.sources.connection import file_key, held, kept_open
from opportunity_assets.sources.facts import latest_published_period, publication_span, refused_after, source_facts
from opportunity_assets.sources.formats import (
    join_label,
)
from opportunity_assets.sources.probes import (
    names_per_entity,
    rows_matching,
)
from opportunity_assets.sources.reading import SourceError
from opportunity_assets.sources.snapshot import earlier_snapshots, read_snapshot
from opportunity_assets.text import clip_quoted, plain


class NightRefused(ValueError):
    """`opportunity check`'s problems with a night, in one line: the night stops on them before anything is
    stored, however it was started (`opportunity run`, the schedule, the UI)."""


@dataclass(frozen=True)
class CheckReport:
    as_of: date | None
    problems: list[str] = field(default_factory=list)
    """One line each, naming the pack key; empty: the pack can run."""
    facts: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """One line each, naming the pack key: likely mistakes that spoil nothing the night computes (bounds in
    another unit than their column's, which refuse nothing); the pack can run."""

    def __str__(self) -> str:
        head = f"{'problems' if self.problems else 'ok'}" + (f" (night {self.as_of})" if self.as_of else "")
        return "\n".join([head, *(f"  problem: {clip_quoted(p)}" for p in self.problems),
                          *(f"  warning: {clip_quoted(w)}" for w in self.warnings),
                          *(f"  {clip_quoted(f)}" for f in self.facts)])


class SourceProblem(ValueError):
    """A source that cannot be read, in one line that already names the pack key at fault (`source_problem`)."""


def _nothing_published(pack: CriteriaPack, night: date, today: date | None) -> str:
    """No row published by the night: the period keys when no period parses at all, else when data begins."""
    try:
        span = publication_span(pack, last_possible_night(today))
    except SourceError as exc:
        return source_problem(pack, str(exc), missing=exc.missing, present=exc.present,
                              within=exc.within)
    if span is None:
        return no_period_problem(pack, last_possible_night(today))
    if pack.nights is not None and pack.nights.start <= night:  # a night offered only by the pack's own start
        return (f"key `nights.start`: got {pack.nights.start.isoformat()}; no row is published by {night}, the first "
                f"night with data is {span[0]}: expected a first night on or after it (the nights before it have no "
                "data to scan)")
    known = pack.source.known_at
    if known is not None and known > night:  # (trial 72: a known_at days after the latest night blamed the file)
        return (f"key `source.known_at`: got {known.isoformat()}; no row is published by {night}, every row being "
                "known on that date (a snapshot is seen from its known-at date on): expected the date the file's "
                "figures were known, on or before the night")
    return f"key `source.path`: no row is published by {night}; the first night with data is {span[0]}"


def _nights_before_the_data(pack: CriteriaPack, today: date | None) -> list[str]:
    """Warning: `nights.start` before the first night with data (trials 17 and 32: `start: 1940-01-01` over data
    first published in 1949 was silent while the UI offered a nine-year run of nights with nothing to scan, each a
    problem once run)."""
    if pack.nights is None:
        return []
    span = publication_span(pack, last_possible_night(today))
    if span is None or pack.nights.start >= span[0]:
        return []
    empty = (span[0] - pack.nights.start).days
    return [f"key `nights.start`: got {pack.nights.start.isoformat()}; the first night with data is {span[0]}, so the "
            f"UI offers {empty:,} night{'s' if empty != 1 else ''} before it with no row to scan (each stopped "
            "naming this key, as `check --as-of` one is): expected a first night on or after it, or no `nights` "
            "(they then start there)"]


_LAST_CHECK: Latest[tuple[CheckReport, bool, list[str]]] = Latest()
"""The latest check before a night and what it depends on (the pack, its files' bytes, the night, the date):
`opportunity run` checks first, then its scan step asks again, as a scheduled night's does: one check. Kept with
whether its night was the default one (`check_pack`'s `defaulted`) and the warnings only a default night is told,
so the scan step's ask after `opportunity run` without `--as-of` is answered by the same check less those (trial
117: a night of 15,666 patients checked twice, 6 s of its 22)."""


def latest_as_of(pack: CriteriaPack, today: date | None = None) -> date:
    """The latest night the data supports on or before the latest night there is (yesterday): when its newest period
    up to then was published, or yesterday if that is still to come. A row dated after today is ignored (the scan
    quarantines it). A source that cannot be read is a `SourceProblem` naming the pack key at fault."""
    last_night = last_possible_night(today)
    try:
        span = publication_span(pack, last_night)
    except SourceError as exc:
        raise SourceProblem(source_problem(pack, str(exc), missing=exc.missing, present=exc.present,
                                            within=exc.within)) from None
    if span is None:
        raise SourceProblem(no_period_problem(pack, last_night))
    night = min(span[1], last_night)
    return night - timedelta(days=1) if _published_cut_short(pack, night) else night


def _published_cut_short(pack: CriteriaPack, night: date) -> bool:
    """Whether `night` is the one that publishes an events source's latest period cut short (an extract's end:
    `latest_period_cut_short`), under the lag rule. Trial 42: the bundled NYC routes' default night, 2014-01-08,
    read 2014-W01's two days of flights as a week's, and check warned against the very night it had chosen; the
    night before reads whole weeks only."""
    if pack.source.shape != "events" or pack.source.published_column is not None:
        return False
    anchor = latest_published_period(pack, night)
    return anchor is not None and pack.grain.end(anchor) + timedelta(days=pack.source.publication_lag_days) == \
        night and bool(latest_period_cut_short(pack, night, anchor))


def check_pack(pack: CriteriaPack, as_of: date | None = None, today: date | None = None, *,
               with_facts: bool = True, defaulted: bool = False) -> CheckReport:
    """Read the source for `as_of` (default: the latest night it supports) and say what would go wrong, the night's
    candidates scanned (a formula component undefined for all of them, an identity band most lie outside); with
    `with_facts`, also what the night would find. The check before a night (`with_facts=False`) costs the night no
    second scan: the night's scan step is given the same result (`candidates.logic.scan` keeps its latest), and
    asking it again for the same night and files answers from the first. `defaulted`: `as_of` is the latest night
    the source supports, chosen for the user (`opportunity run` without `--as-of`), told as a default night is."""
    if with_facts or as_of is None:
        with kept_open(), held():  # one check reads its source once, not once per question (a command's if in one)
            return _check(pack, as_of, today, with_facts, defaulted)

    files = file_key(pack)
    key = None if files is None else (*files, as_of, today or date.today())
    if (kept := _LAST_CHECK.get(key)) is not None:
        report, kept_defaulted, said = kept
        if kept_defaulted == defaulted:
            return report
        if kept_defaulted:  # (the default night's own warnings are all `defaulted` changes: problems never)
            return replace(report, warnings=_less(report.warnings, said))
    said = []
    with kept_open(), held():
        report = _check(pack, as_of, today, with_facts, defaulted, said)
    _LAST_CHECK.put(key, (report, defaulted, said))
    return report


def _less(warnings: list[str], said: list[str]) -> list[str]:
    """`warnings` without one of each of `said` (those a default night alone is told) that is among them."""
    left = list(warnings)
    for line in said:
        if line in left:
            left.remove(line)
    return left


_EARLIER_NIGHTS = 7
"""Earlier nights, a grain's period apart, whose candidates a source of too few entities for a unit judgment lends
it (a single series: a percent range over its share growth scores it flat every night, and check said ok)."""


def _check(pack: CriteriaPack, as_of: date | None, today: date | None, with_facts: bool,
           defaulted: bool = False, said: list[str] | None = None) -> CheckReport:
    """`check_pack`'s check; `said`, if given, is extended by the warnings only a default night is told."""
    from opportunity_assets.candidates.logic import gone_note, scan_read

    try:
        night = as_of or latest_as_of(pack, today)
        # counts over the typed rows before the snapshot, which frees them (`connection.kept_open`)
        counted = source_facts(pack, night)
        seen, starts = counted.tables[0].visible, counted.first_days
        if starts is not None and GRAINS.index(pack.grain.name) >= GRAINS.index(starts) - (starts == "quarter"):
            starts = None  # (a month grain over quarters: `grain_finer_than_rows` says so, with the rows' step)
        problems = before_the_night(pack, counted)
        problems += [p for within, _ in pack.source.keyed if (p := two_digit_years(pack, within)) is not None]
        problems += [p for within, _ in pack.source.keyed
                     if (p := two_digit_years_by_pattern(pack, within)) is not None]
        problems += [p for within, _ in pack.source.keyed
                     if (p := two_digit_years_over_the_turn(pack, within)) is not None]
        problems += [p for within, _ in pack.source.keyed if (p := cadence_read_by_pattern(pack, within)) is not None]
        mistaken_bounds, warnings = bounds_in_another_unit(pack, counted)
        problems += mistaken_bounds
        warnings += text_among_numbers_compared(pack, counted)
        listed = [listed_values_unmatched(pack, within, spec) for within, spec in pack.source.keyed]
        problems += [p for found, _ in listed for p in found]
        problems += [p for within, spec in pack.source.keyed for p in long_names_unmatched(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in shares_over_empty_cells(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in shares_of_every_event(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed
                     for w in aggregates_over_empty_cells(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed
                     for w in listed_values_spelt_two_ways(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in listed_values_stopped(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in long_names_spelt_two_ways(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in columns_missing_from_files(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in files_left_by_the_query(pack, within, spec)]
        warnings += [w for within, spec in pack.source.keyed for w in sheets_left_unread(pack, within, spec)]
        warnings += [w for w in [events_sent_again_line(pack)] if w is not None]
        # (a second read of the source, 2 s over NYC's 335,032 flights: `opportunity check` says it, not every night)
        warnings += [w for w in [events_written_twice_line(pack) if with_facts else None] if w is not None]
        id_problems, id_warnings = event_id_lines(pack)
        problems += id_problems
        warnings += id_warnings
        # a source of fewer entities than a unit judgment needs: its candidates of earlier nights too
        earlier = _EARLIER_NIGHTS if counted.tables[0].entities < check_candidates.ENOUGH else 0
        nights_before = _earlier_candidates(pack, night, earlier, today)
        past = [c for _, found_then in nights_before for c in found_then]
        snapshot = read_snapshot(pack, night, today=today)
    except SourceProblem as exc:
        return CheckReport(as_of=as_of, problems=[str(exc)])
    except SourceError as exc:
        return CheckReport(as_of=as_of, problems=[source_problem(pack, str(exc), missing=exc.missing,
                                                                 present=exc.present, within=exc.within)])
    reasons = snapshot.quarantined["reason"].to_list()
    read_rows = snapshot.history.height
    labels = [f"{join_label(pack, j)}: " for j in pack.source.join]
    own = [r for r in reasons if not r.startswith(tuple(labels))] if labels else reasons
    columns = numeric_columns(pack.source, "source")
    read = list(dict.fromkeys([*columns, *pack.columns]))  # an event's own columns, and the panel's
    cells = [bad_cells(r, read) for r in own]
    mistaken_cells = cell_problems(pack.source, *as_long_values(pack.source, columns, cells), seen)
    named = {c for c in columns for p in mistaken_cells if f"{c!r}:" in p}
    own_rows = snapshot.quarantined.filter(~pl.any_horizontal(pl.lit(False), *(pl.col("reason").str.starts_with(x)
                                                                                for x in labels)))
    # the main source's rows of no period, each of its entity's metrics unknown (a joined table's leaves only its
    # own columns unknown, and is told by its own key, not the main file's path, which trial 33 saw blamed for it)
    undated = own_rows.filter(pl.col("period").is_null() & pl.col("entity_id").is_not_null())
    mistaken_cells += grouped_in_reach(pack.source, {c: k for c, k in columns.items() if c not in named},
                                       own_rows, snapshot.history,
                                       max((m.window[1] for m in pack.metrics.values() if m.agg != "derived"),
                                           default=0))
    written_otherwise = any(p.startswith(("key `source.decimal_separator`", "key `source.thousands_separator`",
                                          "key `source.wide.value`"))
                            for p in mistaken_cells)  # every column's numbers, or every wide column's: said once
    problems += mistaken_cells + ([] if written_otherwise else wide_columns_of_text(
        pack.source, snapshot.quarantined, snapshot.history))
    problems += empty_columns(pack.metrics, columns, snapshot.history, "\n".join(problems),
                              lambda empty: _filled_somewhere(pack, empty),
                              pack.source.long.values if pack.source.long is not None else None)
    problems += empty_event_columns(pack.source, pack.metrics, snapshot.history["entity_id"].n_unique(),
                                    "\n".join(problems), lambda empty: _filled_somewhere(pack, empty))
    unparsed = [r for r in own if r.startswith("period unparseable")]
    many_unparsed = len(unparsed) > UNPARSED_PERIODS * seen
    joined = joined_tables(pack, night, counted, snapshot, reasons, mistaken_bounds,
                           own_undated=many_unparsed)
    problems += joined.problems
    warnings += joined.warnings
    joined_facts, joins_undated = joined.facts, joined.undated
    duplicated = sum(1 for r in own if r.startswith("duplicated key"))
    # a file dated by `known_at` is one row per entity: a tenth of it refused is the key's problem, not the data's
    many_duplicated = duplicated and duplicated > (UNPARSED_PERIODS if pack.source.known_at else MOSTLY_TEXT) * seen
    published = pack.source.published_column
    unpublished = [r for r in own if published and r.startswith(f"{published} unparseable: ")]
    many_unpublished = len(unpublished) > UNPARSED_PERIODS * seen
    scoped = any(p.startswith("key `source.where.") for p in problems)  # a numeric test of text keeps no row
    if snapshot.anchor_period is None and not (many_duplicated or many_unparsed or many_unpublished or scoped):
        problems.append(_nothing_published(pack, night, today))  # (many duplicated keys: the grain's problem)
    if many_unparsed:
        problems.append(periods_unparsed(pack, unparsed, seen))
    if many_unpublished:
        problems.append(published_unparsed(pack, unpublished, seen))
    elif unpublished:
        warnings.append(published_unparsed_few(pack, unpublished, seen))
    swapped = day_and_month_swapped(pack) if starts == "year" else None
    # (its rows of one January each are duplicated keys: a day and month swapped is that, said once)
    problems += [swapped] if swapped is not None else grain_finer_than_starts(pack, starts)
    # every row in 1970's first moments: their duplicated keys and windows past the history are that, again
    no_time = unix_time_of_no_time(pack)
    revised = revisions_unread(pack, duplicated) if duplicated and swapped is None and no_time is None else None
    if revised is not None:  # (a figure's revisions, each refused: the periods revised are gaps, said once)
        problems.append(revised)
    elif many_duplicated and swapped is None and no_time is None:
        problems.append(rows_copied(pack, night) or duplicated_keys(pack, duplicated))
    if starts is None and (coarser := grain_finer_than_rows(pack, snapshot.history)) is not None:
        problems.append(coarser)
    elif starts is None and counted.coarser_rows is not None:
        problems.append(rows_of_a_coarser_grain(pack, counted.coarser_rows))
    if (vintages := periods_read_as_vintages(pack)) is not None:
        # (a finer period's rows, published as its own period ends, are early for the coarser one: that, again)
        problems = [*(p for p in problems if not p.startswith("key `source.published_column`")), vintages]
    beyond: list[tuple[str, MetricSpec]] = []  # metrics whose windows reach past the history
    if no_time is not None:
        problems.append(no_time)
    elif snapshot.history.height:
        reach = int(snapshot.history.select(pl.col("periods_ago").max()).item())
        beyond = [(name, spec) for name, spec in pack.metrics.items()  # (its `min_rows` still held: no problem)
                  if spec.agg not in ("derived", "age_days") and spec.window[1] > reach
                  and reach - spec.window[0] + 1 < spec.required_rows]
        if beyond:
            problems.append(windows_past(pack, night, reach, beyond))
        warnings += [] if beyond else (outcome_out_of_reach(  # (else the same cause, again)
            pack, night, history_held(pack, reach, snapshot)) or outcome_past_trading_days(pack, snapshot.history))
    problems = list(dict.fromkeys(problems))  # (a join's `where` problem is also why it matched nothing)
    problems += [] if counted.copies is None else [rows_appended(pack, counted.copies)]
    warnings += copies_by_nature(pack, counted.repeats) if counted.copies is None else []
    main = counted.tables[0]
    if (one_row_each := ids_of_rows(pack, main)) is not None:
        problems.append(one_row_each)
        # a candidate per row: their scan is the night's whole cost (348,532 survey answers: 87 s), and every other
        # finding over them (inputs with no value, filters refusing all) is this problem again
        return CheckReport(as_of=night, problems=problems, warnings=warnings,
                           facts=[read_fact(pack, snapshot, main.seen_dated, read_rows, main.revised),
                                  "candidates not scanned: one an entity of about one row"])
    per = _names_per_entity(pack, snapshot.history)
    # (a name column that changes within most entities also repeats across them: trial 32's `entity_id: flight`
    # named by `tailnum` was told both, each naming `entity_name: flight`; its change is the cause, said once)
    changing = names_changing(pack, per)
    warnings += (changing or names_shared(pack, without_padded_twins(snapshot.metrics))
                 + (names_finer(pack, per) or names_together(pack, per))) \
        + (total_rows(pack, snapshot.metrics, snapshot.history) or totals_by_sum(pack, snapshot.history)) \
        + ids_of_dates(pack, snapshot.metrics) + ids_of_structures(pack) \
        + ids_zero_padded(pack, snapshot.metrics) + json_keys_spelt_otherwise(pack, snapshot.quarantined) \
        + measure_in_key(pack, snapshot.history) + ids_renamed(pack, snapshot.history) \
        + units_changed_alike(pack, snapshot.history) \
        + ids_spelt_two_ways(pack, snapshot.history) \
        + ids_continued(pack, snapshot.history)
    stale = night_after_the_data(pack, night, snapshot.anchor_period,
                                 snapshot.quarantined.select(pl.col("period").max()).item(), counted.held,
                                 snapshot.history)
    warnings += zoned_elsewhere(pack) + zoned_in_a_database(pack) + sundays_starting_weeks(pack) + stale \
        + rows_dated_after_known(pack) + units_in_a_column(pack) \
        + ages_of_counts(pack) + ages_within_a_period(pack) \
        + _nights_before_the_data(pack, today) \
        + ([] if stale or any(QUARANTINING_KEYS.match(p) for p in problems)  # (a source key's line says why)
           else latest_rows_refused(pack, night, snapshot.anchor_period, snapshot.quarantined))
    if (as_of is None or defaulted) and not stale:  # (a night the user names: `latest_rows_refused` says them)
        default_only = default_night_before_refused(pack, night, snapshot.anchor_period,
                                                    refused_after(pack, night, last_possible_night(today)))
        warnings += default_only
        if said is not None:
            said += default_only
    warnings += latest_period_cut_short(pack, night, snapshot.anchor_period) \
        + file_cut_short(pack, snapshot.quarantined, snapshot.history) \
        + wide_columns_empty(pack.source, snapshot.history, snapshot.quarantined) \
        + wide_columns_counting(pack.source, snapshot.history)
    if pack.source.period_column and (calendar := calendar_week_patterns(pack.source)):
        values = commonest_values(pack, "source", shapes.written(pack.source.period_column), shapes.IN_SCOPE, limit=20)
        problems += filter(None, [iso_weeks_read_by_calendar(calendar, values)])
    problems += year_spans_read_as_months(pack) + years_beside_periods(pack) + coarser_periods_joined(pack)
    not_iso = weeks_not_iso(pack)  # (its rows of no week are that, again: said once)
    problems += not_iso
    # the scan the night itself runs (the same inputs: it is given this result again)
    found, report = scan_read(pack, night, snapshot)
    scanned, found = found, _judged(found)
    held = frozenset(snapshot.history["periods_ago"].drop_nulls().unique().to_list())
    found_problems, undefined_tonight = check_candidates.problems(pack, found, held)
    problems += undated_at_fault(pack, found_problems, unparsed, seen, many_unparsed or bool(not_iso)) \
        + coverage_past_trading_days(pack, snapshot.history, found)
    problems += join_undated_at_fault(pack, joins_undated, problems)
    if duplicated and not many_duplicated and not any(p.startswith("key `source.") for p in problems) \
            and duplicates_blank_inputs(pack, found) and dated_apart(pack):  # (a source key's line says why)
        problems.append(duplicated_keys(pack, duplicated))
    elif duplicated and not many_duplicated and not any(p.startswith("key `source.") for p in problems):
        warnings += few_keys_shared(pack, duplicated)
    problems = one_cause_once(problems, pack)
    if (stray := latest_rows_stray(pack, night, counted.held)) is not None:
        # windows no candidate fills past a few rows dated far after the rest: those rows, said once
        windows = re.compile(r"^key `metrics\.\w+\.(min_rows|window)`")
        if any(windows.match(p) for p in problems):
            problems = [stray, *(p for p in problems if not windows.match(p))]
        else:
            warnings.append(stray)
    # rows of the latest periods with no figure: every metric's gap, that cause said once
    periods_read = re.compile(r"^key `source\.(grain|period_(format|column)|(year|month|day|quarter|week)_column)`")
    if not any(periods_read.match(p) for p in problems) and (  # (periods misread: empty ones are that, again)
            ended := figures_ended(pack, night, snapshot.history, snapshot.quarantined)) is not None:
        problems = [ended, *(p for p in problems if not p.startswith(READING_KEYS))]
    if (later := join_published_later(pack, night, snapshot.anchor_period, counted, problems)) is not None:
        # the inputs and filters it leaves with no value: that cause, said once
        line, blamed = later
        problems = [line, *(p for p in problems if read_metric(pack, p) not in blamed)]
    problems, tonight_only = _undefined_tonight_only(pack, night, today, problems, undefined_tonight,
                                                     nights_before)
    warnings += tonight_only
    if earlier:
        warnings += lacking_of_few(pack, found, problems) + undated_of_few(
            pack, found, problems, unparsed, seen, undated.select("source_row", "reason").rows()) + [
            join_rows_undated(pack, *joined) for joined in joins_undated
            if check_candidates.unknown_for_all(pack, found, least=1)]
    metric_units = check_candidates.shares_beyond_one(pack, found) + check_candidates.fractions_in_whole_units(
        pack, found)
    if past and not metric_units:  # a source of one series: its earlier nights' candidates too (trial 87)
        whose = check_candidates.over_nights(earlier)
        metric_units = check_candidates.shares_beyond_one(pack, [*found, *past], whose) \
            + check_candidates.fractions_in_whole_units(pack, [*found, *past], whose)
    warnings += check_candidates.unit_judgments(pack, found)[1] + metric_units + flagged_capped(pack, report) \
        + check_candidates.bounds_blanking_most(pack, found) \
        + check_candidates.coarser_figures_read_alike(pack, found) \
        + check_candidates.before_first_events(pack, found) + events_from_after(pack, night) \
        + ([] if stray else check_candidates.windows_filled_in_part(pack, found)
                 + check_candidates.windows_before_latest_rows(pack, found))
    if past:
        pooled_problems, pooled_warnings = check_candidates.unit_judgments(
            pack, [*found, *past], check_candidates.over_nights(earlier))
        problems += pooled_problems + check_candidates.identities_off_band(pack, [*found, *past], earlier)
        warnings += pooled_warnings
    elif _band_of_few_going_on(pack, found):  # (trial 72: 2 of 4 indices went on, a band in percent unjudged)
        try:
            going_before = [c for _, then in _earlier_candidates(pack, night, _EARLIER_NIGHTS, today) for c in then]
        except SourceError:
            going_before = []
        problems += check_candidates.identities_off_band(pack, [*found, *going_before], _EARLIER_NIGHTS)
    otherwise = periods_written_otherwise(pack, unparsed) if unparsed and not many_unparsed and not not_iso and (
        pack.source.period_column or pack.source.year_column) and pack.source.wide is None \
        else None  # a few rows' dates written another way
    if otherwise and "`period_format: [" in otherwise and not any(
            p.startswith("key `source.period_format`") for p in problems):
        # a pattern reads them: each such row leaves its entity's every metric unknown on every night (trial 21: a
        # fact, with no key, beside check's ok); a warning, the night running with those entities' gaps
        given = repr(pack.source.period_format) if pack.source.period_format else "none"
        # (a single series' line for the same rows, `undated_of_few`, with the pattern and no list: said once)
        warnings = [w for w in warnings if not w.startswith(f"key `source.period_format`: got {given}")]
        warnings.append(f"key `source.period_format`: got {given}; {otherwise} (each such row leaves its entity's "
                        "every metric unknown on every night, as it may lie in any window)")
        otherwise = None
    warnings = warnings_said_once(pack, problems, warnings, stale=bool(stale), windows_past=bool(beyond))
    if not with_facts:
        return CheckReport(as_of=night, problems=problems, warnings=warnings)
    facts = [read_fact(pack, snapshot, main.seen_dated, read_rows, main.revised, len(scanned),
                       len(scanned) - len(found)),
             f"{report.passed_filters} pass the hard filters{unclear_said(found)}, {report.went_on} would go on "
             f"(cap {pack.caps.max_candidates}{past_cap(pack, report.flagged_past_cap)})"
             + most_failed(pack, [c for c in found if not c.gone], report.failed_by_filter, report.judged,
                           report.passed_filters)]
    spelt = any(w.startswith("key `source.entity_id`") and "punctuation, case or accents" in w for w in warnings)
    facts += [plain(n) for n in report.notes if n.startswith("entity keys ") and not spelt]  # one id, keys apart
    gone = [c for c in scanned if c.gone]
    facts += [plain(gone_note(pack, [c.id for c in gone], {c.id: c.name for c in gone}, ahead=True))] if gone else []
    facts += [f for _, found in listed for f in found] + joined_facts
    facts += cells_refused(pack.source, cells, columns, seen, problems, separators_said=written_otherwise)
    if reasons:
        # (the main source's rows numbered by its ORDER BY: a joined table's rows only are numbered their own way)
        facts.append(quarantined_for(snapshot.quarantined) + (rows_numbered(pack.source) if own else ""))
    facts += undated_of_no_entity(undated, snapshot.metrics)
    facts += [] if not_iso else rows_of_no_period(undated, snapshot.metrics)
    if otherwise and not any(p.startswith("key `source.period_format`") for p in problems):
        facts.append(otherwise)
    facts += not_utf8(pack) + gaps_of(pack, found)
    return CheckReport(as_of=night, problems=problems, facts=facts, warnings=warnings)


def _earlier_candidates(pack: CriteriaPack, night: date, nights: int, today: date | None
                        ) -> list[tuple[date, list[Candidate]]]:
    """The candidates of each of the `nights` nights before `night`, a grain's period apart, latest first (read
    beside the night's own scan, which stays the kept one)."""
    from opportunity_assets.candidates.logic import scan_aside

    before = [pack.grain.later(night, -k) for k in range(1, nights + 1)]
    return [(n, _judged(scan_aside(pack, n, s.anchor_period, s.metrics, s.history, s.quarantined, s.before_own)))
            for n, s in zip(before, earlier_snapshots(pack, before, today) if before else [], strict=True)]


def _filled_somewhere(pack: CriteriaPack, columns: list[str]) -> set[str]:
    """Those of the main source's `columns` that some row in its scope fills, in any period (`cells.empty_columns`):
    one pass over the typed rows."""
    counts = rows_matching(pack, [f"{shapes.IN_SCOPE} AND {shapes.value_of(pack.source, c)} IS NOT NULL"
                                  for c in columns])
    return {c for c, n in zip(columns, counts, strict=True) if n}


def _band_of_few_going_on(pack: CriteriaPack, found: list[Candidate]) -> bool:
    """Whether an identity's `expected` band is judged on fewer candidates going on tonight than the judgment needs
    (`check_candidates.ENOUGH`), on a source of enough entities: a cap or the filters leave too few, and the
    nights before are pooled as for a source of fewer entities."""
    banded = any(identity.expected is not None for identity in pack.integrity.identities)
    return banded and sum(c.went_on for c in found) < check_candidates.ENOUGH


def _judged(found: list[Candidate]) -> list[Candidate]:
    """The candidates a night judges: not those the source stopped carrying (`Candidate.gone`), whose one gap, no
    row for years, would outnumber and hide what tonight's entities say of a key (trial 55: 56 baseball clubs gone
    for decades)."""
    return [c for c in found if not c.gone]


def _undefined_tonight_only(pack: CriteriaPack, night: date, today: date | None, problems: list[str],
                            undefined: dict[str, check_candidates.Undefined],
                            read: list[tuple[date, list[Candidate]]]) -> tuple[list[str], list[str]]:
    """(problems, warnings): an expression with no value for any candidate tonight (`undefined`, by its problem's
    text) that had one on an earlier night, of the `_EARLIER_NIGHTS` a period apart, is the data's (Ansett's
    passengers after the 1989 pilots' strike, four weeks of zeros, divided by): a warning, the night running with
    its candidates data gaps, not a problem blaming the expression that stopped the night. An expression never
    defined stays a problem. `read`: those nights' candidates if the check has them already (a source of few
    entities)."""

    standing = [undefined[p] for p in problems if p in undefined]
    if not standing:
        return problems, []
    try:
        earlier = read or _earlier_candidates(pack, night, _EARLIER_NIGHTS, today)
    except SourceError:  # an earlier night unreadable: nothing says the expression had a value
        return problems, []
    warnings = []
    for expression in standing:
        valued = [n for n, found in earlier if check_candidates.has_value(pack, expression.key, found)]
        if valued:
            problems = [p for p in problems if p != expression.problem]
            warnings.append(expression.tonight_only(pack.grain.name, valued, len(earlier)))
    return problems, warnings


def _names_per_entity(pack: CriteriaPack, history: pl.DataFrame) -> pl.DataFrame:
    """The names each entity's rows carry, for `names_changing` and `names_finer`: a panel's over the rows the night
    reads; an events source's over its events (its panel holds one name per entity, whatever its events say). None
    counted where the name is the id: it changes with it, and none of them asks more (an empty frame)."""
    if pack.source.name_columns == pack.source.entity_columns:
        return pl.DataFrame()
    if pack.source.shape != "events":
        return names_per_row(history)

    return names_per_entity(pack)


