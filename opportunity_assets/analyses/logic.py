"""The analyzer: the pack's formula, computed by code, step by step, from sourced inputs.

Inputs are the scanner's metric values (its SQL over the as_of-filtered source), each with provenance.
A missing required input gives INSUFFICIENT_DATA naming it, and no score: nothing is estimated.
Assumptions and red flags here are the structural ones code can state; a model may add more later, but
never changes a number, the score or the verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

import numpy as np

from opportunity_assets import expressions
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import format_score, format_value
from opportunity_assets.periods import rows_in_window, window_label
from opportunity_assets.records import (
    Analysis,
    CalculationStep,
    Candidate,
    FilterResult,
    Source,
    SourcedNumber,
    Verdict,
)


def verdict_for(score: float, pack: CriteriaPack) -> Verdict:
    if score >= pack.thresholds.strong:
        return Verdict.STRONG
    if score >= pack.thresholds.marginal:
        return Verdict.MARGINAL
    return Verdict.SKIP


def _source(pack: CriteriaPack, candidate: Candidate, metric: str) -> Source:
    spec = pack.metrics[metric]
    if spec.agg == "derived":  # where its inputs came from: every window they read, the latest publication
        inputs = [_source(pack, candidate, name) for name in pack.base_metrics(metric)]
        return Source(table=pack.source.table, entity=candidate.id,
                      period=" and ".join(dict.fromkeys(s.period for s in inputs)),
                      published_at=max(s.published_at for s in inputs))
    if spec.agg == "age_days":
        used = [r for r in candidate.raw_data if r.get(spec.value_column) is not None]
        latest = max((r["period"] for r in used), default=None)
        period = pack.grain.label(date.fromisoformat(latest)) if latest else "none"
    else:
        used = rows_in_window(candidate.raw_data, spec.window)
        columns = (spec.columns or []) if spec.agg == "coverage" else [spec.value_column]
        used = [r for r in used if any(r.get(c) is not None for c in columns)]
        period = window_label(candidate.anchor_period, spec.window, pack.grain)
    published = max((date.fromisoformat(r["published_at"]) for r in used), default=candidate.as_of)
    return Source(table=pack.source.table, entity=candidate.id, period=period, published_at=published)


def sourced_numbers(pack: CriteriaPack, candidate: Candidate) -> dict[str, SourcedNumber]:
    """Every metric the scanner could compute, with where it came from. Missing metrics are absent."""
    return {
        name: SourcedNumber(value=value, source=_source(pack, candidate, name))
        for name, value in candidate.metrics.items()
        if value is not None
    }


def _structural_assumptions(pack: CriteriaPack, candidate: Candidate) -> list[str]:
    lines = []
    for name in pack.required_inputs:
        spec = pack.metrics[name]
        if spec.agg == "derived":
            lines.append(f"Input {name} = {spec.expression}, computed by code from the metrics it names.")
            continue
        window = window_label(candidate.anchor_period, spec.window, pack.grain)
        lines.append(f"Input {name} = {spec.agg} of {spec.column} over {window}, as published by {candidate.as_of}.")
    for c in pack.formula.components:
        better = "higher" if c.direction == "higher_is_better" else "lower"
        lines.append(f"Component {c.name} ({c.label}) is better {better}, scored linearly on the fixed range "
                     f"[{c.range[0]:g}, {c.range[1]:g}] with weight {c.weight:g}.")
    lines.append("The trend of the latest window persists over the holding horizon.")
    src = pack.source
    if src.published_column:
        lines.append(f"Each row's {src.published_column} is when it became known.")
    elif src.known_at:
        lines.append(f"The snapshot was known on {src.known_at}.")
    else:
        lines.append(f"Publication lag of {src.publication_lag_days} days after {pack.grain.name} end holds.")
    return lines + list(pack.assumptions)


def _red_flags(pack: CriteriaPack, candidate: Candidate) -> list[str]:
    flags = []
    for rule in pack.red_flags:
        try:
            value, _ = expressions.evaluate_explained(rule.parsed, candidate.metrics)
        except expressions.MissingValue:
            continue
        if value:
            flags.append(f"{rule.name}: {rule.message}")
    flags += [f"filter {name} UNCLEAR: its input is missing" for name, result in candidate.filters.items()
              if result == FilterResult.UNCLEAR]
    flags += [f"data gap: {gap}" for gap in candidate.data_gaps]
    return flags


def formula_score(pack: CriteriaPack, metrics: Mapping[str, float | None]) -> float | None:
    """The pack's formula on a candidate's scan metrics, as `analyze` scores it (tests hold the two equal); None
    when a required input is missing or an expression cannot be evaluated. The scan's cap orders by it."""
    values = {name: metrics.get(name) for name in pack.required_inputs}
    if any(v is None for v in values.values()):
        return None
    try:
        components = {c.name: c.normalise(expressions.evaluate_compiled(c.parsed, values))
                      for c in pack.formula.components}
    except expressions.MissingValue:
        return None
    return _weighted(pack, components)


def undefined_components(pack: CriteriaPack, metrics: Mapping[str, float | None]
                         ) -> list[tuple[str, expressions.MissingValue]]:
    """Each formula component with no value for these metrics although every required input has one (a division
    by zero for this candidate only), with why; empty when a required input is missing (that input is why)."""
    if any(metrics.get(name) is None for name in pack.required_inputs):
        return []
    return [(c.name, why) for c in pack.formula.components
            if (why := expressions.why_undefined(c.parsed, metrics)) is not None]


def why_unscored(pack: CriteriaPack, metrics: Mapping[str, float | None]) -> list[str]:
    """Why `formula_score` has no value for these metrics, in words that quote no constant of the pack (the brief
    may say them): each required input missing (`seatbelt_use missing`) or undefined (`rate_change undefined:
    miles_prev is zero`), else each formula component undefined (`worsening undefined: a divisor is zero`). Empty:
    it has a value."""
    out = []
    for name in pack.required_inputs:
        if metrics.get(name) is None:
            spec = pack.metrics[name]
            why = expressions.why_undefined(spec.parsed, metrics) if spec.agg == "derived" else None
            out.append(f"{name} undefined: {why.why}" if why is not None and why.missing is None else
                       f"{name} missing")
    return out or [f"{name} undefined: {why.why}" for name, why in undefined_components(pack, metrics)]


def formula_scores(pack: CriteriaPack, metrics: Mapping[str, Sequence[float | None]]) -> list[float | None]:
    """`formula_score` for many candidates at once (per metric, its values in candidate order), to the last bit:
    each component's expression by `expressions.evaluate_many`, then the clamp, the weights and their sum in
    `Component.normalise`'s and `_weighted`'s order (a comparison and a sum from 0, as Python's `min`, `max` and
    `sum` do them). A wide night scores ten thousand candidates for the cap."""
    size = len(next(iter(metrics.values()))) if metrics else 0
    columns = {name: np.array([np.nan if v is None else v for v in metrics.get(name, [None] * size)], dtype=float)
               for name in pack.required_inputs}
    missing = np.zeros(size, dtype=bool)
    for values in columns.values():
        missing |= np.isnan(values)  # a missing input; a non-finite one is undefined below, as `formula_score` has it
    total = np.zeros(size)
    for c in pack.formula.components:
        raw, undefined = expressions.evaluate_many(c.parsed, columns)
        missing |= undefined
        lo, hi = c.range
        with np.errstate(all="ignore"):
            share = (raw - lo) / (hi - lo)
        share = np.where(share < 0.0, 0.0, share)  # max(share, 0.0)
        share = np.where(share > 1.0, 1.0, share)  # min(share, 1.0)
        total = total + c.weight * (share if c.direction == "higher_is_better" else 1.0 - share)
    scores = pack.formula.scale * total
    return [None if gone else float(score) for gone, score in zip(missing, scores, strict=True)]


def _weighted(pack: CriteriaPack, components: Mapping[str, float]) -> float:
    """The score from the normalised components: scale × the weighted sum."""
    return pack.formula.scale * sum(c.weight * components[c.name] for c in pack.formula.components)


def analyze(pack: CriteriaPack, candidate: Candidate) -> Analysis:
    numbers = sourced_numbers(pack, candidate)
    assumptions = _structural_assumptions(pack, candidate)
    red_flags = _red_flags(pack, candidate)
    missing = [name for name in pack.required_inputs if name not in numbers]
    values = {name: n.value for name, n in numbers.items()}
    steps: list[CalculationStep] = []
    components: dict[str, float] = {}
    if not missing:
        for c in pack.formula.components:
            try:
                raw, substituted = expressions.evaluate_explained(c.parsed, values)
            except expressions.MissingValue as exc:
                missing.append(f"{c.name} ({exc})")
                continue
            steps.append(CalculationStep(name=c.name, expression=c.expression, substituted=substituted, value=raw))
            norm = c.normalise(raw)
            flip = "1 - " if c.direction == "lower_is_better" else ""
            steps.append(CalculationStep(
                name=f"{c.name}_norm", expression=f"{flip}clip(({c.name} - low) / (high - low), 0, 1)",
                substituted=f"{flip}clip(({raw:.6g} - {c.range[0]:g}) / ({c.range[1]:g} - {c.range[0]:g}), 0, 1)",
                value=norm))
            components[c.name] = norm
    if missing:
        return Analysis(
            as_of=candidate.as_of, candidate_id=candidate.id, numbers=numbers, calculation=steps, components={},
            score=None, verdict=Verdict.INSUFFICIENT_DATA, missing=missing,
            reasoning=f"No score: missing {', '.join(missing)}. Nothing was estimated.",
            assumptions=assumptions, red_flags=red_flags,
        )
    weighted = " + ".join(f"{c.weight:g} * {components[c.name]:.6g}" for c in pack.formula.components)
    score = _weighted(pack, components)
    steps.append(CalculationStep(name="score", expression="scale * sum(weight * component_norm)",
                                 substituted=f"{pack.formula.scale:g} * ({weighted})", value=score))
    verdict = verdict_for(score, pack)
    raw_by_name = {s.name: s.value for s in steps}
    parts = ", ".join(f"{c.label} {format_value(raw_by_name[c.name], c.unit)}" for c in pack.formula.components)
    bar = {Verdict.STRONG: f">= strong {pack.thresholds.strong:g}",
           Verdict.MARGINAL: f">= marginal {pack.thresholds.marginal:g}, < strong {pack.thresholds.strong:g}",
           Verdict.SKIP: f"< marginal {pack.thresholds.marginal:g}"}[verdict]
    return Analysis(
        as_of=candidate.as_of, candidate_id=candidate.id, numbers=numbers, calculation=steps,
        components=components, score=score, verdict=verdict,
        reasoning=f"Score {format_score(score, pack.thresholds.levels)} {bar}: {parts}.",
        assumptions=assumptions, red_flags=red_flags,
    )
