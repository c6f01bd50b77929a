"""Trial 139: two proposed rules measured offline over `plants.py`'s plant-nights and the clean design nights
(`clean.py`), no verdict code changed. Reads /tmp/t139/plants.json and /tmp/t139/clean.json.

R1 `revised`: tonight's rows of the entity against the rows the previous month-end night published, over the periods
both nights saw within the score's 15-month span (the anchor's 0..14 months back as of last night): a figure of
sales, volume, median, listings or inventory revised by more than the pack's measurement band (`uncertainty`, 5%),
or a period's rows added or dropped, doubts (the latest month was a preliminary figure; every later latest month may
be too). Needs last night's rows (the archive's candidate history, or a source's vintages).

R2 `feed_step`: a step across the whole feed in a column the score reads (sales): per market the year-over-year log
change of each month, its median over the night's markets (>= 10) Y(t); the step at t is the mean of Y over t..t+2
less over t-3..t-1; its z against the steps before the score's span (median, 1.4826 MAD; >= 24 of them); a step of
|z| >= Z in the span (a definitional change of the feed, every market at once) doubts every candidate of the night.

Also prints, for each plant-night reaching act-on, the clean and planted score (is the defect material?).

    PYTHONPATH=. .venv/bin/python bench/data/trial139/rules.py
"""
from __future__ import annotations

import importlib.util
import json
import sys
import warnings
from collections import Counter, defaultdict
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import judged, with_source  # noqa: E402
from bench.unseen_plants import period  # noqa: E402
from opportunity_assets.candidates.logic import candidate_id  # noqa: E402
from opportunity_assets.sources.snapshot import read_snapshot  # noqa: E402
from tests.plants import write_source  # noqa: E402

_spec = importlib.util.spec_from_file_location("trial139_plants", HERE / "plants.py")
P = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(P)

COLUMNS = ("sales", "volume", "median", "listings", "inventory")
BAND = 0.05
ZS = (4.0, 5.0, 6.0, 8.0)
_anchor: dict[date, date] = {}


def anchor(as_of: date) -> date:
    if as_of not in _anchor:
        _anchor[as_of] = read_snapshot(P.PACK, as_of).anchor_period
    return _anchor[as_of]


def previous_night(as_of: date) -> date:
    return as_of.replace(day=1) - timedelta(days=1)


def rows(frame: pl.DataFrame, entity: str, first: date, last: date) -> dict[date, list[tuple]]:
    out: dict[date, list[tuple]] = {}
    for r in frame.filter((pl.col("city") == entity) & (period >= first) & (period <= last)).iter_rows(named=True):
        out.setdefault(date(r["year"], r["month"], 1), []).append(tuple(r[c] for c in COLUMNS))
    return {k: sorted(v, key=repr) for k, v in out.items()}


def revision(tonight: pl.DataFrame, last_night: pl.DataFrame, entity: str, as_of: date) -> float:
    """R1's statistic: the largest relative revision (inf where a period's rows were added or dropped)."""
    seen = anchor(previous_night(as_of))
    first = P._shift(seen, -14)
    old, new = rows(last_night, entity, first, seen), rows(tonight, entity, first, seen)
    worst = 0.0
    for p in old.keys() | new.keys():
        a, b = old.get(p, []), new.get(p, [])
        if len(a) != len(b):
            return float("inf")
        for ra, rb in zip(a, b, strict=True):
            for x, y in zip(ra, rb, strict=True):
                if x is None or y is None:
                    worst = max(worst, 0.0 if x is y else float("inf"))
                elif x != y:
                    worst = max(worst, abs(y / x - 1) if x else float("inf"))
    return worst


def feed_z(frame: pl.DataFrame, as_of: date, w: int = 3) -> float:
    """R2's statistic: the largest |z| of a feed-wide step of sales in the score's span."""
    last = anchor(as_of)
    f = frame.filter(period <= last).select("city", "year", "month", "sales")
    cities = sorted(f["city"].unique().to_list())
    index = {c: i for i, c in enumerate(cities)}
    months = (last.year - 2000) * 12 + last.month
    x = np.full((len(cities), months), np.nan)
    for c, y, m, v in f.iter_rows():
        if v is not None and v > 0:
            x[index[c], (y - 2000) * 12 + m - 1] = v
    logs = np.log(x)
    yoy = np.full_like(logs, np.nan)
    yoy[:, 12:] = logs[:, 12:] - logs[:, :-12]
    counts = np.isfinite(yoy).sum(0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        med = np.where(counts >= 10, np.nanmedian(yoy, axis=0), np.nan)
        steps = np.full(months, np.nan)
        for t in range(w, months - w + 1):
            steps[t] = np.nanmean(med[t:t + w]) - np.nanmean(med[t - w:t])
    span = months - 14  # the score's span: its earliest change
    past = steps[:span][np.isfinite(steps[:span])]
    if len(past) < 24:
        return 0.0
    centre = float(np.median(past))
    spread = 1.4826 * float(np.median(np.abs(past - centre)))
    now = steps[span:][np.isfinite(steps[span:])]
    return float(np.max(np.abs(now - centre)) / spread) if len(now) and spread > 0 else 0.0


def noise() -> None:
    """The yardsticks the diagnosis quotes: each planted market's robust sd (1.4826 MAD) of its log change less the
    same month's a year before (design rows), and the feed step's robust sd and largest |z| over the design rows."""
    design = P.CLEAN.filter(pl.col("year") <= 2009)
    for entity, _ in P.PICKS:
        g = design.filter(pl.col("city") == entity).sort("year", "month")
        sds = []
        for c in ("sales", "listings", "inventory"):
            d = np.diff(np.log(g[c].to_numpy().astype(float)))
            adj = d[12:] - d[:-12]
            sds.append(f"{c} {1.4826 * np.nanmedian(np.abs(adj - np.nanmedian(adj))):.3f}")
        print(f"noise {entity}: seasonal-adjusted log change robust sd " + ", ".join(sds))
    print(f"feed step over all design rows (the anchor 2009-12): largest |z| {feed_z(design, date(2009, 12, 31)):.1f}"
          " in the span 2008-10..2009-12")


def main() -> None:
    noise()
    plants = json.loads(Path("/tmp/t139/plants.json").read_text())
    clean_picks = json.loads(Path("/tmp/t139/clean.json").read_text())
    fns = {(kind, mag): fn for kind, variants in P.KINDS.items()
           for mag, (_, fn) in zip(("subtle", "GROSS"), variants, strict=True)}
    cache: dict = {}

    def planted(kind: str, mag: str, entity: str, start: date, latest: date) -> pl.DataFrame:
        key = (kind, mag, entity, latest if kind in P.VINTAGE else None)
        if key not in cache:
            cache[key] = fns[kind, mag](P.CLEAN, entity, start, latest)
        return cache[key]

    # -- clean cost: R1 compares the one clean file with itself (no vintages): 0 revisions by construction
    clean_feed = {d: feed_z(P.CLEAN, date.fromisoformat(d)) for d in sorted({c[0] for c in clean_picks})}
    print(f"clean design act-on picks (quiet): {len(clean_picks)}, doubted by today's checks: "
          f"{sum(c[2] != 'act_on_these' for c in clean_picks)}")
    for z in ZS:
        flagged = [c for c in clean_picks if clean_feed[c[0]] >= z]
        new = [c for c in flagged if c[2] == "act_on_these"]
        nights = sorted({c[0] for c in flagged})
        print(f"R2 at |z| >= {z:g}: clean picks flagged {len(flagged)}, newly doubted {len(new)} of {len(clean_picks)}"
              f" ({len(new) / len(clean_picks):.1%}); nights {nights}")
    print("R1: clean picks newly doubted 0 (the bundled file has one vintage: no night revises another's rows)")

    tally: dict = defaultdict(Counter)
    tmp = Path("/tmp/t139/rules_planted.csv")
    for kind, mag, _label, entity, start_s, k, as_of_s, _quiet, reached, _fired in plants:
        start, as_of = date.fromisoformat(start_s), date.fromisoformat(as_of_s)
        t = tally[(kind, mag)]
        t["nights"] += 1
        t["reached"] += reached
        tonight = planted(kind, mag, entity, start, anchor(as_of))
        last_night = planted(kind, mag, entity, start, anchor(previous_night(as_of)))
        r1 = revision(tonight, last_night, entity, as_of) > BAND
        fz = feed_z(tonight, as_of)
        t["R1 any"] += r1
        t["R1 new"] += r1 and reached
        for z in ZS:
            t[f"R2@{z:g} new"] += fz >= z and reached
        if reached:
            write_source(tonight, str(tmp))
            a_planted, _ = judged(with_source(P.PACK, tmp), as_of, candidate_id(entity))
            a_clean, _ = judged(P.PACK, as_of, candidate_id(entity))
            print(f"  miss {kind} {mag} {entity} +{k} {as_of}: score clean {a_clean.score:.1f} planted "
                  f"{a_planted.score:.1f}; R1 {'catches' if r1 else '-'}; feed z {fz:.1f}", flush=True)
    print("\n| kind | magnitude | plant-nights | reached act-on | R1 catches (new) | R2 catches new at z>=4/5/6/8 |")
    print("|---|---|---:|---:|---:|---|")
    for (kind, mag), t in tally.items():
        print(f"| {kind} | {mag} | {t['nights']} | {t['reached']} | {t['R1 new']} (flags {t['R1 any']}) | "
              + "/".join(str(t[f'R2@{z:g} new']) for z in ZS) + " |")
    total = sum(t["reached"] for t in tally.values())
    print(f"\nreached {total}; R1 keeps out {sum(t['R1 new'] for t in tally.values())}; R2 keeps out "
          + ", ".join(f"{sum(t[f'R2@{z:g} new'] for t in tally.values())} at {z:g}" for z in ZS))


if __name__ == "__main__":
    main()
