"""Trial 116, offline (pandas only, no verdict code): statistics a rule could use, on every clean entity-night of
clean.py's nights and on every plant-night of plants.py. Prints, per statistic and threshold, the clean act-on picks
it would doubt (false doubt) and the plant-nights that reached act-on it would catch."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from plants import AFTER, CLEAN, KINDS, PICKS, mi  # noqa: E402

SPAN = 12        # the widest window back: periods 0..12 judged, changes 0..11 between the score's windows
PAST = 60        # yardstick: changes in the 60 months before the judged span
CLEAN_NIGHTS = [mi(f"{y}-{m:02d}") for y, m in [(1990, 12)] + [(1991, i) for i in range(1, 13)] + [(1992, 1)]]
# latest months of clean.py's nights 1991-01-31 .. 1992-02-29


def z(x, past):
    med = np.median(past)
    mad = 1.4826 * np.median(np.abs(past - med))
    return (x - med) / mad, med, mad


def stats(d: pd.DataFrame, ent: str, latest: int) -> dict:
    w = d.pivot(index="month", columns="decile", values="index")
    w.index = w.index.map(mi)
    with np.errstate(invalid="ignore", divide="ignore"):
        ch = np.log(w).diff()
    resid = ch.sub(ch.median(axis=1), axis=0)
    judged = list(range(latest - SPAN + 1, latest + 1))          # the changes into periods 11..0
    past = list(range(latest - SPAN - PAST + 1, latest - SPAN + 1))
    own_z, _, _ = z(ch.loc[judged, ent].to_numpy(), ch.loc[past, ent].to_numpy())
    rz, med, mad = z(resid.loc[judged, ent].to_numpy(), resid.loc[past, ent].to_numpy())
    r = resid.loc[judged, ent].to_numpy()[::-1] - med             # period 0 first
    cusum = max(abs(r[:n].sum()) / (mad * np.sqrt(n)) for n in range(1, SPAN + 1))
    mine = d[d.decile == ent].assign(k=lambda x: x.month.map(mi)).set_index("k").sort_index()
    gap = (mine["index"] / mine["index"].shift(1) - 1 - mine["ret"]).abs()
    # the identity index / index before - 1 = ret, to the index's rounding (0.01 on both figures)
    tol = (0.01 / mine["index"].shift(1)) * 2 + 1e-6
    past_rows = mine.index[(mine.index <= latest - SPAN) & (mine.index > latest - SPAN - PAST)]
    held = (gap.loc[past_rows] <= tol.loc[past_rows]).mean()
    jrows = mine.index[(mine.index > latest - SPAN) & (mine.index <= latest)]
    broke = int((gap.loc[jrows] > tol.loc[jrows]).sum()) if held >= 0.99 else 0
    ret_j = mine.loc[jrows, "ret"]
    ret_p = mine.loc[past_rows, "ret"]
    p_neg = max((ret_p < 0).mean(), 1 / len(ret_p))
    from math import comb
    nneg = int((ret_j < 0).sum())
    n = len(ret_j)
    p_few_neg = sum(comb(n, i) * p_neg ** i * (1 - p_neg) ** (n - i) for i in range(nneg + 1))
    top = int(ret_j.value_counts().iloc[0])
    past_ties = max(1 - ret_p.nunique() / len(ret_p), 0.5 / len(ret_p))
    p_ties = sum(comb(n - 1, i) * past_ties ** i * (1 - past_ties) ** (n - 1 - i) for i in range(top - 1, n))
    return {"own_max_z": float(np.abs(own_z).max()), "peer_max_z": float(np.abs(rz).max()), "peer_cusum": cusum,
            "identity_breaks": broke, "p_few_negative": p_few_neg, "p_repeats": p_ties}


RULES = {
    "own change >= 4 MADs anywhere between the windows compared (now 6 outside the read periods)":
        lambda s: s["own_max_z"] >= 4,
    "peer-relative change >= 6 MADs (own past of change less tonight's median change)": lambda s: s["peer_max_z"] >= 6,
    "peer-relative CUSUM >= 6 (any run of 1..12 latest periods)": lambda s: s["peer_cusum"] >= 6,
    "learned identity index/index[-1]-1 = ret broken (held in >= 99% of past rows)": lambda s: s["identity_breaks"] > 0,
    "signed column: so few negatives < 1e-3 at the past rate": lambda s: s["p_few_negative"] < 1e-3,
    "a value repeated among judged periods < 1e-3 at the past rate of ties": lambda s: s["p_repeats"] < 1e-3,
}


def main() -> None:
    import subprocess  # noqa: F401
    clean_rows = []
    picks_file = Path("/tmp/t116/clean_picks.json")
    picks = set(map(tuple, json.loads(picks_file.read_text()))) if picks_file.exists() else set()
    for latest in CLEAN_NIGHTS:
        for ent in sorted(CLEAN.decile.unique()):
            s = stats(CLEAN, ent, latest)
            s.update(ent=ent, latest=latest, pick=(ent.lower(), latest) in picks)
            clean_rows.append(s)
    c = pd.DataFrame(clean_rows)
    misses = json.loads(Path("/tmp/t116/misses.json").read_text())
    missed = {(m[0], m[1], m[2], m[3], m[4], m[6]) for m in misses}
    plant_rows = []
    for kind, (subtle, grosses) in KINDS.items():
        for mag, variants in (("subtle", subtle), ("GROSS", grosses)):
            for label, fn in variants:
                for ent, brk in PICKS:
                    k = CLEAN.month.map(mi)
                    out = fn(CLEAN.copy(), CLEAN.decile == ent, k, mi(brk), ent)
                    for a in AFTER:
                        s = stats(out, ent, mi(brk) + a)
                        s.update(kind=kind, mag=mag, label=label, reached=(kind, mag, label, ent, brk, a) in missed)
                        plant_rows.append(s)
    p = pd.DataFrame(plant_rows)
    print(f"clean entity-nights {len(c)}, act-on picks {int(c.pick.sum())}; plant-nights {len(p)}, reached act-on "
          f"{int(p.reached.sum())}")
    for name, rule in RULES.items():
        cf = c.apply(rule, axis=1)
        pf = p.apply(rule, axis=1)
        r = p[p.reached]
        caught = r[pf[p.reached]]
        by = caught.groupby(["kind", "mag"]).size().to_dict()
        print(f"\n{name}\n  clean: {int(cf[c.pick].sum())} of {int(c.pick.sum())} act-on picks, {int(cf.sum())} of "
              f"{len(c)} entity-nights; plants reaching act-on it catches: {len(caught)} of {len(r)} {by}")
        flagged = c[cf & c.pick]
        if len(flagged):
            shown = [(e, f"{la // 12}-{la % 12 + 1:02d}") for e, la in zip(flagged.ent, flagged.latest, strict=True)]
            print("  clean picks doubted:", shown)


if __name__ == "__main__":
    main()
