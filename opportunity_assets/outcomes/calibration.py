"""The calibration gate for changing criteria (seed 001), in pure code: two samples, two deltas, four quadrants.

Labels. A pair (as_of, candidate) is labelled by the human's latest judgment of it (`pursue`: it should have been
STRONG; `pass`: it should not; `unsure`: no label, and no fallback), else by its known outcome: it should have
been STRONG exactly when its outcome beat that night's median candidate outcome (the median over the candidates
the OLD pack analyzed that night). A pack "acts" on a pair when its verdict is STRONG; anything else (MARGINAL,
SKIP, INSUFFICIENT_DATA, filtered out or capped) does not act. Agreement = share of a sample's pairs where the
pack acts exactly when the label says it should, in points (0-100).

Samples. The bad cases are the pairs the OLD pack gets wrong: every judged pair it disagrees with, and every
outcome-labelled pair it disagrees with outside the population split. The population is the untouched split: a
fixed share of pairs chosen by a hash of (as_of, candidate) — the same pairs in every calibration — minus every
judged pair; it keeps OLD's right and wrong answers alike. The two samples are disjoint by construction.

Quadrants (θ = theta_bad_points, ε = epsilon_points, from a config file that no model reads; bounds inclusive):
Q1 PASS Δ_bad ≥ θ and Δ_pop ≥ −ε (accept) · Q2 OVERFIT Δ_bad ≥ θ, Δ_pop < −ε · Q3 NO-OP Δ_bad < θ, Δ_pop ≥ −ε ·
Q4 FAIL Δ_bad < θ, Δ_pop < −ε. Arithmetic is exact (fractions), so a boundary is a boundary.

The rule-shape scan rejects a pack whose filters or formula name an entity: a pack that names the candidates it
should pass is a lookup table, not a rule.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from opportunity_assets.criteria import CriteriaPack, read_yaml_mapping
from opportunity_assets.formatting import signed
from opportunity_assets.outcomes.logic import Outcome, advantage
from opportunity_assets.records import FrozenRecord

DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "data" / "calibration.yaml"
Pair = tuple[date, str]
"""(as_of, candidate_id)."""
NOT_ANALYZED = "NOT_ANALYZED"
"""A pair's verdict when the pack did not analyze the candidate that night (a filter failed, or the cap cut it)."""


class CalibrationError(ValueError):
    """The gate cannot decide (bad config, mismatched packs, an empty sample); the message says why."""


class CalibrationConfig(FrozenRecord):
    """`data/calibration.yaml`: read by this code only; no model ever sees it."""

    theta_bad_points: float = Field(default=20, gt=0, le=100)
    """Δ_bad must reach this many points of agreement on the bad cases."""
    epsilon_points: float = Field(default=1, ge=0, le=100)
    """Δ_pop may fall by at most this many points on the population."""
    population_share: float = Field(default=0.5, gt=0, lt=1)
    """Share of pairs held out, untouched, as the population split."""


def load_calibration_config(path: str | Path) -> CalibrationConfig:
    path = Path(path)
    raw = read_yaml_mapping(path, "calibration", CalibrationError)
    try:
        return CalibrationConfig.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            key = ".".join(str(part) for part in e["loc"])
            if e["type"] == "extra_forbidden":
                problems.append(f"key `{key}`: unknown key; expected only {sorted(CalibrationConfig.model_fields)}")
            else:
                problems.append(f"key `{key}`: got {e.get('input')!r}; expected {e['msg']}")
        raise CalibrationError(f"calibration file {path}: " + "; ".join(problems)) from None


# ---- quadrants -----------------------------------------------------------------------------------------------
class Quadrant(StrEnum):
    PASS = "Q1 pass"
    OVERFIT = "Q2 overfit"
    NO_OP = "Q3 no-op"
    FAIL = "Q4 fail"

    @property
    def accepted(self) -> bool:
        return self is Quadrant.PASS


def _exact(value: Fraction | float | int) -> Fraction:
    return value if isinstance(value, Fraction) else Fraction(str(value))


def quadrant(delta_bad: Fraction | float, delta_pop: Fraction | float, *, theta: float, epsilon: float) -> Quadrant:
    fixes = _exact(delta_bad) >= _exact(theta)
    holds = _exact(delta_pop) >= -_exact(epsilon)
    if fixes:
        return Quadrant.PASS if holds else Quadrant.OVERFIT
    return Quadrant.NO_OP if holds else Quadrant.FAIL


# ---- labels and samples --------------------------------------------------------------------------------------
class Label(FrozenRecord):
    act: bool
    """True: the pack should have said STRONG."""
    source: Literal["judgment", "outcome"]
    detail: str
    """Where the label comes from, e.g. `pursue (alice)` or `+8.1% vs night median +3.0%`."""


def latest_judgments(rows: Iterable[Mapping[str, Any]]) -> dict[Pair, Mapping[str, Any]]:
    """The latest judgment row per pair (by judged_at)."""
    latest: dict[Pair, Mapping[str, Any]] = {}
    for row in sorted(rows, key=lambda r: r["judged_at"]):
        latest[(row["as_of"], row["candidate_id"])] = row
    return latest


def label_pairs(judged: Mapping[Pair, Mapping[str, Any]], outcomes: Mapping[Pair, Outcome],
                medians: Mapping[date, float], direction: str, change: str) -> dict[Pair, Label]:
    """A judgment labels its pair (unsure: no label); a known outcome labels every other pair."""
    labels: dict[Pair, Label] = {}
    for pair, row in judged.items():
        if row["decision"] != "unsure":
            labels[pair] = Label(act=row["decision"] == "pursue", source="judgment",
                                 detail=f"{row['decision']} ({row['who']})")
    for pair, outcome in outcomes.items():
        if pair in judged or outcome.value is None or pair[0] not in medians:
            continue
        median = medians[pair[0]]
        shown = (f"{outcome.value * 100:+.1f}% vs night median {median * 100:+.1f}%" if change == "relative"
                 else f"{signed(outcome.value)} vs night median {signed(median)}")
        labels[pair] = Label(act=advantage(outcome.value, median, direction) > 0, source="outcome", detail=shown)
    return labels


def in_population(pair: Pair, share: float) -> bool:
    """The untouched split: a fixed hash of the pair, so the same pairs are held out in every calibration."""
    digest = hashlib.sha256(f"{pair[0].isoformat()}|{pair[1]}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


class Samples(FrozenRecord):
    bad: list[Pair]
    population: list[Pair]


def build_samples(labels: Mapping[Pair, Label], old_acts: Mapping[Pair, bool], judged: Iterable[Pair],
                  share: float) -> Samples:
    touched = set(judged)
    bad = [p for p, label in labels.items()
           if label.act != old_acts.get(p, False) and (p in touched or not in_population(p, share))]
    population = [p for p in labels if p not in touched and in_population(p, share)]
    return Samples(bad=sorted(bad), population=sorted(population))


def agreement(pairs: Sequence[Pair], labels: Mapping[Pair, Label], acts: Mapping[Pair, bool]) -> Fraction:
    """Points (0-100) of `pairs` where the pack acts exactly when the label says it should."""
    agreeing = sum(labels[p].act == acts.get(p, False) for p in pairs)
    return Fraction(100 * agreeing, len(pairs))


# ---- the rule-shape scan -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ShapeFinding:
    key: str
    """Where in the pack, e.g. `formula.components.0.expression`."""
    text: str
    entity: str
    """The entity id or name it names."""

    def __str__(self) -> str:
        return f"{self.key}: {self.text!r} names entity {self.entity!r}"


def _normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _shape_texts(pack: CriteriaPack) -> list[tuple[str, str]]:
    """Every identifier and expression that decides who passes: filters, the formula and its inputs, the cap."""
    texts = [(f"metrics.{name}", name) for name in pack.metrics]
    for i, f in enumerate(pack.hard_filters):
        texts += [(f"hard_filters.{i}.name", f.name), (f"hard_filters.{i}.metric", f.metric),
                  (f"hard_filters.{i}.value", f"{f.value:g}")]
    texts += [(f"required_inputs.{i}", name) for i, name in enumerate(pack.required_inputs)]
    for i, c in enumerate(pack.formula.components):
        texts += [(f"formula.components.{i}.name", c.name), (f"formula.components.{i}.expression", c.expression)]
    if pack.caps.order_by:
        texts.append(("caps.order_by", pack.caps.order_by))
    return texts


def rule_shape_findings(pack: CriteriaPack, entities: Iterable[tuple[str, str]]) -> list[ShapeFinding]:
    """Identifiers in the pack's filters, formula, metric names and cap that contain an entity's id or name (as a
    whole run of `_`-separated words, case and punctuation ignored; names under 3 characters are not looked
    for), and numbers there equal to a numeric entity id of 3 digits or more. Prose (descriptions, labels)
    decides nothing and is not scanned."""
    words: dict[str, str] = {}
    numbers: dict[str, str] = {}
    for entity_id, name in entities:
        for shown in {entity_id, name}:
            if not shown:
                continue
            if shown.strip().isdigit() and len(shown.strip()) >= 3:
                numbers[str(int(shown))] = shown
            elif len(_normalise(shown)) >= 3:
                words[_normalise(shown)] = shown
    findings = []
    for key, text in _shape_texts(pack):
        tokens = ["_" + _normalise(t) + "_" for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)]
        for word, shown in sorted(words.items()):
            if any(f"_{word}_" in token for token in tokens):
                findings.append(ShapeFinding(key=key, text=text, entity=shown))
        for literal in re.findall(r"(?<![\w.])\d+(?:\.0+)?(?![\w.])", text):
            number = str(int(float(literal)))
            if number in numbers:
                findings.append(ShapeFinding(key=key, text=text, entity=numbers[number]))
    return findings


# ---- the decision --------------------------------------------------------------------------------------------
class SampleResult(FrozenRecord):
    pairs: int
    before: float
    """OLD's agreement, points."""
    after: float
    """NEW's agreement, points."""
    delta: float


class ChangedPair(FrozenRecord):
    """A sampled pair on which the two packs take different sides (STRONG or not)."""

    as_of: date
    candidate_id: str
    sample: Literal["bad", "population"]
    label: Label
    before: str
    """OLD's verdict (or NOT_ANALYZED)."""
    after: str
    agrees_before: bool
    agrees_after: bool


class CalibrationResult(FrozenRecord):
    quadrant: Quadrant | None
    """None when the rule-shape scan rejected the pack before any sample was scored."""
    accepted: bool
    theta_bad_points: float
    epsilon_points: float
    population_share: float
    nights: int
    labelled: int
    """Pairs with a label in the range (judged or with a known outcome)."""
    bad: SampleResult | None
    population: SampleResult | None
    changed: list[ChangedPair]
    shape_findings: list[str]
    skipped: list[str] = Field(default_factory=list)
    """Nights of the range left out, each `<night>  skipped: <the problem>`: a night `run` would refuse (windows
    reaching past the history, a period no entity has rows in) decides nothing, as `backtest` skips it."""


def _score(pairs: Sequence[Pair], labels: Mapping[Pair, Label], old: Mapping[Pair, bool],
           new: Mapping[Pair, bool]) -> tuple[SampleResult, Fraction]:
    before, after = agreement(pairs, labels, old), agreement(pairs, labels, new)
    return SampleResult(pairs=len(pairs), before=float(before), after=float(after),
                        delta=float(after - before)), after - before


def decide(*, config: CalibrationConfig, nights: int, labels: Mapping[Pair, Label], samples: Samples,
           old_verdicts: Mapping[Pair, str], new_verdicts: Mapping[Pair, str],
           findings: Sequence[ShapeFinding], skipped: Sequence[str] = ()) -> CalibrationResult:
    """Score both packs on both samples and place the change in its quadrant."""
    common: dict[str, Any] = {"theta_bad_points": config.theta_bad_points, "epsilon_points": config.epsilon_points,
                              "population_share": config.population_share, "nights": nights,
                              "labelled": len(labels), "shape_findings": [str(f) for f in findings],
                              "skipped": list(skipped)}
    if findings:
        return CalibrationResult(quadrant=None, accepted=False, bad=None, population=None, changed=[], **common)
    if not samples.bad:
        raise CalibrationError(f"no bad cases among {len(labels)} labelled pairs: OLD agrees with every judgment "
                               "and every outcome outside the population split; nothing for a change to fix")
    if not samples.population:
        raise CalibrationError(f"no population pairs among {len(labels)} labelled pairs: widen the range")
    old = {p: v == "STRONG" for p, v in old_verdicts.items()}
    new = {p: v == "STRONG" for p, v in new_verdicts.items()}
    bad, delta_bad = _score(samples.bad, labels, old, new)
    population, delta_pop = _score(samples.population, labels, old, new)
    q = quadrant(delta_bad, delta_pop, theta=config.theta_bad_points, epsilon=config.epsilon_points)
    sampled: list[tuple[Literal["bad", "population"], Pair]] = [
        *(("bad", p) for p in samples.bad), *(("population", p) for p in samples.population)]
    changed = [
        ChangedPair(as_of=p[0], candidate_id=p[1], sample=sample, label=labels[p],
                    before=old_verdicts.get(p, NOT_ANALYZED), after=new_verdicts.get(p, NOT_ANALYZED),
                    agrees_before=labels[p].act == old.get(p, False), agrees_after=labels[p].act == new.get(p, False))
        for sample, p in sampled if old.get(p, False) != new.get(p, False)]
    return CalibrationResult(quadrant=q, accepted=q.accepted, bad=bad, population=population, changed=changed,
                             **common)


_VERDICT_OF_QUADRANT = {Quadrant.PASS: "accept", Quadrant.OVERFIT: "reject: it fixes the bad cases by breaking others",
                        Quadrant.NO_OP: "reject: it does not fix what it should",
                        Quadrant.FAIL: "reject: it fixes too little and breaks others"}


def result_text(result: CalibrationResult) -> str:
    lines = [f"Thresholds: θ_bad {result.theta_bad_points:g} points, ε {result.epsilon_points:g} point(s); "
             f"population split {result.population_share:.0%} of pairs. Nights {result.nights}, labelled pairs "
             f"{result.labelled}."]
    lines += result.skipped
    if result.quadrant is None:
        lines.append("Rule-shape scan: REJECTED — the pack names entities (a lookup table, not a rule):")
        lines += [f"  {finding}" for finding in result.shape_findings]
        return "\n".join(lines) + "\n"
    assert result.bad is not None and result.population is not None
    lines.append("Rule-shape scan: clean.")
    for name, sample in (("Bad cases", result.bad), ("Population", result.population)):
        delta = "Δ_bad" if name == "Bad cases" else "Δ_pop"
        lines.append(f"{name} ({sample.pairs} pairs): agreement {sample.before:.1f} → {sample.after:.1f}; "
                     f"{delta} {sample.delta:+.1f} points")
    lines.append(f"Quadrant: {result.quadrant.value.upper()} — {_VERDICT_OF_QUADRANT[result.quadrant]}.")
    lines.append(f"Pairs that changed side ({len(result.changed)}):")
    lines += [f"  {c.as_of} {c.candidate_id:<24} {c.sample:<10} should act: {'yes' if c.label.act else 'no '} "
              f"({c.label.source}: {c.label.detail}); {c.before} → {c.after}; "
              f"{'agrees' if c.agrees_before else 'disagrees'} → {'agrees' if c.agrees_after else 'disagrees'}"
              for c in result.changed]
    return "\n".join(lines) + "\n"
