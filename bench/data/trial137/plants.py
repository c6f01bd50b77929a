"""Trial 137: 9 defect kinds no skeptic trial planted, subtle and GROSS, into copies of laborsupply.csv for act-on
picks of the design nights, from the pick's latest year (the break); nights 0, 1, 3 and 6 years after the first that
sees it (none past 1988). Prints every plant-night reaching act-on and a table per kind x magnitude; writes
/tmp/t137/misses.json and /tmp/t137/plants.json. Needs pandas (PYTHONPATH=.:/tmp/t135v/lib/python3.X/site-packages)."""
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

PACK = load_criteria(str(HERE / "laborsupply.yaml"))
CLEAN = pd.read_csv(HERE / "laborsupply.csv")
COLS = ["lnhr", "lnwg"]
LAST = 1988
# (respondent, break year): act-on on clean data (with and without the checks) on the design night whose latest
# year is the break (clean.py: two of each design night's 15)
PICKS = [("P018", 1981), ("P302", 1981), ("P104", 1982), ("P400", 1982), ("P014", 1983), ("P217", 1983),
         ("P049", 1984), ("P382", 1984)]
AFTER = (0, 1, 3, 6)
# US CPI-U, annual averages (1982-84 = 100), for the deflator kinds
CPI = {1979: 72.6, 1980: 82.4, 1981: 90.9, 1982: 96.5, 1983: 99.6, 1984: 103.9, 1985: 107.6, 1986: 109.6,
       1987: 113.6, 1988: 118.3}
Plant = Callable[[pd.DataFrame, str, int], tuple[pd.DataFrame, str]]
"""(clean frame, entity, break year) -> (planted frame, the id judged)."""


def night(year: int) -> date:
    """The first June-end night seeing `year` (180 days' lag)."""
    return date(year + 1, 6, 30)


def _set(d: pd.DataFrame, mask: pd.Series, cols: list[str], values) -> pd.DataFrame:
    d.loc[mask, cols] = np.round(np.asarray(values, dtype=float), 2)     # the feed writes 2 decimals
    return d


def off_by_one(every_wave: bool) -> Plant:
    """A wave's wage file joined to the person file one row off (the file sorted by year, person): every
    respondent's lnwg is the previous respondent's; the break year's wave only, or every wave from the break."""
    def go(d, ent, b):
        d = d.sort_values(["year", "person"]).reset_index(drop=True)
        waves = (d.year >= b) if every_wave else (d.year == b)
        for y in sorted(d.year[waves].unique()):
            m = d.year == y
            d.loc[m, "lnwg"] = np.roll(d.loc[m, "lnwg"].to_numpy(), 1)
        return d, ent
    return go


def swapped(nearest: bool) -> Plant:
    """From the break the entity's rows and another respondent's carry each other's ids (both columns): the one
    whose figures the year before are nearest the entity's (a seamless swap), or the next id in the file."""
    def go(d, ent, b):
        prev = d[d.year == b - 1].set_index("person")[COLS]
        if nearest:
            dist = ((prev - prev.loc[ent]) ** 2).sum(axis=1).drop(ent)
            other = dist.idxmin()
        else:
            ids = sorted(d.person.unique())
            other = ids[(ids.index(ent) + 1) % len(ids)]
        a, o = (d.person == ent) & (d.year >= b), (d.person == other) & (d.year >= b)
        va, vo = d.loc[a, COLS].to_numpy(), d.loc[o, COLS].to_numpy()
        d.loc[a, COLS], d.loc[o, COLS] = vo, va
        return d, ent
    return go


def rebased(shift: float) -> Plant:
    """Feed-wide from the break: real wages restated in a later base year's dollars (every respondent's lnwg +
    log of the CPI ratio), the years before left in the old base."""
    def go(d, ent, b):
        m = d.year >= b
        return _set(d, m, ["lnwg"], d.loc[m, "lnwg"] + shift), ent
    return go


def deflator(nominal: bool) -> Plant:
    """From the break the entity's wage deflated wrongly: with the previous year's CPI (+ that year's inflation),
    or not at all (nominal: + log CPI_t / CPI_1979)."""
    def go(d, ent, b):
        m = (d.person == ent) & (d.year >= b)
        yrs = d.loc[m, "year"]
        add = [np.log(CPI[y] / (CPI[1979] if nominal else CPI[y - 1])) for y in yrs]
        return _set(d, m, ["lnwg"], d.loc[m, "lnwg"].to_numpy() + np.array(add)), ent
    return go


def heaped(hours: float, wage: float) -> Plant:
    """From the break the entity's answers heaped: the level rounded (hours to `hours`, the hourly wage to `wage`
    dollars) before the log is taken."""
    def go(d, ent, b):
        m = (d.person == ent) & (d.year >= b)
        h = np.log(np.round(np.exp(d.loc[m, "lnhr"]) / hours) * hours)
        w = np.log(np.maximum(np.round(np.exp(d.loc[m, "lnwg"]) / wage), 1) * wage)
        return _set(d, m, COLS, np.column_stack([h, w])), ent
    return go


def imputed(every_wave: bool) -> Plant:
    """The entity's wage a nonresponse imputed by a fixed-effects model: its own mean before the break plus the
    sample's mean change since (the break year only, or every year from the break)."""
    def go(d, ent, b):
        own = d[(d.person == ent) & (d.year < b)].lnwg.mean()
        base = d[d.year < b].lnwg.mean()
        m = (d.person == ent) & ((d.year >= b) if every_wave else (d.year == b))
        yr_mean = d.groupby("year").lnwg.mean()
        vals = [own + yr_mean[y] - base for y in d.loc[m, "year"]]
        return _set(d, m, ["lnwg"], vals), ent
    return go


def hours_defined(c: float) -> Plant:
    """A definition change on an interviewer's batch (ids with the entity's last digit) from the break: hours now
    exclude paid leave (lnhr - c), so the hourly wage of the same earnings rises (lnwg + c); earnings unchanged."""
    def go(d, ent, b):
        m = (d.person.str[-1] == ent[-1]) & (d.year >= b)
        return _set(d, m, COLS, d.loc[m, COLS].to_numpy() + np.array([-c, c])), ent
    return go


def transform(kind: str) -> Plant:
    """From the break the entity's wage written by a new pipeline: log(1 + wage), or the wage in dollars unlogged."""
    def go(d, ent, b):
        m = (d.person == ent) & (d.year >= b)
        w = np.exp(d.loc[m, "lnwg"])
        return _set(d, m, ["lnwg"], np.log1p(w) if kind == "log1p" else w), ent
    return go


def sorted_column(block: int | None) -> Plant:
    """A spreadsheet sort of the lnwg column alone, rows left in place, in every wave from the break: a 20-row
    block around the entity (`block`), or the whole wave."""
    def go(d, ent, b):
        d = d.sort_values(["year", "person"]).reset_index(drop=True)
        for y in range(b, LAST + 1):
            idx = d.index[d.year == y]
            if block is not None:
                i = int(np.flatnonzero(d.loc[idx, "person"].to_numpy() == ent)[0])
                lo = max(0, i - block // 2)
                idx = idx[lo: lo + block]
            d.loc[idx, "lnwg"] = np.sort(d.loc[idx, "lnwg"].to_numpy())
        return d, ent
    return go


KINDS: dict[str, tuple[tuple[str, Plant], tuple[str, Plant]]] = {
    "a wave joined one row off": (("the break year's wave", off_by_one(False)),
                                  ("every wave from it", off_by_one(True))),
    "ids swapped with another respondent": (("the nearest in level", swapped(True)), ("the next id", swapped(False))),
    "feed-wide base-year restatement": (("+0.036 (1986 -> 1987 $)", rebased(np.log(CPI[1987] / CPI[1986]))),
                                        ("+0.285 (1979 -> 1982 $)", rebased(np.log(CPI[1982] / CPI[1979])))),
    "a wrong deflator": (("last year's CPI", deflator(False)), ("not deflated (nominal)", deflator(True))),
    "heaped answers, rounded before the log": (("40 h, $0.50", heaped(40, 0.5)), ("500 h, $5", heaped(500, 5))),
    "a fixed-effects imputation of the wage": (("the break year", imputed(False)),
                                               ("every year from it", imputed(True))),
    "hours redefined on a batch (earnings same)": (("5% (lnhr -0.05, lnwg +0.05)", hours_defined(0.05)),
                                                   ("25%", hours_defined(0.25))),
    "a new pipeline's transform": (("log(1 + wage)", transform("log1p")), ("the wage unlogged", transform("level"))),
    "the wage column sorted alone": (("a 20-row block", sorted_column(20)), ("the whole wave", sorted_column(None))),
}


def main() -> None:
    tally: dict = defaultdict(Counter)
    misses, everything = [], []
    clean_fate: dict = {}
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "laborsupply.csv"
        for kind, variants in KINDS.items():
            if only and kind not in only:
                continue
            for mag, (label, fn) in zip(("subtle", "GROSS"), variants, strict=True):
                for ent, b in PICKS:
                    out, judged_id = fn(CLEAN.copy(), ent, b)
                    t = tally[(kind, mag)]
                    if out.sort_values(["year", "person"]).reset_index(drop=True).equals(CLEAN):
                        t["no-op"] += 1
                        continue
                    out.to_csv(path, index=False)
                    pack = with_source(PACK, path)
                    for a in AFTER:
                        if b + a > LAST:
                            continue
                        as_of = night(b + a)
                        before = t["reached"], t["quiet"]
                        clean = plant_night(t, pack, PACK, clean_fate, judged_id.lower(), as_of)
                        everything.append((kind, mag, label, ent, b, a, t["quiet"] > before[1],
                                           t["reached"] > before[0]))
                        if clean is not None:
                            misses.append((kind, mag, label, ent, b, str(as_of), a, clean))
                            print(f"  MISSED {kind} {mag} [{label}] in {judged_id} from {b} on {as_of} (+{a});"
                                  f" clean: {clean}", flush=True)
    print_tally(tally, clean=True)
    Path("/tmp/t137").mkdir(exist_ok=True)
    Path("/tmp/t137/misses.json").write_text(json.dumps(misses))
    Path("/tmp/t137/plants.json").write_text(json.dumps(everything))


if __name__ == "__main__":
    main()
