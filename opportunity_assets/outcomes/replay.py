"""Past nights for judgment quality, read or replayed (I/O: the point-in-time source, the store, Dagster runs).

- Outcomes: the pack's outcome window is read with the scanner's own point-in-time query (`read_snapshot`) and
  scan (so candidate ids are the night's), once as known on the night and once as known on its outcome date:
  an outcome is a metric computed as of a later date.
- Verdicts of a pack replayed in-process for the calibration gate: the scan and formula code a night runs.
- The backtest: nights run through Dagster or reused from the store, their outcomes materialized, the report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.candidates.logic import scan, scan_read
from opportunity_assets.check.pack import check_pack
from opportunity_assets.criteria import CriteriaError, CriteriaPack, MetricSpec, OutcomeSpec
from opportunity_assets.night import execute_job, resources_of, run_night
from opportunity_assets.outcomes.calibration import (
    NOT_ANALYZED,
    CalibrationConfig,
    CalibrationError,
    CalibrationResult,
    Pair,
    Samples,
    build_samples,
    decide,
    label_pairs,
    latest_judgments,
    rule_shape_findings,
)
from opportunity_assets.outcomes.logic import (
    BacktestReport,
    Outcome,
    OutcomeStatus,
    VerdictOutcome,
    build_report,
    measure_outcome,
    night_medians,
    outcome_date,
    outcomes_said,
)
from opportunity_assets.records import Status, Verdict
from opportunity_assets.sources.snapshot import SourceSnapshot, read_snapshot
from resources.store import ResultStore

Reader = Callable[[CriteriaPack, date], SourceSnapshot]
_WINDOW_ROWS = "outcome_window_rows"
"""The metric added to a pack so that the point-in-time query returns the outcome windows' rows."""


def require_outcome(pack: CriteriaPack) -> OutcomeSpec:
    if pack.outcome is None:
        raise CriteriaError(f"criteria file {pack.pack_path}: key `outcome`: missing; expected an `outcome:` section "
                            "(metric, agg, window_periods, horizon_periods) saying how verdicts are scored afterwards")
    return pack.outcome


def rows_as_known(pack: CriteriaPack, on: date, read: Reader = read_snapshot) -> tuple[date | None, dict[str, Any]]:
    """The latest period published by `on`, and per candidate id the rows published by `on` that reach back far
    enough for the outcome window (its periods plus a year: the latest period may lie past t0 + horizon)."""
    spec = require_outcome(pack)
    reach = MetricSpec(agg="coverage", columns=[spec.metric], window=(0, spec.window_periods + pack.grain.per_year))
    probe = pack.model_copy(update={"metrics": {**pack.metrics, _WINDOW_ROWS: reach}})
    snapshot = read(probe, on)
    found, _ = scan(probe, on, snapshot.anchor_period, snapshot.metrics, snapshot.history, window_rows=True,
                    before_own=snapshot.before_own)
    return snapshot.anchor_period, {c.id: c.raw_data for c in found}


def measure_night(pack: CriteriaPack, as_of: date, candidate_ids: Iterable[str], *, today: date,
                  read: Reader = read_snapshot,
                  known: dict[date, tuple[date | None, dict[str, Any]]] | None = None) -> dict[str, Outcome]:
    """Outcomes of the night's candidates. The later window is read as known on the outcome date, never later,
    and not at all while that date is after today. `known`: reads already made, by date (reused, extended)."""
    spec = require_outcome(pack)
    cache = known if known is not None else {}

    def rows(on: date) -> tuple[date | None, dict[str, Any]]:
        if on not in cache:
            cache[on] = rows_as_known(pack, on, read)
        return cache[on]

    anchor, start = rows(as_of)
    when = outcome_date(spec, as_of, pack.grain)
    end_anchor, end = rows(when) if when <= today else (None, {})
    end_period = None if anchor is None else pack.grain.back(anchor, -spec.horizon_periods)
    # only where the end window was not published by the outcome date: is it late, or a period the source skips?
    latest = rows(today)[0] if when <= today and end_period is not None and (
        end_anchor is None or end_anchor < end_period) else None
    return {cid: measure_outcome(spec, as_of=as_of, candidate_id=cid, anchor=anchor, start_rows=start.get(cid, []),
                                 end_rows=end.get(cid, []), end_anchor=end_anchor, today=today,
                                 grain=pack.grain, latest=latest)
            for cid in candidate_ids}


def replay_verdicts(pack: CriteriaPack, as_of: date, read: Reader = read_snapshot) -> dict[str, str]:
    """Each scanned candidate's verdict under `pack` on `as_of` (NOT_ANALYZED when it did not go on), by the same
    scan and formula code a night runs (verdicts are code; a model never changes one)."""
    snapshot = read(pack, as_of)
    found, _ = scan_read(pack, as_of, snapshot)
    return {c.id: analyze(pack, c).verdict.value if c.went_on else NOT_ANALYZED for c in found}


def refusal(pack: CriteriaPack, as_of: date) -> str | None:
    """The first problem for which `run` would refuse the pack's night, if any: such a night decides nothing, so
    the calibration gate leaves it out in its line, as the backtest does (trial 55: a range over the years an
    extract skips scored both packs on nights of data gaps only, "Nights 9 ... Q3 NO-OP")."""
    problems = check_pack(pack, as_of, with_facts=False).problems
    return problems[0] if problems else None


# ---- the backtest ------------------------------------------------------------------------------------------
def stored_verdict_outcomes(store: ResultStore, pack: CriteriaPack,
                            nights: Sequence[date]) -> tuple[list[VerdictOutcome], list[date]]:
    """The stored outcomes of these criteria's verdicts, measured by the pack's current `outcome:`, and the nights
    asked for that have none (no stored night of these criteria, or one with analyses but no such outcomes)."""
    definition = require_outcome(pack).model_dump_json()
    counts = store.query(
        "SELECT n.as_of, n.criteria_fingerprint AS fingerprint, "
        "(SELECT count(*) FROM analyses a WHERE a.domain = n.domain AND a.as_of = n.as_of) AS analyzed, "
        "(SELECT count(*) FROM outcomes o WHERE o.domain = n.domain AND o.as_of = n.as_of "
        " AND o.criteria_fingerprint = n.criteria_fingerprint AND o.outcome_definition = ?) AS measured "
        "FROM nights n WHERE n.domain = ? AND n.as_of = ANY(CAST(? AS DATE[]))",
        [definition, pack.domain, list(nights)])
    present = {r["as_of"] for r in counts if r["fingerprint"] == pack.fingerprint
               and (r["measured"] > 0 or r["analyzed"] == 0)}
    rows = [VerdictOutcome(as_of=r["as_of"], candidate_id=r["candidate_id"],
                           verdict=Verdict(r["verdict"]) if r["verdict"] else None,
                           verification=Status(r["verification"]) if r["verification"] else None,
                           outcome=Outcome.model_validate_json(r["record"]))
            for r in store.outcomes(pack.domain, sorted(present))
            if r["criteria_fingerprint"] == pack.fingerprint and r["outcome_definition"] == definition]
    return rows, sorted(set(nights) - present)


def backtest_report(store: ResultStore, pack: CriteriaPack, nights: Sequence[date]) -> BacktestReport:
    spec = require_outcome(pack)
    rows, missing = stored_verdict_outcomes(store, pack, nights)
    return build_report(domain=pack.domain, fingerprint=pack.fingerprint, spec=spec, rows=rows, nights=nights,
                        missing=missing, grain=pack.grain)


def backtest_png_path(store_path: str, domain: str, nights: Sequence[date]) -> Path:
    """Where the backtest's plot goes: beside the store, named by domain and range."""
    first, last = (min(nights), max(nights)) if nights else ("none", "none")
    return Path(store_path).resolve().parent / "backtest" / f"{domain}-{first}-{last}.png"


def run_backtest(defs: dg.Definitions, instance: dg.DagsterInstance, nights: Sequence[date], *, every: str,
                 say: Callable[[str], None]) -> BacktestReport:
    """Run the nights of the range that the store lacks for these criteria (reusing the others), materialize
    their outcomes, then the `backtest` asset (report and plot in the UI); return the report. A night `run` would
    refuse (an early night whose windows reach past the history) is skipped in its line, as `backfill` skips it,
    and counts as missing: it stopped the whole backtest in Dagster's words (trial 36)."""
    pack, store = resources_of(defs)
    require_outcome(pack)
    if not nights:
        raise ValueError("no nights in the range")
    for as_of in nights:
        night = store.night(pack.domain, as_of)
        reuse = (night is not None and night["criteria_fingerprint"] == pack.fingerprint
                 and store.brief(pack.domain, as_of) is not None)
        if not reuse:
            if problem := refusal(pack, as_of):
                say(f"{as_of}  skipped: {problem}")
                continue
            run_night(defs, instance, as_of)
        execute_job(defs, "outcomes_night", instance, partition_key=as_of.isoformat())
        said = outcomes_said(_night_statuses(store, pack, as_of), pack.outcome, pack.grain.plural)
        say(f"{as_of}  {'reused' if reuse else 'ran   '}  {said}")
    execute_job(defs, "backtest_report", instance, ops={"backtest": {"config": {
        "start": min(nights).isoformat(), "end": max(nights).isoformat(), "every": every}}})
    return backtest_report(store, pack, nights)


def _night_statuses(store: ResultStore, pack: CriteriaPack, as_of: date) -> list[OutcomeStatus]:
    """The statuses of the night's outcomes stored for these criteria and their `outcome:`."""
    return [row.outcome.status for row in stored_verdict_outcomes(store, pack, [as_of])[0]]


# ---- the calibration gate ----------------------------------------------------------------------------------
def _keyed(pack: CriteriaPack) -> str:
    """How a pack's source names its candidates: its entity column (or list), or the one `entity` of a single
    series."""
    return repr(pack.source.entity_id) if pack.source.entity is None else f"entity {pack.source.entity!r}"


def _same_candidates(new: CriteriaPack, old: CriteriaPack) -> None:
    """Both packs must judge the same candidates by the same yardstick."""
    if new.domain != old.domain:
        raise CalibrationError(f"domains differ: NEW {new.domain!r}, OLD {old.domain!r}; judgments are per domain")
    if (new.source_path, _keyed(new)) != (old.source_path, _keyed(old)):
        raise CalibrationError(f"sources differ: NEW reads {new.source_path} by {_keyed(new)}, OLD "
                               f"{old.source_path} by {_keyed(old)}; the candidates must be the same")
    if new.outcome is not None and new.outcome != old.outcome:
        raise CalibrationError("NEW changes the `outcome:` section; the yardstick must not move with the change "
                               "(labels come from OLD's outcome definition)")


def run_calibration(new: CriteriaPack, old: CriteriaPack, store: ResultStore, nights: Sequence[date],
                    config: CalibrationConfig, *, today: date, read: Reader = read_snapshot) -> CalibrationResult:
    """Agreement of OLD and NEW with the labels on the bad cases and the population; the quadrant.

    Judged nights inside [first, last night] join the nights even off the `--every` grid: no label is ignored.
    """
    _same_candidates(new, old)
    spec = require_outcome(old)
    if not nights:
        raise CalibrationError("no nights in the range")
    first, last = min(nights), max(nights)
    judged = latest_judgments(store.judgments(old.domain, start=first, end=last))
    asked = sorted(set(nights) | {as_of for as_of, _ in judged})
    refused = {as_of: problem for as_of in asked if (problem := refusal(old, as_of) or refusal(new, as_of))}
    skipped = [f"{as_of}  skipped: {problem}" for as_of, problem in refused.items()]
    all_nights = [as_of for as_of in asked if as_of not in refused]
    if not all_nights:
        raise CalibrationError(f"every night of the range is one `run` refuses ({skipped[0]}): expected a range "
                               "whose nights the packs can run")
    latest = read(new, all_nights[-1])
    findings = rule_shape_findings(new, zip(latest.metrics["entity_id"].to_list(),
                                            latest.metrics["entity_name"].to_list(), strict=True))
    if findings:
        return decide(config=config, nights=len(all_nights), labels={}, samples=Samples(bad=[], population=[]),
                      old_verdicts={}, new_verdicts={}, findings=findings, skipped=skipped)
    old_verdicts: dict[Pair, str] = {}
    new_verdicts: dict[Pair, str] = {}
    outcomes: dict[Pair, Outcome] = {}
    analyzed_by_old: set[Pair] = set()
    known: dict[date, tuple[date | None, dict[str, Any]]] = {}
    for as_of in all_nights:
        old_night, new_night = replay_verdicts(old, as_of, read), replay_verdicts(new, as_of, read)
        went_on = {cid for cid, v in old_night.items() if v != NOT_ANALYZED}
        universe = went_on | {cid for cid, v in new_night.items() if v != NOT_ANALYZED} | {
            cid for day, cid in judged if day == as_of}
        for cid in universe:
            old_verdicts[(as_of, cid)] = old_night.get(cid, NOT_ANALYZED)
            new_verdicts[(as_of, cid)] = new_night.get(cid, NOT_ANALYZED)
        analyzed_by_old |= {(as_of, cid) for cid in went_on}
        measured = measure_night(old, as_of, sorted(universe), today=today, read=read, known=known)
        outcomes |= {(as_of, cid): o for cid, o in measured.items()}
    reference = [VerdictOutcome(as_of=p[0], candidate_id=p[1], verdict=Verdict(old_verdicts[p]), verification=None,
                                outcome=outcomes[p]) for p in sorted(analyzed_by_old)]
    labels = label_pairs(judged, outcomes, night_medians(reference), spec.direction, spec.change)
    old_acts = {p: v == Verdict.STRONG.value for p, v in old_verdicts.items()}
    samples = build_samples(labels, old_acts, judged, config.population_share)
    return decide(config=config, nights=len(all_nights), labels=labels, samples=samples, old_verdicts=old_verdicts,
                  new_verdicts=new_verdicts, findings=findings, skipped=skipped)
