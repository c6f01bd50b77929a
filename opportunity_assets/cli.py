"""`opportunity`: run a night, backfill nights, price a night, query the archive; backtest the verdicts, gate a
change of criteria (calibrate), record your judgment of a candidate (judge)."""

from __future__ import annotations

import argparse
import calendar
import contextlib
import difflib
import json
import math
import os
import re
import sys
from datetime import date, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn

from opportunity_assets.brief.routing import ARCHIVE_TAGS, BRIEF_SECTIONS
from opportunity_assets.criteria import CriteriaError
from opportunity_assets.defaults import DEFAULT_STORE, criteria_path_from_environment
from opportunity_assets.periods import EVERY
from opportunity_assets.text import clip_quoted

if TYPE_CHECKING:
    import dagster as dg


def _date(text: str) -> date:
    """A night or a range's end, written YYYY-MM-DD. Python reads other ISO forms as days too, silently: a week,
    `2011-W36`, as its Monday (trial 51: a weekly pack's night of 2011-W36 was the Monday it began, its latest week
    2011-W34), and `20110905`. Those are refused, naming the day each would be and, for a week, the Sunday it ends."""
    try:
        day = date.fromisoformat(text)
    except ValueError:
        if (period := _period_meant(text)) is not None:
            kind, end = period
            raise argparse.ArgumentTypeError(
                f"{text!r} is a {kind}, not a date (YYYY-MM-DD): a night is a day, e.g. {end}, the day that {kind} "
                "ends on") from None
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD){_day_meant(text)}") from None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return day
    if "W" in text.upper():
        monday = day - timedelta(days=day.weekday())
        raise argparse.ArgumentTypeError(
            f"{text!r} is a week, not a date (YYYY-MM-DD): a night is a day, e.g. {monday + timedelta(days=6)}, the "
            f"Sunday that week ends on (its Monday, {monday}, reads the weeks published by then)")
    raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD): expected {day.isoformat()}")


def _period_meant(text: str) -> tuple[str, date] | None:
    """A month (`2013-09`), a quarter (`2013-Q3`, `2013 Q3`) or a bare year (`2006`) written for a night: its kind and
    last day, the night that reads it whole once published. Trial 136: `--as-of 2013-09` on a monthly pack was "not
    a date" with no day named, as a week (`2011-W36`) is not; None for text that names no such period."""
    written = text.strip()
    if (month := re.fullmatch(r"(\d{4})-(\d{1,2})", written)) and 1 <= int(month[2]) <= 12:
        year, last_month, kind = int(month[1]), int(month[2]), "month"
    elif quarter := re.fullmatch(r"(\d{4})\s*-?\s*[Qq]([1-4])", written):
        year, last_month, kind = int(quarter[1]), 3 * int(quarter[2]), "quarter"
    elif re.fullmatch(r"\d{4}", written) and int(written) >= 1:
        year, last_month, kind = int(written), 12, "year"
    else:
        return None
    return (kind, date(year, last_month, calendar.monthrange(year, last_month)[1])) if year >= 1 else None


def _day_meant(text: str) -> str:
    """What a night written otherwise than YYYY-MM-DD says, for `_date`'s line: a day its month has not
    (`2015-02-30`: February 2015 has 28 days), or the day(s) a date of other separators or order names
    (`2016/02/28`, `28.02.2016`; `03/04/2016` either way). Trial 101: `--as-of 2016/02/28` was "not a date" with
    no day named, where the README promises the day meant; empty where the text names no day."""
    parts = re.fullmatch(r"\s*(\d{1,4})\s*[-/. ]\s*(\d{1,2})\s*[-/. ]\s*(\d{1,4})\s*", text)
    if not parts:
        return ""
    a, b, c = (int(part) for part in parts.groups())
    if len(parts[1]) == 4:
        readings = [(a, b, c)]
    elif len(parts[3]) == 4:
        readings = [(c, b, a), (c, a, b)] if a != b else [(c, b, a)]  # day first, month first
    else:
        return ""
    days: list[str] = []
    for year, month, day_of in readings:
        with contextlib.suppress(ValueError):
            days.append(date(year, month, day_of).isoformat())
    if days:
        return f": expected {' or '.join(days)}"
    year, month, day_of = readings[0]
    if 1 <= month <= 12 and year >= 1:
        last = (date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)).day
        return f": {date(year, month, 1):%B %Y} has {last} days, not {day_of}"
    return ""


class _OneLineParser(argparse.ArgumentParser):
    """argparse, its mistakes said in one line: its own `error` prints the whole usage first (five lines for
    `archive`, the choices twice) and offers no close choice (trial 34: `--tag below_treshold`, `--every
    fortnight`, `--section act_on`). `--help` still prints the usage."""

    def error(self, message: str) -> NoReturn:
        choices = re.search(r"invalid choice: '(.*)' \(choose from (.*)\)$", message)
        if choices:
            offered = re.findall(r"'([^']*)'", choices[2])
            close = difflib.get_close_matches(choices[1], offered, n=1, cutoff=0.5) or \
                [c for c in offered if c.startswith(choices[1]) or choices[1] in c][:1]
            message += f"; did you mean {close[0]!r}?" if close else ""
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Once(argparse.Action):
    """An option that takes one value, refused when given twice (trial 107: `run --criteria a.yaml --criteria
    b.yaml` ran b alone, argparse keeping the last, a night of a never run, and said nothing)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given = f"_{self.dest}_given"
        if getattr(namespace, given, False):
            parser.error(f"argument {option_string}: given twice ({getattr(namespace, self.dest)}, then {values}); "
                         "expected it once: a command reads one (run it once for each)")
        setattr(namespace, given, True)
        setattr(namespace, self.dest, values)


def _parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="opportunity", description=__doc__)
    common = _OneLineParser(add_help=False)
    common.add_argument("--criteria", action=_Once, default=criteria_path_from_environment(),
                        help="criteria pack YAML (default $OPPORTUNITY_CRITERIA or Texas housing)")
    common.add_argument("--store", action=_Once, default=DEFAULT_STORE,
                        help=f"result store DuckDB file (default {DEFAULT_STORE}; $OPPORTUNITY_STORE_URL, a "
                        "PostgreSQL URL, puts the store there instead)")
    common.add_argument("--dagster-home", default=None, help="Dagster instance folder (default $DAGSTER_HOME or "
                                                             "var/dagster_home)")
    common.add_argument("--settings", default=None, help="automation settings: schedule, sensors, notification "
                                                         "channels (default $OPPORTUNITY_AUTOMATION or "
                                                         "deploy/automation.yaml)")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", parents=[common], help="run one night and print the brief")
    run.add_argument("--as-of", type=_date, default=None, help="the night (default: latest the data supports)")
    run.add_argument("--json", action="store_true", help="print the night's state object instead of the brief")
    run.add_argument("--refresh", action="store_true", help="call the model again instead of replaying "
                                                             "its stored answers")
    run.add_argument("--report", default=None, metavar="PATH", help="also write the night's morning report here: "
                                                                    "PDF or HTML by the extension (.pdf, .html)")
    backfill = sub.add_parser("backfill", parents=[common], help="run several nights, one line each")
    backfill.add_argument("--start", type=_date, required=True)
    backfill.add_argument("--end", type=_date, required=True)
    backfill.add_argument("--every", choices=EVERY, default="month-end")
    check = sub.add_parser("check", parents=[common], help="check the pack against its source's data before any "
                           "night: columns, types, what would go on (exit 1 on a problem)")
    check.add_argument("--as-of", type=_date, default=None, help="the night to read (default: latest supported)")
    cost = sub.add_parser("cost", parents=[common], help="worst-case model cost of a night, before running it")
    cost.add_argument("--as-of", type=_date, default=None)
    archive = sub.add_parser("archive", parents=[common], help="query routed candidates")
    archive.add_argument("--as-of", type=_date, default=None)
    # a misspelt tag or section matched no row and said "nothing in the archive": refused as argparse refuses --every
    # a tag is the archive's, a section the brief's: both given, one was ignored (trial 35, as `--candidate` was)
    routed = archive.add_mutually_exclusive_group()
    routed.add_argument("--tag", default=None, choices=ARCHIVE_TAGS,
                        help="data_gap, failed_verification or below_threshold")
    routed.add_argument("--section", default=None, choices=BRIEF_SECTIONS,
                        help="act_on_these or needs_your_judgment (brief sections)")
    archive.add_argument("--candidate", default=None)
    backtest = sub.add_parser("backtest", parents=[common], help="outcomes of past verdicts: by verdict and "
                              "verification, STRONG's hit rate, the verifier's lift, a plot")
    backtest.add_argument("--start", type=_date, required=True)
    backtest.add_argument("--end", type=_date, required=True)
    backtest.add_argument("--every", choices=EVERY, default="month-end")
    backtest.add_argument("--json", action="store_true", help="print the report as JSON")
    calibrate = sub.add_parser("calibrate", parents=[common], help="gate a change of criteria: --criteria NEW "
                               "--against OLD on the bad cases and an untouched population (exit 0 accept, 1 reject)")
    calibrate.add_argument("--against", required=True, help="the OLD criteria pack YAML")
    calibrate.add_argument("--start", type=_date, required=True)
    calibrate.add_argument("--end", type=_date, required=True)
    calibrate.add_argument("--every", choices=EVERY, default="month-end")
    calibrate.add_argument("--config", default=None, help="θ_bad, ε and the population split (default "
                                                          "data/calibration.yaml)")
    calibrate.add_argument("--json", action="store_true", help="print the result as JSON")
    judge = sub.add_parser("judge", parents=[common], help="record your judgment of one candidate of a past night")
    judge.add_argument("--as-of", type=_date, required=True)
    judge.add_argument("--candidate", required=True, help="candidate id, as in the brief's archive (e.g. austin)")
    judge.add_argument("--decision", choices=["pursue", "pass", "unsure"], required=True)
    judge.add_argument("--note", default=None)
    judge.add_argument("--who", default=None, help="who judges (default: the OS user)")
    return parser


BROKEN_PIPE = 141
"""The exit code of a command whose output's reader went away, as a shell gives one killed by SIGPIPE."""


def _figures_as_written(value: Any) -> Any:
    """A record's floats to 15 significant digits, as a float is meant (trial 78: the archive's JSON said
    `"score": 43.99999999999999` beside its reason's 44.0: the sum of weighted parts in binary, not a figure)."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.15g}")
    if isinstance(value, dict):
        return {k: _figures_as_written(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_figures_as_written(v) for v in value]
    return value


_NIGHTS_COMMANDS = frozenset({"backfill", "backtest", "calibrate"})
"""Commands that run several nights over one source."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # Imported here so that `opportunity --help` stays fast.
    from opportunity_assets import night as nights
    from opportunity_assets.sources.connection import held, kept_open

    nights.prepare_in_process_runs()
    # one command reads its source file once: its span, its check, its nights; one of several nights holds the typed
    # rows between them (`held`), where one night frees them for its in-memory work
    holding = held() if args.command in _NIGHTS_COMMANDS else contextlib.nullcontext()
    try:
        with kept_open(), holding:
            return _command(args)
    except BrokenPipeError:
        # the reader of the output went away (`opportunity check ... | head -3`): what was left to print has no
        # reader, and neither has Python's flush of it at exit; the shell's code for a closed pipe (128 + SIGPIPE)
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE


def _command(args: argparse.Namespace) -> int:
    from opportunity_assets import night as nights
    from opportunity_assets.check.pack import latest_as_of
    from opportunity_assets.cost import describe, load_prices, worst_case
    from opportunity_assets.definitions import build_definitions
    from opportunity_assets.periods import last_possible_night

    try:
        defs = build_definitions(criteria_path=args.criteria, store_path=args.store,
                                 refresh=bool(getattr(args, "refresh", False)), settings_path=args.settings)
        pack, store = nights.resources_of(defs)
        first = nights.first_night_of(defs)
        if args.command in ("backfill", "backtest") and args.start < first <= args.end:
            # the range's early nights: none to run, skipped in one line by both (trials 125, 130, 133: the backtest
            # refused a --start the backfill took); under `backtest --json` on stderr, stdout staying JSON
            print(f"{args.start}..{first - timedelta(days=1)}  skipped: before the first night, {first} (the first "
                  "the data supports, or the pack's `nights.start`)", flush=True,
                  file=sys.stderr if getattr(args, "json", False) else sys.stdout)
            args.start = first
        for flag in ("--as-of", "--start", "--end"):
            night = getattr(args, flag.removeprefix("--").replace("-", "_"), None)
            if night is not None and args.command in ("run", "backfill", "cost", "backtest", "check"):
                if night < first == last_possible_night():  # no dated row: the source's own problem first
                    if args.command == "check":
                        from opportunity_assets.check.pack import check_pack

                        if (checked := check_pack(pack, night)).problems:
                            print(f"{pack.domain} ({args.criteria}): {checked}")  # as without --as-of: exit 1
                            return 1
                    else:
                        _require_readable(pack, night)
                nights.check_night(night, first, flag=flag)
        if args.command == "run":
            from opportunity_assets.report.render import check_target
            from opportunity_assets.report.step import write_night_report

            if args.report:
                check_target(args.report)
            as_of = args.as_of or latest_as_of(pack)
            _require_secrets(args.settings)
            _require_checked(pack, store, as_of, defaulted=args.as_of is None)
            instance = nights.local_instance(args.dagster_home)
            nights.run_night(defs, instance, as_of)
            if args.json:  # the whole state object; the brief alone needs none of it
                print(nights.state(defs, as_of).model_dump_json(indent=2))
            else:
                brief = store.brief(pack.domain, as_of)
                print(brief["markdown"] if brief else "")
            if args.report:
                written = write_night_report(store, pack, as_of, args.report)
                print(f"report: {written}", file=sys.stderr if args.json else sys.stdout)
            return _report_failed_channels(store, pack.domain, [as_of], defs, instance)
        elif args.command == "backfill":
            instance = nights.local_instance(args.dagster_home)
            dates = nights.nights_between(args.start, args.end, args.every)
            _require_secrets(args.settings)
            from opportunity_assets.check.pack import check_pack

            ran: list[date] = []
            broken: list[date] = []
            why_broken: list[str] = []
            if dates:
                _require_checked(pack, store, dates[-1])
            for as_of in dates:
                # `run` refuses a night its pack cannot judge (a window longer than the history then): so does this
                if problems := check_pack(pack, as_of, with_facts=False).problems:
                    print(f"{as_of}  skipped: {problems[0]}{_stored_before(pack, store, as_of)}", flush=True)
                    broken += [as_of] if ran else []
                    why_broken += [problems[0]] if ran else []
                    continue
                _warn_if_changed_since_stored(pack, store, as_of)
                nights.run_night(defs, instance, as_of)
                ran.append(as_of)
                print(nights.night_line(nights.state(defs, as_of)), flush=True)
            return max(_report_failed_channels(store, pack.domain, dates, defs, instance),
                       _report_broken_nights(broken, ran, why_broken))
        elif args.command == "check":
            from opportunity_assets.check.pack import check_pack

            checked = check_pack(pack, args.as_of)
            print(f"{pack.domain} ({args.criteria}): {checked}")
            return 1 if checked.problems else 0
        elif args.command == "cost":
            from opportunity_assets.candidates.logic import scan
            from opportunity_assets.sources.snapshot import read_snapshot

            as_of = args.as_of or latest_as_of(pack)
            snapshot = read_snapshot(pack, as_of)
            _, report = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history)
            print(f"{pack.domain}, as of {as_of}: {report.went_on} candidates would go on "
                  f"({report.scanned} scanned)")
            model = (defs.resources or {})["model"]
            print(describe(worst_case(pack, load_prices(), report.went_on, model_checks_on=model.enabled()),
                           pack.caps.cost_ceiling_usd))
        elif args.command == "archive":
            if args.section:
                rows = store.section(pack.domain, args.section, as_of=args.as_of,
                                     candidate=_candidate_id(store, pack.domain, args.candidate))
            else:
                rows = store.archive(pack.domain, as_of=args.as_of, tag=args.tag,
                                     candidate=_candidate_id(store, pack.domain, args.candidate))
            for row in rows:
                print(json.dumps(_figures_as_written(row), default=str))
            if not rows:  # said on stderr: stdout stays empty JSON Lines for a pipe
                if unknown := (_no_night_stored(store, args.store)
                               or _unknown_to_the_store(store, pack.domain, args.as_of, args.candidate)):
                    raise ValueError(unknown)
                asked = ", ".join(f"{k} {v}" for k, v in (("section", args.section), ("tag", args.tag),
                                                          ("candidate", args.candidate), ("as of", args.as_of)) if v)
                print(f"opportunity: nothing in the archive of {pack.domain}" + (f" for {asked}" if asked else "")
                      + _routed_instead(store, pack.domain, args.as_of, args.candidate, args.section)
                      + _night_routed_instead(store, pack.domain, args.as_of, args.candidate, args.section, args.tag),
                      file=sys.stderr)
        elif args.command == "backtest":
            from opportunity_assets.outcomes.logic import report_markdown
            from opportunity_assets.outcomes.replay import backtest_png_path, run_backtest

            dates = nights.nights_between(args.start, args.end, args.every)
            store.ready()  # a wrong or unreachable store URL: one line, before any night starts
            progress = sys.stderr if args.json else sys.stdout
            backtested = run_backtest(defs, nights.local_instance(args.dagster_home), dates, every=args.every,
                                      say=lambda line: print(line, file=progress, flush=True))
            print(backtested.model_dump_json(indent=2) if args.json else
                  f"{report_markdown(backtested)}\nPlot: {backtest_png_path(store.path, pack.domain, dates)}")
        elif args.command == "calibrate":
            from opportunity_assets.criteria import load_criteria
            from opportunity_assets.outcomes.calibration import DEFAULT_CONFIG, load_calibration_config, result_text
            from opportunity_assets.outcomes.replay import run_calibration

            old = load_criteria(args.against)
            store.ready()
            result = run_calibration(pack, old, store, nights.nights_between(args.start, args.end, args.every),
                                     load_calibration_config(args.config or DEFAULT_CONFIG), today=date.today())
            print(result.model_dump_json(indent=2) if args.json else
                  f"NEW {args.criteria} ({pack.fingerprint}) against OLD {args.against} ({old.fingerprint})\n"
                  + result_text(result), end="" if not args.json else "\n")
            return 0 if result.accepted else 1
        elif args.command == "judge":
            import getpass
            from datetime import UTC, datetime

            from opportunity_assets.outcomes.judgments import Decision, record_judgment

            judgment = record_judgment(store, pack, as_of=args.as_of, candidate=args.candidate,
                                       decision=Decision(args.decision), who=args.who or getpass.getuser(),
                                       note=args.note, now=datetime.now(UTC).replace(tzinfo=None))
            print(f"recorded: {judgment.as_of} {judgment.candidate_id} {judgment.decision.value} by {judgment.who}"
                  + (f" ({judgment.note})" if judgment.note else ""))
    except (CriteriaError, nights.NightFailed, ValueError) as exc:  # SettingsError is a ValueError
        print(f"opportunity: {clip_quoted(str(exc))}", file=sys.stderr)
        return 2
    return 0


def _require_readable(pack: Any, as_of: date) -> None:
    """Nights that hold only the latest one are what a source with no dated row gives (`definitions.nights_of`): its
    own problem on `as_of`, if it has one, is the line to show rather than "before the first night". Nothing is
    stored."""
    from opportunity_assets.check.pack import check_pack

    problems = check_pack(pack, as_of, with_facts=False).problems
    if problems:
        raise ValueError(f"{pack.domain}, night {as_of}: " + "; ".join(problems) + " (`opportunity check` says more)")


def _require_secrets(settings_path: str | None) -> None:
    """A channel whose secret's environment variable is unset stops `run` and `backfill` before anything is stored,
    in one line naming the key and the variable (`automation.settings.unset_secrets`)."""
    from opportunity_assets.automation.settings import load_settings, settings_file, unset_secrets

    if missing := unset_secrets(load_settings(settings_path), os.environ):
        raise ValueError(f"{settings_file(settings_path)}: " + "; ".join(missing) + ": the environment variable is "
                         "not set: expected it set to the channel's secret, or the channel left out of the settings")


def _require_checked(pack: Any, store: Any, as_of: date, *, defaulted: bool = False) -> None:
    """`opportunity check`'s problems before a night runs, those its candidates show included (the night's scan step
    is given the check's scan): a problem stops it before anything is stored; a warning (a likely mistake that
    spoils nothing the night computes) is said on stderr, and the night runs. Then the store is opened: a wrong or
    unreachable store URL is one line too, before any night starts, and so is a night of the pack's domain that
    another pack made there (`another_packs_night`). `defaulted`: the night is the latest the source supports, not one
    the user named (`check_pack`'s)."""
    from opportunity_assets.candidates.step import another_packs_night, domain_night
    from opportunity_assets.check.pack import check_pack

    checked = check_pack(pack, as_of, with_facts=False, defaulted=defaulted)
    if checked.problems:
        raise ValueError(f"{pack.domain}, night {as_of}: " + "; ".join(checked.problems)
                         + " (`opportunity check` says more)" + _stored_before(pack, store, as_of))
    for warning in checked.warnings:
        print(f"opportunity: warning: {warning}", file=sys.stderr, flush=True)
    store.ready()
    if foreign := another_packs_night(domain_night(store, pack.domain, as_of), pack, as_of):
        raise ValueError(f"{pack.domain}, night {as_of}: {foreign}")
    _warn_if_changed_since_stored(pack, store, as_of)


def _stored_before(pack: Any, store: Any, as_of: date) -> str:
    """After a problem stopping a night: that this pack stored the night before, on the source as it was then
    (`candidates.step.stored_as_read_then`); nothing for a store not made yet (none is made for a night refused)
    or that does not open (its own line comes later)."""
    from opportunity_assets.candidates.step import stored_as_read_then

    try:
        return stored_as_read_then(store.night(pack.domain, as_of), pack) if store.exists() else ""
    except ValueError:
        return ""


def _ids_with_rows(pack: Any, ids: list[str]) -> set[str]:
    """Of candidate ids, those with a row in the pack's source, of any period (by their slug, as ids are made)."""
    from opportunity_assets.sources import shapes
    from opportunity_assets.sources.probes import rows_matching
    from opportunity_assets.sources.reading import literal

    slug = shapes.slug_sql(shapes.ENTITY)
    counts = rows_matching(pack, [f"{slug} = {literal(i)}" for i in ids])
    return {i for i, n in zip(ids, counts, strict=True) if n}


def _warn_if_changed_since_stored(pack: Any, store: Any, as_of: date) -> None:
    """A night this pack stored, run again on a source changed in place since, said on stderr before the night
    replaces it (`candidates.step.changed_since_stored`); a new night, an entity of the latest night this pack
    stored before it gone from the source (`candidates.step.gone_since_night_before`). The read and the scan are
    the check's, kept for the process: the night's scan step is given them again."""
    from opportunity_assets.candidates.logic import scan_read
    from opportunity_assets.candidates.step import (
        changed_since_stored,
        comparable_metrics,
        gone_since_night_before,
        stored_by,
    )
    from opportunity_assets.sources.snapshot import read_snapshot

    stored, before = store.night(pack.domain, as_of), None
    if stored is None:  # a new night: an entity of the latest night this pack stored before it gone from the source
        earlier = store.earlier_nights(pack.domain, as_of, date(1, 1, 1))
        before = store.night(pack.domain, earlier[0]["as_of"]) if earlier else None
        if not stored_by(before, pack):
            return
    elif not comparable_metrics(stored, pack):
        return
    snapshot = read_snapshot(pack, as_of)
    found, _ = scan_read(pack, as_of, snapshot)
    said = changed_since_stored(stored, store.candidates(pack.domain, as_of), found, pack) if before is None else \
        gone_since_night_before(before, store.candidates(pack.domain, before["as_of"]), found, pack,
                                partial(_ids_with_rows, pack))
    if said:
        print(f"opportunity: warning: {said}", file=sys.stderr, flush=True)


def _candidate_id(store: Any, domain: str, asked: str | None) -> str | None:
    """A `--candidate` as its id: the name the brief shows (`EWR`, `Collin County`) slugged as ids are made
    (`ewr`, `collin-county`; trial 33's `archive --candidate EWR` found "nothing in the archive", exit 0), or,
    where the ids are codes and another column names the entities, the id the stored candidates carry under that
    name (trial 40: `--candidate Auckland`, the city the brief named, coded `09001`, was "no candidate by that
    id"; trial 42: `--candidate "Plain Shop"`, coded `e6`, alike)."""
    from opportunity_assets.sources.shapes import entity_slug

    if asked is None:
        return None
    slug = entity_slug(asked)
    names = _stored_names(store, domain)
    if slug in names:
        return slug
    named = sorted(i for i, name in names.items() if name is not None and entity_slug(name) == slug)
    return named[0] if len(named) == 1 else slug


def _stored_names(store: Any, domain: str) -> dict[str, str | None]:
    """The ids of the candidates the store holds of `domain`, each with the name the brief showed for it."""
    return {r["candidate_id"]: r["name"] for r in store.query(
        "SELECT candidate_id, max(name) AS name FROM candidates WHERE domain = ? GROUP BY candidate_id", [domain])}


def _unknown_to_the_store(store: Any, domain: str, as_of: date | None, candidate: str | None) -> str | None:
    """An `archive` night or candidate the store has never seen, said as `judge` says it: trial 36's `--as-of` of
    no stored night and `--candidate diarrhoea` (for `diarrhaea`) were "nothing in the archive", exit 0, the words
    of a night that archived none. A store of other domains' nights only is told so first (trial 57: `archive
    --store S` without `--criteria` said "nothing in the archive of texas_housing", the default pack's, over a store
    holding only gb_road_casualties)."""
    held = [str(r["domain"]) for r in store.query("SELECT DISTINCT domain FROM nights ORDER BY domain", [])]
    if held and domain not in held:
        return (f"--criteria: the store holds no night of {domain}, the pack's domain; it holds "
                f"{', '.join(held[:5])}{', ...' if len(held) > 5 else ''}: expected the pack of one of those")
    if as_of is not None and store.night(domain, as_of) is None:
        nearest = store.nights_near(domain, as_of)
        return (f"--as-of {as_of}: no night of {domain} is stored on it: "
                + (f"nights stored nearby: {', '.join(str(n) for n in nearest)}" if nearest
                   else "the store holds no night of this domain"))
    if candidate is None:
        return None
    scanned = [r["candidate_id"] for r in store.query(
        "SELECT DISTINCT candidate_id FROM candidates WHERE domain = ?" + (" AND as_of = ?" if as_of else "")
        + " ORDER BY candidate_id", [domain, as_of] if as_of else [domain])]
    from opportunity_assets.sources.shapes import entity_slug

    asked = _candidate_id(store, domain, candidate) or ""
    if asked in scanned:
        return None
    names = _stored_names(store, domain)
    by_name = {entity_slug(name): name for i, name in names.items() if name is not None and i in scanned}
    close = difflib.get_close_matches(asked, scanned, n=3) or [
        by_name[n] for n in difflib.get_close_matches(asked, list(by_name), n=3)] \
        or _started_by(asked, scanned, by_name)
    return (f"--candidate {candidate}: no candidate of {domain} by that id or name was scanned "
            + (f"on {as_of}" if as_of else "on any stored night") + (f"; did you mean {', '.join(close)}?" if close
                                                                    else ""))


def _started_by(asked: str, scanned: list[str], by_name: dict[str, str]) -> list[str]:
    """The first ids, else names (by their slugs), that `asked` begins (trial 105: `vic`, the start of `victoria`,
    too short for a close match, was offered nothing)."""
    if not asked:
        return []
    return ([i for i in scanned if i.startswith(asked)] or [name for n, name in by_name.items() if n.startswith(asked)]
            )[:3]


def _no_night_stored(store: Any, named: str) -> str | None:
    """A store that holds no night of any pack, told as such (trial 107: `archive --store` of a mistyped path made
    a new, empty store there and said "nothing in the archive of presidents", exit 0, the words of nights that
    archived none); None when it holds one."""
    if store.query("SELECT 1 FROM nights LIMIT 1", []):
        return None
    where = "the PostgreSQL store ($OPPORTUNITY_STORE_URL)" if os.environ.get("OPPORTUNITY_STORE_URL", "").strip() \
        else f"--store {named}"
    return (f"{where}: holds no night of any pack (a new store: a path mistyped?): expected the store the nights "
            "were run into by `run` or `backfill`, or those first")


def _night_routed_instead(store: Any, domain: str, as_of: date | None, candidate: str | None, section: str | None,
                          tag: str | None) -> str:
    """Where a stored night's candidates went when it archived none asked for: the brief's sections, with how many
    each holds (trial 107: `archive --as-of 2009-03-31` of a night whose one candidate went to needs_your_judgment
    said "nothing in the archive ... for as of 2009-03-31", no more, as if the night had judged none)."""
    if as_of is None or candidate is not None or section is not None or tag is not None:
        return ""
    routed = store.query("SELECT section_or_tag, count(*) AS n FROM routes WHERE domain = ? AND as_of = ? AND "
                         "destination = 'brief' GROUP BY section_or_tag ORDER BY section_or_tag",
                         [domain, as_of.isoformat()])
    return "".join(f"; its {r['n']} candidate{'s' if r['n'] > 1 else ''} went to {r['section_or_tag']} (`--section "
                   f"{r['section_or_tag']} --as-of {as_of}` lists {'them' if r['n'] > 1 else 'it'})"
                   for r in routed)


def _routed_instead(store: Any, domain: str, as_of: date | None, candidate: str | None, section: str | None) -> str:
    """Where a `--candidate` that is in no archive row went instead: a brief section (`--section` lists those), on
    which nights (trial 36: an act-on candidate's "nothing in the archive" pointed nowhere), or nowhere past the
    scan, with the scan's reason (trial 40: a club its filter refused was "nothing in the archive", no more)."""
    if candidate is None or section is not None:
        return ""
    where, params = "domain = ? AND candidate_id = ?", [domain, _candidate_id(store, domain, candidate)]
    if as_of is not None:
        where, params = where + " AND as_of = ?", [*params, as_of.isoformat()]
    routed = store.query(f"SELECT section_or_tag, min(as_of) AS first, count(*) AS nights FROM routes WHERE {where} "
                         "AND destination = 'brief' GROUP BY section_or_tag ORDER BY section_or_tag", params)
    stopped = store.query(f"SELECT reason, min(as_of) AS first, count(*) AS nights FROM candidates WHERE {where} "
                          "AND NOT went_on GROUP BY reason ORDER BY first, reason", params)
    return "".join(f"; it went to {r['section_or_tag']} on {r['nights']} night(s) from {r['first']} (`--section "
                   f"{r['section_or_tag']}` lists them)" for r in routed) + "".join(
        f"; it did not go on past the scan on {r['nights']} night(s) from {r['first']}: {r['reason']}"
        for r in stopped[:3])


def _report_broken_nights(broken: list[date], ran: list[date], problems: list[str]) -> int:
    """Nights a backfill skipped after one of its nights had run: not an early night short of history but a source
    that broke mid-range (a file replaced by a bad one), said on stderr with exit 1, the nights that ran being
    stored (trial 36: five such nights skipped, exit 0, an unattended backfill's log read as fine). Nights skipped
    for the pack's metric windows alone (`problems`, each night's first) are a source's break between seasons, not a
    broken source (trial 138: a television series' first weeks after the one before had run)."""
    if not broken:
        return 0
    guess = "the source broke mid-range?"
    if problems and all(p.startswith("key `metrics.") for p in problems):
        guess = ("the pack's windows reach periods with no rows (a break between seasons, or a `window` or "
                 "`min_rows` to change?)")
    print(f"opportunity: {len(broken)} night(s) skipped after {ran[0]} had run, from {broken[0]} (each line says "
          f"why): {guess}", file=sys.stderr)
    return 1


def _report_failed_channels(store: Any, domain: str, dates: list[date], defs: dg.Definitions,
                            instance: dg.DagsterInstance) -> int:
    """One line per channel that still failed after its retries (the nights are stored all the same), and per
    channel whose claim another run left unresolved (`unresolved_claim`), which expires as the night's notifier
    says; exit 1 then."""
    from opportunity_assets.notify.logic import unresolved_claim

    expiry = timedelta(seconds=(defs.resources or {})["notifier"].claim_expiry_seconds)
    failed: dict[tuple[date, str], str] = {}
    for as_of in dates:
        for row in store.notification_rows(domain, as_of):
            if row["status"] == "failed":
                failed.setdefault((as_of, row["channel"]),
                                  f" failed after its retries: {row.get('error') or 'no error recorded'}")
            elif row["status"] == "claimed" and not _run_in_flight(instance, row["run_id"]):
                failed.setdefault((as_of, row["channel"]), f": {unresolved_claim(row['updated_at'], expiry)}")
    for (as_of, channel), said in sorted(failed.items()):
        print(f"opportunity: {as_of}: channel {channel}{said}", file=sys.stderr)
    return 1 if failed else 0


def _run_in_flight(instance: dg.DagsterInstance, run_id: str | None) -> bool:
    """Whether the Dagster run of this id is still going in `instance` (another process sending the night's
    message now): its claim is its own, not one left behind."""
    if not run_id:
        return False
    from dagster._core.storage.dagster_run import IN_PROGRESS_RUN_STATUSES

    run = instance.get_run_by_id(run_id)
    return run is not None and run.status in IN_PROGRESS_RUN_STATUSES


if __name__ == "__main__":
    raise SystemExit(main())
