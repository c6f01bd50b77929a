"""Planted-defect bench: does a broken feed reach "Act on these"? And what does the doubt cost on clean data?

    .venv/bin/python bench/planted.py [--period design|held-out|both] [--markets N] [--keep-precision]

1. Plants each defect class of `tests/plants.py` at several magnitudes, subtle to gross, into copies of the
   bundled Texas source, in scored and unscored columns, for several real markets, each broken in a month whose
   night had it in "Act on these" on clean data (so a miss is a real miss). Runs the nights after each break, from
   the first that sees the broken month, through the same scan, analyze, verify and route code the assets call
   (no Dagster), and prints per class and magnitude how many planted market-nights were caught (kept out of
   act_on_these) and how many reached it, with and without the integrity checks' effects.
2. On the clean data, the false-doubt rate: clean act-on picks (STRONG + CONFIRMED without the data checks'
   effects) that the checks made UNCERTAIN or REJECTED, by rule, design and held-out periods apart.

The held-out backtest (before/after) is `bench/backtest.py`. Design on as_of <= 2009-12-31 only; the
held-out period is reported, never tuned on.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from calendar import monthrange
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.routing import route
from opportunity_assets.candidates.logic import candidate_id, scan_read
from opportunity_assets.candidates.step import with_latest_cut_short
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.night import nights_between
from opportunity_assets.periods import MONTH
from opportunity_assets.records import Analysis, Candidate, Verification
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications import integrity_spec
from opportunity_assets.verifications.logic import verify
from resources.criteria import DEFAULT_PACK
from tests.plants import Plant, plant, read_source, write_source

DESIGN = (date(2003, 1, 31), date(2009, 12, 31))
HELD_OUT = (date(2010, 1, 31), date(2014, 6, 30))
MAGNITUDES = {
    "level_shift": (0.8, 0.9, 1.15, 1.3, 2.0),
    "unit_slip": (0.001, 0.01, 10.0, 1000.0),
    "spike": (0.5, 1.6, 3.0, 10.0),
    "stuck": (3, 6, 12),
    "repeated_rows": (1, 2, 4),
    "drift": (0.85, 1.15, 1.3),
    "stale": (3, 6),
    "swapped": (1,),
    "sentinel": (-1.0, 0.0, 9999.0),
    "lagged": (1, 12),
    "borrowed": (1, 7),
}
"""Per class, subtle to gross (for `sentinel` the number written, for `borrowed` which other entity)."""
COLUMNS = {
    "level_shift": (("inventory",), ("listings",), ("sales", "volume"), ("median",), ("listings", "inventory")),
    "unit_slip": (("median",), ("volume",), ("listings",)),
    "spike": (("sales",), ("inventory",), ("listings",), ("median",)),
    "stuck": (("inventory",), ("listings",), ("sales",)),
    "repeated_rows": (("sales", "volume", "median", "listings", "inventory"),),
    "drift": (("inventory",), ("listings",)),
    "stale": (("listings",), ("volume",)),
    "swapped": (("listings", "volume"),),
    "sentinel": (("inventory",), ("median",)),
    "lagged": (("inventory",), ("sales",)),
    "borrowed": (("inventory",), ("median",), ("sales", "volume", "median", "listings", "inventory")),
}
"""Per class, the columns broken: scored (sales, inventory) and unscored (volume, median, listings)."""
AFTER = (0, 1, 3, 6)
"""Nights evaluated, in months after the first night that sees the broken month."""


@dataclass(frozen=True)
class Fate:
    section: str
    """act_on_these, needs_your_judgment, an archive tag, or `not going on` (filtered or capped)."""
    quiet_section: str
    """The same with every data finding's and red flag's effect turned to `note` (the verifier before)."""
    rules: tuple[str, ...]


def quieted(pack: CriteriaPack) -> CriteriaPack:
    """The pack with every integrity rule, identity and red flag reporting only: the verifier without doubt."""
    spec = pack.integrity
    rules = {name: getattr(spec, name).model_copy(update={"effect": "note"})
             for name in integrity_spec.RULES}
    identities = [i.model_copy(update={"effect": "note"}) for i in spec.identities]
    return pack.model_copy(update={
        "integrity": spec.model_copy(update={**rules, "identities": identities}),
        "red_flags": [r.model_copy(update={"effect": "note"}) for r in pack.red_flags]})


def scanned(pack: CriteriaPack, as_of: date) -> list[Candidate]:
    """The night's candidates as the scan step makes them (no Dagster)."""
    snapshot = read_snapshot(pack, as_of)
    found, _ = scan_read(pack, as_of, snapshot)
    return with_latest_cut_short(pack, as_of, snapshot.anchor_period, found)


def judged(pack: CriteriaPack, as_of: date, cid: str) -> tuple[Analysis, Verification] | tuple[None, None]:
    """One candidate's analysis and verification on the night, as the assets make them; (None, None) where the
    night has no such candidate (the trials' harnesses print their findings)."""
    for c in scanned(pack, as_of):
        if c.id == cid:
            a = analyze(pack, c)
            return a, verify(pack, c, a)
    return None, None


def clean_picks(pack: CriteriaPack, nights: Sequence[date], sections: bool = True,
                on_night: Callable[[date], None] | None = None) -> tuple[list[tuple[str, date]], Counter[str]]:
    """The trials' clean nights: each night's act-on picks without the checks' effects (printed, with the night's
    other sections if `sections`), and those the checks doubted, printed with their findings. `on_night` is told
    each night before it runs. Returns the picks (id, night) and the doubted picks' count by rule ("" for all)."""
    picks: list[tuple[str, date]] = []
    doubted: Counter[str] = Counter()
    for as_of in nights:
        if on_night is not None:
            on_night(as_of)
        fates = night_fates(pack, as_of)
        strong = sorted(c for c, f in fates.items() if f.quiet_section == "act_on_these")
        shown = {c: f.section for c, f in fates.items() if f.section != "archive" and f.section[:3] != "not"}
        print(as_of, "act-on (quiet):", strong, *([" sections:", shown] if sections else []), flush=True)
        for cid in strong:
            picks.append((cid, as_of))
            fate = fates[cid]
            if fate.section == "act_on_these":
                continue
            doubted[""] += 1
            doubted.update(fate.rules)
            _, verification = judged(pack, as_of, cid)
            print(f"   DOUBTED {cid} -> {fate.section} by {fate.rules}")
            for finding in verification.data_findings if verification is not None else []:
                if finding.effect != "note":
                    print("      ", finding.rule, finding.effect, ":", finding.message)
    return picks, doubted


def tallied(row: Counter[str], fate: Fate, clean: str | None = None) -> bool:
    """One plant-night's fate counted in its row of `print_tally`'s table (`clean`: the entity's section that night
    on clean data, for the trials that show it); whether it reached act-on."""
    row["quiet"] += fate.quiet_section == "act_on_these"
    row["reached"] += fate.section == "act_on_these"
    if clean is not None:
        row["clean act-on"] += clean == "act_on_these"
    row["rule:" + "+".join(fate.rules)] += 1
    return fate.section == "act_on_these"


def clean_section(kept: dict[tuple[str, date], str], pack: CriteriaPack, cid: str, as_of: date) -> str:
    """The candidate's section on the night on clean data (`pack`'s own source), worked out once (`kept`)."""
    if (cid, as_of) not in kept:
        fate = night_fates(pack, as_of, {cid}).get(cid)
        kept[cid, as_of] = fate.section if fate else "absent"
    return kept[cid, as_of]


def plant_night(row: Counter[str], planted: CriteriaPack, clean: CriteriaPack, kept: dict[tuple[str, date], str],
                cid: str, as_of: date) -> str | None:
    """One plant-night of a trial's harness judged and counted in its `row` (`planted`: the pack over the planted
    source; `clean`: over the clean one, whose section that night `kept` holds once worked out): the candidate's
    clean section where the plant reached act-on, else None (off the night, filtered or capped, or kept out)."""
    section = clean_section(kept, clean, cid, as_of)
    fate = night_fates(planted, as_of, {cid}).get(cid)
    row["nights"] += 1
    if fate is None:
        row["rule:(off the night)"] += 1
        return None
    if fate.section == "not going on":
        row["rule:(filtered or capped)"] += 1
        return None
    return section if tallied(row, fate, section) else None


def print_tally(tally: Mapping[tuple[str, str], Counter[str]], clean: bool = False) -> None:
    """The trials' plant table: per kind and magnitude, plant-nights, (`clean`: those act-on on clean data,) those
    reaching act-on without the checks' effects and with them, and the rules that kept the others out."""
    print("\n| kind | magnitude | plant-nights |" + (" clean act-on |" if clean else "")
          + " act-on without checks | act-on | rules (nights) |")
    print("|---|---|---:|" + ("---:|" if clean else "") + "---:|---:|---|")
    for (kind, magnitude), t in tally.items():
        rules = ", ".join(f"{r[5:] or '-'} {n}" for r, n in t.most_common() if r.startswith("rule:"))
        print(f"| {kind} | {magnitude} | {t['nights']} |" + (f" {t['clean act-on']} |" if clean else "")
              + f" {t['quiet']} | {t['reached']} | {rules}" + (f" (no-op {t['no-op']})" if t["no-op"] else "") + " |")
    total = sum(t["nights"] for t in tally.values())
    print(f"\nreached {sum(t['reached'] for t in tally.values())} of {total} "
          f"(without the checks {sum(t['quiet'] for t in tally.values())})")


def night_fates(pack: CriteriaPack, as_of: date, only: set[str] | None = None) -> dict[str, Fate]:
    """Each going-on candidate's section with the checks' effects and without them (`only`: these ids)."""
    quiet = quieted(pack)
    out = {}
    for c in scanned(pack, as_of):
        if only is not None and c.id not in only:
            continue
        if not c.went_on:
            out[c.id] = Fate("not going on", "not going on", ())
            continue
        a = analyze(pack, c)
        v = verify(pack, c, a)
        out[c.id] = Fate(route(a, v).section_or_tag, route(a, verify(quiet, c, a)).section_or_tag,
                         tuple(sorted({f.rule for f in v.data_findings if f.effect != "note"})))
    return out


def with_source(pack: CriteriaPack, path: Path) -> CriteriaPack:
    return pack.model_copy(update={"source": pack.source.model_copy(update={"path": str(path)})})


def first_night_seeing(period: date, lag_days: int) -> date:
    """The first month-end night on which `period`'s row is published."""
    nights = nights_between(period, date(period.year + 1, period.month, 1), "month-end")
    published = date(period.year, period.month, monthrange(period.year, period.month)[1]).toordinal() + lag_days
    return next(n for n in nights if n.toordinal() >= published)


def targets(pack: CriteriaPack, span: tuple[date, date], count: int) -> list[tuple[str, date]]:
    """(entity, break month): markets in "Act on these" on clean data, each broken in its night's latest month,
    one per market, spread over the period."""
    chosen: dict[str, date] = {}
    names: dict[str, str] = {}
    frame = read_source(str(pack.source_path))
    (entity_column,) = pack.source.entity_columns  # a source of one entity column, as Texas's
    for entity in frame[entity_column].unique().to_list():
        names[candidate_id(entity)] = entity
    nights = nights_between(*span, "month-end")
    step = max(1, len(nights) // count)
    for as_of in nights[::step]:
        fates = night_fates(pack, as_of)
        anchor = read_snapshot(pack, as_of).anchor_period
        for cid, fate in sorted(fates.items()):
            if fate.section == "act_on_these" and cid not in chosen and anchor is not None:
                chosen[cid] = anchor
                break
        if len(chosen) >= count:
            break
    return [(names[cid], month) for cid, month in chosen.items()]


def run_plants(pack: CriteriaPack, picks: list[tuple[str, date]], kinds: list[str], workdir: Path,
               say=print, keep_precision: bool = False) -> dict[tuple[str, float], Counter]:
    clean = read_source(str(pack.source_path))
    results: dict[tuple[str, float], Counter] = defaultdict(Counter)
    for kind in kinds:
        for magnitude in MAGNITUDES[kind]:
            for columns in COLUMNS[kind]:
                for entity, month in picks:
                    p = Plant(kind, entity, columns, month, magnitude)
                    path = workdir / f"{kind}.csv"
                    write_source(plant(clean, p, keep_precision=keep_precision), str(path))
                    planted = with_source(pack, path)
                    first = first_night_seeing(month, pack.source.publication_lag_days)
                    for k in AFTER:
                        as_of = nights_between(MONTH.back(first, -k), MONTH.back(first, -k - 1),
                                               "month-end")[0]
                        fate = night_fates(planted, as_of, {candidate_id(entity)}).get(candidate_id(entity))
                        if fate is None:
                            continue
                        tally = results[(kind, magnitude)]
                        tally["nights"] += 1
                        tally["reached_before"] += fate.quiet_section == "act_on_these"
                        tally["reached"] += fate.section == "act_on_these"
                        if fate.section == "act_on_these":
                            say(f"  missed: {p.describe()} on {as_of}")
    return results


def false_doubt(pack: CriteriaPack, span: tuple[date, date], nights: list[date] | None = None
                ) -> tuple[int, int, Counter]:
    """Clean act-on picks over the span's month-end nights (or `nights`), those the checks doubted, and by rule."""
    picks = doubted = 0
    rules: Counter = Counter()
    for as_of in nights if nights is not None else nights_between(*span, "month-end"):
        for fate in night_fates(pack, as_of).values():
            if fate.quiet_section == "act_on_these":
                picks += 1
                if fate.section != "act_on_these":
                    doubted += 1
                    rules.update(fate.rules)
    return picks, doubted, rules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--period", choices=("design", "held-out", "both"), default="both",
                        help="where the plants' markets and the false-doubt nights come from")
    parser.add_argument("--markets", type=int, default=4, help="markets planted per period")
    parser.add_argument("--criteria", default=str(DEFAULT_PACK))
    parser.add_argument("--keep-precision", action="store_true",
                        help="round planted values to the decimals of the column (no change of precision shows)")
    args = parser.parse_args()
    pack = load_criteria(args.criteria)
    periods = {"design": [DESIGN], "held-out": [HELD_OUT], "both": [DESIGN, HELD_OUT]}[args.period]
    started = time.perf_counter()
    for span in periods:
        label = "design" if span == DESIGN else "held out"
        picks = targets(pack, span, args.markets)
        print(f"\n## Plants, {label} period ({span[0]:%Y-%m}..{span[1]:%Y-%m}): markets "
              + ", ".join(f"{e} from {m:%Y-%m}" for e, m in picks))
        with tempfile.TemporaryDirectory() as tmp:
            results = run_plants(pack, picks, list(MAGNITUDES), Path(tmp), say=lambda line: print(line),
                                 keep_precision=args.keep_precision)
        print("\n| class | magnitude | planted market-nights | reached act-on without the checks | reached act-on "
              "with them | caught |")
        print("|---|---:|---:|---:|---:|---:|")
        for (kind, magnitude), tally in results.items():
            caught = tally["nights"] - tally["reached"]
            print(f"| {kind} | {magnitude:g} | {tally['nights']} | {tally['reached_before']} | {tally['reached']} | "
                  f"{caught}/{tally['nights']} |")
        total = sum(t["nights"] for t in results.values())
        missed = sum(t["reached"] for t in results.values())
        print(f"\nAll plants ({label}): {missed} of {total} planted market-nights reached act_on_these "
              f"({sum(t['reached_before'] for t in results.values())} without the checks' effects).")
        picks_n, doubted, rules = false_doubt(pack, span)
        print(f"False-doubt rate ({label}, clean data): {doubted} of {picks_n} clean act-on picks became UNCERTAIN "
              f"or REJECTED ({doubted / max(picks_n, 1):.1%}); by rule: {dict(rules.most_common())}")
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
