"""Trial 137: two proposed rules measured offline (numpy/pandas over the harness's frames; no verdict code changed):

R1  the night's cross-section as a doubt where the entity's own past is too short for `level_shift` (fewer than
    `series.MIN_SAMPLE` changes before the judged span): a change into one of the periods the score reads (the
    latest two) `T1` robust sds from tonight's entities' changes into that period, on the product's own log change
    (`integrity.two_period_changes`) and yardstick (`series.robust`).
R1u R1 at 8 (the note's own bar) only where the change is unit-sized (`series.unit_sized`: beyond x3.2 or -68%).
R2  a feed-wide break: in a period the score reads, the cross-section's median change, or its robust spread of
    changes, `T2` robust sds from the same in the feed's earlier periods (at least 2; the sd floored at the
    sampling error of a median, 1.2533 x scale / sqrt(n), and of a log spread, 1.2 / sqrt(n)); every entity read
    there doubted.

Clean cost over every entity-night and the clean act-on picks of clean.py (design and held-out); gain over the
harness's misses (/tmp/t137/misses.json, plants.py). Needs pandas (PYTHONPATH=.:/tmp/t135v/lib/python3.11/...)."""
from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import plants  # noqa: E402

from opportunity_assets.verifications.integrity import two_period_changes  # noqa: E402
from opportunity_assets.verifications.series import MIN_SAMPLE, MIN_SCALE, robust  # noqa: E402

FIRST = 1979
T1S = (6.0, 8.0, 12.0)
T2S = (6.0, 10.0)


def wide(d: pd.DataFrame, col: str) -> pd.DataFrame:
    return d.pivot(index="person", columns="year", values=col).sort_index()


def night_flags(d: pd.DataFrame, latest: int) -> dict[str, dict]:
    """Per rule and threshold: {entity: detail} flagged on the night whose latest year is `latest`."""
    out: dict[str, dict] = ({f"R1@{t:g}": {} for t in T1S} | {"R1u@8": {}} | {f"R2@{t:g}": {} for t in T2S})
    for col in plants.COLS:
        w = wide(d[d.year <= latest], col)
        ch = {t: two_period_changes(w[t - 1].to_numpy(float), w[t].to_numpy(float))
              for t in range(FIRST + 1, latest + 1)}
        judged = [latest - 1, latest]
        # R1: own changes before the judged span (levels latest-2..latest) too few for level_shift
        if (latest - 2) - FIRST < MIN_SAMPLE:
            for t in judged:
                if t <= FIRST:
                    continue
                stick = robust(ch[t], "")
                z = (ch[t] - stick.median) / max(stick.scale, MIN_SCALE)
                for thr in T1S:
                    for i in np.flatnonzero(np.abs(z) >= thr):
                        out[f"R1@{thr:g}"].setdefault(w.index[i], f"{col} {t} {z[i]:+.1f}")
                for i in np.flatnonzero((np.abs(z) >= 8) & (np.abs(ch[t]) >= 0.5 * math.log(10))):
                    out["R1u@8"].setdefault(w.index[i], f"{col} {t} {z[i]:+.1f}, x{math.exp(ch[t][i]):.2f}")
        # R2: the feed's median and spread of changes per period
        med = {t: float(np.nanmedian(c)) for t, c in ch.items()}
        sprd = {t: 1.4826 * float(np.nanmedian(np.abs(c - med[t]))) for t, c in ch.items()}
        n = {t: int(np.isfinite(c).sum()) for t, c in ch.items()}
        for t in judged:
            past = [s for s in ch if s < latest - 1]
            if len(past) < 2 or t not in ch:
                continue
            pm = np.array([med[s] for s in past])
            ps = np.log(np.maximum([sprd[s] for s in past], MIN_SCALE))
            zm = abs(med[t] - np.median(pm)) / max(1.4826 * np.median(np.abs(pm - np.median(pm))),
                                                    1.2533 * max(sprd[t], MIN_SCALE) / math.sqrt(n[t]))
            zs = abs(math.log(max(sprd[t], MIN_SCALE)) - np.median(ps)) / max(
                1.4826 * np.median(np.abs(ps - np.median(ps))), 1.2 / math.sqrt(n[t]))
            for thr in T2S:
                if max(zm, zs) >= thr:
                    for e in w.index:
                        out[f"R2@{thr:g}"].setdefault(e, f"{col} {t} median {zm:.1f} spread {zs:.1f}")
    return out


def main() -> None:
    clean = plants.CLEAN
    picks = json.loads(Path("/tmp/t137/clean_picks.json").read_text())
    flags = {y: night_flags(clean, y) for y in range(1981, 1989)}
    rules = list(flags[1981])
    print("clean: picks doubted (design, held-out) and entity-nights flagged of all")
    for r in rules:
        cost = {}
        for span, ps in picks.items():
            hit = [(c, n) for c, n in ps if c.upper() in flags[int(n[:4]) - 1][r]]
            cost[span] = (len(hit), len(ps), hit[:4])
        total = sum(len(flags[y][r]) for y in flags)
        nights = [y for y in flags if r.startswith("R2") and flags[y][r]]
        print(f"  {r}: design {cost['design'][0]} of {cost['design'][1]}, held-out {cost['held-out'][0]} of "
              f"{cost['held-out'][1]}; entity-nights {total} of {532 * len(flags)}"
              + (f"; nights flagged (latest year) {nights}" if r.startswith("R2") else "")
              + f"; e.g. {[(c, n, flags[int(n[:4]) - 1][r][c.upper()]) for c, n in cost['design'][2][:2]]}")
    misses = json.loads(Path("/tmp/t137/misses.json").read_text())
    scores = {tuple(m[:5]): m for m in (json.loads(Path("/tmp/t137/miss_scores.json").read_text())
                                       if Path("/tmp/t137/miss_scores.json").exists() else [])}
    caught: dict[str, Counter] = {r: Counter() for r in rules}
    material = Counter()
    clean_flags = flags
    print("\nmisses (kind, magnitude, entity, break, +after, clean section, score clean -> planted): rules catching")
    for kind, mag, _label, ent, b, _as_of, a, clean_sec in misses:
        fn = plants.KINDS[kind][0 if mag == "subtle" else 1][1]
        d, cid = fn(clean.copy(), ent, b)
        f = night_flags(d, b + a)
        s = scores.get((kind, mag, ent, b, a))
        moved = s is not None and (clean_sec != "act_on_these" or abs((s[6] or 0) - (s[5] or 0)) >= 5)
        material[kind, mag] += moved
        hits = [r for r in rules if cid in f[r] and cid not in clean_flags[b + a][r]]   # not the clean pick's own
        for r in hits:
            caught[r][kind, mag] += 1
            caught[r]["material" if moved else "immaterial"] += 1
        print(f"  {kind} | {mag} | {ent} {b} +{a} | {clean_sec} | "
              + (f"{s[5]:.1f} -> {s[6]:.1f}" if s else "?") + (" MATERIAL" if moved else "") + f" | {hits}"
              + (f" {f[hits[0]][cid]}" if hits else ""))
    print(f"\n{len(misses)} misses, material (lifted into act-on or score moved >= 5): {sum(material.values())}")
    for k, v in material.items():
        if v:
            print(f"  material {k}: {v}")
    for r in rules:
        print(f"{r}: catches {sum(v for k, v in caught[r].items() if isinstance(k, tuple))} of {len(misses)} "
              f"(material {caught[r]['material']}): "
              f"{ {k: v for k, v in caught[r].items() if isinstance(k, tuple)} }")


if __name__ == "__main__":
    main()
