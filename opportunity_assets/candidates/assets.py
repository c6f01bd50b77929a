"""`candidates[as_of]`: scan the point-in-time source, apply hard filters, register the night's partitions."""


from datetime import date

import dagster as dg

from opportunity_assets.candidates.step import scan_and_store
from opportunity_assets.check.pack import NightRefused
from opportunity_assets.formatting import format_value
from opportunity_assets.metadata import check_metadata, table_value
from opportunity_assets.partitions import register_night
from opportunity_assets.tables import candidates_table, check_failures, period_label, quarantine_table
from resources.criteria import CriteriaResource
from resources.model import ModelResource
from resources.source import PointInTimeSource
from resources.store import ResultStore


def build_candidates(nights: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    """`candidates`, partitioned by the deployment's nights (`partitions.nightly_partitions`)."""

    @dg.asset(
        partitions_def=nights,
        group_name="nightly_scan",
        kinds={"duckdb", "python"},
        check_specs=[
            dg.AssetCheckSpec("filters_hold", asset="candidates", blocking=True, partitions_def=nights,
                              description="Every candidate that went on has no FAIL, and each filter result "
                                          "matches its stored metric (missing value = UNCLEAR)."),
            dg.AssetCheckSpec("required_input_coverage", asset="candidates", partitions_def=nights,
                              description="Share of candidates going on with every required input >= the pack's "
                                          "coverage threshold."),
        ],
    )
    def candidates(context: dg.AssetExecutionContext, criteria: CriteriaResource, source: PointInTimeSource,
                   store: ResultStore, model: ModelResource) -> dg.MaterializeResult:
        """Candidates known on as_of: hard filters PASS/FAIL/UNCLEAR, data gaps, the cap. No ranking."""
        as_of = date.fromisoformat(context.partition_key)
        pack = criteria.load()
        try:
            step = scan_and_store(pack, source, store, model, as_of)
        except NightRefused as exc:  # the pack's mistake, in one line naming its key: no traceback to read
            raise dg.Failure(description=str(exc), allow_retries=False) from None
        register_night(context.instance, as_of, step.going_on)
        report = step.report
        return dg.MaterializeResult(
            metadata={
                "candidates": table_value(candidates_table(pack, step.rows)),
                "as_of": as_of.isoformat(),
                "anchor_period": str(period_label(report.anchor_period, pack.grain)),
                "scanned": report.scanned,
                "failed_filters": report.failed_filters,
                "passed_filters": report.passed_filters,
                "capped": report.capped,
                "went_on": report.went_on,
                "quarantined_rows": report.quarantined,
                "quarantine": table_value(quarantine_table(step.quarantined, pack.grain)),
                "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in report.notes) or "none"),
                "criteria": f"{pack.domain} ({pack.fingerprint})",
            },
            check_results=[
                dg.AssetCheckResult(check_name="filters_hold", passed=not step.filter_failures,
                                    metadata=check_metadata(context.partition_key, {
                                        "failures": check_failures(step.filter_failures),
                                        "candidates_checked": step.checked})),
                dg.AssetCheckResult(check_name="required_input_coverage",
                                    passed=step.coverage >= pack.coverage.min_required_inputs_share,
                                    severity=dg.AssetCheckSeverity.WARN,
                                    metadata=check_metadata(context.partition_key, {
                                        "coverage": format_value(step.coverage, "share"),
                                        "threshold": format_value(pack.coverage.min_required_inputs_share,
                                                                  "share")})),
            ],
        )

    return candidates
