"""Trial 132: 11 defect kinds no skeptic trial planted, subtle and GROSS, into copies of munexp.csv for act-on picks
from the pick's latest year (the break); nights 0, 1 and 3 years after the first that sees it (none past 1987).
Prints every plant-night reaching act-on and a table per kind x magnitude. Needs pandas
(PYTHONPATH=.:/tmp/t132v/lib/python3.11/site-packages)."""
from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import plant_night, print_tally, with_source  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK = load_criteria(str(HERE / "munexp.yaml"))
CLEAN = pd.read_csv(HERE / "munexp.csv")
COLS = ["expend", "revenue", "grants"]
DEC = 7                                          # Ecdat writes the figures to 7 decimals (trailing zeros dropped)
LAST = 1987
# (municipality, break year): act-on on clean data (with and without the checks) on the night whose latest year
# is the break
PICKS = [("SE0162", 1981), ("SE1862", 1981), ("SE0617", 1982), ("SE2104", 1982), ("SE2422", 1983),
         ("SE0862", 1985), ("SE2080", 1985), ("SE1402", 1986)]
AFTER = (0, 1, 3)
Plant = Callable[[pd.DataFrame, str, int], tuple[pd.DataFrame, str]]
"""(clean frame, entity, break year) -> (planted frame, the id judged)."""


def night(year: int) -> date:
    """The first June-end night seeing `year` (180 days' lag)."""
    return date(year + 1, 6, 30)


def _rows(d: pd.DataFrame, ent: str) -> pd.Series:
    return d.kommun == ent


def _county(ent: str) -> pd.Series:
    return CLEAN.kommun.str[2:4] == ent[2:4]


def _set(d: pd.DataFrame, mask: pd.Series, cols: list[str], values) -> pd.DataFrame:
    d.loc[mask, cols] = np.round(np.asarray(values, dtype=float), DEC)
    return d


def offset(c: float) -> Plant:
    """A definition change: from the break, expend includes an item it did not (`c` per head, the same for all)."""
    def go(d, ent, b):
        m = _rows(d, ent) & (d.year >= b)
        return _set(d, m, ["expend"], d.loc[m, "expend"] + c), ent
    return go


def rebased(col: str, base: float) -> Plant:
    """A vendor rebased the column to an index: its whole series over its 1979 figure, times `base`."""
    def go(d, ent, b):
        m = _rows(d, ent)
        v = d.loc[m, col]
        return _set(d, m, [col], v / v.iloc[0] * base), ent
    return go


def county_unit(f: float) -> Plant:
    """From the break, every municipality of the entity's county (code's first two digits) in another unit (x f)."""
    def go(d, ent, b):
        m = _county(ent) & (d.year >= b)
        return _set(d, m, COLS, d.loc[m, COLS] * f), ent
    return go


def duplicated(f: float) -> Plant:
    """The entity's whole history also published under a second code (SE9...), times `f` (1: exact; 0.5: per head
    of a population counted twice). The second code is judged."""
    def go(d, ent, b):
        dup = d[_rows(d, ent)].copy()
        new = "SE9" + ent[3:]
        dup["kommun"], dup["name"] = new, "Municipality 9" + ent[3:]
        dup[COLS] = np.round(dup[COLS] * f, DEC)
        return pd.concat([d, dup], ignore_index=True), new
    return go


def carried(k: int) -> Plant:
    """The `k` years before the break carried forward from the year before them (every column), and the break year
    caught up in one lump: its own figure plus what the carried years missed."""
    def go(d, ent, b):
        for col in COLS:
            v = d.loc[_rows(d, ent)].set_index("year")[col]
            first = max(b - k, 1980)                 # not before the second year
            held = v[first - 1]
            lump = sum(v[y] - held for y in range(first, b))
            new = v.copy()
            new[list(range(first, b))] = held
            new[b] = v[b] + lump
            d = _set(d, _rows(d, ent), [col], new.to_numpy())
        return d, ent
    return go


def signed(col: str) -> Plant:
    """From the break the column written with the other sign convention (negative)."""
    def go(d, ent, b):
        m = _rows(d, ent) & (d.year >= b)
        return _set(d, m, [col], -d.loc[m, col]), ent
    return go


def cumulative(kind: str) -> Plant:
    """'18 months': the break year a transition year of 18 months (x1.5); 'running': from the break each year's
    figure the running total since 1979 (every column)."""
    def go(d, ent, b):
        m = _rows(d, ent)
        v = d.loc[m, COLS]
        yrs = d.loc[m, "year"].to_numpy()[:, None]
        alt = v * 1.5 if kind == "18 months" else v.cumsum()
        when = (yrs == b) if kind == "18 months" else (yrs >= b)
        return _set(d, m, COLS, np.where(when, alt, v)), ent
    return go


def fiscal(transition: bool) -> Plant:
    """From the break, a July-June fiscal year named by its end year: half this calendar year and half the one
    before (every column); `transition`: the break year only its first half (Jan-June, half the year)."""
    def go(d, ent, b):
        m = _rows(d, ent)
        v = d.loc[m, COLS].to_numpy()
        yrs = d.loc[m, "year"].to_numpy()[:, None]
        prev = np.vstack([v[:1], v[:-1]])
        alt = 0.5 * v + 0.5 * prev
        if transition:
            alt = np.where(yrs == b, 0.5 * v, alt)
        return _set(d, m, COLS, np.where(yrs >= b, alt, v)), ent
    return go


def truncated(dec: int) -> Plant:
    """After a system migration from the break, every column's digits cut (not rounded) to `dec` decimals."""
    def go(d, ent, b):
        m = _rows(d, ent) & (d.year >= b)
        return _set(d, m, COLS, np.floor(d.loc[m, COLS] * 10**dec) / 10**dec), ent
    return go


def mean_filled(scope: str) -> Plant:
    """The break year's return missing, filled with the mean of the other municipalities that year: of its county
    ('county') or all ('all'), every column."""
    def go(d, ent, b):
        others = (d.year == b) & (d.kommun != ent)
        if scope == "county":
            others &= d.kommun.str[2:4] == ent[2:4]
        m = _rows(d, ent) & (d.year == b)
        return _set(d, m, COLS, d.loc[others, COLS].mean().to_numpy()[None, :]), ent
    return go


def merged(w: float) -> Plant:
    """From the break the code reports a merged municipality: `w` its own figures per head, 1 - w its county
    neighbour's (the next code in the county, else the one before), every column."""
    def go(d, ent, b):
        codes = sorted(CLEAN.kommun[_county(ent)].unique())
        i = codes.index(ent)
        other = codes[i + 1] if i + 1 < len(codes) else codes[i - 1]
        m = _rows(d, ent) & (d.year >= b)
        o = (d.kommun == other) & (d.year >= b)
        return _set(d, m, COLS, w * d.loc[m, COLS].to_numpy() + (1 - w) * d.loc[o, COLS].to_numpy()), ent
    return go


KINDS: dict[str, tuple[list[tuple[str, Plant]], list[tuple[str, Plant]]]] = {
    "definition change: a constant added": ([("expend +0.001 (~5%)", offset(0.001))],
                                            [("expend +0.004 (~22%)", offset(0.004))]),
    "rebased to an index (whole series)": ([("revenue 1979 = 1", rebased("revenue", 1.0))],
                                           [("expend 1979 = 100", rebased("expend", 100.0))]),
    "a county's figures in another unit": ([("x1.12 from the break", county_unit(1.12))],
                                           [("x1000 from the break", county_unit(1000.0))]),
    "rows duplicated under a second code": ([("exact", duplicated(1.0))],
                                            [("per head of a double count", duplicated(0.5))]),
    "carried forward, caught up in one lump": ([("1 year carried", carried(1))], [("2 years carried", carried(2))]),
    "sign convention changed": ([("grants negative", signed("grants"))], [("expend negative", signed("expend"))]),
    "cumulative figures": ([("an 18-month year", cumulative("18 months"))],
                           [("running total since 1979", cumulative("running"))]),
    "fiscal year moved to July-June": ([("half this year, half the last", fiscal(False))],
                                       [("with a half-year transition", fiscal(True))]),
    "decimals cut after a migration": ([("to 4 decimals", truncated(4))], [("to 3 decimals", truncated(3))]),
    "a year filled with the cross-sectional mean": ([("county's mean", mean_filled("county"))],
                                                    [("national mean", mean_filled("all"))]),
    "merged with a neighbour under one code": ([("80 / 20", merged(0.8))], [("50 / 50", merged(0.5))]),
}


def main() -> None:
    tally: dict = defaultdict(Counter)
    misses = []
    clean_fate: dict = {}
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "munexp.csv"
        for kind, (subtle, grosses) in KINDS.items():
            if only and kind not in only:
                continue
            for mag, variants in (("subtle", subtle), ("GROSS", grosses)):
                for label, fn in variants:
                    for ent, b in PICKS:
                        out, judged_id = fn(CLEAN.copy(), ent, b)
                        t = tally[(kind, mag)]
                        if out.equals(CLEAN):
                            t["no-op"] += 1
                            continue
                        out.to_csv(path, index=False)
                        pack = with_source(PACK, path)
                        for a in AFTER:
                            if b + a > LAST:
                                continue
                            as_of = night(b + a)
                            clean = plant_night(t, pack, PACK, clean_fate, judged_id.lower(), as_of)
                            if clean is not None:
                                misses.append((kind, mag, label, ent, b, str(as_of), a, clean))
                                print(f"  MISSED {kind} {mag} [{label}] in {judged_id} from {b} on {as_of} (+{a});"
                                      f" clean: {clean}", flush=True)
    print_tally(tally, clean=True)
    Path("/tmp/t132").mkdir(exist_ok=True)
    Path("/tmp/t132/misses.json").write_text(json.dumps(misses))


if __name__ == "__main__":
    main()
