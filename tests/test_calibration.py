"""The calibration gate: quadrants and their boundaries, the agreement definition, disjoint samples, the
rule-shape scan, the config file."""

from __future__ import annotations

import random
from datetime import date, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.outcomes.calibration import (
    DEFAULT_CONFIG,
    NOT_ANALYZED,
    CalibrationConfig,
    CalibrationError,
    Label,
    Pair,
    Quadrant,
    Samples,
    agreement,
    build_samples,
    decide,
    in_population,
    label_pairs,
    load_calibration_config,
    quadrant,
    rule_shape_findings,
)
from opportunity_assets.outcomes.logic import Outcome, OutcomeStatus
from opportunity_assets.sources.snapshot import read_snapshot
from tests.conftest import month_rows, write_csv, write_pack

NIGHT = date(2015, 1, 30)


# ---- quadrants ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("delta_bad", "delta_pop", "expected"), [
    (25, 0.5, Quadrant.PASS), (20, -1, Quadrant.PASS), (20, 0, Quadrant.PASS), (100, -1, Quadrant.PASS),
    (20, -1.01, Quadrant.OVERFIT), (35, -30, Quadrant.OVERFIT),
    (19.99, -1, Quadrant.NO_OP), (0, 0, Quadrant.NO_OP), (-5, 3, Quadrant.NO_OP),
    (19.99, -1.01, Quadrant.FAIL), (0, -50, Quadrant.FAIL),
])
def test_quadrants_and_their_inclusive_boundaries(delta_bad: float, delta_pop: float, expected: Quadrant) -> None:
    assert quadrant(delta_bad, delta_pop, theta=20, epsilon=1) == expected
    assert quadrant(delta_bad, delta_pop, theta=20, epsilon=1).accepted == (expected == Quadrant.PASS)


def test_boundaries_are_exact_not_floating_point() -> None:
    # one of five bad cases fixed is 20 points exactly; one of a hundred population pairs lost is -1 exactly
    bad = [(NIGHT, f"c{i}") for i in range(5)]
    pop = [(NIGHT, f"p{i}") for i in range(100)]
    labels = {p: Label(act=True, source="outcome", detail="") for p in bad + pop}
    before = {p: False for p in bad} | {p: True for p in pop}
    after = {**before, bad[0]: True, pop[0]: False}
    delta_bad = agreement(bad, labels, after) - agreement(bad, labels, before)
    delta_pop = agreement(pop, labels, after) - agreement(pop, labels, before)
    assert (delta_bad, delta_pop) == (Fraction(20), Fraction(-1))
    assert quadrant(delta_bad, delta_pop, theta=20, epsilon=1) == Quadrant.PASS
    assert quadrant(delta_bad, delta_pop - Fraction(1, 10**9), theta=20, epsilon=1) == Quadrant.OVERFIT
    assert quadrant(Fraction(1, 10), 0, theta=0.1, epsilon=0) == Quadrant.PASS  # 0.1 is read as a decimal


# ---- labels and agreement -----------------------------------------------------------------------------------------
def _outcome(cid: str, value: float | None, as_of: date = NIGHT) -> Outcome:
    return Outcome(as_of=as_of, candidate_id=cid, outcome_date=as_of, value=value,
                   status=OutcomeStatus.KNOWN if value is not None else OutcomeStatus.PENDING, start_value=1.0,
                   end_value=None, start_window="w", end_window="w", end_published_at=None, reason="test")


def _judgment(cid: str, decision: str, at: int = 0, who: str = "alice") -> dict[str, Any]:
    return {"as_of": NIGHT, "candidate_id": cid, "decision": decision, "who": who,
            "judged_at": date(2026, 1, 1) + timedelta(days=at)}


def test_labels_judgments_first_unsure_excluded_outcomes_against_the_night_median() -> None:
    from opportunity_assets.outcomes.calibration import latest_judgments

    judged = latest_judgments([_judgment("a", "pass", 0), _judgment("a", "pursue", 1, "bob"),
                               _judgment("b", "unsure"), _judgment("c", "pass")])
    outcomes = {(NIGHT, cid): _outcome(cid, v) for cid, v in
                [("a", -0.5), ("b", 0.9), ("c", 0.9), ("d", 0.03), ("e", 0.02), ("f", 0.01), ("g", None)]}
    labels = label_pairs(judged, outcomes, {NIGHT: 0.02}, "higher_is_better", "relative")
    assert labels[(NIGHT, "a")] == Label(act=True, source="judgment", detail="pursue (bob)")  # the latest wins
    assert (NIGHT, "b") not in labels  # unsure: no label, and no fallback to its outcome
    assert labels[(NIGHT, "c")].act is False and labels[(NIGHT, "c")].source == "judgment"
    assert labels[(NIGHT, "d")].act is True and "+3.0% vs night median +2.0%" in labels[(NIGHT, "d")].detail
    assert labels[(NIGHT, "e")].act is False  # equal to the median does not beat it
    assert labels[(NIGHT, "f")].act is False and (NIGHT, "g") not in labels
    lower = label_pairs({}, outcomes, {NIGHT: 0.02}, "lower_is_better", "relative")
    assert lower[(NIGHT, "f")].act is True and lower[(NIGHT, "d")].act is False

    verdicts = {"a": "STRONG", "c": NOT_ANALYZED, "d": "MARGINAL", "e": "SKIP", "f": "INSUFFICIENT_DATA"}
    acts = {(NIGHT, cid): v == "STRONG" for cid, v in verdicts.items()}
    pairs = sorted(labels)
    assert agreement(pairs, labels, acts) == Fraction(100 * 4, 5)  # d (MARGINAL, should act) disagrees


def test_samples_are_disjoint_and_the_population_untouched() -> None:
    rng = random.Random(7)
    pairs: list[Pair] = [(date(2005, 1, 31) + timedelta(days=31 * (i // 20)), f"c{i % 20}") for i in range(400)]
    labels = {p: Label(act=rng.random() < 0.5, source="outcome", detail="") for p in pairs}
    judged = set(rng.sample(pairs, 30))
    labels |= {p: Label(act=rng.random() < 0.5, source="judgment", detail="") for p in judged}
    old_acts = {p: rng.random() < 0.3 for p in pairs}
    samples = build_samples(labels, old_acts, judged, 0.5)
    bad, population = set(samples.bad), set(samples.population)
    assert bad and population and not bad & population
    assert not judged & population
    assert {p for p in judged if labels[p].act != old_acts[p]} <= bad
    assert all(labels[p].act != old_acts[p] for p in bad)
    assert population == {p for p in pairs if p not in judged and in_population(p, 0.5)}
    assert 0.4 < len([p for p in pairs if in_population(p, 0.5)]) / len(pairs) < 0.6
    assert any(labels[p].act != old_acts[p] for p in population)  # OLD's mistakes stay in the population too
    assert build_samples(labels, old_acts, judged, 0.5) == samples  # a fixed split: the same pairs every time
    assert set(build_samples(labels, old_acts, judged, 0.2).population) < population


def test_decide_lists_the_pairs_that_changed_and_refuses_empty_samples() -> None:
    config = CalibrationConfig()
    a, b, c = (NIGHT, "a"), (NIGHT, "b"), (NIGHT, "c")
    labels = {a: Label(act=False, source="judgment", detail="pass (alice)"),
              b: Label(act=False, source="outcome", detail="x"), c: Label(act=True, source="outcome", detail="y")}
    result = decide(config=config, nights=1, labels=labels, samples=Samples(bad=[a], population=[b, c]),
                    old_verdicts={a: "STRONG", b: "SKIP", c: "STRONG"},
                    new_verdicts={a: "MARGINAL", b: "SKIP", c: "STRONG"}, findings=[])
    assert result.quadrant == Quadrant.PASS and result.accepted
    assert result.bad is not None and (result.bad.before, result.bad.after, result.bad.delta) == (0.0, 100.0, 100.0)
    assert result.population is not None and result.population.delta == 0.0
    assert [(x.candidate_id, x.sample, x.before, x.after, x.agrees_after) for x in result.changed] == [
        ("a", "bad", "STRONG", "MARGINAL", True)]
    with pytest.raises(CalibrationError, match="no bad cases"):
        decide(config=config, nights=1, labels=labels, samples=Samples(bad=[], population=[b]), old_verdicts={},
               new_verdicts={}, findings=[])
    with pytest.raises(CalibrationError, match="no population pairs"):
        decide(config=config, nights=1, labels=labels, samples=Samples(bad=[a], population=[]), old_verdicts={},
               new_verdicts={}, findings=[])


# ---- the rule-shape scan -----------------------------------------------------------------------------------------
def _entities(pack: CriteriaPack) -> list[tuple[str, str]]:
    metrics = read_snapshot(pack, NIGHT).metrics
    return list(zip(metrics["entity_id"].to_list(), metrics["entity_name"].to_list(), strict=True))


def test_rule_shape_scan_catches_an_entity_name(tmp_path: Path, texas_pack: CriteriaPack) -> None:
    assert rule_shape_findings(texas_pack, _entities(texas_pack)) == []  # the real pack is a rule
    source = write_csv(tmp_path / "s.csv", month_rows("Abilene") + month_rows("San Antonio") + month_rows("Waco"))
    clean = load_criteria(write_pack(tmp_path, source))
    assert rule_shape_findings(clean, _entities(clean)) == []
    lookup = load_criteria(write_pack(tmp_path, source, **{
        "metrics.abilene_sales": {"agg": "sum", "column": "sales", "window": [0, 2], "unit": "count"},
        "required_inputs": ["sales_3m", "sales_3m_prev", "inventory_3m", "inventory_3m_prev", "abilene_sales"],
        "formula.components.0.expression": "abilene_sales / sales_3m_prev - 1",
        "hard_filters.0.name": "only_san_antonio"}))
    found = {(f.key, f.entity) for f in rule_shape_findings(lookup, _entities(lookup))}
    assert found == {("metrics.abilene_sales", "Abilene"), ("required_inputs.4", "Abilene"),
                     ("formula.components.0.expression", "Abilene"), ("hard_filters.0.name", "San Antonio")}
    numeric = load_criteria(write_pack(tmp_path, source, **{"hard_filters.0.value": 48201}))
    assert [str(f) for f in rule_shape_findings(numeric, [("48201", "Harris")])] == [
        "hard_filters.0.value: '48201' names entity '48201'"]
    assert rule_shape_findings(clean, [("600", "Tiny")]) != []  # the liquidity bar equals that id: flagged
    assert rule_shape_findings(clean, [("12", "Short")]) == []  # ids under 3 digits are not looked for


# ---- the config file ---------------------------------------------------------------------------------------------
def test_calibration_config_is_validated(tmp_path: Path) -> None:
    assert load_calibration_config(DEFAULT_CONFIG) == CalibrationConfig(theta_bad_points=20, epsilon_points=1,
                                                                         population_share=0.5)
    path = tmp_path / "calibration.yaml"
    for text, fragments in [("theta_bad_points: 0\n", ["theta_bad_points", "0", "greater than 0"]),
                            ("epsilon_points: -1\n", ["epsilon_points", "-1"]),
                            ("population_share: 1\n", ["population_share", "less than 1"]),
                            ("theta: 20\n", ["theta", "unknown key"]),
                            ("- 20\n", ["expected a mapping"])]:
        path.write_text(text)
        with pytest.raises(CalibrationError) as exc:
            load_calibration_config(path)
        assert all(f in str(exc.value) for f in fragments), str(exc.value)
    with pytest.raises(CalibrationError, match="not found"):
        load_calibration_config(tmp_path / "missing.yaml")


def test_packs_of_one_series_named_apart_are_not_the_same_candidates(tmp_path: Path) -> None:
    """Trial 13: `source.entity` names a source's one series; two packs over one file that name it apart judge other
    candidates (ids are the name's slug), and the calibration gate's check of the source compared `entity_id`
    only (None for both)."""
    from opportunity_assets.outcomes.replay import _same_candidates
    from tests.test_shapes import _csv, _pack

    name = _csv(tmp_path / "s.csv", ["month", "level"], [[f"2015-{m:02d}", m] for m in range(1, 13)])
    source = {"path": name, "entity_id": None, "entity_name": None, "period_column": "month", "columns": ["level"]}
    metrics = {"level_now": {"agg": "last", "column": "level"}}
    bank, shop = (_pack(tmp_path, {**source, "entity": entity}, metrics) for entity in ("Bank", "Shop"))
    _same_candidates(bank, bank)
    with pytest.raises(CalibrationError, match=r"sources differ: NEW reads .*s\.csv by entity 'Shop', OLD .*s\.csv by "
                                               r"entity 'Bank'; the candidates must be the same"):
        _same_candidates(shop, bank)
