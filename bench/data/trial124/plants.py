"""Trial 124: 9 defect kinds no skeptic trial planted, subtle and GROSS, into copies of world_pop.csv for act-on
picks from the pick's latest year (the break); nights 0, 1 and 3 years after the first that sees it. Prints every
plant-night reaching act-on and a table per kind x magnitude. Needs pandas (PYTHONPATH=.:/tmp/t124v/lib/...)."""
from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import plant_night, print_tally, with_source  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK = load_criteria(str(HERE / "pop_growth.yaml"))
CLEAN = pd.read_csv(HERE / "world_pop.csv")
# (iso, break year): act-on on clean data (with and without the checks) on the night whose latest year is the break
PICKS = [("niger", 2008), ("angola", 2010), ("kuwait", 2012), ("jordan", 2013), ("uganda", 2014), ("burundi", 2016)]
AFTER = (0, 1, 3)


def night(year: int) -> date:
    return date(year + 1, 6, 30)


def _set(d, m, y, years, values):
    d = d.copy()
    for yr, v in zip(years, values, strict=True):
        d.loc[m & (y == yr), "pop"] = round(v)
    return d


def _get(d, m, y, yr):
    return float(d.loc[m & (y == yr), "pop"].iloc[0])


def redefined(f):
    """A definitional break: from the break on the column counts a subset (x f), its noise the same."""
    return lambda d, m, y, b: d.assign(pop=np.where(m & (y >= b), (d["pop"] * f).round(), d["pop"]).astype("int64"))


def averaged(back):
    """The break year's figure estimated as the average of the `back` years (`back`: 'with' = b-2..b, else b-3..b-1)."""
    def go(d, m, y, b):
        yrs = range(b - 2, b + 1) if back == "with" else range(b - 3, b)
        return _set(d, m, y, [b], [np.mean([_get(d, m, y, k) for k in yrs])])
    return go


def smoothed(n, geometric):
    """A revision smoothing the past: the n years before the break on a line (or constant rate) between the year
    before them and the break year."""
    def go(d, m, y, b):
        a, z = _get(d, m, y, b - n - 1), _get(d, m, y, b)
        t = np.arange(1, n + 1) / (n + 1)
        vals = a * (z / a) ** t if geometric else a + (z - a) * t
        return _set(d, m, y, range(b - n, b), vals)
    return go


def truncated(unit):
    """From the break on, figures truncated (floored) to `unit`."""
    return lambda d, m, y, b: d.assign(pop=np.where(m & (y >= b), (d["pop"] // unit) * unit, d["pop"]).astype("int64"))


def split(share):
    """From the break on, the entity's figures split between its own name (share) and a second one (the rest)."""
    def go(d, m, y, b):
        part = d[m & (y >= b)].copy()
        out = d.assign(pop=np.where(m & (y >= b), (d["pop"] * share).round(), d["pop"]).astype("int64"))
        part["pop"] = (part["pop"] * (1 - share)).round().astype("int64")
        part["iso"] = part["iso"] + "_mainland"
        part["country"] = part["country"] + " (mainland)"
        return pd.concat([out, part]).sort_values(["iso", "year"]).reset_index(drop=True)
    return go


def projected(gross):
    """The break year pre-filled by a projection: last year's growth again (subtle), or a decade's average growth from
    three years back (GROSS)."""
    def go(d, m, y, b):
        if not gross:
            p1, p2 = _get(d, m, y, b - 1), _get(d, m, y, b - 2)
            return _set(d, m, y, [b], [p1 * p1 / p2])
        p3, p13 = _get(d, m, y, b - 3), _get(d, m, y, b - 13)
        return _set(d, m, y, [b], [p3 * (p3 / p13) ** 0.3])
    return go


def some_periods(f):
    """A conversion applied to some periods only: the break year and the year two before it x f."""
    return lambda d, m, y, b: d.assign(pop=np.where(m & y.isin([b, b - 2]), (d["pop"] * f).round(),
                                                    d["pop"]).astype("int64"))


def transposed(i):
    """Two adjacent digits of the break year's figure swapped (the i-th and the next, from the left)."""
    def go(d, m, y, b):
        s = str(int(_get(d, m, y, b)))
        s = s[:i] + s[i + 1] + s[i] + s[i + 2:]
        return _set(d, m, y, [b], [int(s)])
    return go


def benchmarked(f, n=10):
    """A benchmark revision: the break year x f (a new census) and the n years before it ramped from x1 to meet it."""
    def go(d, m, y, b):
        k = (y - (b - n)).clip(lower=0, upper=n) / n
        fac = np.where(m & (y <= b), 1 + (f - 1) * k, np.where(m & (y > b), f, 1.0))
        return d.assign(pop=(d["pop"] * fac).round().astype("int64"))
    return go


KINDS = {
    "definitional break (a subset)": ([("x0.97 from the break", redefined(0.97))],
                                      [("x0.70 from the break", redefined(0.70))]),
    "latest = average of 3 years": ([("avg of b-2..b", averaged("with"))], [("avg of b-3..b-1", averaged("before"))]),
    "revision smoothing the past": ([("5 yrs at a constant rate", smoothed(5, True))],
                                    [("10 yrs on a straight line", smoothed(10, False))]),
    "truncated to a coarser unit": ([("floored to 10,000", truncated(10_000))],
                                    [("floored to 1,000,000", truncated(1_000_000))]),
    "split between two names": ([("90 / 10", split(0.9))], [("50 / 50", split(0.5))]),
    "latest pre-filled by a projection": ([("last year's growth again", projected(False))],
                                          [("a decade's rate from 3 yrs back", projected(True))]),
    "conversion in some periods only": ([("b, b-2 x1.03", some_periods(1.03))],
                                        [("b, b-2 /1000", some_periods(0.001))]),
    "digits transposed": ([("4th/5th digits", transposed(3))], [("1st/2nd digits", transposed(0))]),
    "benchmark revision ramped in": ([("x1.02 over 10 yrs", benchmarked(1.02))],
                                     [("x1.10 over 10 yrs", benchmarked(1.10))]),
}


def main() -> None:
    tally: dict = defaultdict(Counter)
    misses = []
    clean_fate: dict = {}
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "world_pop.csv"
        for kind, (subtle, grosses) in KINDS.items():
            if only and kind not in only:
                continue
            for mag, variants in (("subtle", subtle), ("GROSS", grosses)):
                for label, fn in variants:
                    for ent, brk in PICKS:
                        mine = CLEAN.iso == ent
                        out = fn(CLEAN.copy(), mine, CLEAN.year, brk)
                        if out.equals(CLEAN):
                            tally[(kind, mag)]["no-op"] += 1
                            continue
                        out.to_csv(path, index=False)
                        pack = with_source(PACK, path)
                        for a in AFTER:
                            as_of = night(brk + a)
                            if as_of.year > 2021:
                                continue
                            cid = ent.replace("_", "-")
                            clean = plant_night(tally[(kind, mag)], pack, PACK, clean_fate, cid, as_of)
                            if clean is not None:
                                misses.append((kind, mag, label, ent, brk, str(as_of), a, clean))
                                print(f"  MISSED {kind} {mag} [{label}] in {ent} from {brk} on {as_of} (+{a});"
                                      f" clean: {clean}", flush=True)
    print_tally(tally, clean=True)
    Path("/tmp/t124").mkdir(exist_ok=True)
    Path("/tmp/t124/misses.json").write_text(json.dumps(misses))


if __name__ == "__main__":
    main()
