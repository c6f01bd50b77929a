"""Trial 124: three proposed class-level rules measured offline (numpy) on the clean act-on picks (clean_picks.json)
and on the plant-nights that reached act-on (misses.json):
P1 interpolated, the run whole: an even run reaching the judged periods is judged from where it began, however few
   of its periods are judged (the product judges only its part from the judged periods on, at least 2 of them, and
   counts its earlier part in the past's rate of even moves: a revision that put 10 years on a line excused itself);
P2 rounded, a past with no value on the grid: the chance of a value on it the rounding's own (resolution / grid),
   not the Laplace floor 1 / (n + 2), times the grids tried, grids up to a hundredth of the figures' size (the
   product's integer columns: 10 to 1,000 times the unit);
P3 a kink: the mean change since some period of the last 12 against the 10 before it, in robust sds of the
   entity's year-to-year change in its changes (a growth rate that stepped and stays), at 6."""
from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import plants

JUDGED = 4          # periods 0..3, the metrics' reach
MIN_HISTORY = 24


def robust(x):
    x = x[np.isfinite(x)]
    if len(x) < 3:
        return None
    s = 1.4826 * np.median(np.abs(x - np.median(x)))
    return s if s > 0 else None


def even(raw, step=1.0):
    n = len(raw)
    line, rate = np.full(n, np.nan), np.full(n, np.nan)
    line[2:] = raw[2:] - 2 * raw[1:-1] + raw[:-2]
    lv = np.log(raw)
    rate[2:] = lv[2:] - 2 * lv[1:-1] + lv[:-2]
    lb = np.full(n, 2 * step)
    rb = np.full(n, np.nan)
    rb[2:] = step / 2 * (1 / raw[2:] + 2 / raw[1:-1] + 1 / raw[:-2])
    moved = np.zeros(n, bool)
    moved[1:] = raw[1:] != raw[:-1]
    judged = np.zeros(n, bool)
    judged[2:] = moved[2:] & moved[1:-1]
    match = judged & ((np.abs(line) <= lb) | (np.abs(rate) <= rb))
    return match, judged, line, rate, lb, rb


def interp(raw, whole):
    n = len(raw)
    jf = n - JUDGED
    match, judged, line, rate, lb, rb = even(raw)
    run, best = [], []
    for t in range(max(jf, 2), n):
        run = [*run, t] if match[t] else []
        if whole and run and run[0] == t:
            while run[0] - 1 >= 2 and match[run[0] - 1]:
                run = [run[0] - 1, *run]
        best = run if len(run) > len(best) else best
    if len(best) < 2:
        return None
    before = np.flatnonzero(judged[: best[0]])
    if len(before) < MIN_HISTORY:
        return None
    ls, rs = robust(line[before]), robust(rate[before])
    if ls is None:
        return None
    br = 2 * lb[best] / (ls * math.sqrt(2 * math.pi))
    if rs is not None:
        br = br + 2 * rb[best] / (rs * math.sqrt(2 * math.pi))
    r = match[before].mean()
    chance = float(np.prod(np.maximum(r, np.minimum(1, br))))
    return chance if chance < 1e-6 else None


def rounded(raw, proposed):
    n = len(raw)
    jf = n - JUDGED
    past = raw[:jf]
    prev = np.concatenate([[np.nan], raw[:-1]])
    moved = (raw != 0) & (raw != prev)
    pm = np.flatnonzero(moved[:jf])
    top = 3 if not proposed else max(3, math.floor(math.log10(np.median(past))) - 1)
    grids = [10.0 ** p for p in range(1, top + 1)]  # an integer column: 10 to 1,000 times its unit (P2: to size/100)
    worst = None
    for g in grids:
        on = np.abs(np.round(raw / g) * g - raw) < 1e-9
        k = on[pm].sum()
        share = 1 / g if proposed and k == 0 else (k + 1) / (len(pm) + 2)
        run, best = [], []
        for t in range(jf, n):
            if moved[t]:
                run = [*run, t] if on[t] else []
                best = run if len(run) > len(best) else best
        chance = share ** len(best) * (len(grids) if proposed else 1)
        if best and chance < 1e-3:
            worst = chance if worst is None else min(worst, chance)
    return worst


def kink(raw, threshold=6.0, look=12, before_n=10):
    d = np.diff(np.log(raw))
    n = len(d)
    s = robust(np.diff(d[: n - look - before_n]))
    if s is None:
        return None
    best = 0.0
    for t in range(n - look, n):
        a, b = d[t:], d[t - before_n:t]
        z = (a.mean() - b.mean()) / (s / math.sqrt(2) * math.sqrt(1 / len(a) + 1 / len(b)))
        best = max(best, abs(z))
    return best if best >= threshold else None


RULES = {"P1 interpolated (run whole)": lambda r: interp(r, True),
         "   interpolated (as the product)": lambda r: interp(r, False),
         "P2 rounded (rounding's chance)": lambda r: rounded(r, True),
         "   rounded (as the product)": lambda r: rounded(r, False),
         "P3 kink at 6": kink,
         "P3 kink at 10": lambda r: kink(r, 10.0)}


def series(frame, iso, latest):
    s = frame[(frame.iso == iso) & (frame.year <= latest)].sort_values("year")
    return s["pop"].to_numpy(float)[-72:]


def main():
    clean = json.loads(Path("/tmp/t124/clean_picks.json").read_text())
    fp = Counter()
    for cid, night in clean:
        iso = cid.replace("-", "_")
        raw = series(plants.CLEAN, iso, int(night[:4]) - 1)
        for name, rule in RULES.items():
            if rule(raw) is not None:
                fp[name] += 1
                if name.startswith("P") and "kink" not in name:
                    print("  clean doubt", name, cid, night)
    misses = json.loads(Path("/tmp/t124/misses.json").read_text())
    caught = {name: Counter() for name in RULES}
    per_kind = Counter()
    for kind, mag, label, ent, brk, night, _a, _ in misses:
        subtle, gross = plants.KINDS[kind]
        fn = dict(subtle + gross)[label]
        out = fn(plants.CLEAN.copy(), plants.CLEAN.iso == ent, plants.CLEAN.year, brk)
        raw = series(out, ent, int(night[:4]) - 1)
        per_kind[(kind, mag)] += 1
        for name, rule in RULES.items():
            if rule(raw) is not None:
                caught[name][(kind, mag)] += 1
    print(f"clean act-on picks {len(clean)}; plant-nights that reached act-on {len(misses)}")
    for name in RULES:
        by = ", ".join(f"{k} {m} {c}" for (k, m), c in caught[name].items())
        print(f"{name}: doubts {fp[name]} of {len(clean)} clean; catches {sum(caught[name].values())} of "
              f"{len(misses)} ({by})")


if __name__ == "__main__" and "--wider" not in sys.argv:
    main()


def score(raw):
    g1, g3 = raw[-1] / raw[-2] - 1, raw[-1] / raw[-4] - 1
    return 100 * (0.6 * min(1, max(0, (g3 - 0.03) / 0.09)) + 0.4 * min(1, max(0, (g1 - 0.01) / 0.03)))


def wider():
    """P1 and P2 against every clean entity-night (216 countries x 16 nights), not only act-on picks; and each
    missed plant-night's score moved from its clean score."""
    flags, n = Counter(), 0
    for night in range(2006, 2022):
        for _iso, g in plants.CLEAN[plants.CLEAN.year <= night - 1].groupby("iso"):
            raw = g.sort_values("year")["pop"].to_numpy(float)[-72:]
            if len(raw) < 35 or (raw <= 0).any():
                continue
            n += 1
            for name in ("P1 interpolated (run whole)", "   interpolated (as the product)",
                         "P2 rounded (rounding's chance)", "   rounded (as the product)"):
                if RULES[name](raw) is not None:
                    flags[name] += 1
    print(f"all clean entity-nights with 35+ years: {n}; flagged {dict(flags)}")
    moved = {}
    for kind, mag, label, ent, brk, night, _a, _ in json.loads(Path("/tmp/t124/misses.json").read_text()):
        fn = dict(plants.KINDS[kind][0] + plants.KINDS[kind][1])[label]
        out = fn(plants.CLEAN.copy(), plants.CLEAN.iso == ent, plants.CLEAN.year, brk)
        y = int(night[:4]) - 1
        change = score(series(out, ent, y)) - score(series(plants.CLEAN, ent, y))
        moved.setdefault((kind, mag), []).append(round(float(change), 1))
    for k, v in moved.items():
        print(" score moved by the missed plants:", k, v)


if __name__ == "__main__" and "--wider" in sys.argv:
    wider()
