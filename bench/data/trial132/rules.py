"""Trial 132: two proposed rule changes measured offline on the clean nights (clean_picks.json from clean.py) and the
plant-nights that reached act-on (misses.json from plants.py); verdict code is not changed.

P1 (`--copies`): copies' rounding for figures written to more than 6 decimals. `series.resolutions` tries
   decimals to 6 only and gives every MunExp entity (7 decimals) an infinite step, so in `scaled_copies` every
   entity's changes "match" every other's and the rescaled copy is dropped as "a series several share";
   `series.resolution` (6 too) falls back to the column's smallest change (7.45e-5 for a step of 1e-7), so an exact
   copy's chance is 1e-4, not 1e-12, and a 3-year copy can pass 0.001. Measured by running the product's nights in
   this process with both replaced in `copies` only (decimals to 12, then the figures' own float precision):
   clean act-on picks doubted, and the misses re-judged.
P2 (numpy, default): a value repeated to the last written digit on a short past. `stuck` and `repeated_rows` need
   6 past changes (`series.MIN_SAMPLE`) for a repeat's chance; an annual panel of 9 years never has them in the
   judged periods. Here a judged period's figure equal to the period before's, to the last digit, counts at the
   chance its resolution gives: the written step over twice the spread of the entity's own changes (robust, on the
   log scale, never under the night's entities' median spread) times the level; per column (P2c) or every column
   of the row at once (P2r, the chances multiplied), times the judged periods tried, below 0.001.
C (numpy, measured, not proposed): the `cross_section` note as a doubt where the entity has fewer than 4 changes
   before the judged periods (the latest change 8 MADs off tonight's entities' changes into that year)."""
from __future__ import annotations

import json
import math
import sys
import tempfile
from collections import Counter
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))
import plants  # noqa: E402

COLS, STEP, MAXP, SPAN = plants.COLS, 1e-7, 1e-3, 3      # judged span: the widest window's 3 years
MISSES = json.loads(Path("/tmp/t132/misses.json").read_text())
PICKS = {(c, n) for c, n in json.loads(Path("/tmp/t132/clean_picks.json").read_text())}


def variant(kind: str, label: str):
    subtle, gross = plants.KINDS[kind]
    return next(fn for lab, fn in subtle + gross if lab == label)


def spreads(d: pd.DataFrame, latest: int) -> dict[str, dict[str, float]]:
    """Per column, per entity: the robust spread of its log changes up to `latest` (non-zero ones), never under the
    night's entities' median spread."""
    out: dict[str, dict[str, float]] = {}
    for col in COLS:
        w = d[d.year <= latest].pivot(index="kommun", columns="year", values=col)
        ch = np.log(np.abs(w)).diff(axis=1).iloc[:, 1:]
        own = ch.apply(lambda r: 1.4826 * np.nanmedian(np.abs(r[r != 0] - np.nanmedian(r[r != 0])))
                       if (r != 0).sum() >= 2 else np.nan, axis=1)
        floor = max(float(np.nanmedian(own)), 0.005)
        out[col] = own.fillna(floor).clip(lower=floor).to_dict()
    return out


def p2(d: pd.DataFrame, ent: str, latest: int, sp) -> tuple[float, float]:
    """(the per-column chance, the row's chance) of the likeliest exact repeat in the judged span (1.0: none)."""
    rows = d[(d.kommun == ent) & (d.year <= latest)].set_index("year")[COLS]
    best_c, best_r = 1.0, 1.0
    for y in range(latest - SPAN + 1, latest + 1):
        if y - 1 not in rows.index or y not in rows.index:
            continue
        same = rows.loc[y] == rows.loc[y - 1]
        ch = {c: min(1.0, STEP / (2 * sp[c][ent] * max(abs(rows.loc[y, c]), STEP))) * SPAN for c in COLS}
        for c in COLS:
            if same[c]:
                best_c = min(best_c, ch[c])
        if same.all():
            best_r = min(best_r, math.prod(ch.values()))
    return best_c, best_r


def cross(d: pd.DataFrame, ent: str, latest: int) -> float:
    """C: the judged span's furthest change in MADs of tonight's changes into its year, where the entity has fewer
    than 4 changes before the span (else 0)."""
    first = latest - SPAN + 1
    if first - 1979 - 1 >= 4:
        return 0.0
    best = 0.0
    for col in COLS:
        w = d[d.year <= latest].pivot(index="kommun", columns="year", values=col)
        for y in range(max(first, 1980), latest + 1):
            ch = np.log(np.abs(w[y]) / np.abs(w[y - 1]))
            mad = 1.4826 * np.nanmedian(np.abs(ch - np.nanmedian(ch)))
            if ent in ch.index and np.isfinite(ch[ent]) and mad > 0:
                best = max(best, abs(ch[ent] - np.nanmedian(ch)) / mad)
    return best


def numpy_rules() -> None:
    clean = plants.CLEAN
    nights = sorted({n for _, n in PICKS} | {f"{y}-06-30" for y in range(1982, 1989)})
    flags: Counter = Counter()
    entity_nights = 0
    for n in nights:
        latest = int(n[:4]) - 1
        sp = spreads(clean, latest)
        for ent in clean.kommun.unique():
            entity_nights += 1
            c, r = p2(clean, ent, latest, sp)
            pick = (ent.lower(), n) in PICKS
            flags["P2c"] += c < MAXP
            flags["P2r"] += r < MAXP
            flags["P2c picks"] += pick and c < MAXP
            flags["P2r picks"] += pick and r < MAXP
            if c < MAXP or r < MAXP:
                print("  clean flagged:", ent, n, f"column {c:.2g} row {r:.2g}")
            if latest - SPAN - 1979 < 4:
                x = cross(clean, ent, latest)
                flags["C"] += x >= 8
                flags["C picks"] += pick and x >= 8
    print(f"clean: {entity_nights} entity-nights, {len(PICKS)} act-on picks; flagged {dict(flags)}")
    caught: Counter = Counter()
    for kind, mag, label, ent, b, n, _a, _ in MISSES:
        out, cid = variant(kind, label)(clean.copy(), ent, b)
        latest = int(n[:4]) - 1
        c, r = p2(out, cid, latest, spreads(out, latest))
        x = cross(out, cid, latest)
        caught[(kind, mag, "misses")] += 1
        caught[(kind, mag, "P2c")] += c < MAXP
        caught[(kind, mag, "P2r")] += r < MAXP
        caught[(kind, mag, "C")] += x >= 8
    print("\n| kind | magnitude | misses | P2c | P2r | C |\n|---|---|---:|---:|---:|---:|")
    for kind, mag, what in caught:
        if what == "misses":
            print(f"| {kind} | {mag} | {caught[(kind, mag, 'misses')]} | {caught[(kind, mag, 'P2c')]} | "
                  f"{caught[(kind, mag, 'P2r')]} | {caught[(kind, mag, 'C')]} |")
    total = {rule: sum(v for k, v in caught.items() if k[2] == rule) for rule in ("P2c", "P2r", "C")}
    print(f"caught of {len(MISSES)}: {total}")


def finer_resolutions(values: np.ndarray) -> np.ndarray:
    """`series.resolutions`, decimals tried to 12, then the figures' float precision (not infinity)."""
    from opportunity_assets.verifications import series
    out = series.resolutions(values)
    rows = np.flatnonzero(np.isinf(out))
    for power in range(-7, -13, -1):
        held = series._rows_on_grid(values, rows, power)
        out[held] = 10.0 ** power
        rows = np.setdiff1d(rows, held)
    with np.errstate(all="ignore"):
        out[rows] = np.nanmax(np.abs(values[rows]), axis=1) * 1e-12 if len(rows) else out[rows]
    return out


def finer_resolution(values: np.ndarray, smallest_change: float) -> float:
    """`series.resolution` with decimals tried to 12 (not 6) before the smallest change stands in for the step."""
    from opportunity_assets.verifications import series
    finite = values[np.isfinite(values)]
    places = series.decimals(finite, 12)
    if places is None:
        return smallest_change
    grid = 10.0 ** -places
    while grid < 1e9 and series.on_grid(finite, grid * 10):
        grid *= 10
    return min(grid, smallest_change)


def copies_rule() -> None:
    from bench.planted import clean_picks, plant_night, with_source
    from opportunity_assets.verifications import copies
    copies.resolutions = finer_resolutions
    copies.resolution = finer_resolution
    nights = [date(y, 6, 30) for y in range(1982, 1989)]
    picks, doubted = clean_picks(plants.PACK, nights, sections=False)
    print(f"P1 clean: false doubt {doubted.pop('', 0)} of {len(picks)}; by rule {dict(doubted)}")
    caught: Counter = Counter()
    kept: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "munexp.csv"
        for kind, mag, label, ent, b, n, _, _ in MISSES:
            out, cid = variant(kind, label)(plants.CLEAN.copy(), ent, b)
            out.to_csv(path, index=False)
            row: Counter = Counter()
            still = plant_night(row, with_source(plants.PACK, path), plants.PACK, kept, cid.lower(),
                                date.fromisoformat(n))
            caught[(kind, mag)] += still is None
            if still is None:
                print("  P1 caught:", kind, mag, cid, n, [r for r in row if r.startswith("rule:")])
    print(f"P1 catches {sum(caught.values())} of {len(MISSES)} misses: {dict(caught)}")


if __name__ == "__main__":
    copies_rule() if "--copies" in sys.argv else numpy_rules()
