"""The verifier: a skeptic whose job is to kill the deal, in code first.

It recomputes every number from the candidate's raw source rows with its own implementation (Python here,
SQL in the scanner; bytecode here, a tree walk in the analyzer), never re-reading the analyzer's numbers
as truth. Five checks, each reported separately:

- arithmetic: inputs, components, score and verdict recomputed independently;
- inputs: every number sourced (right table, entity, published by as_of) and equal to the source;
- assumptions: sensitivity within each input's uncertainty band, and leave-one-period-out; a verdict whose
  act/don't-act side flips is fragile, and the input that flips it is the `fatal_assumption`;
- omissions: the pack's checklist, and every red flag whose rule holds is reported;
- constraints: every hard filter truly PASS, recomputed; none UNCLEAR-then-passed.

Besides the arithmetic, the skeptic doubts the rows themselves (`integrity.py`): integrity findings join the
inputs check, plausibility findings the assumptions check, and a red flag that holds joins the assumptions check
too. What each does is its pack rule's effect: `note` is reported only; `doubt` makes a STRONG verdict UNCERTAIN
(it does not act on doubted data); `reject` makes any verdict REJECTED.

Status: a failed code check or a `reject` → REJECTED; a fragile verdict, an unresolvable check or a `doubt` on a
STRONG → UNCERTAIN; all five pass → CONFIRMED.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from opportunity_assets import expressions
from opportunity_assets.criteria import CriteriaPack, MetricSpec
from opportunity_assets.formatting import format_score, significant
from opportunity_assets.periods import rows_in_window
from opportunity_assets.records import (
    Analysis,
    Candidate,
    CheckOutcome,
    DataFinding,
    FilterResult,
    Perturbation,
    Status,
    Verdict,
    Verification,
)
from opportunity_assets.verifications import integrity
from opportunity_assets.verifications.stand_in import seasonal_stand_ins

CHECKS = ("arithmetic", "inputs", "assumptions", "omissions", "constraints")
_HARD_CHECKS = ("arithmetic", "inputs", "omissions", "constraints")
"""Checks whose failure means the analysis is wrong (REJECTED); `assumptions` failing means fragile."""
_TOLERANCE = 1e-6


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)


# ---- independent recomputation ---------------------------------------------------------------------------
def _fsum(values: list[float]) -> float:
    """An exact sum, as the scan's `fsum`: beyond the largest float it is infinite, as DuckDB's is (Python's own
    raises "intermediate overflow", which failed the verification of a market with a median of 9e307)."""
    try:
        return math.fsum(values)
    except OverflowError:
        return sum(values)


def recompute_metric(spec: MetricSpec, raw_data: list[dict[str, Any]], as_of: date,
                     drop_period: str | None = None, stand_in: float | None = None) -> float | None:
    """A metric from raw rows, in plain Python. `drop_period` leaves one period out: `stand_in` is read in its place
    (a sum or an average; `stand_in.seasonal_stand_ins`), else the other periods' average (a sum keeps its scale)."""
    if spec.agg == "age_days":  # the latest period's value, dated by its publication
        valued = [r for r in raw_data if r.get(spec.value_column) is not None]
        return float((as_of - date.fromisoformat(max(valued, key=lambda r: r["period"])["published_at"])).days) \
            if valued else None
    rows = [r for r in rows_in_window(raw_data, spec.window) if r["period"] != drop_period]
    length = spec.window[1] - spec.window[0] + 1
    if spec.agg == "coverage":
        columns = spec.columns or []
        filled = sum(1 for r in rows for c in columns if r.get(c) is not None)
        return filled / (len(columns) * length)
    column = spec.value_column
    cells = sorted((int(r["periods_ago"]), float(r[column])) for r in rows if r.get(column) is not None)
    needed = spec.required_rows if drop_period is None else min(spec.required_rows, length - 1)
    if not cells or len(cells) < needed:
        return None
    values = [v for _, v in cells]
    if drop_period is not None and stand_in is not None and spec.agg in ("sum", "avg"):
        values = [*values, stand_in]
        return _fsum(values) / (1 if spec.agg == "sum" else len(values))
    if spec.agg == "sum":  # with a period left out: as if it had been the average of the others
        return _fsum(values) * ((len(values) + 1) / len(values) if drop_period else 1.0)
    if spec.agg == "avg":
        return _fsum(values) / len(values)
    if spec.agg == "min":
        return min(values)
    if spec.agg == "max":
        return max(values)
    return cells[0][1]  # last: the most recent filled period


def _normalise(raw: float, low: float, high: float, higher_is_better: bool) -> float:
    worst, best = (0.0, 1.0) if higher_is_better else (1.0, 0.0)
    if raw <= low:
        return worst
    if raw >= high:
        return best
    return worst + (best - worst) * (raw - low) / (high - low)


@dataclass(frozen=True)
class _Recomputed:
    components: dict[str, float]
    score: float
    verdict: Verdict


def _score(pack: CriteriaPack, inputs: Mapping[str, float | None]) -> _Recomputed:
    """Raises expressions.MissingValue when an input is missing or the arithmetic is undefined."""
    components, raws = {}, {}
    for c in pack.formula.components:
        raw = expressions.evaluate_compiled(c.parsed, inputs)
        raws[c.name] = raw
        components[c.name] = _normalise(raw, c.range[0], c.range[1], c.direction == "higher_is_better")
    score = math.fsum(c.weight * components[c.name] for c in pack.formula.components) * pack.formula.scale
    if score >= pack.thresholds.strong:
        verdict = Verdict.STRONG
    elif score >= pack.thresholds.marginal:
        verdict = Verdict.MARGINAL
    else:
        verdict = Verdict.SKIP
    return _Recomputed(components={**components, **{f"{k}_raw": v for k, v in raws.items()}}, score=score,
                       verdict=verdict)


# ---- the five checks -------------------------------------------------------------------------------------
def _arithmetic(pack: CriteriaPack, analysis: Analysis, truth: dict[str, float | None]) -> CheckOutcome:
    levels = pack.thresholds.levels
    try:
        redo = _score(pack, truth)
    except expressions.MissingValue as exc:
        if analysis.verdict == Verdict.INSUFFICIENT_DATA:
            return CheckOutcome(passed=True, finding=f"No score is right: recomputation also lacks data ({exc}).")
        return CheckOutcome(passed=False, finding=f"Analysis scored {analysis.score} but the source cannot "
                                                  f"support a score ({exc}).")
    if analysis.verdict == Verdict.INSUFFICIENT_DATA:
        return CheckOutcome(passed=False, finding=f"Analysis said INSUFFICIENT_DATA ({analysis.missing}) but the "
                                                  f"source supports score {format_score(redo.score, levels)}.")
    problems = []
    steps = {s.name: s.value for s in analysis.calculation}
    for c in pack.formula.components:
        if c.name not in steps or not _close(steps[c.name], redo.components[f"{c.name}_raw"]):
            redone = redo.components[f"{c.name}_raw"]
            problems.append(f"{c.name}: analysis {steps.get(c.name)}, recomputed {redone:.6g}")
        if not _close(analysis.components.get(c.name, math.nan), redo.components[c.name]):
            problems.append(f"{c.name} normalised: analysis {analysis.components.get(c.name)}, recomputed "
                            f"{redo.components[c.name]:.6g}")
    if analysis.score is None or not _close(analysis.score, redo.score):
        problems.append(f"score: analysis {analysis.score}, recomputed {redo.score:.6g}")
    if analysis.verdict != redo.verdict:
        problems.append(f"verdict: analysis {analysis.verdict}, recomputed {redo.verdict}")
    if problems:
        return CheckOutcome(passed=False, finding="Recomputation disagrees: " + "; ".join(problems) + ".")
    return CheckOutcome(passed=True, finding=f"Recomputed from {len(truth)} source metrics: score "
                                             f"{format_score(redo.score, levels)}, {redo.verdict}; all steps agree.")


def _inputs(pack: CriteriaPack, candidate: Candidate, analysis: Analysis,
            truth: dict[str, float | None]) -> CheckOutcome:
    problems = []
    for name, number in analysis.numbers.items():
        src = number.source
        if name not in pack.metrics:
            problems.append(f"{name} is not a pack metric")
            continue
        if src.table != pack.source.table or src.entity != candidate.id:
            problems.append(f"{name} sourced from {src.table}/{src.entity}, expected "
                            f"{pack.source.table}/{candidate.id}")
        if src.published_at > candidate.as_of:
            problems.append(f"{name} published {src.published_at}, after as_of {candidate.as_of} (look-ahead)")
        actual = truth.get(name)
        if actual is None:
            problems.append(f"{name} = {significant(number.value, 8)} but the source has no value for it (invented)")
        elif not _close(number.value, actual):
            problems.append(f"{name} = {significant(number.value, 8)} but the source gives "
                            f"{significant(actual, 8)}")
    for name in pack.required_inputs:
        if name not in analysis.numbers and not any(m.split(" ")[0] == name for m in analysis.missing):
            problems.append(f"required input {name} neither reported nor declared missing")
    if problems:
        return CheckOutcome(passed=False, finding="; ".join(problems) + ".")
    return CheckOutcome(passed=True, finding=f"All {len(analysis.numbers)} numbers are sourced from "
                                             f"{pack.source.table}/{candidate.id}, published by "
                                             f"{candidate.as_of}, and equal the source.")


@dataclass(frozen=True)
class _Sensitivity:
    outcome: CheckOutcome
    trials: list[Perturbation]
    fatal: Perturbation | None
    key: Perturbation | None


def _describe(pack: CriteriaPack, base: _Recomputed, trial: Perturbation) -> str:
    levels = pack.thresholds.levels
    return (f"{trial.input} {trial.change} turns score {format_score(base.score, levels)} into "
            f"{format_score(trial.score, levels)} ({base.verdict} -> {trial.verdict})")


def _assumptions(pack: CriteriaPack, candidate: Candidate, analysis: Analysis,
                 truth: dict[str, float | None]) -> _Sensitivity:
    if analysis.verdict == Verdict.INSUFFICIENT_DATA:
        return _Sensitivity(CheckOutcome(passed=True, finding="Not applicable: no verdict to flip."), [], None, None)
    try:
        base = _score(pack, truth)
    except expressions.MissingValue as exc:
        return _Sensitivity(CheckOutcome(passed=None, finding=f"Sensitivity not computable: {exc}."), [], None, None)
    strong = base.verdict == Verdict.STRONG
    trials: list[Perturbation] = []

    def trial(name: str, change: str, relative: float | None, value: float | None) -> None:
        try:
            moved = _score(pack, pack.with_derived({**truth, name: value}, keep=frozenset({name})))
        except expressions.MissingValue:
            return
        trials.append(Perturbation(input=name, change=change, relative_change=relative, score=moved.score,
                                   verdict=moved.verdict, flips=(moved.verdict == Verdict.STRONG) != strong))

    for name, band in pack.uncertainty.items():
        for sign in (-1, 1):
            trial(name, f"{sign * band:+.0%}", sign * band, (truth[name] or 0.0) * (1 + sign * band))
    for name in dict.fromkeys(m for required in pack.required_inputs for m in pack.base_metrics(required)):
        spec = pack.metrics[name]
        if spec.agg in ("coverage", "age_days") or spec.window[0] == spec.window[1]:
            continue
        seasonal = seasonal_stand_ins(spec, candidate.raw_data, pack.grain.per_year)
        for row in rows_in_window(candidate.raw_data, spec.window):
            if row.get(spec.value_column) is not None:
                trial(name, f"without {pack.grain.label(date.fromisoformat(row['period']))}", None,
                      recompute_metric(spec, candidate.raw_data, candidate.as_of, drop_period=row["period"],
                                       stand_in=seasonal.get(row["period"])))
    if not trials:
        return _Sensitivity(CheckOutcome(passed=True, finding="No perturbation applies."), [], None, None)
    key = max(trials, key=lambda t: abs(t.score - base.score))
    flips = [t for t in trials if t.flips]
    if flips:
        fatal = max(flips, key=lambda t: abs(t.score - base.score))
        return _Sensitivity(CheckOutcome(passed=False, finding=f"Fragile: {len(flips)} of {len(trials)} "
                                         f"perturbations flip the act/don't-act side; worst: "
                                         f"{_describe(pack, base, fatal)}."), trials, fatal, key)
    return _Sensitivity(CheckOutcome(passed=True, finding=f"Robust: none of {len(trials)} perturbations "
                                     f"(uncertainty bands, leave-one-{pack.grain.name}-out) flips the verdict's "
                                     f"side; largest move: {_describe(pack, base, key)}."), trials, None, key)


def _omissions(pack: CriteriaPack, analysis: Analysis, truth: dict[str, float | None]) -> CheckOutcome:
    omitted, unresolvable = [], []
    for item in pack.omissions:
        absent = [name for name in item.requires if name not in analysis.numbers]
        if any(truth.get(name) is not None for name in absent):
            omitted.append(f"{item.name} ({item.description}) not covered: {absent} exist in the source")
        elif absent:
            unresolvable.append(f"{item.name}: no data for {absent}")
    for rule in pack.red_flags:
        try:
            holds = expressions.evaluate_compiled(rule.parsed, truth)
        except expressions.MissingValue:
            continue
        if holds and not any(flag.startswith(f"{rule.name}:") for flag in analysis.red_flags):
            omitted.append(f"red flag {rule.name} holds ({rule.when}) but is not reported")
    if omitted:
        return CheckOutcome(passed=False, finding="; ".join(omitted) + ".")
    if unresolvable:
        return CheckOutcome(passed=None, finding="Could not check " + "; ".join(unresolvable) + ".")
    return CheckOutcome(passed=True, finding=f"All {len(pack.omissions)} checklist items covered; every red "
                                             "flag that holds is reported.")


def _constraints(pack: CriteriaPack, candidate: Candidate, truth: dict[str, float | None]) -> CheckOutcome:
    problems, unclear = [], []
    for hard_filter in pack.hard_filters:
        recorded = candidate.filters.get(hard_filter.name)
        value = truth.get(hard_filter.metric)
        actual = FilterResult.UNCLEAR if value is None else (
            FilterResult.PASS if hard_filter.holds(value) else FilterResult.FAIL)
        if recorded == FilterResult.UNCLEAR or actual == FilterResult.UNCLEAR:
            unclear.append(f"{hard_filter.name} UNCLEAR ({hard_filter.metric} missing) yet the candidate went on")
        elif recorded != FilterResult.PASS or actual != FilterResult.PASS:
            shown = "missing" if value is None else significant(value, 8)
            problems.append(f"{hard_filter.name}: recorded {recorded}, recomputed {actual} "
                            f"({hard_filter.metric} = {shown} {hard_filter.op} {significant(hard_filter.value, 8)})")
    if problems:
        return CheckOutcome(passed=False, finding="; ".join(problems) + ".")
    if unclear:
        return CheckOutcome(passed=None, finding="; ".join(unclear) + ".")
    return CheckOutcome(passed=True, finding=f"All {len(pack.hard_filters)} hard filters recomputed PASS.")


def combine(checks: dict[str, CheckOutcome], rejected: Sequence[str] = ()) -> tuple[Status, list[str], str]:
    """The status from the five checks. `rejected`: checks failed by a `reject` finding (REJECTED whichever)."""
    failed = [name for name in CHECKS if checks[name].passed is False]
    hard = [name for name in failed if name in _HARD_CHECKS or name in rejected]
    open_ = [name for name in CHECKS if checks[name].passed is None]
    if hard:
        return Status.REJECTED, failed, f"Failed code check(s): {', '.join(hard)}."
    if failed or open_:
        parts = ([f"fragile verdict ({', '.join(failed)})"] if failed else []) + \
                ([f"unresolved: {', '.join(open_)}"] if open_ else [])
        return Status.UNCERTAIN, failed, "; ".join(parts).capitalize() + "."
    return Status.CONFIRMED, [], "All five checks pass."


def _red_flag_findings(pack: CriteriaPack, candidate: Candidate, truth: dict[str, float | None]) -> list[DataFinding]:
    """Red flags whose rule holds on the recomputed metrics and whose effect is more than a note."""
    out = []
    for rule in pack.red_flags:
        if rule.effect == "note":
            continue
        try:
            holds = expressions.evaluate_compiled(rule.parsed, truth)
        except expressions.MissingValue:
            continue
        if holds:
            out.append(DataFinding(
                rule=f"red_flag:{rule.name}", check="assumptions", column=rule.name, periods=[], periods_back=[],
                value=None, size=None, effect=rule.effect, message=f"red flag {rule.name}: {rule.message}",
                to_resolve=f"decide whether {rule.name} ({rule.when}) rules it out"))
    return out


def _with_findings(outcome: CheckOutcome, findings: Sequence[DataFinding], strong: bool) -> CheckOutcome:
    """A check's outcome with its data findings: a `reject` fails it, a `doubt` on a STRONG leaves it unresolved."""
    if not findings:
        return outcome
    passed = outcome.passed
    if any(f.effect == "reject" for f in findings):
        passed = False
    elif strong and passed is True and any(f.effect == "doubt" for f in findings):
        passed = None
    words = "; ".join(f"{f.message} [{f.effect}]" for f in findings)
    return CheckOutcome(passed=passed, finding=f"{outcome.finding} Data: {words}.")


def _to_resolve(pack: CriteriaPack, checks: dict[str, CheckOutcome], fatal: Perturbation | None,
                doubts: Sequence[DataFinding]) -> str | None:
    if doubts:
        return "; ".join(dict.fromkeys(f.to_resolve for f in doubts)) + "."
    if fatal is not None and fatal.relative_change is not None:
        return f"confirm {fatal.input} with the next release or a second source."
    if fatal is not None:
        month = fatal.change.removeprefix("without ")
        column = pack.metrics[fatal.input].column
        return (f"check whether the {month} figure of {column} is a one-off (a revision, or the next "
                f"{pack.grain.name}'s figure).")
    open_ = [name for name in CHECKS if checks[name].passed is None]
    if open_:
        return f"obtain the missing data behind the {', '.join(open_)} check."
    return None


def verify(pack: CriteriaPack, candidate: Candidate, analysis: Analysis) -> Verification:
    truth = pack.with_derived({name: recompute_metric(spec, candidate.raw_data, candidate.as_of)
                               for name, spec in pack.metrics.items() if spec.agg != "derived"})
    sensitivity = _assumptions(pack, candidate, analysis, truth)
    findings = integrity.check(pack, candidate) + _red_flag_findings(pack, candidate, truth)
    strong = analysis.verdict == Verdict.STRONG
    by_check = {name: [f for f in findings if f.check == name] for name in ("inputs", "assumptions")}
    checks = {
        "arithmetic": _arithmetic(pack, analysis, truth),
        "inputs": _with_findings(_inputs(pack, candidate, analysis, truth), by_check["inputs"], strong),
        "assumptions": _with_findings(sensitivity.outcome, by_check["assumptions"], strong),
        "omissions": _omissions(pack, analysis, truth),
        "constraints": _constraints(pack, candidate, truth),
    }
    rejected = sorted({f.check for f in findings if f.effect == "reject"})
    status, failed, reason = combine(checks, rejected)
    doubts = [f for f in findings if f.effect == "doubt"] if strong else []
    if status != Status.CONFIRMED and (doubts or rejected):
        decisive = [f for f in findings if f.effect == "reject"] or doubts
        reason = f"{reason} Data {'rejected' if rejected else 'doubted'}: {decisive[0].message}."
    fatal = sensitivity.fatal
    return Verification(
        as_of=candidate.as_of, candidate_id=candidate.id, status=status, checks=checks, failed_checks=failed,
        reason=reason, fatal_assumption=f"{fatal.input} ({fatal.change})" if fatal else None,
        key_assumption=f"{sensitivity.key.input} ({sensitivity.key.change})" if sensitivity.key else None,
        sensitivity=sensitivity.trials, data_findings=findings,
        to_resolve=_to_resolve(pack, checks, fatal, doubts) if status == Status.UNCERTAIN else None,
    )
