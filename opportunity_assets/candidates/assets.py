"""`candidates[as_of]`: scan the point-in-time source, apply hard filters, register the night's partitions."""


import dataclasses
from datetime import date

import dagster as dg

from opportunity_assets import schemas
from opportunity_assets.candidates.logic import scan
from opportunity_assets.cost import load_prices, worst_case
from opportunity_assets.partitions import nightly_partitions, register_night
from opportunity_assets.records import Candidate
from resources.criteria import CriteriaResource
from resources.model import ModelResource
from resources.source import PointInTimeSource
from resources.store import ResultStore


def night_id(domain: str, as_of: date, fingerprint: str) -> str:
    """The night's run id in the state object: it names the as_of, the domain and the criteria version."""
    return f"{domain}-{as_of.isoformat()}-{fingerprint}"


def required_input_coverage(required: list[str], candidates: list[Candidate]) -> float:
    going_on = [c for c in candidates if c.went_on]
    if not going_on:
        return 1.0
    return sum(all(c.metrics.get(name) is not None for name in required) for c in going_on) / len(going_on)


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
    snapshot = source.read(pack, as_of)
    found, report = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined.height)
    cost_facts: dict[str, float] = {}
    if model.enabled():  # the night's worst-case model cost must fit the pack's ceiling before any call
        estimate = worst_case(pack, load_prices(), report.went_on, model_checks_on=True)
        affordable = estimate.candidates_within(pack.caps.cost_ceiling_usd)
        if affordable < report.went_on:
            capped_pack = pack.model_copy(update={"caps": pack.caps.model_copy(
                update={"max_candidates": max(affordable, 1)})})
            found, report = scan(capped_pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                                 snapshot.quarantined.height)
            report = dataclasses.replace(report, notes=[*report.notes, (
                f"model cost ceiling ${pack.caps.cost_ceiling_usd:.2f}: worst case "
                f"${estimate.worst_case_usd:.2f} for {estimate.candidates} candidates, so the cap is "
                f"{report.went_on}")])
            cost_facts = {"model_worst_case_usd": estimate.worst_case_usd, "model_worst_case_candidates":
                          estimate.candidates}
    coverage = required_input_coverage(pack.required_inputs, found)
    notes = list(report.notes)
    if coverage < pack.coverage.min_required_inputs_share:
        notes.append(f"only {coverage:.0%} of candidates going on have every required input "
                     f"(threshold {pack.coverage.min_required_inputs_share:.0%})")
    report = dataclasses.replace(report, notes=notes)
    with store.session():
        store.write_scan(
            pack.domain, as_of, run_id=night_id(pack.domain, as_of, pack.fingerprint),
            criteria_fingerprint=pack.fingerprint, criteria=pack.model_dump_json(),
            anchor_period=report.anchor_period,
            scan_report={**dataclasses.asdict(report), "coverage": coverage, **cost_facts},
            candidates=found, quarantined=snapshot.quarantined.to_dicts(),
        )
        stored = store.candidates(pack.domain, as_of)
    going_on = sorted(c.partition_key for c in found if c.went_on)
    register_night(context.instance, as_of, going_on)

    filter_failures = schemas.failures(schemas.FilterRows, schemas.filter_frame(pack, stored))
    return dg.MaterializeResult(
        metadata={
            "as_of": as_of.isoformat(),
            "anchor_period": str(report.anchor_period),
            "scanned": report.scanned,
            "failed_filters": report.failed_filters,
            "passed_filters": report.passed_filters,
            "capped": report.capped,
            "went_on": report.went_on,
            "quarantined_rows": report.quarantined,
            "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in notes) or "none"),
            "criteria": f"{pack.domain} ({pack.fingerprint})",
        },
        check_results=[
            dg.AssetCheckResult(check_name="filters_hold", passed=not filter_failures,
                                metadata={"failures": dg.MetadataValue.json(filter_failures[:20]),
                                          "candidates_checked": len(stored)}),
            dg.AssetCheckResult(check_name="required_input_coverage",
                                passed=coverage >= pack.coverage.min_required_inputs_share,
                                severity=dg.AssetCheckSeverity.WARN,
                                metadata={"coverage": coverage,
                                          "threshold": pack.coverage.min_required_inputs_share}),
        ],
    )
