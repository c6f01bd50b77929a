"""`opportunity`: run a night, backfill nights, price a night, query the archive."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date

from opportunity_assets.criteria import CriteriaError
from opportunity_assets.definitions import DEFAULT_STORE, build_definitions
from resources.criteria import DEFAULT_PACK


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opportunity", description=__doc__)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--criteria", default=str(DEFAULT_PACK), help="criteria pack YAML (default: Texas housing)")
    common.add_argument("--store", default=DEFAULT_STORE, help=f"result store DuckDB file (default {DEFAULT_STORE})")
    common.add_argument("--dagster-home", default=None, help="Dagster instance folder (default $DAGSTER_HOME or "
                                                             "var/dagster_home)")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", parents=[common], help="run one night and print the brief")
    run.add_argument("--as-of", type=_date, default=None, help="the night (default: latest the data supports)")
    run.add_argument("--json", action="store_true", help="print the night's state object instead of the brief")
    backfill = sub.add_parser("backfill", parents=[common], help="run several nights, one line each")
    backfill.add_argument("--start", type=_date, required=True)
    backfill.add_argument("--end", type=_date, required=True)
    backfill.add_argument("--every", choices=["month-end", "day"], default="month-end")
    cost = sub.add_parser("cost", parents=[common], help="worst-case model cost of a night, before running it")
    cost.add_argument("--as-of", type=_date, default=None)
    archive = sub.add_parser("archive", parents=[common], help="query routed candidates")
    archive.add_argument("--as-of", type=_date, default=None)
    archive.add_argument("--tag", default=None, help="data_gap, failed_verification or below_threshold")
    archive.add_argument("--section", default=None, help="act_on_these or needs_your_judgment (brief sections)")
    archive.add_argument("--candidate", default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # Imported here so that `opportunity --help` stays fast.
    from opportunity_assets import night as nights
    from opportunity_assets.cost import describe, load_prices, worst_case

    defs = build_definitions(criteria_path=args.criteria, store_path=args.store)
    try:
        pack, store = nights.resources_of(defs)
        if args.command == "run":
            as_of = args.as_of or nights.latest_as_of(pack)
            nights.run_night(defs, nights.local_instance(args.dagster_home), as_of)
            run = nights.state(defs, as_of)
            print(nights.state_json(run) if args.json else (run.brief.markdown if run.brief else ""))
        elif args.command == "backfill":
            instance = nights.local_instance(args.dagster_home)
            for as_of in nights.nights_between(args.start, args.end, args.every):
                nights.run_night(defs, instance, as_of)
                print(nights.night_line(nights.state(defs, as_of)), flush=True)
        elif args.command == "cost":
            from opportunity_assets.candidates.logic import scan
            from resources.source import read_snapshot

            as_of = args.as_of or nights.latest_as_of(pack)
            snapshot = read_snapshot(pack, as_of)
            _, report = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history)
            print(f"{pack.domain}, as of {as_of}: {report.went_on} candidates would go on "
                  f"({report.scanned} scanned)")
            print(describe(worst_case(pack, load_prices(), report.went_on, model_checks_on=False),
                           pack.caps.cost_ceiling_usd))
        elif args.command == "archive":
            if args.section:
                rows = store.query(
                    "SELECT r.as_of, r.candidate_id, r.section_or_tag AS section, a.verdict, a.score, v.status "
                    "FROM routes r JOIN analyses a USING (domain, as_of, candidate_id) "
                    "JOIN verifications v USING (domain, as_of, candidate_id) WHERE r.domain = $d "
                    "AND r.section_or_tag = $s AND ($a IS NULL OR r.as_of = $a) ORDER BY r.as_of, a.score DESC",
                    {"d": pack.domain, "s": args.section, "a": args.as_of})
            else:
                rows = store.archive(pack.domain, as_of=args.as_of, tag=args.tag,
                                     candidate=args.candidate)
            for row in rows:
                print(json.dumps(row, default=str))
    except (CriteriaError, nights.NightFailed, ValueError) as exc:
        print(f"opportunity: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
