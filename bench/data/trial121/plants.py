"""Trial 121: defects planted into the identity's columns (totfat, statepop, totfatrte) of copies of driving.csv
for act-on picks, from the pick's latest year (the break); nights 0, 1 and 3 years after the first that sees it.
Prints every plant-night reaching act_on_these and a table per kind x magnitude. Needs pandas
(PYTHONPATH=.:/tmp/t121v/lib/python3.11/site-packages). PACK_FILE=road_safety_identity.yaml for the identity."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import clean_section, night_fates, print_tally, tallied, with_source  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK_FILE = os.environ.get("PACK_FILE", "road_safety.yaml")
PACK = load_criteria(str(HERE / PACK_FILE))
CLEAN = pd.read_csv(HERE / "driving.csv")
# (state, break year): act-on on clean data (quiet) on the night whose latest year is the break year (clean.py)
PICKS = [("S22", 1994), ("S35", 1995), ("S49", 1996), ("S05", 1997), ("S14", 1998), ("S38", 1999), ("S37", 2000),
         ("S29", 2001)]
AFTER = (0, 1, 3)


def night(year: int) -> date:
    return date(year + 1, 7, 31)  # the first night seeing `year` (publication lag 180 days, July nights)


def drift(col, rate, back):
    """`col` drifting `rate` a year, compounding from `back` years before the break, and staying."""
    def go(d, m, y, b):
        start = b - back + 1
        f = np.where(m & (y >= start), (1 + rate) ** (y - start + 1).clip(lower=0), 1.0)
        return d.assign(**{col: (d[col] * f).round(0 if col in ("totfat", "statepop") else 2)})
    return go


def shifted(col, f):
    """`col` alone x f from the break on (the total re-based, the parts not)."""
    def go(d, m, y, b):
        return d.assign(**{col: np.where(m & (y >= b), (d[col] * f).round(0 if col != "totfatrte" else 2), d[col])})
    return go


def copied(col):
    """The break year's `col` copied from the year before (a stale feed)."""
    def go(d, m, y, b):
        prev = float(d.loc[m & (y == b - 1), col].iloc[0])
        return d.assign(**{col: np.where(m & (y == b), prev, d[col])})
    return go


def slip(col, f):
    """A decimal slip in the break year's row: `col` x f."""
    return lambda d, m, y, b: d.assign(**{col: np.where(m & (y == b), d[col] * f, d[col])})


def lagged(col, rows):
    """The last `rows` years to the break of `col` each carrying the year before's figure (a row lagged)."""
    def go(d, m, y, b):
        d = d.copy()
        mine = d[m].sort_values("year")
        shifted_ = mine[col].shift(1)
        idx = mine.index[(mine.year > b - rows).to_numpy()]
        d.loc[idx, col] = shifted_.loc[idx]
        return d
    return go


# kind -> (subtle, GROSS), each a list of (variant label, plant)
KINDS = {
    "drift in one part": ([("statepop +1%/yr, 3 yrs", drift("statepop", 0.01, 3)),
                           ("totfat +1%/yr, 3 yrs", drift("totfat", 0.01, 3))],
                          [("statepop +3%/yr, 3 yrs", drift("statepop", 0.03, 3)),
                           ("totfat +3%/yr, 5 yrs", drift("totfat", 0.03, 5))]),
    "level shift, total only": ([("totfat x1.05", shifted("totfat", 1.05))],
                                [("totfat x1.20", shifted("totfat", 1.20))]),
    "part copied from last period": ([("statepop copied", copied("statepop"))],
                                     [("totfat copied", copied("totfat"))]),
    "decimal slip, one row": ([("totfatrte /10", slip("totfatrte", 0.1))],
                              [("statepop x10", slip("statepop", 10)), ("totfat x10", slip("totfat", 10))]),
    "parts rescaled, total not": ([("statepop x1.02 (a revised base)", shifted("statepop", 1.02))],
                                  [("statepop in thousands", shifted("statepop", 0.001))]),
    "a row of the total lagged": ([("totfat lagged 1 row", lagged("totfat", 1))],
                                  [("totfat lagged 3 rows", lagged("totfat", 3))]),
    "rate recomputed, count not": ([("totfatrte x1.03", shifted("totfatrte", 1.03))],
                                   [("totfatrte x0.85", shifted("totfatrte", 0.85))]),
}


def main() -> None:
    tally: dict = defaultdict(Counter)
    misses = []
    clean_fate: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "driving.csv"
        for kind, (subtle, grosses) in KINDS.items():
            for mag, variants in (("subtle", subtle), ("GROSS", grosses)):
                for label, fn in variants:
                    for ent, brk in PICKS:
                        mine = CLEAN.state == ent
                        out = fn(CLEAN.copy(), mine, CLEAN.year, brk)
                        if out.equals(CLEAN):
                            tally[(kind, mag)]["no-op"] += 1
                            continue
                        out.to_csv(path, index=False)
                        pack = with_source(PACK, path)
                        for a in AFTER:
                            as_of = night(brk + a)
                            if as_of.year > 2005:
                                continue
                            cid = ent.lower()
                            clean = clean_section(clean_fate, PACK, cid, as_of)
                            fate = night_fates(pack, as_of, {cid}).get(cid)
                            t = tally[(kind, mag)]
                            t["nights"] += 1
                            if fate is None:
                                t["rule:(off the night)"] += 1
                                continue
                            if tallied(t, fate, clean):
                                misses.append((kind, mag, label, ent, brk, str(as_of), a, clean))
                                print(f"  MISSED {kind} {mag} [{label}] in {ent} from {brk} on {as_of} (+{a});"
                                      f" clean: {clean}", flush=True)
    print_tally(tally, clean=True)
    Path("/tmp/t121").mkdir(exist_ok=True)
    Path(f"/tmp/t121/misses_{PACK_FILE}.json").write_text(json.dumps(misses))


if __name__ == "__main__":
    main()
