"""`opportunity check`: a pack against its source's actual data, before any night runs.

The pack's own keys are validated when it loads (criteria.py: names, expressions, templates). Here the data is
read as a night would read it (the latest night the data supports, or `as_of`): the file opens in its format, the
declared columns exist, each numeric column parses, and the facts a new user wants first are counted. Every problem
is one line naming the pack key.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date

import polars as pl

from opportunity_assets.criteria import CriteriaPack

MOSTLY_TEXT = 0.5
"""A numeric column with more than this share of its cells in reach not numbers is declared wrongly (a text or
date column): a problem, not a quarantine."""


@dataclass(frozen=True)
class CheckReport:
    as_of: date | None
    problems: list[str] = field(default_factory=list)
    """One line each, naming the pack key; empty: the pack can run."""
    facts: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        head = f"{'problems' if self.problems else 'ok'}" + (f" (night {self.as_of})" if self.as_of else "")
        return "\n".join([head, *(f"  problem: {p}" for p in self.problems), *(f"  {f}" for f in self.facts)])


def _not_a_number(reason: str, column: str) -> bool:
    """Whether a quarantine reason says this column's cell is not a number (reasons list cells as `column X: …`)."""
    marker = f"column {column}: "
    return marker in reason and "is not a number" in reason.split(marker, 1)[1].split(";")[0]


def check_pack(pack: CriteriaPack, as_of: date | None = None, today: date | None = None) -> CheckReport:
    """Read the source for `as_of` (default: the latest night it supports) and say what would go wrong."""
    from opportunity_assets.candidates.logic import scan
    from opportunity_assets.night import latest_as_of
    from resources.source import SourceError, read_snapshot

    try:
        night = as_of or latest_as_of(pack, today)
        snapshot = read_snapshot(pack, night, today=today)
    except (SourceError, ValueError) as exc:
        return CheckReport(as_of=as_of, problems=[f"key `source.path`: {exc}"])
    problems = []
    reasons = snapshot.quarantined["reason"].to_list()
    read_rows = snapshot.history.height
    for column in pack.columns:
        bad = sum(1 for r in reasons if _not_a_number(r, column))
        cells = read_rows
        if cells and bad / cells > MOSTLY_TEXT:
            problems.append(f"key `source.columns`: {column!r}: {bad} of {cells} cells in reach are not numbers; "
                            "expected a numeric column (list only numeric columns)")
    if snapshot.anchor_period is None:
        problems.append(f"key `source.path`: no row is published by {night}; the first night with data is later")
    duplicated = sum(1 for r in reasons if r.startswith("duplicated key"))
    if duplicated and duplicated > MOSTLY_TEXT * (duplicated + read_rows):
        src = pack.source
        problems.append(f"key `source.grain`: got {src.grain!r}; {duplicated} rows share an entity and a "
                        f"{src.grain} with another row (duplicated keys): expected the grain of one row per entity "
                        "and period, or `shape: events` (rows to aggregate) or `shape: snapshot` (observations)")
    if snapshot.history.height:
        reach = int(snapshot.history.select(pl.col("periods_ago").max()).item())
        grain = pack.grain
        for name, spec in pack.metrics.items():
            if spec.agg not in ("derived", "age_days") and spec.window[1] > reach:
                problems.append(f"key `metrics.{name}.window`: got {list(spec.window)}; expected a window within "
                                f"the source's history: on {night} no entity has more than {reach + 1} "
                                f"{grain.plural} published (windows count {grain.plural}, `source.grain`)")
    found, report = scan(pack, night, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    gaps = Counter(gap.split(":")[0] for c in found for gap in c.data_gaps if ":" in gap)
    facts = [f"{snapshot.metrics.height} entities, {read_rows} rows in reach, latest period "
             f"{snapshot.anchor_period}, {snapshot.quarantined.height} quarantined rows",
             f"{report.passed_filters} pass the hard filters, {report.went_on} would go on "
             f"(cap {pack.caps.max_candidates})"]
    if reasons:
        top = Counter(r.split(" (")[0].split(":")[0] for r in reasons).most_common(3)
        facts.append("quarantined for: " + ", ".join(f"{why} ({n})" for why, n in top))
    if gaps:
        facts.append("metrics with gaps: " + ", ".join(f"{name} ({n} entities)" for name, n in gaps.most_common(5)))
    return CheckReport(as_of=night, problems=problems, facts=facts)
