"""Derived metrics: expressions over other metrics, computed by code, usable wherever a metric is (hard filters,
formula, red flags, cap order, the brief's template), sourced from their inputs and recomputed by the verifier."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest
import yaml

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.candidates.logic import ScanReport, scan
from opportunity_assets.criteria import CriteriaError, CriteriaPack, load_criteria
from opportunity_assets.records import Candidate, FilterResult, Status
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.verifications.logic import verify
from tests.conftest import PACK, ROOT, month_rows, write_csv, write_pack

NIGHT = date(2011, 10, 31)
TEXAS = ROOT / "data" / "txhousing.csv"


def _derived_pack(tmp_path: Path) -> CriteriaPack:
    """The bundled pack with its sales component, a hard filter, a red flag and the cap order on derived metrics."""
    tmp_path.mkdir(exist_ok=True)
    path = write_pack(tmp_path, TEXAS, **{"caps.order_by": "sales_growth", "caps.max_candidates": 8,
                                           "caps.min_candidates": 1})
    raw = yaml.safe_load(path.read_text())
    raw["metrics"]["sales_yoy"] = {"expression": "sales_3m / sales_3m_prev - 1", "unit": "share"}
    raw["metrics"]["sales_growth"] = {"expression": "sales_yoy * 100", "unit": "number"}
    raw["metrics"]["inventory_change"] = {"expression": "inventory_3m - inventory_3m_prev", "unit": "months"}
    raw["required_inputs"] += ["sales_yoy", "inventory_change"]
    components = raw["formula"]["components"]
    components[0]["expression"], components[2]["expression"] = "sales_yoy", "inventory_change"
    raw["hard_filters"].append({"name": "not_collapsing", "metric": "sales_yoy", "op": ">", "value": -0.5})
    raw["red_flags"].append({"name": "boom", "when": "sales_growth > 20", "message": "sales up more than 20%"})
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return load_criteria(path)


def _night(pack: CriteriaPack) -> tuple[list[Candidate], ScanReport]:
    snapshot = read_snapshot(pack, NIGHT, today=date(2026, 12, 1))
    return scan(pack, NIGHT, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)


def test_derived_metrics_drive_filters_formula_flags_and_cap_as_written(tmp_path: Path) -> None:
    derived = _derived_pack(tmp_path / "derived")
    plain = load_criteria(write_pack(tmp_path, TEXAS, **{"caps.max_candidates": 60}))
    plain_by_id = {c.id: c for c in _night(plain)[0]}
    found, report = _night(derived)
    for c in found:
        m = c.metrics
        if m["sales_3m"] is not None and m["sales_3m_prev"]:
            assert m["sales_yoy"] == pytest.approx(m["sales_3m"] / m["sales_3m_prev"] - 1, rel=1e-12)
            assert m["sales_growth"] == pytest.approx(m["sales_yoy"] * 100, rel=1e-12)
            expected = FilterResult.PASS if m["sales_yoy"] > -0.5 else FilterResult.FAIL
            assert c.filters["not_collapsing"] == expected
    # the cap keeps the 8 fastest growing by the derived metric (and lets on those it flags: quarantined rows)
    on = [c for c in found if c.went_on]
    passing = sorted((c for c in found if FilterResult.FAIL not in c.filters.values()),
                     key=lambda c: (-(c.metrics["sales_growth"] or -1e9), c.id))
    assert {c.id for c in passing[:8]} <= {c.id for c in on}
    assert len(on) == 8 + report.flagged_past_cap and report.capped > 0
    # the same formula written over derived inputs scores exactly as the bundled one, and the verifier confirms
    # the arithmetic from its own recomputation of the derived inputs
    for c in on:
        analysis = analyze(derived, c)
        assert analysis.score == pytest.approx(analyze(plain, plain_by_id[c.id]).score, abs=1e-9)
        if "sales_yoy" not in analysis.numbers:  # let on past the cap with a gap: no score either way
            assert analysis.score is None and c.metrics["sales_yoy"] is None
            continue
        assert analysis.numbers["sales_yoy"].source.period == "2011-07..2011-09 and 2010-07..2010-09"
        verification = verify(derived, c, analysis)
        assert verification.checks["arithmetic"].passed and verification.checks["inputs"].passed
        assert any(f.startswith("boom:") for f in analysis.red_flags) == (c.metrics["sales_growth"] > 20)
    assert verification.status in (Status.CONFIRMED, Status.UNCERTAIN, Status.REJECTED)


def test_a_derived_metric_with_a_zero_divisor_is_a_gap_and_its_filter_unclear(tmp_path: Path) -> None:
    pack = _derived_pack(tmp_path)
    snapshot = read_snapshot(pack, NIGHT, today=date(2026, 12, 1))
    zeroed = snapshot.metrics.with_columns(sales_3m_prev=0.0).head(1)
    values = pack.with_derived({k: v for k, v in zeroed.to_dicts()[0].items() if k in pack.metrics})
    assert values["sales_yoy"] is None and values["sales_growth"] is None


def test_a_derived_input_undefined_for_one_entity_says_why_in_its_record_and_at_the_cap(tmp_path: Path) -> None:
    """`rate_change` undefined where `miles_prev` is 0 (r16's states): the gap said "no value for ... (an input is a
    gap, or the result is undefined)", and cut at the cap by score, "no preliminary score (missing ...)" with no
    word in the note. Now the gap names the zero divisor, a derived metric over it names its input, and the cap's
    reason and note say it."""
    from opportunity_assets.reasons import not_going_reason

    tmp_path.mkdir(exist_ok=True)
    pack = _derived_pack(tmp_path)
    pack = pack.model_copy(update={"caps": pack.caps.model_copy(update={"order_by": "score"})})
    snapshot = read_snapshot(pack, NIGHT, today=date(2026, 12, 1))
    ordered = snapshot.metrics.sort("entity_id")
    zeroed = ordered["entity_id"][0]
    one = pl.col("entity_id") == zeroed  # its derived metrics as the source computes them: no value
    metrics = ordered.with_columns(sales_3m_prev=pl.when(one).then(0.0).otherwise(pl.col("sales_3m_prev")),
                                   **{name: pl.when(one).then(None).otherwise(pl.col(name))
                                      for name in ("sales_yoy", "sales_growth")})
    assert pack.with_derived({k: v for k, v in metrics.filter(one).to_dicts()[0].items() if k in pack.metrics
                              and pack.metrics[k].agg != "derived"})["sales_yoy"] is None
    found, report = scan(pack, NIGHT, snapshot.anchor_period, metrics, snapshot.history, snapshot.quarantined)
    (gone,) = [c for c in found if c.metrics["sales_3m_prev"] == 0.0]
    assert gone.data_gaps[:2] == [
        "sales_yoy: undefined: division by zero in `sales_3m / sales_3m_prev`: sales_3m_prev is zero",
        "sales_growth: no value: its input sales_yoy is a gap"]
    assert gone.filters["not_collapsing"] == FilterResult.UNCLEAR and gone.capped
    assert not_going_reason(pack, gone) == ("capped: beyond max_candidates=8, no preliminary score (sales_yoy "
                                            "undefined: sales_3m_prev is zero)")
    (note,) = [n for n in report.notes if "capped at" in n]
    assert f"placed last: {gone.name} (sales_yoy undefined: sales_3m_prev is zero)" in note
    # went on (no cap): INSUFFICIENT_DATA, the same cause in its words
    assert analyze(pack, gone).missing == ["sales_yoy"]


@pytest.mark.parametrize(("metrics", "message"), [
    ({"a": {"expression": "b + 1"}, "b": {"expression": "a * 2"}}, "no cycle among derived metrics (found "),
    ({"a": {"expression": "nope * 2"}}, "key `metrics.a.expression`: got 'nope * 2'; expected names that are"),
    ({"a": {"expression": "sales_3m > 2"}}, "key `metrics.a.expression`: got 'sales_3m > 2'; expected an arithm"),
    ({"a": {"expression": "sales_3m", "column": "sales"}}, "takes no `column`"),
    ({"a": {"agg": "sum", "column": "sales", "expression": "sales_3m"}}, "`expression` makes a derived metric"),
])
def test_a_bad_derived_metric_names_its_key(tmp_path: Path, metrics: dict, message: str) -> None:  # type: ignore[type-arg]
    raw = yaml.safe_load(PACK.read_text())
    raw["source"]["path"] = str(TEXAS)
    raw["metrics"].update(metrics)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(CriteriaError, match=None) as caught:
        load_criteria(tmp_path / "p.yaml")
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("expression", "message"), [
    ("ratio / sales_3m", "`ratio` is this metric itself, and a metric cannot be computed from its own value"),
    ("sales_3m / sales_3m_prv", "unknown: ['sales_3m_prv']; did you mean `sales_3m_prev` for `sales_3m_prv`?"),
])
def test_a_derived_metric_naming_itself_or_a_misspelt_metric_says_which(tmp_path: Path, expression: str,
                                                                         message: str) -> None:
    """Trial 6: `ratio: {expression: "ratio / college"}` was told `unknown: ['ratio']`, a name the user had just
    defined; a misspelt metric had no "did you mean"."""
    source = write_csv(tmp_path / "s.csv", month_rows("Alpha"))
    pack = write_pack(tmp_path, source, **{"metrics.ratio": {"expression": expression, "unit": "number",
                                                             "description": "x"}})
    with pytest.raises(CriteriaError) as exc:
        load_criteria(pack)
    assert f"key `metrics.ratio.expression`: got '{expression}'; expected names that are each another metric" \
        in str(exc.value)
    assert message in str(exc.value)
