"""`opportunity check`: the facts a new user wants first, counted over the night's rows and scan (pure): what was
read, how many pass and go on, the commonest reasons rows were quarantined (and how a PostgreSQL table's rows are
numbered), the candidates past the cap, the filter that fails most, rows of no period."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import TYPE_CHECKING

import polars as pl

from opportunity_assets.candidates.quarantine import joined_reason
from opportunity_assets.check.cells import (
    MISSING_TEXTS,
    as_long_values,
    grouped_most,
    negatives_unsigned,
    separator_wanted,
    text_cells,
)
from opportunity_assets.check.periods import empty_period_column
from opportunity_assets.criteria import CriteriaPack, HardFilter
from opportunity_assets.formatting import significant, written
from opportunity_assets.records import Candidate, FilterResult
from opportunity_assets.sources.csv_rows import not_utf8_lines
from opportunity_assets.sources.reading import quote_identifier
from opportunity_assets.sources.sniff import infer_format
from opportunity_assets.sources.spec import SourceSpec

if TYPE_CHECKING:
    from opportunity_assets.candidates.logic import ScanReport
    from opportunity_assets.sources.snapshot import SourceSnapshot


def of_entities(n: int) -> str:
    """`n` entities in words: "1 entity", "3 entities" (trial 28: "cite_rate (1 entities)")."""
    return f"{n} entit{'y' if n == 1 else 'ies'}"


def read_fact(pack: CriteriaPack, snapshot: SourceSnapshot, events: int, read_rows: int, revised: int = 0,
              scanned: int | None = None, gone: int = 0) -> str:
    """Check's first fact: entities (`scanned`, the candidates the scan made, when known: an entity whose every row
    is refused is one, with no row in the panel; counted as the brief's "Scanned" counts them, those of them the
    source no longer records, `gone`, said: trials 101 and 106 read check's "194 entities" beside the brief's
    "Scanned 201"), rows in reach (an events source's panel rows are its entity-periods, not its rows: 1728
    plot-months of 35,549 captures, the events read said beside them, and the rows a later row of their event
    revises, `source.event_id`), latest period, quarantined rows."""
    entities = of_entities(snapshot.metrics.height if scanned is None else scanned)
    if gone:
        entities += f" ({gone} of them no longer recorded)"
    quarantined = snapshot.quarantined.height
    latest = "none" if snapshot.anchor_period is None else pack.grain.label(snapshot.anchor_period)
    revisions = f" (from {events} rows: {revised} revised by a later row of their `event_id`)" if revised else ""
    in_reach = f"{read_rows} rows in reach" if pack.source.shape != "events" else \
        f"{events - revised} events read{revisions}, {read_rows} entity-periods in reach"
    return (f"{entities}, {in_reach}, latest period {latest}, {quarantined} "
            f"quarantined row{'' if quarantined == 1 else 's'}")


def _kinds(reason: str) -> list[str]:
    """What a quarantine reason refuses, without its details: `column wage` of `column wage: 'abc' is not a
    number`. A row whose several cells are refused (the reader joins them by `; `) is of each column's kind:
    trial 54's row 71, its `emp` and `wage` both refused, was listed under `emp` alone."""
    parts = reason.split(" (")[0].split("; ")  # (`... (that cell is a gap; the row is kept)`)
    if not all(p.startswith("column ") for p in parts):
        parts = [reason.split(" (")[0]]
    return list(dict.fromkeys(p.split(":")[0] for p in parts))


def quarantined_for(quarantined: pl.DataFrame, shown: int = 3) -> str:
    """The commonest reasons rows were quarantined for, each with how many and the first rows (by the line each
    starts on in its file): `quarantined for: missing entity id (397: source rows 12, 40, 77, ...)`; past the
    third, how many rows more and the first of them with its reason (trial 23: "4 quarantined rows" beside three
    reasons of one row each, the fourth row named nowhere). A line is named once, however many of a wide source's
    cells it holds (trial 24: "source rows 2, 2, 2"). A joined table's rows are numbered in its own file or
    table, and said with its name and why (`join guns: duplicated key (102: its rows 11, 34, 57, ...)`; trial 25:
    `join guns` alone, beside the main source's row numbers). Reasons past the third whose rows the first three
    named are said as those rows' other reasons, not as "0 row more" (trial 73)."""
    rows: dict[str, list[int]] = {}
    for row in quarantined.select("source_row", "reason").iter_rows(named=True):
        reason = str(row["reason"])
        joined = joined_reason(reason)
        for kind in _kinds(reason if joined is None else joined[1]):
            rows.setdefault(kind if joined is None else f"{joined[0]}: {kind}", []).append(row["source_row"])
    ranked = sorted(rows.items(), key=lambda item: -len(item[1]))
    top, rest = ranked[:3], ranked[3:]

    def first(numbers: list[int], why: str) -> str:
        named = sorted({n for n in numbers if n is not None})  # (a wide line's cells: one line, said once)
        more = ", ..." if len(named) > shown else ""
        whose = "its" if why.startswith("join ") else "source"
        return f": {whose} row{'s' if len(named) > 1 else ''} {', '.join(map(str, named[:shown]))}{more}" if named \
            else ""

    said = "quarantined for: " + ", ".join(f"{why} ({len(numbers)}{first(numbers, why)})" for why, numbers in top)
    if not rest:
        return said
    told = {n for _, numbers in top for n in numbers}  # (a row of several refused cells: counted once)
    more = len({n for _, numbers in rest for n in numbers if n is not None and n not in told}) \
        + sum(1 for _, numbers in rest for n in numbers if n is None)
    why, numbers = rest[0]
    if not more:  # (trial 73: "and 0 row more for 1 other reason", of rows the reasons above had named)
        return (f"{said}, and {len(rest)} other reason{'s' if len(rest) > 1 else ''} of those rows ({why} "
                f"({len(numbers)}{first(numbers, why)}){', ...' if len(rest) > 1 else ''})")
    return (f"{said}, and {more} row{'s' if more > 1 else ''} more for {len(rest)} other "
            f"reason{'s' if len(rest) > 1 else ''} ({why}{first(numbers, why)}{', ...' if len(rest) > 1 else ''})")


def rows_numbered(src: SourceSpec) -> str:
    """How a PostgreSQL source's rows are numbered, said beside the quarantined rows' numbers: a table has no order
    of its own, so the reader sorts the rows by the columns it reads, as text (`sources.postgres.read_rows`), and
    without the order a row's number finds nothing in the user's table. Empty for a file's source (its lines)."""
    if src.format != "postgres":
        return ""
    return (f" (a PostgreSQL table has no order of its own: its rows are numbered as `ORDER BY "
            f"{', '.join(quote_identifier(c) + '::text' for c in src.read_columns)}` returns them)")


def unclear_said(found: list[Candidate]) -> str:
    """How many of the candidates that pass the hard filters do so with a filter UNCLEAR (its metric missing): they
    go on unjudged by it, and none of them passed it."""
    unclear = sum(1 for c in found if (c.went_on or c.capped) and FilterResult.UNCLEAR in c.filters.values())
    return f" ({unclear} of them with a filter UNCLEAR: its metric has no value)" if unclear else ""


def past_cap(pack: CriteriaPack, flagged: int) -> str:
    """Why more go on than the cap, when they do: candidates with quarantined rows in reach (or a gap in the cap
    order's metric) are never capped out (`candidates.logic.scan`)."""
    if not flagged:
        return ""
    gap = f" or a gap in {pack.caps.order_by}" if pack.caps.order_by not in (None, "score") else ""
    return f"; {flagged} with quarantined rows in reach{gap} go{'es' if flagged == 1 else ''} on past it, flagged"


def undated_of_no_entity(undated: pl.DataFrame, metrics: pl.DataFrame) -> list[str]:
    """The facts for quarantined lines of no period whose "entity" is none the night reads. One line of its own
    "entity" is a footnote below a spreadsheet's table (trial 38: `Source: Ecdat Irates, McCulloch-Kwon; rates in
    percent a year`, split at its `;`, was told "its entity's metrics are unknown on every night", of an entity that
    does not exist): it blanks no metric. Several lines of one entity are an entity the source has, every row of
    it undated, so no night reads it at all (trial 51: seven boroughs' weeks written `W22 2007` were told "a
    footnote or a note below the table? It blanks no metric"). One line may be an entity of one line too, an events
    source's region of one earthquake (trial 78: 'Turkmenistan' and 'Morocco', their one row's month mistyped, were
    told a footnote that blanks nothing, and no night read them): both are said."""
    strays = undated.filter(~pl.col("entity_id").is_in(metrics["entity_id"].implode())).unique(
        ["source_row"], keep="first", maintain_order=True)
    if not strays.height:
        return []
    lines = strays.group_by("entity_id", maintain_order=True).len()
    whole = lines.filter(pl.col("len") > 1)
    notes = strays.filter(~pl.col("entity_id").is_in(whole["entity_id"].implode()))
    facts = []
    if whole.height:
        shown = ", ".join(f"{r['entity_id']!r} ({r['len']} lines)" for r in whole.head(3).iter_rows(named=True))
        one = whole.height == 1
        facts.append(f"{whole.height} entit{'y' if one else 'ies'} of the source ({shown}"
                     f"{', ...' if whole.height > 3 else ''}) ha{'s' if one else 've'} no line with a period, every "
                     f"one quarantined, so no night reads {'it' if one else 'them'}: {'it is' if one else 'each is'} "
                     "left out of every scan until its rows' periods are mended")
    if notes.height:
        shown = ", ".join(f"source row {r['source_row']}, {r['entity_id']!r}"
                          for r in notes.head(3).iter_rows(named=True))
        facts.append(f"{notes.height} quarantined line{'s' if notes.height > 1 else ''} of no period "
                     f"name{'' if notes.height > 1 else 's'} no entity the source has ({shown}"
                     f"{', ...' if notes.height > 3 else ''}): a footnote or a note below the table? It blanks no "
                     "metric; or an entity of that one line, whose period does not read: no night reads it until "
                     "its period is mended")
    return facts


def flagged_capped(pack: CriteriaPack, report: ScanReport) -> list[str]:
    """Candidates flagged past the cap beyond `caps.max_flagged`: refused rows across many entities, so the night
    analyzes only the best placed of them (a warning: the night runs, and names them)."""
    if not report.flagged_capped:
        return []
    flagged = report.flagged_past_cap + report.flagged_capped
    counts = (f"{report.flagged_past_cap} go{'es' if report.flagged_past_cap == 1 else ''} on flagged, "
              f"{report.flagged_capped} {'is' if report.flagged_capped == 1 else 'are'} capped (max_flagged="
              f"{pack.caps.flagged_bound})")
    why = Counter(e["why"] for e in report.quarantined_entities).most_common(1)
    if not why:  # no row refused: each is flagged for a gap in the cap order's metric alone (an NA in the source)
        return [f"key `caps.max_flagged`: {flagged} candidates past the cap have no value of {pack.caps.order_by}, "
                f"the metric `caps.order_by` places them by (no row of theirs is quarantined); {counts}: expected "
                "an order every candidate has a value of (`caps.order_by: score` places one with no score last), "
                "or a `caps.max_flagged` that analyzes them"]
    return [f"key `caps.max_flagged`: {flagged} candidates past the cap have quarantined rows in reach; {counts}"
            f"; the commonest reason: {why[0][0]}: mend the source, or raise `caps.max_flagged` to analyze them"]


def most_failed(pack: CriteriaPack, candidates: list[Candidate], failed: dict[str, int], scanned: int,
                passed: int) -> str:
    """Which hard filters refused the most, when none passes: a night of nothing to analyze says why, with each
    filter's test and the values tonight's candidates have (trial 103: quarters' windows read by the week, "the
    most failed: active (30 of 30)", nothing saying the counts were a week's, 0 to 3, against a bound of 5)."""
    if passed or not failed:
        return ""
    most = sorted(failed.items(), key=lambda item: (-item[1], item[0]))[:2]
    tests = {f.name: f for f in pack.hard_filters}
    return "; the most failed: " + ", ".join(f"{name} ({n} of {scanned}{_tested(tests.get(name), candidates)})"
                                             for name, n in most)


def _tested(hard: HardFilter | None, candidates: list[Candidate]) -> str:
    """`: sales_3m >= 30; tonight 2 to 14, median 6` of a filter, over the candidates' known values of its metric;
    `tonight all 0` when they are equal, `tonight 71` when one candidate has one (trial 136: "all" of one value)."""
    if hard is None:
        return ""
    values = [v for c in candidates if (v := c.metrics.get(hard.metric)) is not None]
    test = f": {hard.metric} {hard.op} {written(hard.value)}"
    if not values:
        return f"{test}; no candidate has a value of it"
    low, middle, high = (significant(v) for v in (min(values), statistics.median(values), max(values)))
    if len(values) == 1:
        return f"{test}; tonight {low}"
    return f"{test}; tonight all {low}" if low == high else f"{test}; tonight {low} to {high}, median {middle}"


def cells_refused(src: SourceSpec, cells: list[dict[str, tuple[str, str]]], columns: dict[str, str], seen: int,
                  problems: list[str], *, separators_said: bool, within: str = "source") -> list[str]:
    """What the quarantined cells (`bad_cells` of each row of the source, or of the joined table at `within`) show:
    numbers grouped by thousands or with a decimal comma (unless a problem already names the separator:
    `separators_said`), tokens such as `NaN` or `n/a` meaning a missing number, negative values of an unsigned
    column, and text in a number column. Each names the keys of the table the cells are in (trial 128: a joined
    table's `32,252` was only counted, "quarantined for: join army: column army")."""
    facts = []
    written = [text for c in cells for text, problem in c.values() if problem == "not a number"]
    grouped = grouped_most(written)
    if grouped and not separators_said:
        wanted = separator_wanted(grouped)[1]
        facts.append(f"cells such as {grouped[0]!r} are quarantined as not numbers: if the source groups thousands or "
                     f"writes a decimal comma, say so in `{within}.thousands_separator` / `{within}.decimal_separator` "
                     f"(these call for `{wanted}`)")
    # `NaN` parses as a number that is not finite (numpy's and some databases' missing number): a token all the same
    not_finite = [text for c in cells for text, problem in c.values() if problem == "not finite"]
    tokens = Counter(w for w in written + not_finite if w in MISSING_TEXTS)
    if tokens:
        facts.append("cells written " + ", ".join(f"{t!r} ({n})" for t, n in tokens.most_common(4)) + " are "
                     f"quarantined as not numbers: if they mean a missing number, list them in `{within}.na_values`")
    return facts + negatives_unsigned(src, cells, problems, within) + text_cells(
        *as_long_values(src, columns, cells, within), seen, within)


def rows_of_no_period(undated: pl.DataFrame, metrics: pl.DataFrame) -> list[str]:
    """The main source's quarantined rows of no period whose entity the night scans (`undated`: source row,
    entity, reason): each leaves its entity's every metric unknown on every night, as it may lie in any window."""
    undated = undated.filter(pl.col("entity_id").is_in(metrics["entity_id"].implode()))
    if not undated.height:
        return []
    lines = undated.unique(["source_row", "entity_id"], keep="first", maintain_order=True)
    shown = ", ".join(f"source row {r['source_row']} of {r['entity_id']!r}"
                      for r in lines.head(3).iter_rows(named=True))
    empty = empty_period_column(undated["reason"].to_list())
    kept_out = "" if empty is None else (f" (an empty period: `source.where: [{{column: {empty}, not_in: "
                                         "['']}]` keeps such rows out)")
    return [f"{undated.height} quarantined row{'s have' if undated.height > 1 else ' has'} no period ({shown}"
            f"{', ...' if lines.height > 3 else ''}): its entity's metrics are unknown on every night, as the row may "
            f"lie in any window, until the row is mended or removed{kept_out}"]


def not_utf8(pack: CriteriaPack) -> list[str]:
    """Per CSV or JSON Lines file of the source and its joins, the lines that are not UTF-8 text, read as
    Windows-1252: a name may read wrong."""
    facts = []
    for source in (pack.source, *pack.source.join):
        if source.format != "postgres" and infer_format(pack.path_of(source), source.format) in ("csv", "jsonl"):
            recoded = not_utf8_lines(pack.path_of(source))
            if recoded:
                lines = ", ".join(map(str, recoded[:3])) + (", ..." if len(recoded) > 3 else "")
                one = len(recoded) == 1  # (trial 76: "1 lines of drag.jsonl are not UTF-8 text")
                facts.append(f"{len(recoded)} {'line' if one else 'lines'} of {pack.path_of(source).name} "
                             f"{'is' if one else 'are'} not UTF-8 text, read as Windows-1252 "
                             f"({'line' if one else 'lines'} {lines}): save the file as UTF-8 if a name reads wrong")
    return facts


def gaps_of(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """The metrics with gaps among the night's candidates, and the formula components undefined for some of them
    although their inputs are there (for all of them: a problem), the five commonest each."""
    gaps = Counter(key for c in found for gap in c.data_gaps if (key := gap.split(":")[0]) in pack.metrics)
    undefined = Counter(key.removeprefix("formula component ") for c in found for gap in c.data_gaps
                        if (key := gap.split(":")[0]).startswith("formula component "))
    facts = []
    if gaps:
        facts.append("metrics with gaps: " + ", ".join(f"{name} ({of_entities(n)})" for name, n in gaps.most_common(5)))
    if undefined:
        facts.append("formula components undefined although their inputs are there (no preliminary score): "
                     + ", ".join(f"{name} ({of_entities(n)})" for name, n in undefined.most_common(5)))
    return facts
