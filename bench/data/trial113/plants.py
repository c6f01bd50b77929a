"""Trial 113: defects planted into copies of prison.csv for act-on picks, from their act-on night's latest quarter;
nights 0, 1 and 3 quarters after the first that sees the break. Prints every plant-night reaching act_on_these."""
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

from bench.planted import night_fates, print_tally, tallied, with_source  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK = load_criteria(str(HERE / "prison_remand.yaml"))
CLEAN = pd.read_csv(HERE / "prison.csv")
COLS = ["female_remanded", "female_sentenced", "male_remanded", "male_sentenced"]
PICKS = [("NT", "2014 Q1"), ("ACT", "2015 Q4"), ("NSW", "2015 Q4"), ("TAS", "2015 Q4"), ("SA", "2016 Q1")]
AFTER = (0, 1, 3)


def q(label: str) -> int:
    y, n = label.split(" Q")
    return int(y) * 4 + int(n) - 1


def label(k: int) -> str:
    return f"{k // 4} Q{k % 4 + 1}"


def night(k: int) -> date:
    """The quarter-end night closing quarter index k."""
    y, n = divmod(k, 4)
    return date(y, 3 * n + 3, {0: 31, 1: 30, 2: 30, 3: 31}[n])


# Each plant: f(frame, mine, k, b, col) -> frame; `mine` the entity's rows, k each row's quarter, b the break.
def scale(f):
    return lambda d, m, k, b, c: d.assign(**{c: np.where(m & (k >= b), (d[c] * f).round(), d[c])})


def unit(f):
    return lambda d, m, k, b, c: d.assign(**{c: np.where(m & (k >= b), d[c] * f, d[c])})


def spike(f):
    return lambda d, m, k, b, c: d.assign(**{c: np.where(m & (k == b), (d[c] * f).round(), d[c])})


def stuck(n, whole=False):
    def go(d, m, k, b, c):
        d = d.copy()
        for col in (COLS if whole else [c]):
            last = d.loc[m & (k == b - 1), col].iloc[0]
            d.loc[m & (k >= b) & (k < b + n), col] = last
        return d
    return go


def constant(v):
    return lambda d, m, k, b, c: d.assign(**{c: np.where(m & (k >= b), v, d[c])})


def sign_once():
    return lambda d, m, k, b, c: d.assign(**{c: np.where(m & (k == b), -d[c], d[c])})


def negated():
    return lambda d, m, k, b, c: d.assign(**{c: np.where(m & (k >= b), -d[c], d[c])})


def duplicated(factor):
    def go(d, m, k, b, c):
        row = d[m & (k == b)].copy()
        row[COLS] = (row[COLS] * factor).round().astype(int)
        return pd.concat([d, row]).sort_values(["state", "quarter"], kind="stable")
    return go


def missing(n):
    return lambda d, m, k, b, c: d[~(m & (k >= b) & (k < b + n))]


def lagged(n, whole=False):
    def go(d, m, k, b, c):
        d = d.copy()
        mine = d[m].sort_values("quarter")
        for col in (COLS if whole else [c]):
            shifted = mine[col].shift(n)
            idx = mine.index[(k[m] >= b).to_numpy()]
            d.loc[idx, col] = shifted.loc[idx]
        return d
    return go


def borrowed(other_offset, whole=False):
    def go(d, m, k, b, c):
        d = d.copy()
        states = sorted(d.state.unique())
        me = d.loc[m, "state"].iloc[0]
        other = states[(states.index(me) + other_offset) % len(states)]
        theirs = d[d.state == other].set_index("quarter")
        idx = d.index[m & (k >= b)]
        for col in (COLS if whole else [c]):
            d.loc[idx, col] = theirs.loc[d.loc[idx, "quarter"], col].to_numpy()
        return d
    return go


def moving_average(n, whole=False):
    def go(d, m, k, b, c):
        d = d.copy()
        mine = d[m].sort_values("quarter")
        for col in (COLS if whole else [c]):
            ma = mine[col].rolling(n).mean().round()
            idx = mine.index[(k[m] >= b).to_numpy()]
            d.loc[idx, col] = ma.loc[idx]
        return d
    return go


def rounded(step):
    return lambda d, m, k, b, c: d.assign(**{c: np.where(m & (k >= b), (d[c] / step).round() * step, d[c])})


def extrapolated(n, whole=False):
    """An outage filled by the publisher: each missing quarter on the line through the two before it."""
    def go(d, m, k, b, c):
        d = d.copy()
        for col in (COLS if whole else [c]):
            a = d.loc[m & (k == b - 2), col].iloc[0]
            z = d.loc[m & (k == b - 1), col].iloc[0]
            for i in range(n):
                d.loc[m & (k == b + i), col] = round(z + (z - a) * (i + 1))
        return d
    return go


def interpolated(n, whole=False):
    """The n quarters before the break, lost and refilled on the straight line to the break quarter's figure."""
    def go(d, m, k, b, c):
        d = d.copy()
        for col in (COLS if whole else [c]):
            a = d.loc[m & (k == b - n - 1), col].iloc[0]
            z = d.loc[m & (k == b), col].iloc[0]
            for i in range(1, n + 1):
                d.loc[m & (k == b - n - 1 + i), col] = round(a + (z - a) * i / (n + 1))
        return d
    return go


def partial(f):
    return lambda d, m, k, b, c: d.assign(**{col: np.where(m & (k == b), (d[col] * f).round(), d[col]) for col in COLS})


def recoded(sex):
    """A category recoded: remanded and sentenced swapped (one sex, or both)."""
    def go(d, m, k, b, c):
        d = d.copy()
        sel = m & (k >= b)
        for s in sex:
            r, t = f"{s}_remanded", f"{s}_sentenced"
            d.loc[sel, [r, t]] = d.loc[sel, [t, r]].to_numpy()
        return d
    return go


def restated(f, n=8):
    """The n quarters before the break restated by f in the break quarter's release (a new definition backwards)."""
    return lambda d, m, k, b, c: d.assign(**{c: np.where(m & (k < b) & (k >= b - n), (d[c] * f).round(), d[c])})


def totals(into, extra):
    """A column carrying a total: `into` + `extra` (a sub-total published in place of its part)."""
    return lambda d, m, k, b, c: d.assign(**{into: np.where(m & (k >= b), d[into] + d[extra], d[into])})


def national(whole=False):
    """The national figure published under the state's label."""
    def go(d, m, k, b, c):
        d = d.copy()
        tot = d.groupby("quarter")[COLS].sum()
        idx = d.index[m & (k >= b)]
        for col in (COLS if whole else [c]):
            d.loc[idx, col] = tot.loc[d.loc[idx, "quarter"], col].to_numpy()
        return d
    return go


def transposed():
    """Two digits swapped in the break quarter's figure (3,873 -> 3,783, a keying slip)."""
    def go(d, m, k, b, c):
        d = d.copy()
        i = d.index[m & (k == b)][0]
        s = str(int(d.loc[i, c]))
        if len(s) >= 3:
            s = s[0] + s[2] + s[1] + s[3:] if s[1] != s[2] else s[1] + s[0] + s[2:]
        d.loc[i, c] = int(s)
        return d
    return go


def seasonal_adjusted(power):
    """The column switched to a seasonally adjusted series: each quarter divided by its quarter's factor^power
    (factors from the entity's own past)."""
    def go(d, m, k, b, c):
        d = d.copy()
        past = d[m & (k < b)]
        qn = past.quarter.str[-1]
        fac = past.groupby(qn)[c].mean() / past[c].mean()
        idx = d.index[m & (k >= b)]
        d.loc[idx, c] = (d.loc[idx, c] / fac.loc[d.loc[idx, "quarter"].str[-1]].to_numpy() ** power).round()
        return d
    return go


MR, FS, FR, MS = "male_remanded", "female_sentenced", "female_remanded", "male_sentenced"
# kind -> (moderate, GROSS), each a list of (columns variant, plant)
KINDS = {
    "level shift": ([(MR, scale(1.15)), (FS, scale(1.15))], [(MR, scale(1.6)), (FS, scale(1.6))]),
    "unit slip": ([(MR, unit(10)), (FS, unit(10))], [(MR, unit(1000)), (FS, unit(0.01))]),
    "spike": ([(MR, spike(1.3)), (FS, spike(1.3))], [(MR, spike(3)), (FS, spike(3))]),
    "stuck": ([(MR, stuck(2)), (FS, stuck(2))], [(MR, stuck(4)), ("row", stuck(4, True))]),
    "zeroed": ([(FR, constant(0)), (FS, constant(0))], [(MR, constant(0)), (MS, constant(0))]),
    "negated": ([(FS, negated())], [(MR, negated())]),
    "sign flip once": ([(FS, sign_once())], [(MR, sign_once())]),
    "row duplicated": ([("row", duplicated(1.0))], [("row", duplicated(1.3))]),
    "row missing": ([("row", missing(1))], [("row", missing(2))]),
    "lag of a period": ([(MR, lagged(1)), (FS, lagged(1))],
                        [("row", lagged(1, True)), (MR, lagged(4))]),
    "another entity's": ([(MR, borrowed(1)), (FS, borrowed(1))],
                         [("row", borrowed(1, True)), ("row", borrowed(4, True))]),
    "moving average": ([(MR, moving_average(2)), (FS, moving_average(2))],
                       [(MR, moving_average(4)), ("row", moving_average(4, True))]),
    "rounding": ([(MR, rounded(10)), (FS, rounded(10))], [(MR, rounded(100)), (FS, rounded(100))]),
    "outage extrapolated": ([(MR, extrapolated(2))], [("row", extrapolated(4, True))]),
    "outage interpolated": ([(MR, interpolated(2))], [("row", interpolated(3, True))]),
    "partial period": ([("row", partial(0.8))], [("row", partial(0.5))]),
    "category recoded": ([(FR, recoded(["female"]))],
                         [(MR, recoded(["male"])), ("row", recoded(["male", "female"]))]),
    "restatement": ([(MR, restated(0.85))], [(MR, restated(0.6)), (FS, restated(0.6))]),
    "sub-total as part": ([(MR, totals(MR, FR))], [(MR, totals(MR, MS))]),
    "national under state": ([(FS, national())], [(MR, national()), ("row", national(True))]),
    "digits transposed": ([(MR, transposed()), (MS, transposed())], []),
    "seasonally adjusted": ([(MR, seasonal_adjusted(1))], [("row", seasonal_adjusted(3))]),
}


def main() -> None:
    tally: dict = defaultdict(Counter)
    misses = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prison.csv"
        for kind, (mods, grosses) in KINDS.items():
            for mag, variants in (("moderate", mods), ("GROSS", grosses)):
                for col, fn in variants:
                    for state, brk in PICKS:
                        d = CLEAN.copy()
                        k = CLEAN.quarter.map(q)
                        mine = CLEAN.state == state
                        out = fn(d, mine, k, q(brk), col if col != "row" else MR)
                        if out.equals(CLEAN):
                            tally[(kind, mag)]["no-op"] += 1
                            continue
                        for c in COLS:
                            if out[c].dtype.kind == "f" and (out[c].dropna() % 1 == 0).all():
                                out[c] = out[c].astype("Int64")
                        out.to_csv(path, index=False)
                        pack = with_source(PACK, path)
                        for a in AFTER:
                            as_of = night(q(brk) + 1 + a)
                            fate = night_fates(pack, as_of, {state.lower()}).get(state.lower())
                            if fate is None:
                                continue
                            t = tally[(kind, mag)]
                            t["nights"] += 1
                            if tallied(t, fate):
                                misses.append((kind, mag, col, state, brk, str(as_of), a))
                                print(f"  MISSED {kind} {mag} in {col} of {state} from {brk} on {as_of} (+{a})",
                                      flush=True)
    print_tally(tally)
    Path("/tmp/t113/misses.json").write_text(json.dumps(misses))


if __name__ == "__main__":
    main()
