"""Trial 126: three proposed class-level rules measured offline (numpy) on every clean entity-night, on the clean
act-on picks (clean_picks.json) and on the plant-nights that reached act-on (misses.json):
P1 the season lost or altered: each judged month's change (log, on the month before) less the entity's seasonal
   norm for that calendar month (the median change of that month over the 6 years before the judged months) and
   less the past's median of such deviations, projected on the norms over the latest k = 2..6 months, in robust sds
   of the past's deviations (sqrt of the sum of squared norms as the projection's scale): a feed seasonally
   adjusted from some month (deviations = -norm), adjusted twice, smoothed (a moving average damps the season) or
   widened by a part with another season. |z| >= Z flags; Z = 4, 6.
P2 the latest period revised on the next night's read: the figure a night read for its latest month against the
   figure the next night reads for that month (a one-vintage file cannot show it; the product's store of past
   nights can): counted where the previous night's latest figure was revised by more than 0.5% (beyond its
   rounding), and where the two previous nights' both were, in the same direction (a provisional feed).
P3 (`--flips`) the leave-one-month-out sensitivity of a seasonal sum: a left-out month imputed as the same month a
   year earlier times the ratio of the window's other months to theirs, not as the average of the others."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import plants

KMAX, YEARS = 6, 6


def robust(x):
    x = x[np.isfinite(x)]
    s = 1.4826 * np.median(np.abs(x - np.median(x))) if len(x) >= 6 else 0.0
    return s if s > 0 else None


def p1(v, t, latest):
    """max over k = 2..KMAX of |z_k| (signed) for the series v at month indices t, up to month `latest`."""
    keep = t <= latest
    v, t = v[keep], t[keep]
    x = np.log(np.maximum(v, 1e-9))
    dx, tm = np.diff(x), t[1:]
    past = (tm <= latest - KMAX) & (tm > latest - KMAX - 12 * YEARS)
    if past.sum() < 36:
        return None
    norm = np.full(12, np.nan)
    for m in range(12):
        sel = past & (tm % 12 == m)
        norm[m] = np.median(dx[sel])
    s = norm[tm % 12]
    d = dx - s
    mu = np.median(d[past])
    sd = robust(d[past] - mu)
    if sd is None:
        return None
    best = 0.0
    for k in range(2, KMAX + 1):
        j = slice(len(d) - k, None)
        scale = np.sqrt(np.sum(s[j] ** 2))
        z = np.sum((d[j] - mu) * s[j]) / (sd * scale)
        best = z if abs(z) > abs(best) else best
    return best


def break_z(v, t, b):
    """Why `level_shift` passed the break month (a provisional feed's: the night's latest; offline, approximately
    as `shifts._far` has it): its change in robust sds of the entity's period-on-period changes and of its changes
    against the same change a year earlier (72 months before the break); the rule takes the nearer of the two (4
    MADs where the score reads the month)."""
    x = np.log(np.maximum(v, 1e-9))
    dx = np.diff(x)
    tm = t[1:]
    seas = np.full(len(dx), np.nan)
    seas[12:] = dx[12:] - dx[:-12]
    past = (tm < b) & (tm >= b - 72)
    i = int(np.flatnonzero(tm == b)[0])
    pp, ss = robust(dx[past] - np.median(dx[past])), robust(seas[past])
    return abs(dx[i] - np.median(dx[past])) / pp, abs(seas[i]) / ss


def series(frame, ent):
    mine = (frame.kind == ent).to_numpy()
    return frame.departures.to_numpy(dtype=float)[mine], plants.T[mine]


def latest_of(night):
    return night.year * 12 + night.month - 1 - 2


def main() -> None:
    from datetime import date
    picks = [(c, date.fromisoformat(n)) for c, n in json.loads(Path("/tmp/t126/clean_picks.json").read_text())]
    misses = json.loads(Path("/tmp/t126/misses.json").read_text())
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import clean
    ents = sorted(plants.CLEAN.kind.unique())
    zs = {(e, n): p1(*series(plants.CLEAN, e), latest_of(n)) for e in ents for n in clean.NIGHTS}
    ok = {k: z for k, z in zs.items() if z is not None}
    pick_z = [zs[(c, n)] for c, n in picks if zs.get((c, n)) is not None]
    print(f"P1: clean entity-nights judged {len(ok)} of {len(zs)}; act-on picks judged {len(pick_z)} of {len(picks)}")
    for Z in (4, 6):
        print(f"  Z={Z}: clean entity-nights flagged {sum(abs(z) >= Z for z in ok.values())}, "
              f"clean act-on picks doubted {sum(abs(z) >= Z for z in pick_z)}")
    worst = sorted(ok.items(), key=lambda kv: -abs(kv[1]))[:5]
    print("  largest clean |z|:", [(e, str(n), round(z, 1)) for (e, n), z in worst])
    by, near = {}, {}
    for kind, mag, label, ent, b, _night, a, _clean in misses:
        fn = dict(plants.KINDS[kind][0] + plants.KINDS[kind][1])[label]
        z = p1(*series(plants.planted(fn, ent, b, b + a), ent), b + a)
        # P2: the previous night's read of its latest month (the plant as it stood then) against tonight's
        revised = []
        for back in (1, 2):
            if a - back + 1 <= 0:
                break
            then = plants.planted(fn, ent, b, b + a - back)
            now = plants.planted(fn, ent, b, b + a)
            vt, tt = series(then, ent)
            vn, _ = series(now, ent)
            m = tt == b + a - back
            revised.append(float(vn[m][0] / vt[m][0] - 1))
        two = (len(revised) >= 2 and all(r > 0.005 for r in revised)) or (len(revised) >= 2 and all(
            r < -0.005 for r in revised))
        at = b + a if kind == "latest month provisional" else b
        zp, zs_ = break_z(*series(plants.planted(fn, ent, b, b + a), ent), at)
        near.setdefault((kind, mag), []).append((zp, zs_))
        row = by.setdefault((kind, mag), [0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += z is not None and abs(z) >= 4
        row[2] += z is not None and abs(z) >= 6
        row[3] += bool(revised) and abs(revised[0]) > 0.005
        row[4] += two
    print("\n| kind | magnitude | misses | break month, MADs p-o-p / vs a year earlier (median) | P1 Z=4 | P1 Z=6 |"
          " P2 revised once | P2 twice alike |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    for (kind, mag), r in by.items():
        zp, zs_ = np.median(np.array(near[(kind, mag)]), axis=0)
        print(f"| {kind} | {mag} | {r[0]} | {zp:.1f} / {zs_:.1f} | " + " | ".join(map(str, r[1:])) + " |")
    tot = np.sum(list(by.values()), axis=0)
    print(f"| all | | {tot[0]} | | {' | '.join(map(str, tot[1:]))} |")


if __name__ == "__main__" and "--flips" not in sys.argv:
    main()


def p3_flips() -> None:
    """P3, offline: the leave-one-month-out sensitivity of a seasonal sum. The product imputes a left-out month as
    the average of the window's others (`verifications.logic.recompute_metric`); P3 imputes it as the same month a
    year earlier times the ratio of the window's other months to theirs a year earlier. Counts every clean
    entity-night whose verdict side (STRONG or not) some left-out month flips, each way."""
    import clean
    d = plants.CLEAN
    out = Counter()
    for n in clean.NIGHTS:
        L = latest_of(n)
        for ent in sorted(d.kind.unique()):
            v, t = series(d, ent)
            val = dict(zip(t.tolist(), v.tolist(), strict=True))
            win = {"dep_3m": (0, 2), "dep_3m_ago": (12, 14), "dep_12m": (0, 11), "dep_12m_ago": (12, 23)}
            if any(L - k not in val for k in range(0, 36)):
                continue
            base = {m: sum(val[L - k] for k in range(a, b + 1)) for m, (a, b) in win.items()}

            def score(x):
                g3, g12 = x["dep_3m"] / x["dep_3m_ago"] - 1, x["dep_12m"] / x["dep_12m_ago"] - 1
                s = 100 * (0.6 * min(max(g3 / 0.10, 0), 1) + 0.4 * min(max(g12 / 0.08, 0), 1))
                return s, x["dep_12m"] >= 20 and g3 > 0
            s0, ok = score(base)
            if not ok:
                continue
            strong = s0 >= 70
            flip = {"average": False, "seasonal": False}
            for m, (a, b) in win.items():
                ks = list(range(a, b + 1))
                for k in ks:
                    others = [j for j in ks if j != k]
                    avg = sum(val[L - j] for j in others) * len(ks) / len(others)
                    ratio = sum(val[L - j] for j in others) / sum(val[L - j - 12] for j in others)
                    seas = sum(val[L - j] for j in others) + val[L - k - 12] * ratio
                    for how, new in (("average", avg), ("seasonal", seas)):
                        s, _ = score({**base, m: new})
                        flip[how] |= (s >= 70) != strong
            out[("STRONG" if strong else "not STRONG", flip["average"], flip["seasonal"])] += 1
    print("\nP3 leave-one-month-out, clean entity-nights (side, flips with the average, flips with the season):")
    for k, x in sorted(out.items()):
        print("  ", k, x)


if __name__ == "__main__" and "--flips" in sys.argv:
    p3_flips()
