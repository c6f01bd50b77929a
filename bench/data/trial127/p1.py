"""Trial 127: trial 126's proposed rule P1 ("the season lost or altered") ported as it stands (Z = 6, k = 2..6, norms
over the 6 years before the judged periods; nothing tuned) and measured offline on the bundled packs' DESIGN nights
only (held-out nights are never read):

    check126  the port against trial 126's own `rules.p1` on its clean entity-nights and plant-nights (needs pandas and
              trial 126's plants.py output /tmp/t126/misses.json copied to /tmp/t127/t126_misses.json; the clean
              act-on picks are made in-process as trial 126's clean.py makes them)
    texas     every design month-end night 2003-01..2009-12: P1 on sales, volume, median, listings, inventory of every
              entity's history known that night; clean act-on picks (STRONG + CONFIRMED without the checks' effects,
              `bench.planted.clean_picks`) doubted, clean entity-nights flagged
    aus       the same on the Australian accommodation pack (Takings, Occupancy, CPI; quarterly; design month-end
              nights 2001-01..2009-12, as bench/planted_domains.py takes them)
    nyc       NYC routes: the clean act-on picks over the design Sundays 2013-03-03..2013-06-30 (P1 cannot judge a
              route: one year of weeks gives no prior year for a seasonal norm)
    plants    3 Texas markets act-on on the design nights 2004-01, 2005-01, 2006-01 (`markets_`), planted from that
              night's latest month: a 3-month moving average in place of the month, a seasonal adjustment switched on
              (each month divided by its calendar month's mean factor over the 5 years before), each in sales alone
              and in sales + volume, and `level_shift` x0.9 / x1.15 on median; nights +0, +1, +3: P1 on the planted
              history and the plant-night's fate today (`bench.planted.night_fates`)

    PYTHONPATH=. .venv/bin/python bench/data/trial127/p1.py texas|aus|nyc|plants
    PYTHONPATH=.:/tmp/t127v/lib/python3.11/site-packages .venv/bin/python bench/data/trial127/p1.py check126

The port differs from trial 126's only where trial 126's data could not show it: a period's gaps (the Texas file has
empty figures) stay gaps on a full grid of periods, so a change next to a gap is NaN and left out of the norms, the
past's spread and any run of k that holds it; the past needs half its span of finite changes (36 of 72 months, as
trial 126 counts; 12 of 24 quarters); the season is the calendar month (Texas) or quarter (Australia). On gap-free
monthly data the two give the same number (`check126`).
"""
from __future__ import annotations

import sys
import tempfile
import time
from calendar import monthrange
from collections import Counter, defaultdict
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from bench.planted import DESIGN, clean_picks, first_night_seeing, night_fates, with_source  # noqa: E402
from opportunity_assets.candidates.logic import candidate_id  # noqa: E402
from opportunity_assets.criteria import CriteriaPack, load_criteria  # noqa: E402
from opportunity_assets.night import nights_between  # noqa: E402
from opportunity_assets.periods import MONTH  # noqa: E402
from opportunity_assets.verifications.series import decimals  # noqa: E402
from tests.plants import Plant, plant, read_source, write_source  # noqa: E402

KMAX, YEARS, Z = 6, 6, 6.0
PACKS = ROOT / "data" / "criteria"
MISSES = "/tmp/t127/t126_misses.json"   # trial 126's plants.py output (/tmp/t126/misses.json), copied


def robust(x: np.ndarray) -> float | None:
    x = x[np.isfinite(x)]
    s = 1.4826 * float(np.median(np.abs(x - np.median(x)))) if len(x) >= 6 else 0.0
    return s if s > 0 else None


def p1(v: np.ndarray, t: np.ndarray, latest: int, season: int = 12) -> float | None:
    """Trial 126's P1: the largest |z| (signed) over k = 2..KMAX for the series v (NaN a gap) at period indices t
    (ascending), as known up to period `latest`; `season` periods a year. None where the past is too short or flat."""
    keep = t <= latest
    v, t = v[keep], t[keep]
    if len(t) == 0:
        return None
    grid = np.arange(int(t[0]), latest + 1)
    full = np.full(len(grid), np.nan)
    full[t - t[0]] = v
    x = np.log(np.maximum(full, 1e-9))
    dx, tm = np.diff(x), grid[1:]
    past = (tm <= latest - KMAX) & (tm > latest - KMAX - season * YEARS)
    if np.isfinite(dx[past]).sum() < season * YEARS // 2:
        return None
    norm = np.full(season, np.nan)
    for m in range(season):
        sel = dx[past & (tm % season == m)]
        sel = sel[np.isfinite(sel)]
        if len(sel):
            norm[m] = np.median(sel)
    s = norm[tm % season]
    d = dx - s
    dp = d[past]
    dp = dp[np.isfinite(dp)]
    if len(dp) == 0:
        return None
    mu = float(np.median(dp))
    sd = robust(dp - mu)
    if sd is None:
        return None
    best: float | None = None
    for k in range(2, KMAX + 1):
        j = slice(len(d) - k, None)
        if not (np.isfinite(d[j]).all() and np.isfinite(s[j]).all()):
            continue
        scale = float(np.sqrt(np.sum(s[j] ** 2)))
        if scale == 0:
            continue
        z = float(np.sum((d[j] - mu) * s[j]) / (sd * scale))
        best = z if best is None or abs(z) > abs(best) else best
    return best


# --- the packs' histories as numpy series ---------------------------------------------------------------------

def month_end(y: int, m: int) -> date:
    return date(y, m, monthrange(y, m)[1])


class Panel:
    """A pack's source as per-entity period-indexed series; `index` maps a row to its period index, `end` a period
    index to the period's last day (for the publication lag)."""

    def __init__(self, frame: pl.DataFrame, entity: str, columns: list[str], season: int, lag: int) -> None:
        self.season, self.lag, self.columns = season, lag, columns
        if season == 12:
            idx = (frame["year"] * 12 + frame["month"] - 1).to_numpy()
        else:
            d = frame["Date"]
            idx = (d.str.slice(0, 4).cast(pl.Int32) * 4 + d.str.slice(-1).cast(pl.Int32) - 1).to_numpy()
        self.series: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]] = {}
        ents = frame[entity].to_numpy()
        for e in np.unique(ents):
            mine = ents == e
            order = np.argsort(idx[mine])
            self.series[candidate_id(str(e))] = (
                idx[mine][order],
                {c: frame[c].cast(pl.Float64).fill_null(np.nan).to_numpy()[mine][order] for c in columns})

    def end(self, t: int) -> date:
        if self.season == 12:
            return month_end(t // 12, t % 12 + 1)
        return month_end(t // 4, (t % 4) * 3 + 3)

    def latest(self, as_of: date) -> int:
        """The night's latest published period (the snapshot's anchor: its end + the lag on or before as_of)."""
        t = as_of.year * self.season + ((as_of.month - 1) if self.season == 12 else (as_of.month - 1) // 3)
        while self.end(t) + timedelta(days=self.lag) > as_of:
            t -= 1
        return t

    def zs(self, cid: str, latest: int) -> dict[str, float | None]:
        t, cols = self.series[cid]
        return {c: p1(cols[c], t, latest, self.season) for c in self.columns}


def texas_panel(frame: pl.DataFrame | None = None) -> Panel:
    pack = load_criteria(str(PACKS / "texas_housing.yaml"))
    f = frame if frame is not None else read_source(str(pack.source_path))
    return Panel(f, "city", list(pack.source.columns), 12, pack.source.publication_lag_days)


def measure(name: str, pack: CriteriaPack, panel: Panel, nights: list[date]) -> None:
    started = time.perf_counter()
    assert pack.outcome is not None and pack.outcome.design_until is not None
    assert max(nights) <= pack.outcome.design_until, "design nights only"
    print(f"## {name}: {len(nights)} design nights {nights[0]}..{nights[-1]}, columns {panel.columns}", flush=True)
    zs: dict[tuple[str, date], dict[str, float | None]] = {}
    for n in nights:
        L = panel.latest(n)
        for cid in panel.series:
            zs[cid, n] = panel.zs(cid, L)
    judged = {k: z for k, z in zs.items() if any(v is not None for v in z.values())}
    flagged = {k: z for k, z in judged.items() if any(v is not None and abs(v) >= Z for v in z.values())}
    z4 = sum(any(v is not None and abs(v) >= 4 for v in z.values()) for z in judged.values())
    print(f"P1 clean entity-nights: judged {len(judged)} of {len(zs)}; flagged (|z| >= {Z:g} on any column) "
          f"{len(flagged)} of {len(judged)}  [for scale only, |z| >= 4: {z4}]")
    per_col = Counter(c for z in flagged.values() for c, v in z.items() if v is not None and abs(v) >= Z)
    print("  flags by column:", dict(per_col))
    for (cid, n), z in sorted(flagged.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        hit = {c: round(v, 1) for c, v in z.items() if v is not None and abs(v) >= Z}
        print(f"  flagged {cid} on {n} (latest period {panel.end(panel.latest(n))}): {hit}")
    worst = sorted(((abs(v), cid, str(n), c, round(v, 1)) for (cid, n), z in judged.items()
                    for c, v in z.items() if v is not None), reverse=True)[:8]
    print("  largest clean |z|:", [w[1:] for w in worst], flush=True)
    picks, doubted = clean_picks(pack, nights, sections=False, on_night=lambda n: None)
    pj = [(c, n) for c, n in picks if (c, n) in judged]
    pf = [(c, n) for c, n in pj if (c, n) in flagged]
    print(f"\nclean act-on picks {len(picks)} (the checks today doubt {doubted.get('', 0)}); P1 judged {len(pj)}, "
          f"P1 doubted {len(pf)} of {len(picks)}: {[(c, str(n), flagged[c, n]) for c, n in pf]}")
    print("  picks doubted by column:", dict(Counter(c for k in pf for c, v in flagged[k].items()
                                                    if v is not None and abs(v) >= Z)))
    pz = sorted(((abs(v), c, str(n), col, round(v, 1)) for c, n in pj for col, v in zs[c, n].items()
                 if v is not None), reverse=True)[:5]
    print("  largest |z| among the picks:", [w[1:] for w in pz])
    print(f"({time.perf_counter() - started:.0f} s)\n", flush=True)


def texas() -> None:
    pack = load_criteria(str(PACKS / "texas_housing.yaml"))
    measure("Texas", pack, texas_panel(), nights_between(*DESIGN, "month-end"))


def aus() -> None:
    pack = load_criteria(str(PACKS / "aus_accommodation.yaml"))
    frame = pl.read_csv(str(pack.source_path))
    panel = Panel(frame, "State", list(pack.source.columns), 4, pack.source.publication_lag_days)
    measure("Australian accommodation", pack, panel, nights_between(date(2001, 1, 31), date(2009, 12, 31),
                                                                      "month-end"))


def nyc() -> None:
    pack = load_criteria(str(PACKS / "nyc_routes.yaml"))
    first = date(2013, 3, 3)
    nights = [first + timedelta(days=7 * i) for i in range(18)]
    assert pack.outcome is not None and pack.outcome.design_until is not None
    assert max(nights) <= pack.outcome.design_until
    started = time.perf_counter()
    picks, doubted = clean_picks(pack, nights, sections=False)
    print(f"## NYC routes: {len(nights)} design Sundays {nights[0]}..{nights[-1]}: clean act-on picks {len(picks)} "
          f"(the checks today doubt {doubted.get('', 0)}); P1 judges none (weeks of 2013 only: a seasonal norm needs "
          f"the same week in earlier years, and the past {YEARS // 2}+ years of them) -> doubted 0 of {len(picks)} "
          f"({time.perf_counter() - started:.0f} s)")


# --- plants into Texas --------------------------------------------------------------------------------------------

def _rewrite(frame: pl.DataFrame, city: str, columns: tuple[str, ...], b: int, how: str) -> pl.DataFrame:
    """`how` = "ma3": each month from the break the average of it and the two before (as first written);
    "sa": each month from the break divided by its calendar month's factor, the mean over the 5 years before the
    break of the month's ratio to its year's mean, the factors normed to average 1 (trial 126's `seasonal(1)`).
    Written with the column's decimals."""
    mine = (frame["city"] == city).to_numpy()
    t = (frame["year"] * 12 + frame["month"] - 1).to_numpy()[mine]
    order = np.argsort(t)
    t = t[order]
    out = frame
    for c in columns:
        col = frame[c].cast(pl.Float64).fill_null(np.nan).to_numpy()
        v = col[mine][order]
        if how == "ma3":
            pos = {int(x): i for i, x in enumerate(t)}
            new = np.array([np.mean([v[pos[x - j]] if x - j in pos else np.nan for j in range(3)]) if x >= b else v[i]
                            for i, x in enumerate(t)])
        else:
            past = (t < b) & (t >= b - 60)
            year_mean = {y: np.nanmean(v[past & (t // 12 == y)]) for y in np.unique(t[past] // 12)}
            ratio = v[past] / np.array([year_mean[y] for y in t[past] // 12])
            sf = np.array([np.nanmean(ratio[t[past] % 12 == m]) for m in range(12)])
            sf = sf / sf.mean()
            new = np.where(t >= b, v / sf[t % 12], v)
        places = decimals(col[np.isfinite(col)], 6)
        new = np.round(new, places if places is not None else 6)
        full = col.copy()
        idx = np.flatnonzero(mine)[order]
        full[idx] = new
        out = out.with_columns(pl.Series(c, full).fill_nan(None).cast(frame.schema[c]))
    return out


def markets_() -> list[tuple[str, date]]:
    """3 markets in "Act on these" on clean data (with the checks), the first by id on the design nights 2004-01,
    2005-01, 2006-01 (P1 needs 3 years of changes 6 months before the judged month: the file starts 2000-01, so
    nights before 2003-08 are not judged), each broken from that night's latest month. Chosen on the fates alone."""
    pack = load_criteria(str(PACKS / "texas_housing.yaml"))
    names = {candidate_id(e): e for e in read_source(str(pack.source_path))["city"].unique().to_list()}
    panel = texas_panel()
    chosen: list[tuple[str, date]] = []
    for night in (date(2004, 1, 31), date(2005, 1, 31), date(2006, 1, 31)):
        fates = night_fates(pack, night)
        L = panel.latest(night)
        cid = next(c for c, f in sorted(fates.items())
                   if f.section == "act_on_these" and names[c] not in {e for e, _ in chosen})
        chosen.append((names[cid], date(L // 12, L % 12 + 1, 1)))
    return chosen


def plants_() -> None:
    started = time.perf_counter()
    pack = load_criteria(str(PACKS / "texas_housing.yaml"))
    clean = read_source(str(pack.source_path))
    markets = markets_()
    cpanel = texas_panel(clean)
    print("## Texas plants: markets " + ", ".join(f"{e} from {m:%Y-%m}" for e, m in markets), flush=True)
    kinds: list[tuple[str, Any]] = []
    for cols in (("sales",), ("sales", "volume")):
        kinds.append((f"3-month moving average in {'+'.join(cols)}",
                      lambda f, e, b, cols=cols: _rewrite(f, e, cols, b, "ma3")))
        kinds.append((f"seasonal adjustment switched on in {'+'.join(cols)}",
                      lambda f, e, b, cols=cols: _rewrite(f, e, cols, b, "sa")))
    for mag in (0.9, 1.15):
        kinds.append((f"level_shift x{mag:g} on median",
                      lambda f, e, b, mag=mag: plant(f, Plant("level_shift", e, ("median",), b, mag))))
    tally: dict[str, Counter[str]] = defaultdict(Counter)
    with tempfile.TemporaryDirectory() as tmp:
        for label, fn in kinds:
            for city, month in markets:
                b = month.year * 12 + month.month - 1
                f = fn(clean, city, month) if label.startswith("level") else fn(clean, city, b)
                path = Path(tmp) / "planted.csv"
                write_source(f, str(path))
                planted = with_source(pack, path)
                panel = texas_panel(f)
                cid = candidate_id(city)
                first = first_night_seeing(month, pack.source.publication_lag_days)
                for k in (0, 1, 3):
                    as_of = nights_between(MONTH.back(first, -k), MONTH.back(first, -k - 1), "month-end")[0]
                    assert as_of <= DESIGN[1]
                    z = panel.zs(cid, panel.latest(as_of))
                    hit = {c: round(v, 1) for c, v in z.items() if v is not None and abs(v) >= Z}
                    zc = cpanel.zs(cid, cpanel.latest(as_of))
                    was = {c: round(v, 1) for c, v in zc.items() if v is not None and abs(v) >= Z}
                    fate = night_fates(planted, as_of, {cid}).get(cid)
                    section = fate.section if fate else "absent"
                    row = tally[label]
                    row["nights"] += 1
                    row["p1"] += bool(hit)
                    row["p1 clean too"] += bool(was)
                    row["act-on"] += section == "act_on_these"
                    row["act-on, p1"] += section == "act_on_these" and bool(hit)
                    row["quiet act-on"] += fate is not None and fate.quiet_section == "act_on_these"
                    zs = {c: None if v is None else round(v, 1) for c, v in z.items()}
                    print(f"  {label} | {city} from {month:%Y-%m} | {as_of} | {section} "
                          f"{list(fate.rules) if fate else ''} | P1 {'FLAG ' + str(hit) if hit else 'no'} | {zs}"
                          f" | clean that night: {'FLAG ' + str(was) if was else 'no'}",
                          flush=True)
    print("\n| plant | plant-nights | P1 flags (the clean night flagged too) | act-on today (without the checks) |"
          " act-on today and P1 flags |")
    print("|---|---:|---:|---:|---:|")
    for label, r in tally.items():
        print(f"| {label} | {r['nights']} | {r['p1']} ({r['p1 clean too']}) | {r['act-on']} ({r['quiet act-on']}) |"
              f" {r['act-on, p1']} |")
    tot: Counter[str] = sum(tally.values(), Counter())
    print(f"| all | {tot['nights']} | {tot['p1']} ({tot['p1 clean too']}) | {tot['act-on']} ({tot['quiet act-on']}) |"
          f" {tot['act-on, p1']} |")
    print(f"({time.perf_counter() - started:.0f} s)")


def check126() -> None:
    """The port's z against trial 126's `rules.p1` on its 755 clean entity-nights and its 125 plant-nights."""
    sys.path.insert(0, str(HERE.parent / "trial126"))
    import json

    import clean as c126
    import plants as pl126
    import rules as r126
    diffs: list[float] = []
    n = 0
    mine_flags: set[tuple[str, date]] = set()
    theirs_flags: set[tuple[str, date]] = set()
    for e in sorted(pl126.CLEAN.kind.unique()):
        v, t = r126.series(pl126.CLEAN, e)
        for night in c126.NIGHTS:
            a, b = r126.p1(v, t, r126.latest_of(night)), p1(v, t, r126.latest_of(night))
            assert (a is None) == (b is None), (e, night)
            if a is not None and b is not None:
                n += 1
                diffs.append(abs(a - b))
                if abs(a) >= Z:
                    theirs_flags.add((e, night))
                if abs(b) >= Z:
                    mine_flags.add((e, night))
    picks, _ = clean_picks(c126.PACK, c126.NIGHTS, sections=False)   # in-process: /tmp/t126 is shared
    print(f"clean: {n} entity-nights judged by both, max |z difference| {max(diffs):.2e}; flagged at Z=6: trial 126 "
          f"{len(theirs_flags)}, port {len(mine_flags)}, the same ones: {theirs_flags == mine_flags}; act-on picks "
          f"doubted: trial 126 {len(theirs_flags & set(picks))} of {len(picks)}, port {len(mine_flags & set(picks))}")
    misses = json.loads(Path(MISSES).read_text())
    caught = [0, 0]
    for kind, _mag, label, ent, b, _night, a_, _clean in misses:
        fn = dict(pl126.KINDS[kind][0] + pl126.KINDS[kind][1])[label]
        v, t = r126.series(pl126.planted(fn, ent, b, b + a_), ent)
        za, zb = r126.p1(v, t, b + a_), p1(v, t, b + a_)
        caught[0] += za is not None and abs(za) >= Z
        caught[1] += zb is not None and abs(zb) >= Z
    print(f"plant-nights reaching act-on: {len(misses)}; caught at Z=6: trial 126 {caught[0]}, port {caught[1]}")


if __name__ == "__main__":
    {"texas": texas, "aus": aus, "nyc": nyc, "plants": plants_, "check126": check126}[sys.argv[1]]()
