"""Trial 116: defects planted into copies of size.csv for act-on picks, from their act-on night's latest month;
nights 0, 1 and 3 months after the first that sees the break. Prints every plant-night reaching act_on_these and a
table per kind x magnitude. Needs pandas (PYTHONPATH=.:<a venv's site-packages holding pandas>, e.g.
/tmp/t116v/lib/python3.11/site-packages)."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from calendar import monthrange
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import clean_section, night_fates, print_tally, tallied, with_source  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK = load_criteria(str(HERE / os.environ.get("PACK_FILE", "size_momentum.yaml")))
CLEAN = pd.read_csv(HERE / "size.csv", dtype={"month": str})
COLS = ["index", "ret", "rf", "cons"]
# (decile, break month): act-on on clean data on the night whose latest month is the break month
PICKS = [("D07", "1991-03"), ("D01", "1991-04"), ("D04", "1991-08"), ("D06", "1991-10"), ("D10", "1991-12"),
         ("D02", "1992-01")]
AFTER = (0, 1, 3)
RNG_SEED = 116


def mi(label: str) -> int:
    y, m = label.split("-")
    return int(y) * 12 + int(m) - 1


def night(k: int) -> date:
    y, m = divmod(k, 12)
    return date(y, m + 1, monthrange(y, m + 1)[1])


def sibling(me: str, far: bool) -> str:
    n = int(me[1:])
    if far:
        return "D10" if n <= 5 else "D01"
    return f"D{n + 1:02d}" if n < 10 else "D09"


# Each plant: f(frame, mine, k, b, me) -> frame; `mine` the entity's rows, k each row's month index, b the break.
def capped(col, frac):
    """A field that tops out: from the break on, values above `frac` x the break month's figure are written as it."""
    def go(d, m, k, b, me):
        cap = float(d.loc[m & (k == b), col].iloc[0]) * frac if col == "index" else frac
        sel = m & (k >= b)
        return d.assign(**{col: np.where(sel, np.minimum(d[col], cap), d[col])})
    return go


def floored(col, floor, back):
    """An unsigned field: the `back` months to the break re-sent with negatives written as `floor`."""
    def go(d, m, k, b, me):
        sel = m & (k > b - back)
        return d.assign(**{col: np.where(sel, np.maximum(d[col], floor), d[col])})
    return go


def rebased(whole_history: bool, base_month: str):
    """The index rebased to 100 at `base_month`: the whole history (every row), or only the rows before the break
    (the new rows left on the old base)."""
    def go(d, m, k, b, me):
        base = float(d.loc[m & (d.month == base_month), "index"].iloc[0])
        sel = m if whole_history else m & (k < b)
        return d.assign(index=np.where(sel, (d["index"] * 100 / base).round(2), d["index"]))
    return go


def swapped(a, c, back=0):
    def go(d, m, k, b, me):
        d = d.copy()
        sel = m & (k >= b - back)
        d.loc[sel, [a, c]] = d.loc[sel, [c, a]].to_numpy()
        return d
    return go


def slip(col, f):
    """A decimal-point slip in one row: the break month's figure x f."""
    return lambda d, m, k, b, me: d.assign(**{col: np.where(m & (k == b), (d[col] * f).round(6), d[col])})


def merged(far: bool, how: str):
    """Another decile's rows merged in from the break on: `sum` of the two indices, or `chain` (the merged
    portfolio's index continued from the entity's own at the break - 1 on the average of the two returns)."""
    def go(d, m, k, b, me):
        d = d.copy()
        other = d[d.decile == sibling(me, far)].set_index("month")
        idx = d.index[m & (k >= b)]
        months = d.loc[idx, "month"]
        if how == "sum":
            d.loc[idx, "index"] = (d.loc[idx, "index"].to_numpy() + other.loc[months, "index"].to_numpy()).round(2)
        else:
            r = (d.loc[idx, "ret"].to_numpy() + other.loc[months, "ret"].to_numpy()) / 2
            start = float(d.loc[m & (k == b - 1), "index"].iloc[0])
            d.loc[idx, "index"] = (start * np.cumprod(1 + r)).round(2)
            d.loc[idx, "ret"] = r.round(6)
        return d
    return go


def redefined(far: bool, back: int):
    """A new definition: the last `back` months (to the break) re-sent as a sibling decile's index, scaled to meet
    the entity's own figure the month before them (no seam)."""
    def go(d, m, k, b, me):
        d = d.copy()
        other = d[d.decile == sibling(me, far)].set_index("month")
        start = b - back + 1
        idx = d.index[m & (k >= start)]
        months = d.loc[idx, "month"]
        anchor_month = d.loc[m & (k == start - 1), "month"].iloc[0]
        scale = float(d.loc[m & (k == start - 1), "index"].iloc[0]) / float(other.loc[anchor_month, "index"])
        d.loc[idx, "index"] = (other.loc[months, "index"].to_numpy() * scale).round(2)
        return d
    return go


def drift(rate, back):
    """A drift of `rate` a month in the index, starting `back` months before the break, compounding, and staying."""
    def go(d, m, k, b, me):
        start = b - back + 1
        f = np.where(m & (k >= start), (1 + rate) ** (k - start + 1).clip(lower=0), 1.0)
        return d.assign(index=(d["index"] * f).round(2))
    return go


def year_to_date(col):
    """The return switched to year-to-date (compounded since January) from the break on."""
    def go(d, m, k, b, me):
        d = d.copy()
        mine = d[m].copy()
        yr = mine.month.str[:4]
        ytd = (1 + mine[col]).groupby(yr).cumprod() - 1
        idx = mine.index[(k[m] >= b).to_numpy()]
        d.loc[idx, col] = ytd.loc[idx].round(6)
        return d
    return go


def noisy(sd, back, col="index"):
    """The last `back` months re-sent with multiplicative noise of `sd` (an estimate, a perturbation)."""
    def go(d, m, k, b, me):
        rng = np.random.default_rng(RNG_SEED + b)
        sel = m & (k > b - back)
        f = np.where(sel, 1 + rng.normal(0, sd, len(d)), 1.0)
        return d.assign(**{col: (d[col] * f).round(2 if col == "index" else 6)})
    return go


# kind -> (subtle, GROSS), each a list of (variant label, plant)
KINDS = {
    "capped": ([("index at 0.98x", capped("index", 0.98)), ("ret at +0.03", capped("ret", 0.03))],
               [("index at 0.8x", capped("index", 0.8)), ("ret at 0", capped("ret", 0.0))]),
    "floored": ([("ret at -0.02, 6 months", floored("ret", -0.02, 6))],
                [("ret at 0, 6 months", floored("ret", 0.0, 6)), ("ret at 0, 12 months", floored("ret", 0.0, 12))]),
    "rebased to 100": ([("whole history, 1990-01=100", rebased(True, "1990-01"))],
                       [("old rows only, 1990-01=100", rebased(False, "1990-01")),
                        ("old rows only, 1959-02=100", rebased(False, "1959-02"))]),
    "columns swapped": ([("ret<->rf", swapped("ret", "rf"))],
                        [("rf<->cons", swapped("rf", "cons")), ("index<->ret whole 6m", swapped("index", "ret", 5))]),
    "decimal slip, one row": ([("rf x10", slip("rf", 10)), ("ret /10", slip("ret", 0.1))],
                              [("cons x10", slip("cons", 10)), ("rf /10", slip("rf", 0.1))]),
    "merger": ([("neighbour, chained", merged(False, "chain"))],
               [("neighbour, indices summed", merged(False, "sum")), ("far, indices summed", merged(True, "sum"))]),
    "new definition": ([("neighbour, 12 months", redefined(False, 12))],
                       [("far, 12 months", redefined(True, 12)), ("far, 6 months", redefined(True, 6))]),
    "drift": ([("+1%/month, 6 months", drift(0.01, 6))],
              [("+3%/month, 6 months", drift(0.03, 6)), ("+2%/month, 12 months", drift(0.02, 12))]),
    "year-to-date": ([("ret YTD", year_to_date("ret"))], [("rf YTD", year_to_date("rf"))]),
    "noise": ([("index sd 1%, 12 months", noisy(0.01, 12))],
              [("index sd 5%, 12 months", noisy(0.05, 12)), ("ret sd 50%, 12 months", noisy(0.5, 12, "ret"))]),
}


def main() -> None:
    tally: dict = defaultdict(Counter)
    misses = []
    clean_fate: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "size.csv"
        for kind, (subtle, grosses) in KINDS.items():
            for mag, variants in (("subtle", subtle), ("GROSS", grosses)):
                for label, fn in variants:
                    for ent, brk in PICKS:
                        k = CLEAN.month.map(mi)
                        mine = CLEAN.decile == ent
                        out = fn(CLEAN.copy(), mine, k, mi(brk), ent)
                        if out.equals(CLEAN):
                            tally[(kind, mag)]["no-op"] += 1
                            continue
                        out.to_csv(path, index=False)
                        pack = with_source(PACK, path)
                        for a in AFTER:
                            as_of = night(mi(brk) + 1 + a)
                            clean = clean_section(clean_fate, PACK, ent.lower(), as_of)
                            fate = night_fates(pack, as_of, {ent.lower()}).get(ent.lower())
                            t = tally[(kind, mag)]
                            t["nights"] += 1
                            if fate is None:
                                t["rule:(off the night)"] += 1
                                continue
                            if tallied(t, fate, clean):
                                misses.append((kind, mag, label, ent, brk, str(as_of), a,
                                               clean))
                                print(f"  MISSED {kind} {mag} [{label}] in {ent} from {brk} on {as_of} (+{a});"
                                      f" clean: {clean}", flush=True)
    print_tally(tally, clean=True)
    Path("/tmp/t116").mkdir(exist_ok=True)
    Path(os.environ.get("MISSES", "/tmp/t116/misses.json")).write_text(json.dumps(misses))


if __name__ == "__main__":
    main()
