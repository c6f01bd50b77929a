"""What the night's quarantined source rows say about their entities, in words a reader can act on (pure).

The source query lists every refused row and every row with a bad cell (`sources/snapshot.py`); here they are
grouped by entity for the run summary: which entities have them, how many, and why, without the raw values (a
brief may hold no number the store does not).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from opportunity_assets.sources.csv_rows import WRONG_WIDTH
from opportunity_assets.text import clean, markdown

_CELL_END = r"(?: -?[\d.e+-]+, its bounds (?:low|high))?(?=; column | \(that cell is a gap|\Z)"
"""What may follow a refused cell's problem in a quarantine reason (`shapes.rows_sql`, `sources/snapshot.py`): its
bound, then the next cell, the reason's closing words or its end. The cell's text before it is the source's own and
may hold a newline, `; ` or the words themselves (a tweet: "coverage of me is negative ...")."""
_CELL = re.compile(r"column (\w+): .*? is (not a number|negative|not finite)" + _CELL_END, re.DOTALL)
SHOWN = 3
"""Entities the run summary names; the rest are counted."""


_FAULT = re.compile(r"(.*?) is (not a number|negative|not finite|below|above)\b" + _CELL_END, re.DOTALL)


def bad_cells(reason: str, columns: Iterable[str]) -> dict[str, tuple[str, str]]:
    """The cells of `columns` a quarantine reason refuses (the source query writes each `column X: TEXT is
    PROBLEM`, joined by `; `): column -> (the text as written, the problem: `not a number`, `negative`, ...)."""
    out = {}
    for column in columns:
        marker = f"column {column}: "
        if marker in reason:
            found = _FAULT.match(reason.split(marker, 1)[1])
            if found:
                out[column] = (found.group(1), found.group(2))
    return out


def duplicated_name(reason: str, names: Iterable[str]) -> str | None:
    """The name whose value a long table's duplicated key refuses (`shapes.judged_sql` writes `duplicated key (id,
    year, variable) = (a, 2016, rent): 2 rows, none used`, the name last), or None: a name sent twice for one entity
    and period refuses that value alone, and the entity's other values of the period are read (`source.long`)."""
    if "duplicated key (" not in reason:
        return None
    return max((name for name in names if f", {name}): " in reason), key=len, default=None)




_JOINED = re.compile(r"(join \S+) \((?:PostgreSQL, URL from \S+|[^()]*)\): (.*)", re.DOTALL)
"""A joined table's quarantine reason (`formats.join_label`): `join guns (guns.duckdb): duplicated key ...`."""


def joined_reason(reason: str) -> tuple[str, str] | None:
    """(`join TABLE`, its own reason) of a joined table's quarantine reason, None for the main source's: a joined
    row holds its table's columns only, and is said by what refused it, not by its table's name alone."""
    found = _JOINED.match(reason)
    return None if found is None else (found.group(1), found.group(2))


def short_reason(reason: str) -> str:
    """`column sales: abc is not a number; ...` -> `sales not a number`; a refused row's reason up to its detail,
    without its counts (the brief writes it, and may hold no number the store does not: `10 fields, expected 8`
    is `wrong field count`); a joined table's, its table and its own (`join guns: duplicated key`, trial 25: it
    was `join guns` alone)."""
    joined = joined_reason(reason)
    if joined is not None:
        return f"{joined[0]}: {short_reason(joined[1])}"
    cells = [f"{column} {problem}" for column, problem in _CELL.findall(reason)]
    if cells:
        return ", ".join(dict.fromkeys(cells))
    if WRONG_WIDTH.match(reason):
        return "wrong field count"
    return re.split(r"[:(=]", reason, maxsplit=1)[0].strip()


def by_entity(rows: Iterable[Mapping[str, Any]], names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Per entity with quarantined rows (most rows first, then name): its name, row count and its reasons
    (`_reasons`). `names`: entity key -> display name; rows without an entity id are grouped as `(no entity id)`."""
    counts: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        key = row.get("entity_id") or ""
        name = names.get(key, key) or "(no entity id)"
        counts[name] += 1
        reasons[name][short_reason(str(row["reason"]))] += 1
    return [{"entity": name, "rows": n, "why": _reasons(reasons[name])}
            for name, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def _reasons(counted: Counter[str]) -> str:
    """An entity's quarantine reasons, the commonest first: two by name, any more as "others" (the brief holds no
    count the store does not). Trial 38: a spreadsheet's "Total" row (no entity id) and its header repeated
    mid-file were "(no entity id) (2: header repeated mid-file)", the Total row's own reason unsaid."""
    named = [reason for reason, _ in counted.most_common(2)]
    return " and ".join(named) if len(counted) <= 2 else f"{', '.join(named)} and others"


SHOWN_CHARACTERS = 40
"""An entity named in the summary is cut to this many characters (a refused row's name may be any length)."""


def shown_name(text: str) -> str:
    """An entity's name as the run summary writes it: cleaned, cut to `SHOWN_CHARACTERS`, in Markdown."""
    text = clean(text)
    return markdown(text if len(text) <= SHOWN_CHARACTERS else text[:SHOWN_CHARACTERS] + "…")


def summary_line(entities: list[dict[str, Any]], total: int) -> str:
    """`Quarantined source rows: 9, for Austin (1: sales not a number), …; and other entities (the store's
    quarantine has every row)`, in Markdown. No count of the rest: every number in the brief must be one the store
    holds (`unsupported_numbers`), and the remainder is not."""
    shown = ", ".join(f"{shown_name(e['entity'])} ({e['rows']}: {e['why']})" for e in entities[:SHOWN])
    more = "; and other entities (the store's quarantine has every row)" if len(entities) > SHOWN else ""
    return f"Quarantined source rows: {total}, for {shown}{more}" if shown else f"Quarantined source rows: {total}"
