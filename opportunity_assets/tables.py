"""What the UI shows of a night and of a candidate, as plain tables and Markdown (pure: no Dagster here;
`metadata.py` turns them into Dagster metadata). Every number is written by its unit (`formatting.py`): a reader
sees `$215,833` and `+30.7%`, never `215833.33333333334`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from urllib.parse import quote

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import format_score, format_value
from opportunity_assets.notify.logic import ActItem, JudgmentItem
from opportunity_assets.periods import Grain
from opportunity_assets.reasons import CandidateRow
from opportunity_assets.records import Analysis, Verification
from opportunity_assets.text import markdown

Cell = str | float | int | bool | None


@dataclass(frozen=True)
class Table:
    """Columns as (name, type) with Dagster's column types (`string`, `float`, `int`, `bool`); one dict a row."""

    columns: tuple[tuple[str, str], ...]
    rows: tuple[Mapping[str, Cell], ...]


@dataclass(frozen=True)
class Markdown:
    text: str
    items: tuple[str, ...] = ()
    """A list's items as plain text, unescaped and all of them (a check's one-line message shows the first few)."""


def bullets(lines: Iterable[str], empty: str = "none") -> Markdown:
    """A Markdown list; each line is escaped (a name or a finding is text, never markup)."""
    plain = tuple(lines)
    return Markdown("\n".join(f"- {markdown(line)}" for line in plain) if plain else empty, plain)


def check_failures(failures: Sequence[Mapping[str, str]], limit: int = 20) -> Markdown | str:
    """An asset check's failures (pandera's failure cases), one line each: which column, which check, the failing
    value; the text `none` when it passed (shown inline, not behind a Markdown link). At most `limit` lines, then
    how many more."""
    def line(row: Mapping[str, str], code: str = "`", escape: Callable[[str], str] = markdown) -> str:
        return (" ".join(part for part in (f"{code}{row['column']}{code}" if row.get("column") else "",
                                           f"failed {row['check']}" if row.get("check") else "",
                                           f"on {escape(row['failure_case'])}" if row.get("failure_case") else "")
                         if part)
                or escape(", ".join(f"{k} {v}" for k, v in row.items())))

    lines = [line(row) for row in failures[:limit]]
    more = [f"and {len(failures) - limit} more"] if len(failures) > limit else []
    plain = tuple(line(row, "", str) for row in failures)
    return Markdown("\n".join(f"- {line}" for line in [*lines, *more]), plain) if lines else "none"


def partition_path(asset: str, partition: str) -> str:
    """The UI's page of one partition of an asset, as a path from the webserver's root."""
    return f"/assets/{asset}?view=partitions&partition={quote(partition, safe='')}"


def candidate_links(rows: Sequence[CandidateRow], as_of: date, first: Sequence[str] = ()) -> Markdown:
    """Every candidate that went on, a line each: its name linking to its `verifications` partition (where it went
    and why, then the checks), then where it went and why in words. One click from the brief to why a candidate
    was archived. The tags in `first` come first, in that order, then the others by name; best score first."""

    def order(r: CandidateRow) -> tuple[int, str, float]:
        return (first.index(r.tag) if r.tag in first else len(first), r.tag, -(r.score or 0.0))

    lines = [f"- [{markdown(r.name)}]({partition_path('verifications', f'{as_of.isoformat()}|{r.candidate_id}')})"
             f" — {r.tag}: {markdown(r.reason)}" for r in sorted(rows, key=order) if r.went_on]
    return Markdown("\n".join(lines) if lines else "No candidate went on tonight.")


def night_links(nights: Sequence[Mapping[str, object]]) -> Markdown:
    """The latest nights with a brief, a line each linking to that night's brief: the nights worth opening, among
    every partition the data supports."""
    lines = [f"- [{n['as_of']}]({partition_path('brief', str(n['as_of']))}): {n['act_on']} to act on"
             for n in nights]
    return Markdown("\n".join(lines) if lines else "No night has a brief yet.")


MAX_TABLE_ROWS = 1000
"""Rows a candidates table shows in the UI; a wider night's table ends with one row saying how many more the store
holds (`opportunity archive`): a 10,000-row table would be megabytes in every event that carries it."""


def candidates_table(pack: CriteriaPack, rows: Sequence[CandidateRow]) -> Table:
    """Every candidate of the night (up to `MAX_TABLE_ROWS`): where it went (tag) and the reason in words first,
    the columns a reader sees without scrolling; then verdict, score, status, capped, each filter's PASS / FAIL /
    UNCLEAR, and the id."""
    if len(rows) > MAX_TABLE_ROWS:  # those that went on first, then the best-scored, then by id
        shown = sorted(rows, key=lambda r: (not r.went_on, r.score is None, -(r.score or 0.0), r.candidate_id))
        return _candidates_table(pack, shown[:MAX_TABLE_ROWS - 1], len(rows) - MAX_TABLE_ROWS + 1)
    return _candidates_table(pack, rows, 0)


def _candidates_table(pack: CriteriaPack, rows: Sequence[CandidateRow], more: int) -> Table:
    filters = [f.name for f in pack.hard_filters]
    columns = (("candidate", "string"), ("tag", "string"), ("reason", "string"), ("verdict", "string"),
               ("score", "float"), ("status", "string"), ("capped", "bool"), *((name, "string") for name in filters),
               ("id", "string"))
    return Table(columns=columns, rows=tuple(
        {"candidate": r.name, "tag": r.tag, "reason": r.reason, "verdict": r.verdict,
         "score": None if r.score is None else round(r.score, 1), "status": r.status, "capped": r.capped,
         **{name: r.filters.get(name) for name in filters}, "id": r.candidate_id} for r in rows) + ((
        {"candidate": f"{more:,} more candidates", "tag": None,
         "reason": "not shown here; all are in the store: `opportunity archive`", "verdict": None, "score": None,
         "status": None, "capped": None, **dict.fromkeys(filters), "id": None},) if more else ()))


def period_label(period: object, grain: Grain) -> str | None:
    """A period as the pack's grain writes it (`1995` on a yearly source, `2011-08` on a monthly one), as the
    provenance and the brief write it; text that is no date (a period the source could not read) as it is."""
    if period is None:
        return None
    if isinstance(period, date):
        return grain.label(period)
    try:
        return grain.label(date.fromisoformat(str(period)))
    except ValueError:
        return str(period)


def quarantine_table(rows: Sequence[Mapping[str, object]], grain: Grain) -> Table:
    """The night's quarantined source rows (up to `MAX_TABLE_ROWS`): the entity, the period (by the grain: trial 119's
    yearly rows read `1995-01-01`), why, in words, and the row's number in the source, as the store's `quarantine`
    holds them. Trial 68: the UI showed their count alone, and a reader had to query the store to learn which rows
    and why."""
    shown = rows[:MAX_TABLE_ROWS - 1] if len(rows) > MAX_TABLE_ROWS else rows
    more = len(rows) - len(shown)
    columns = (("entity", "string"), ("period", "string"), ("reason", "string"), ("source_row", "int"))
    return Table(columns=columns, rows=tuple(
        {"entity": None if r.get("entity_id") is None else str(r["entity_id"]),
         "period": period_label(r.get("period"), grain), "reason": str(r.get("reason") or ""),
         "source_row": _row_number(r.get("source_row"))} for r in shown) + ((
        {"entity": f"{more:,} more rows", "period": None,
         "reason": "not shown here; all are in the store: `SELECT * FROM quarantine`", "source_row": None},)
        if more else ()))


def notified_table(act: Sequence[ActItem], judgment: Sequence[JudgmentItem], earlier: Mapping[str, str]) -> Table:
    """Who tonight's message named: each act-on candidate, new or still strong, with its score and next action, then
    each needs-judgment one with what would resolve it. Trial 68: `notifications[d]` showed how many, not who."""
    columns = (("candidate", "string"), ("section", "string"), ("mark", "string"), ("score", "string"),
               ("why", "string"), ("id", "string"))
    return Table(columns=columns, rows=tuple(
        {"candidate": i.name, "section": "act_on_these",
         "mark": "still strong" if earlier.get(i.candidate_id) == i.verdict else "new",
         "score": format_score(i.score, i.levels),
         "why": f"{i.verdict}, {i.status}" + (f"; red flags: {', '.join(i.red_flags)}" if i.red_flags else "")
                + f"; next: {i.next_action}",
         "id": i.candidate_id} for i in act) + tuple(
        {"candidate": i.name, "section": "needs_your_judgment", "mark": None,
         "score": None if i.score is None else format_score(i.score, i.levels),
         "why": f"{i.verdict}" + (f"; {i.why}" if i.why else "") + f"; to resolve: {i.to_resolve}",
         "id": i.candidate_id} for i in judgment))


def _row_number(value: object) -> int | None:
    return value if isinstance(value, int) else None


def rounded_inputs(pack: CriteriaPack, analysis: Analysis) -> dict[str, str]:
    """Each input's value written by its unit."""
    return {name: format_value(n.value, pack.metrics[name].unit if name in pack.metrics else "number")
            for name, n in analysis.numbers.items()}


def inputs_table(pack: CriteriaPack, analysis: Analysis) -> Table:
    """Each input with its provenance: value by its unit, and the source rows it came from."""
    shown = rounded_inputs(pack, analysis)
    return Table(
        columns=(("input", "string"), ("value", "string"), ("unit", "string"), ("source", "string"),
                 ("entity", "string"), ("period", "string"), ("published_at", "string")),
        rows=tuple({"input": name, "value": shown[name],
                    "unit": pack.metrics[name].unit if name in pack.metrics else "number",
                    "source": n.source.table, "entity": n.source.entity, "period": n.source.period,
                    "published_at": n.source.published_at.isoformat()} for name, n in analysis.numbers.items()))


def _step_value(pack: CriteriaPack, name: str, value: float) -> str:
    units = {c.name: c.unit for c in pack.formula.components}
    if name == "score":
        return format_score(value, pack.thresholds.levels)
    if name in units:
        return format_value(value, units[name])
    return f"{value:.3f}"  # a normalised component, 0 to 1


def calculation_table(pack: CriteriaPack, analysis: Analysis) -> Table:
    """The pack's formula step by step: expression, the values written in, the result."""
    return Table(columns=(("step", "string"), ("expression", "string"), ("substituted", "string"),
                          ("value", "string")),
                 rows=tuple({"step": s.name, "expression": s.expression, "substituted": s.substituted,
                             "value": _step_value(pack, s.name, s.value)} for s in analysis.calculation))


def checks_table(verification: Verification) -> Table:
    result = {True: "PASS", False: "FAIL", None: "UNRESOLVED"}
    return Table(columns=(("check", "string"), ("result", "string"), ("finding", "string")),
                 rows=tuple({"check": name, "result": result[c.passed], "finding": c.finding}
                            for name, c in verification.checks.items()))


def findings(verification: Verification) -> Markdown:
    """The data findings with their effect, then the skeptic model's cited findings."""
    return bullets([*(f"[{f.effect}] {f.message}" for f in verification.data_findings),
                    *(f"[{m.effect}, model] {m.check}: {m.finding} (cites {m.cites})"
                      for m in verification.model_findings)])


def sensitivity_table(verification: Verification) -> Table:
    return Table(columns=(("input", "string"), ("change", "string"), ("score", "float"), ("verdict", "string"),
                          ("flips", "bool")),
                 rows=tuple({"input": t.input, "change": t.change, "score": round(t.score, 1),
                             "verdict": t.verdict.value, "flips": t.flips} for t in verification.sensitivity))
