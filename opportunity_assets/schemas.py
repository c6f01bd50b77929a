"""Pandera schemas for the tabular views of the night's records; the asset checks validate with them.

Each `*_frame` function flattens records into one row per thing checked; each schema states what must
hold. `failures(schema, frame)` returns the failure cases as plain dicts (empty when valid).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any, ClassVar

import pandera.polars as pa
import polars as pl

from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.records import Analysis, Candidate, Route, Verification
from opportunity_assets.verifications.logic import CHECKS


class FilterRows(pa.DataFrameModel):
    """One row per (candidate, hard filter) of the night's scan."""

    candidate_id: str
    filter: str
    result: str = pa.Field(isin=["PASS", "FAIL", "UNCLEAR"])
    value: float = pa.Field(nullable=True)
    holds: bool = pa.Field(nullable=True)
    """The filter's predicate re-evaluated on the stored metric value (null when the value is missing)."""
    went_on: bool

    @pa.dataframe_check
    @classmethod
    def went_on_never_failed(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(~(pl.col("went_on") & (pl.col("result") == "FAIL")))

    @pa.dataframe_check
    @classmethod
    def result_matches_value(cls, data: pa.PolarsData) -> pl.LazyFrame:
        expected = (pl.when(pl.col("holds").is_null()).then(pl.lit("UNCLEAR"))
                    .when(pl.col("holds")).then(pl.lit("PASS")).otherwise(pl.lit("FAIL")))
        return data.lazyframe.select(pl.col("result") == expected)


class AnalysisRows(pa.DataFrameModel):
    """One row per analysis, with the pack's thresholds alongside: one per candidate and night (a run over a range
    of partitions may span nights, each with its own `austin`)."""

    candidate_id: str
    as_of: date
    verdict: str = pa.Field(isin=["STRONG", "MARGINAL", "SKIP", "INSUFFICIENT_DATA"])
    score: float = pa.Field(nullable=True, ge=0)
    scale: float
    strong: float
    marginal: float

    class Config:
        unique: ClassVar[list[str]] = ["as_of", "candidate_id"]

    @pa.dataframe_check
    @classmethod
    def score_within_scale(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("score").is_null() | (pl.col("score") <= pl.col("scale") + 1e-9))

    @pa.dataframe_check
    @classmethod
    def no_score_iff_insufficient(cls, data: pa.PolarsData) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col("score").is_null() == (pl.col("verdict") == "INSUFFICIENT_DATA"))

    @pa.dataframe_check
    @classmethod
    def verdict_matches_thresholds(cls, data: pa.PolarsData) -> pl.LazyFrame:
        expected = (pl.when(pl.col("score").is_null()).then(pl.lit("INSUFFICIENT_DATA"))
                    .when(pl.col("score") >= pl.col("strong")).then(pl.lit("STRONG"))
                    .when(pl.col("score") >= pl.col("marginal")).then(pl.lit("MARGINAL"))
                    .otherwise(pl.lit("SKIP")))
        return data.lazyframe.select(pl.col("verdict") == expected)


class VerificationRows(pa.DataFrameModel):
    """One row per verification: one per candidate and night."""

    candidate_id: str
    as_of: date
    status: str = pa.Field(isin=["CONFIRMED", "REJECTED", "UNCERTAIN"])
    checks_reported: int = pa.Field(eq=len(CHECKS))
    checks_failed: int = pa.Field(ge=0)
    checks_open: int = pa.Field(ge=0)

    model_downgrades: int = pa.Field(ge=0)
    """Kept model findings asking for UNCERTAIN or REJECTED."""

    class Config:
        unique: ClassVar[list[str]] = ["as_of", "candidate_id"]

    @pa.dataframe_check
    @classmethod
    def confirmed_only_if_all_pass(cls, data: pa.PolarsData) -> pl.LazyFrame:
        clean = (pl.col("checks_failed") == 0) & (pl.col("checks_open") == 0)
        downgraded = pl.col("model_downgrades") > 0
        confirmed = pl.col("status") == "CONFIRMED"
        # CONFIRMED exactly when every code check passed and no kept model finding asked for less.
        return data.lazyframe.select((confirmed & clean & ~downgraded) | (~confirmed & (~clean | downgraded)))


class RouteRows(pa.DataFrameModel):
    candidate_id: str = pa.Field(unique=True)
    destination: str = pa.Field(isin=["brief", "archive"])
    section_or_tag: str = pa.Field(isin=["act_on_these", "needs_your_judgment", "data_gap",
                                         "failed_verification", "below_threshold"])

    @pa.dataframe_check
    @classmethod
    def section_belongs_to_destination(cls, data: pa.PolarsData) -> pl.LazyFrame:
        in_brief = pl.col("section_or_tag").is_in(["act_on_these", "needs_your_judgment"])
        return data.lazyframe.select(in_brief == (pl.col("destination") == "brief"))


def filter_frame(pack: CriteriaPack, candidates: Sequence[Candidate]) -> pl.DataFrame:
    rows = []
    for c in candidates:
        for f in pack.hard_filters:
            value = c.metrics.get(f.metric)
            rows.append({"candidate_id": c.id, "filter": f.name, "result": c.filters.get(f.name, "missing"),
                         "value": value, "holds": None if value is None else f.holds(value), "went_on": c.went_on})
    return pl.DataFrame(rows, schema={"candidate_id": pl.String, "filter": pl.String, "result": pl.String,
                                      "value": pl.Float64, "holds": pl.Boolean, "went_on": pl.Boolean})


def analysis_frame(pack: CriteriaPack, analyses: Sequence[Analysis]) -> pl.DataFrame:
    return pl.DataFrame([{"candidate_id": a.candidate_id, "as_of": a.as_of, "verdict": a.verdict.value,
                          "score": a.score, "scale": pack.formula.scale, "strong": pack.thresholds.strong,
                          "marginal": pack.thresholds.marginal} for a in analyses],
                        schema={"candidate_id": pl.String, "as_of": pl.Date, "verdict": pl.String, "score": pl.Float64,
                                "scale": pl.Float64, "strong": pl.Float64, "marginal": pl.Float64})


def verification_frame(verifications: Sequence[Verification]) -> pl.DataFrame:
    return pl.DataFrame([{"candidate_id": v.candidate_id, "as_of": v.as_of, "status": v.status.value,
                          "checks_reported": sum(1 for name in CHECKS if name in v.checks),
                          "checks_failed": sum(1 for c in v.checks.values() if c.passed is False),
                          "checks_open": sum(1 for c in v.checks.values() if c.passed is None),
                          "model_downgrades": sum(1 for f in v.model_findings if f.effect != "note")}
                         for v in verifications],
                        schema={"candidate_id": pl.String, "as_of": pl.Date, "status": pl.String,
                                "checks_reported": pl.Int64,
                                "checks_failed": pl.Int64, "checks_open": pl.Int64, "model_downgrades": pl.Int64})


def route_frame(routes: Sequence[Route]) -> pl.DataFrame:
    return pl.DataFrame([{"candidate_id": r.candidate_id, "destination": r.destination.value,
                          "section_or_tag": r.section_or_tag} for r in routes],
                        schema={"candidate_id": pl.String, "destination": pl.String, "section_or_tag": pl.String})


def failures(schema: type[pa.DataFrameModel], frame: pl.DataFrame) -> list[dict[str, Any]]:
    try:
        schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        return [{k: str(v) for k, v in row.items()} for row in exc.failure_cases.to_dicts()]
    return []
