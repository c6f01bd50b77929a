"""`candidates[as_of]`: scan the point-in-time source, apply hard filters, register the night's partitions."""


from datetime import date

import dagster as dg

from opportunity_assets.candidates.step import scan_and_store
from opportunity_assets.metadata import table_value
from opportunity_assets.partitions import nightly_partitions, register_night
from opportunity_assets.tables import candidates_table
from resources.criteria import CriteriaResource
from resources.model import ModelResource
from resources.source import PointInTimeSource
from resources.store import ResultStore


@dg.asset(
    partitions_def=nightly_partitions,
    group_name="nightly",
    kinds={"duckdb", "python"},
    check_specs=[
        dg.AssetCheckSpec("filters_hold", asset="candidates", blocking=True,
                          description="Every candidate that went on has no FAIL, and each filter result "
                                      "matches its stored metric (missing value = UNCLEAR)."),
        dg.AssetCheckSpec("required_input_coverage", asset="candidates",
                          description="Share of candidates going on with every required input >= the pack's "
                                      "coverage threshold."),
    ],
)
def candidates(context: dg.AssetExecutionContext, criteria: CriteriaResource, source: PointInTimeSource,
               store: ResultStore, model: ModelResource) -> dg.MaterializeResult:
    """Candidates known on as_of: hard filters PASS/FAIL/UNCLEAR, data gaps, the cap. No ranking."""
    as_of = date.fromisoformat(context.partition_key)
    pack = criteria.load()
    step = scan_and_store(pack, source, store, model, as_of)
    register_night(context.instance, as_of, step.going_on)
    report = step.report
    return dg.MaterializeResult(
        metadata={
            "candidates": table_value(candidates_table(pack, step.rows)),
            "as_of": as_of.isoformat(),
            "anchor_period": str(report.anchor_period),
            "scanned": report.scanned,
            "failed_filters": report.failed_filters,
            "passed_filters": report.passed_filters,
            "capped": report.capped,
            "went_on": report.went_on,
            "quarantined_rows": report.quarantined,
            "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in report.notes) or "none"),
            "criteria": f"{pack.domain} ({pack.fingerprint})",
        },
        check_results=[
            dg.AssetCheckResult(check_name="filters_hold", passed=not step.filter_failures,
                                metadata={"failures": dg.MetadataValue.json(step.filter_failures[:20]),
                                          "candidates_checked": step.checked}),
            dg.AssetCheckResult(check_name="required_input_coverage",
                                passed=step.coverage >= pack.coverage.min_required_inputs_share,
                                severity=dg.AssetCheckSeverity.WARN,
                                metadata={"coverage": step.coverage,
                                          "threshold": pack.coverage.min_required_inputs_share}),
        ],
    )
