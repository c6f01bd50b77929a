"""Trial 126: 8 defect kinds no skeptic trial planted, subtle and GROSS, into copies of departures.csv for act-on
picks from the pick's latest month (the break); nights 0, 1 and 3 months after the first that sees it. Prints every
plant-night reaching act-on and a table per kind x magnitude. Needs pandas (PYTHONPATH=.:/tmp/t126v/lib/...)."""
from __future__ import annotations

import calendar
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

PACK = load_criteria(str(HERE / "departures.yaml"))
CLEAN = pd.read_csv(HERE / "departures.csv")
T = (CLEAN.year * 12 + CLEAN.month - 1).to_numpy()   # month index
DEC = {"permanent": 2, "reslong": 2, "vislong": 2, "resshort": 1, "visshort": 1}   # as the ABS writes each
# (kind, break month): act-on on clean data (with and without the checks) on the night whose latest month is the break
PICKS = [("reslong", (2004, 12)), ("resshort", (2007, 8)), ("vislong", (2009, 6)), ("resshort", (2010, 6)),
         ("visshort", (2014, 4)), ("vislong", (2016, 6)), ("permanent", (2016, 10))]
AFTER = (0, 1, 3)


def night(t: int) -> date:
    """The first month-end night seeing month index t (45 days' lag: two months on)."""
    y, m = divmod(t + 2, 12)
    return date(y, m + 1, calendar.monthrange(y, m + 1)[1])


def _vals(d, mine):
    return d.loc[mine, "departures"].to_numpy(dtype=float), T[mine.to_numpy()]


def _put(d, mine, v, ent, dec=None, after=None):
    """The entity's figures set to `v`, rounded as the entity writes them (`dec` decimals where `after` is true)."""
    d = d.copy()
    v = np.round(v, DEC[ent])
    if dec is not None:
        v = np.where(after, np.round(v, dec), v)
    d.loc[mine, "departures"] = v
    return d


def seasonal(times):
    """Seasonal adjustment switched on from the break: each month divided by its factor (`times` over, the
    factors the entity's own mean month / year ratios over the 5 years before the break)."""
    def go(d, mine, ent, b, latest):
        v, t = _vals(d, mine)
        past = (t < b) & (t >= b - 60)
        ratio = v[past] / pd.Series(v[past]).groupby(t[past] // 12).transform("mean").to_numpy()
        sf = pd.Series(ratio).groupby(t[past] % 12).mean()
        sf = (sf / sf.mean()).to_numpy()
        return _put(d, mine, np.where(t >= b, v / sf[t % 12] ** times, v), ent)
    return go


def booked_next(share):
    """`share` of the break month's figure booked in the next month (a late close: two months in one, one low)."""
    def go(d, mine, ent, b, latest):
        v, t = _vals(d, mine)
        moved = share * v[t == b][0]
        return _put(d, mine, v - np.where(t == b, moved, 0) + np.where(t == b + 1, moved, 0), ent)
    return go


def quarter_split(quarters):
    """A revision that spread quarterly totals evenly over their months: the `quarters` quarters ending at the
    break month each written as three equal thirds."""
    def go(d, mine, ent, b, latest):
        v, t = _vals(d, mine)
        out = v.copy()
        for q in range(quarters):
            blk = (t <= b - 3 * q) & (t > b - 3 * q - 3)
            out[blk] = v[blk].mean()
        return _put(d, mine, out, ent)
    return go


def provisional(f):
    """From the break on, the latest month of each night published provisional: `f` of its final figure (revised
    up the next month)."""
    def go(d, mine, ent, b, latest):
        v, t = _vals(d, mine)
        return _put(d, mine, np.where(t == latest, v * f, v), ent)
    return go


def widened(x):
    """The column's definition widened from the break: a new part (crew, say) added, `x` of the entity's mean month
    in the year before, with a season of its own (peak in July, trough in January, +-50%)."""
    def go(d, mine, ent, b, latest):
        v, t = _vals(d, mine)
        base = v[(t < b) & (t >= b - 12)].mean()
        extra = x * base * (1 + 0.5 * np.cos(2 * np.pi * ((t % 12) - 6) / 12))
        return _put(d, mine, np.where(t >= b, v + extra, v), ent)
    return go


def spliced(offset, noise, dec):
    """From the break the series comes from another source: its level `offset` off, its own noise (sd `noise`,
    seeded) and its own rounding (`dec` decimals; None: the entity's)."""
    def go(d, mine, ent, b, latest):
        v, t = _vals(d, mine)
        eps = np.random.default_rng(b).normal(0, noise, len(v))
        return _put(d, mine, np.where(t >= b, v * (1 + offset) * (1 + eps), v), ent, dec, t >= b)
    return go


def moving(kind):
    """From the break each month's figure is a moving total's: 'avg3' the 3-month moving average (same level,
    smoothed), 'ytd' the year-to-date total."""
    def go(d, mine, ent, b, latest):
        v, t = _vals(d, mine)
        s = pd.Series(v)
        alt = (s.rolling(3).mean() if kind == "avg3" else s.groupby(t // 12).cumsum()).to_numpy()
        return _put(d, mine, np.where(t >= b, alt, v), ent)
    return go


def _weeks(t, how):
    y, m = t // 12, t % 12 + 1
    days = np.array([calendar.monthrange(a, c)[1] for a, c in zip(y, m, strict=True)])
    if how == "445":
        return np.where(m % 3 == 0, 5, 4) * 7 / (365.25 / 12)
    # whole Monday-Sunday weeks in the month only
    first = np.array([date(a, c, 1).weekday() for a, c in zip(y, m, strict=True)])
    skip = (7 - first) % 7
    return ((days - skip) // 7) * 7 / days


def calendar_weeks(how):
    """From the break, months counted in weeks: '445' a 4-4-5 retail calendar; 'full' only the whole Monday-Sunday
    weeks inside each month."""
    def go(d, mine, ent, b, latest):
        v, t = _vals(d, mine)
        return _put(d, mine, np.where(t >= b, v * _weeks(t, how), v), ent)
    return go


KINDS = {
    "seasonal adjustment switched on": ([("factors x1", seasonal(1))], [("adjusted twice", seasonal(2))]),
    "a month booked in the next": ([("half of it", booked_next(0.5))], [("all of it (one 0)", booked_next(1.0))]),
    "quarters split evenly over months": ([("the latest quarter", quarter_split(1))],
                                          [("the latest 4 quarters", quarter_split(4))]),
    "latest month provisional": ([("x0.95 of final", provisional(0.95))], [("x0.80 of final", provisional(0.80))]),
    "definition widened (a part with its own season)": ([("+5%", widened(0.05))], [("+30%", widened(0.30))]),
    "spliced from another source": ([("+2%, noise 1%", spliced(0.02, 0.01, None))],
                                    [("+10%, noise 3%, whole thousands", spliced(0.10, 0.03, 0))]),
    "a moving total for the month": ([("3-month average", moving("avg3"))], [("year to date", moving("ytd"))]),
    "a calendar of weeks": ([("4-4-5", calendar_weeks("445"))], [("whole weeks only", calendar_weeks("full"))]),
}


def planted(fn, ent, b, latest):
    mine = CLEAN.kind == ent
    return fn(CLEAN.copy(), mine, ent, b, latest)


def main() -> None:
    tally: dict = defaultdict(Counter)
    misses = []
    clean_fate: dict = {}
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "departures.csv"
        for kind, (subtle, grosses) in KINDS.items():
            if only and kind not in only:
                continue
            for mag, variants in (("subtle", subtle), ("GROSS", grosses)):
                for label, fn in variants:
                    for ent, (y, m) in PICKS:
                        b = y * 12 + m - 1
                        for a in AFTER:
                            out = planted(fn, ent, b, b + a)
                            t = tally[(kind, mag)]
                            if out.equals(CLEAN):
                                t["no-op"] += 1
                                continue
                            out.to_csv(path, index=False)
                            pack = with_source(PACK, path)
                            as_of = night(b + a)
                            clean = plant_night(t, pack, PACK, clean_fate, ent, as_of)
                            if clean is not None:
                                misses.append((kind, mag, label, ent, b, str(as_of), a, clean))
                                print(f"  MISSED {kind} {mag} [{label}] in {ent} from {y}-{m:02} on {as_of} (+{a});"
                                      f" clean: {clean}", flush=True)
    print_tally(tally, clean=True)
    Path("/tmp/t126").mkdir(exist_ok=True)
    Path("/tmp/t126/misses.json").write_text(json.dumps(misses))


if __name__ == "__main__":
    main()
