"""A night's per-candidate work, without Dagster: analyze, then verify, each candidate in its own thread.

A candidate's verifier call starts as soon as its own analysis is done, so the night's critical path is its
slowest candidate's two model calls, not the slowest analysis plus the slowest verification plus a step boundary.
Either stage can run alone (the UI can materialize one asset): verify-only reads the stored analyses.
Every raise is that candidate's error record; the others go on (DESIGN §3).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from opportunity_assets import history, schemas, tables
from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.routing import route
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import format_score
from opportunity_assets.llm.steps import Judged, judge_analysis, judge_verification
from opportunity_assets.partitions import candidate_key, split_candidate_key
from opportunity_assets.per_candidate.fanout import error_record, run_bounded
from opportunity_assets.reasons import candidate_rows
from opportunity_assets.records import Analysis, Candidate, RunError, Verification
from opportunity_assets.verifications.logic import verify
from resources.model import ModelReply, ModelResource
from resources.store import ResultStore

_VERIFY_NODES = ("verify", "verifier_model")


@dataclass(frozen=True)
class Stages:
    """Which assets the run materializes."""

    analyze: bool
    verify: bool

    @property
    def first_node(self) -> str:
        return "analyze" if self.analyze else "verify"


def load_night_inputs(store: ResultStore, domain: str, keys: Sequence[str], *, node: str,
                      needs_analysis: bool = False) -> tuple[list[tuple[Candidate, Analysis | None]], list[RunError]]:
    """The scanned candidate (and its analysis) for each partition key; a key without them is an error record,
    except a candidate whose analysis already failed (its `analyze` error stands for it)."""
    by_night: dict[date, list[str]] = defaultdict(list)
    for key in keys:
        as_of, candidate_id = split_candidate_key(key)
        by_night[as_of].append(candidate_id)
    found: list[tuple[Candidate, Analysis | None]] = []
    missing: list[RunError] = []
    with store.session():
        nights = {as_of: (store.candidates(domain, as_of, went_on_only=True),
                          store.analyses(domain, as_of) if needs_analysis else [],
                          store.errors(domain, as_of)) for as_of in by_night}
    for as_of, ids in sorted(by_night.items()):
        stored_candidates, stored_analyses, stored_errors = nights[as_of]
        scanned = {c.id: c for c in stored_candidates}
        analyzed = {a.candidate_id: a for a in stored_analyses}
        failed_before = {e.candidate_id for e in stored_errors if e.node == "analyze"}
        for candidate_id in ids:
            if candidate_id not in scanned:
                missing.append(RunError(as_of=as_of, candidate_id=candidate_id, node=node,
                                        error=f"no scanned candidate going on for {as_of}|{candidate_id}: "
                                              "re-run candidates for that night"))
            elif needs_analysis and candidate_id in failed_before:
                continue  # its analysis failed and says so in its own error record; nothing to verify
            elif needs_analysis and candidate_id not in analyzed:
                missing.append(RunError(as_of=as_of, candidate_id=candidate_id, node=node,
                                        error="no analysis to verify (the analysis failed or has not run)"))
            else:
                found.append((scanned[candidate_id], analyzed.get(candidate_id)))
    return found, missing


def _earlier_analyses(store: ResultStore, domain: str,
                      candidates: Sequence[Candidate]) -> dict[str, list[dict[str, Any]]]:
    """Per partition key, the candidate's stored analyses of the nights before its own (one query a night)."""
    by_night: dict[date, list[str]] = defaultdict(list)
    for c in candidates:
        by_night[c.as_of].append(c.id)
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with store.session():
        for as_of, ids in by_night.items():
            for row in store.score_history(domain, ids, up_to=as_of - timedelta(days=1)):
                out[candidate_key(as_of, row["candidate_id"])].append(row)
    return out


@dataclass(frozen=True)
class _CandidateWork:
    analysis: Judged[Analysis] | None
    verification: Judged[Verification] | None
    verify_error: RunError | None
    """The verify stage raised (an analyze raise is the pool's error record for the candidate)."""
    analysis_seconds: float
    name: str = ""
    """The candidate's shown name (its partitions' first metadata entry)."""
    verification_metadata: dict[str, Any] | None = None
    """The verifications partition's metadata (`_describe_verification`), with the verification."""


def _usage(reply: ModelReply | None, error: RunError | None) -> dict[str, Any]:
    """Per-partition model usage, or why the model step added nothing."""
    if error is not None:
        return {"model": f"failed: {error.error}"}
    if reply is None:
        return {}
    return {"model": "replayed" if reply.replayed else "called", "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens, "cache_read_tokens": reply.cache_read_tokens,
            "usd": round(reply.usd, 6)}


def _describe_analysis(pack: CriteriaPack, name: str, judged: Judged[Analysis], seconds: float,
                       earlier: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The candidate's shown name (its partition key holds only its id: trial 119's `1997-06-30|analogic-corp` named
    ANALOGIC CORP nowhere), then the partition's own fields (verdict, score, inputs by their units, what is missing,
    red flags, its score across nights), then the inputs' provenance and the calculation step by step; timing and
    model usage last. No night totals. `earlier`: the candidate's stored analyses of earlier nights."""
    a = judged.record
    thresholds = {"strong": pack.thresholds.strong, "marginal": pack.thresholds.marginal}
    return {"candidate": name, "verdict": a.verdict.value,
            "score": format_score(a.score, pack.thresholds.levels) if a.score is not None else "none",
            "inputs": tables.bullets(f"{name}: {value}" for name, value in tables.rounded_inputs(pack, a).items()),
            **({"missing": ", ".join(a.missing)} if a.missing else {}),
            "red_flags": tables.bullets(a.red_flags),
            "history": history.history_markdown(history.points(earlier, a), thresholds),
            "provenance": tables.inputs_table(pack, a), "calculation": tables.calculation_table(pack, a),
            "assumptions": tables.bullets(a.assumptions), "seconds": round(seconds, 4),
            **_usage(judged.reply, judged.model_error)}


def _describe_verification(pack: CriteriaPack, candidate: Candidate, analysis: Analysis, judged: Judged[Verification],
                            seconds: float) -> dict[str, Any]:
    """The candidate's shown name; where the router's fixed rules send it and why, in words (the archive's reason:
    `MARGINAL: score 65.1 below strong 70.0`); then status, failed checks, findings and the fatal assumption; then
    each check and each sensitivity trial."""
    v = judged.record
    routed = route(analysis, v)
    [row] = candidate_rows(pack, [candidate], [analysis], [v], [routed])
    return {"candidate": candidate.name, "routed_to": f"{routed.destination.value}: {routed.section_or_tag}",
            "why": row.reason,
            "status": v.status.value, "failed_checks": ", ".join(v.failed_checks) or "none",
            "findings": tables.findings(v), "fatal_assumption": v.fatal_assumption or "none",
            "key_assumption": v.key_assumption or "none", "to_resolve": v.to_resolve or "nothing to resolve",
            "reason": v.reason, "checks": tables.checks_table(v), "sensitivity": tables.sensitivity_table(v),
            "model_noise": v.model_noise, "seconds": round(seconds, 4), **_usage(judged.reply, judged.model_error)}


@dataclass
class NightWork:
    """What the run's candidates got: records, error records, and per-partition metadata for each asset."""

    analyses: list[Analysis] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)
    errors: list[RunError] = field(default_factory=list)
    """Fatal (`analyze`, `verify`: the stage's record is missing) and model (`*_model`: the code's record stands)."""
    cleared: list[tuple[date, str, str]] = field(default_factory=list)
    """(as_of, candidate, node): old error records that this run's successes supersede."""
    analysis_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per partition key (`tables.Table` and `tables.Markdown` values among them: `metadata.as_metadata`)."""
    verification_metadata: dict[str, dict[str, Any]] = field(default_factory=dict)

    def store_writes(self, *, with_verifications: bool) -> dict[str, Any]:
        """`ResultStore.write_stage` arguments; without the verify stage's records when they are withheld."""
        if with_verifications:
            return {"analyses": self.analyses, "verifications": self.verifications, "errors": self.errors,
                    "cleared": self.cleared}
        return {"analyses": self.analyses, "errors": [e for e in self.errors if e.node not in _VERIFY_NODES],
                "cleared": [c for c in self.cleared if c[2] not in _VERIFY_NODES]}

    def add_analysis(self, pack: CriteriaPack, key: str, name: str, judged: Judged[Analysis], seconds: float,
                     earlier: Sequence[dict[str, Any]]) -> None:
        self.analyses.append(judged.record)
        self.analysis_metadata[key] = _describe_analysis(pack, name, judged, seconds, earlier)
        self._supersede(judged.record.as_of, judged.record.candidate_id, "analyze", "analyzer_model",
                        judged.model_error)

    def add_verification(self, key: str, judged: Judged[Verification], metadata: dict[str, Any]) -> None:
        self.verifications.append(judged.record)
        self.verification_metadata[key] = metadata
        self._supersede(judged.record.as_of, judged.record.candidate_id, "verify", "verifier_model",
                        judged.model_error)

    def _supersede(self, as_of: date, candidate_id: str, node: str, model_node: str,
                   model_error: RunError | None) -> None:
        """A stage's record clears its old error records; its model step's too, unless that step failed again."""
        self.cleared.append((as_of, candidate_id, node))
        if model_error is None:
            self.cleared.append((as_of, candidate_id, model_node))
        else:
            self.errors.append(model_error)

    def add_error(self, key: str, error: RunError, stages: Stages) -> None:
        self.errors.append(error)
        if error.node == "analyze":
            self.analysis_metadata[key] = {"error": error.error}
            if stages.verify:
                self.verification_metadata[key] = {"error": "not verified: the analysis failed"}
        else:
            self.verification_metadata[key] = {"error": error.error}


def run_candidates(store: ResultStore, model: ModelResource, pack: CriteriaPack, keys: Sequence[str],
                   stages: Stages, *, max_workers: int,
                   on_record: Callable[[str, str, dict[str, Any]], None] | None = None) -> NightWork:
    """Load the partitions' candidates, run the selected stages for each in a bounded pool, and collect the
    records, error records and per-partition metadata. Nothing is written here.

    `on_record(stage, partition key, metadata)`, if given, is called from the worker thread as soon as a
    candidate's "analysis" or "verification" is done, so that recording it overlaps the other candidates' calls.
    """
    inputs, missing = load_night_inputs(store, pack.domain, keys, node=stages.first_node,
                                        needs_analysis=not stages.analyze)
    earlier = _earlier_analyses(store, pack.domain, [c for c, _ in inputs]) if stages.analyze else {}

    def work(pair: tuple[Candidate, Analysis | None]) -> _CandidateWork:
        candidate, analysis = pair
        start = time.perf_counter()
        judged_analysis = None
        if stages.analyze:  # a raise here is the pool's `analyze` error record
            judged_analysis = judge_analysis(model, pack, candidate, analyze(pack, candidate))
            analysis = judged_analysis.record
        analyzed = time.perf_counter()
        key = candidate_key(candidate.as_of, candidate.id)
        if judged_analysis is not None and on_record is not None:
            on_record("analysis", key, _describe_analysis(pack, candidate.name, judged_analysis, analyzed - start,
                                                          earlier.get(key, [])))
        if not stages.verify or analysis is None:
            return _CandidateWork(judged_analysis, None, None, analyzed - start, candidate.name)
        try:
            judged = judge_verification(model, pack, candidate, analysis, verify(pack, candidate, analysis))
        except Exception as exc:
            return _CandidateWork(judged_analysis, None, error_record(candidate.as_of, candidate.id, "verify", exc),
                                  analyzed - start, candidate.name)
        verified = time.perf_counter()
        described = _describe_verification(pack, candidate, analysis, judged, verified - analyzed)
        if on_record is not None:
            on_record("verification", key, described)
        return _CandidateWork(judged_analysis, judged, None, analyzed - start, candidate.name, described)

    outcomes = run_bounded([(c.as_of, c.id, (c, a)) for c, a in inputs], work, node=stages.first_node,
                           max_workers=max_workers)
    night = NightWork()
    for o in outcomes:
        key = candidate_key(o.as_of, o.candidate_id)
        if o.error is not None:
            night.add_error(key, o.error, stages)
            continue
        assert o.result is not None
        if o.result.analysis is not None:
            night.add_analysis(pack, key, o.result.name, o.result.analysis, o.result.analysis_seconds,
                               earlier.get(key, []))
        if o.result.verify_error is not None:
            night.add_error(key, o.result.verify_error, stages)
        elif o.result.verification is not None and o.result.verification_metadata is not None:
            night.add_verification(key, o.result.verification, o.result.verification_metadata)
    for error in missing:
        night.add_error(candidate_key(error.as_of, error.candidate_id), error, stages)
    return night


@dataclass(frozen=True)
class StageChecks:
    """The per-candidate checks' findings on a night's work, once its records are written."""

    inconsistent: list[dict[str, Any]]
    """`verdicts_consistent`: analyses whose verdict does not follow from their score and the thresholds."""
    incomplete: list[dict[str, Any]]
    """`five_checks_reported`: verifications without all five checks, or CONFIRMED with one not passed."""
    verifications_kept: bool
    """Whether the verifications were written: not when an analysis is inconsistent (a failed blocking check
    withholds what follows it)."""


def store_checked(store: ResultStore, model: ModelResource, pack: CriteriaPack, night: NightWork,
                  stages: Stages) -> StageChecks:
    """Check the night's analyses, then write its records, error records and model calls at once."""
    inconsistent = (schemas.failures(schemas.AnalysisRows, schemas.analysis_frame(pack, night.analyses))
                    if stages.analyze else [])
    kept = stages.verify and not inconsistent
    store.write_stage(pack.domain, model_log=model.drain(), **night.store_writes(with_verifications=kept))
    incomplete = (schemas.failures(schemas.VerificationRows, schemas.verification_frame(night.verifications))
                  if kept else [])
    return StageChecks(inconsistent=inconsistent, incomplete=incomplete, verifications_kept=kept)
