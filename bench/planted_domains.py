"""Planted defects in the other bundled domains: does the skeptic's default reach a new domain without tuning?

    .venv/bin/python bench/planted_domains.py [--domain aus_accommodation|nyc_routes|both] [--entities 4]

`bench/planted.py` measures the Texas pack, whose integrity rules were designed on it. Here the same question is asked
of the two other bundled packs, which declare no identity and (but for `nyc_routes`'s level shifts, a note) keep every
default: a quarterly panel (Australian accommodation, CSV) and weekly events aggregated by the pack (New York flights by
route, Parquet). Defects are planted into a copy of the source file itself, from a period in which the entity was in
"Act on these" on clean data (that night's latest period) onwards: for the panel, each numeric column shifted, spiked,
frozen, lagged, written as a sentinel or as text, or in another unit in every row; for the events, a route's flights
loaded twice or three times, a day of every route's exported twice, half of them dropped, another route's counted as its
own, delays in seconds, or halved. The night that first sees the break and later ones run through the same scan,
analyze, verify and route code the assets call (`planted.night_fates`). Prints each planted entity-night that reached
act-on, a table per kind, and the false-doubt rate on clean data (clean act-on picks the checks turned UNCERTAIN or
REJECTED) over the design period. Design period only (each pack's `outcome.design_until`): the held-out nights are not
used.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.planted import false_doubt, night_fates, with_source
from opportunity_assets.candidates.logic import candidate_id
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.night import nights_between
from opportunity_assets.sources.snapshot import read_snapshot
from resources.criteria import DEFAULT_PACK

Planter = Callable[[pl.DataFrame, pl.Expr, pl.Expr], pl.DataFrame]
"""(frame, the entity's rows from the break on, the entity's rows at the break) -> the frame with the plant."""


@dataclass(frozen=True)
class Domain:
    pack: str
    period: pl.Expr
    """Each source row's period start (a date)."""
    entity: str
    """The source's entity column (its values upper-cased give nothing: matched as the candidate's id)."""
    nights: Callable[[date, date], list[date]]
    """The nights over a span."""
    design: tuple[date, date]
    """The nights picks and the false-doubt rate are taken from: the pack's design period, once the entities have
    a few years (quarters) or two months (weeks) of history."""
    later: tuple[int, ...]
    """Nights judged, counted in the pack's nights after the one a pick was found on."""
    plants: dict[str, Planter]
    writer: Callable[[pl.DataFrame, Path], None]
    suffix: str


def _shift(column: str, factor: float) -> Planter:
    return lambda f, after, at: f.with_columns(pl.when(after).then(pl.col(column) * factor).otherwise(pl.col(column)))


def _spike(column: str, factor: float) -> Planter:
    return lambda f, after, at: f.with_columns(pl.when(at).then(pl.col(column) * factor).otherwise(pl.col(column)))


def _sentinel(column: str, value: float) -> Planter:
    return lambda f, after, at: f.with_columns(pl.when(at).then(pl.lit(value)).otherwise(pl.col(column)).alias(column))


def _throughout(column: str, factor: float, entity: str) -> Planter:
    def plant(f: pl.DataFrame, after: pl.Expr, at: pl.Expr) -> pl.DataFrame:
        mine = pl.col(entity) == f.filter(at)[entity][0]
        return f.with_columns(pl.when(mine).then(pl.col(column) * factor).otherwise(pl.col(column)))
    return plant


def _frozen(column: str, periods: int, entity: str, period: pl.Expr) -> Planter:
    def plant(f: pl.DataFrame, after: pl.Expr, at: pl.Expr) -> pl.DataFrame:
        ordered = f.with_columns(__p=period).sort("__p")
        broken = ordered.filter(at)
        last = ordered.filter((pl.col(entity) == broken[entity][0]) & (pl.col("__p") < broken["__p"][0]))[column][-1]
        stuck = after & (pl.col("__p").rank("dense").over(after) <= periods)  # the first `periods` from the break
        return ordered.with_columns(pl.when(stuck).then(pl.lit(last)).otherwise(pl.col(column)).alias(column)
                                    ).drop("__p")
    return plant


def _lagged(column: str, periods: int, entity: str, period: pl.Expr) -> Planter:
    def plant(f: pl.DataFrame, after: pl.Expr, at: pl.Expr) -> pl.DataFrame:
        ordered = f.with_columns(__p=period).sort("__p")
        earlier = pl.col(column).shift(periods).over(entity, order_by="__p")
        return ordered.with_columns(pl.when(after).then(earlier).otherwise(pl.col(column)).alias(column)).drop("__p")
    return plant


def _as_text(column: str) -> Planter:
    return lambda f, after, at: f.with_columns(
        pl.when(at).then(pl.lit("n/a?")).otherwise(pl.col(column).cast(pl.String)).alias(column))


def _loaded(times: int) -> Planter:
    return lambda f, after, at: pl.concat([f, *[f.filter(after)] * (times - 1)])


def _day_twice(f: pl.DataFrame, after: pl.Expr, at: pl.Expr) -> pl.DataFrame:
    """The first day of the break's week exported twice, for every route (a feed's export of a day run again)."""
    day = f.filter(at).select(pl.col("date").min()).item()
    return pl.concat([f, f.filter(pl.col("date") == day)])


def _dropped(keep_every: int) -> Planter:
    return lambda f, after, at: f.filter(~after | (pl.int_range(pl.len()) % keep_every == 0))


def _reassigned(share: float) -> Planter:
    """Another route's flights counted as this one's from the break on (a route recoded, two ids merged): the route
    whose flights in the 8 weeks before the break are nearest `share` of this one's."""
    def plant(f: pl.DataFrame, after: pl.Expr, at: pl.Expr) -> pl.DataFrame:
        mine, start = f.filter(at)["route"][0], f.filter(at).select(_NYC_PERIOD.min()).item()
        weeks = _NYC_PERIOD.is_between(start - timedelta(weeks=8), start, closed="left")
        before = f.filter(weeks).group_by("route").len()
        sizes = dict(before.iter_rows())
        donor = min((r for r in sizes if r != mine), key=lambda r: (abs(sizes[r] - share * sizes[mine]), r))
        moved = (pl.col("route") == donor) & _NYC_PERIOD.ge(start)
        return f.with_columns(pl.when(moved).then(pl.lit(mine)).otherwise(pl.col("route")).alias("route"))
    return plant


_AUS_PERIOD = pl.date(pl.col("Date").str.slice(0, 4).cast(pl.Int32),
                      (pl.col("Date").str.slice(-1).cast(pl.Int32) - 1) * 3 + 1, 1)
_NYC_PERIOD = pl.col("date").str.to_date().dt.truncate("1w")


def _aus_plants() -> dict[str, Planter]:
    plants: dict[str, Planter] = {}
    for column in ("Takings", "Occupancy", "CPI"):
        for factor in (0.7, 1.2, 1.4, 3.0):
            plants[f"{column} shifted x{factor:g}"] = _shift(column, factor)
        for factor in (0.5, 2.0, 100.0):
            plants[f"{column} one quarter x{factor:g}"] = _spike(column, factor)
        for periods in (2, 4):
            plants[f"{column} frozen {periods} quarters"] = _frozen(column, periods, "State", _AUS_PERIOD)
        for periods in (1, 4):
            plants[f"{column} {periods} quarter(s) late"] = _lagged(column, periods, "State", _AUS_PERIOD)
        for value in (0.0, -1.0, 9999.0):
            plants[f"{column} written {value:g}"] = _sentinel(column, value)
        plants[f"{column} written as text"] = _as_text(column)
        plants[f"{column} x10 in every row"] = _throughout(column, 10.0, "State")
    return plants


def _nyc_plants() -> dict[str, Planter]:
    plants: dict[str, Planter] = {"flights loaded twice": _loaded(2), "flights loaded three times": _loaded(3),
                                  "half the flights dropped": _dropped(2),
                                  "a day's flights exported twice, every route": _day_twice,
                                  "another route's flights counted as its own (its size)": _reassigned(1.0),
                                  "another route's flights counted as its own (half its size)": _reassigned(0.5)}
    for column in ("arr_delay", "dep_delay"):
        plants[f"{column} in seconds"] = _shift(column, 60.0)
        plants[f"{column} halved"] = _shift(column, 0.5)
    return plants


def _month_ends(start: date, end: date) -> list[date]:
    return nights_between(start, end, "month-end")


def _sundays(start: date, end: date) -> list[date]:
    first = start + timedelta(days=(6 - start.weekday()) % 7)
    return [first + timedelta(days=7 * i) for i in range((end - first).days // 7 + 1)]


DOMAINS = {
    "aus_accommodation": Domain(
        pack=str(DEFAULT_PACK.parent / "aus_accommodation.yaml"), period=_AUS_PERIOD, entity="State",
        nights=_month_ends, design=(date(2001, 1, 31), date(2009, 12, 31)), later=(0, 3), plants=_aus_plants(),
        writer=lambda f, p: f.write_csv(p), suffix=".csv"),
    "nyc_routes": Domain(
        pack=str(DEFAULT_PACK.parent / "nyc_routes.yaml"), period=_NYC_PERIOD, entity="route",
        nights=_sundays, design=(date(2013, 3, 3), date(2013, 6, 30)), later=(0, 1, 3), plants=_nyc_plants(),
        writer=lambda f, p: f.write_parquet(p), suffix=".parquet"),
}


def _read(pack: CriteriaPack) -> pl.DataFrame:
    path = str(pack.source_path)
    return pl.read_parquet(path) if path.endswith(".parquet") else pl.read_csv(path)


def _picks(pack: CriteriaPack, domain: Domain, count: int) -> list[tuple[str, str, date, date]]:
    """(candidate id, entity value, night, break period): entities in "Act on these" on clean data, spread over the
    design period, one per entity, broken in that night's latest period."""
    clean = _read(pack)
    values = {candidate_id(v): v for v in clean[domain.entity].unique().to_list()}
    nights = domain.nights(*domain.design)
    chosen: dict[str, tuple[str, str, date, date]] = {}
    for night in nights[:: max(1, len(nights) // (2 * count))]:
        anchor = read_snapshot(pack, night).anchor_period
        for cid, fate in sorted(night_fates(pack, night).items()):
            if fate.section == "act_on_these" and cid not in chosen and cid in values and anchor is not None:
                chosen[cid] = (cid, values[cid], night, anchor)
                break
        if len(chosen) >= count:
            break
    return list(chosen.values())


def run(name: str, count: int) -> None:
    domain = DOMAINS[name]
    pack = load_criteria(domain.pack)
    clean = _read(pack)
    picks = _picks(pack, domain, count)
    print(f"\n## {name} ({pack.grain.name}ly, {pack.source.shape}): "
          + ", ".join(f"{value} from {period}" for _, value, _, period in picks))
    tally: dict[str, Counter[str]] = defaultdict(Counter)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"planted{domain.suffix}"
        for kind, planter in domain.plants.items():
            for cid, value, night, period in picks:
                mine = pl.col(domain.entity) == value
                domain.writer(planter(clean, mine & (domain.period >= period), mine & (domain.period == period)), path)
                planted = with_source(pack, path)
                nights = domain.nights(night, night + timedelta(days=400))
                for k in domain.later:
                    fate = night_fates(planted, nights[k], {cid}).get(cid)
                    if fate is None:
                        continue
                    tally[kind]["nights"] += 1
                    tally[kind]["before"] += fate.quiet_section == "act_on_these"
                    tally[kind]["reached"] += fate.section == "act_on_these"
                    if fate.section == "act_on_these":
                        print(f"  reached act-on: {kind} of {value} from {period} on {nights[k]}", flush=True)
    print("\n| kind | planted entity-nights | reached act-on without the checks | with them |")
    print("|---|---:|---:|---:|")
    for kind, t in tally.items():
        print(f"| {kind} | {t['nights']} | {t['before']} | {t['reached']} |")
    nights_n = sum(t["nights"] for t in tally.values())
    print(f"\nAll plants ({name}): {sum(t['reached'] for t in tally.values())} of {nights_n} planted entity-nights "
          f"reached act_on_these ({sum(t['before'] for t in tally.values())} without the checks' effects).")
    acted, doubted, rules = false_doubt(pack, domain.design, domain.nights(*domain.design))
    print(f"False-doubt rate ({name}, clean data, design period): {doubted} of {acted} clean act-on picks became "
          f"UNCERTAIN or REJECTED ({doubted / max(acted, 1):.1%}); by rule: {dict(rules.most_common())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", choices=(*DOMAINS, "both"), default="both")
    parser.add_argument("--entities", type=int, default=4, help="entities planted per domain")
    args = parser.parse_args()
    started = time.perf_counter()
    for name in DOMAINS if args.domain == "both" else [args.domain]:
        run(name, args.entities)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
