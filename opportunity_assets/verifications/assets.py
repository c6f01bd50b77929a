"""`verifications[as_of|candidate]`: the skeptic's five checks on every analysis of the run."""


import dagster as dg

from opportunity_assets import schemas
from opportunity_assets.fanout import run_bounded
from opportunity_assets.partitions import candidate_partitions
from opportunity_assets.records import Analysis, Candidate, RunError, Verification
from opportunity_assets.stage import PerCandidateConfig, load_night_inputs, record_outcomes
from opportunity_assets.verifications.logic import verify
from resources.criteria import CriteriaResource
from resources.store import ResultStore


@dg.asset(
    partitions_def=candidate_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    deps=["analyses"],
    group_name="per_candidate",
    kinds={"python"},
    check_specs=[dg.AssetCheckSpec("five_checks_reported", asset="verifications", blocking=True,
                                   description="Every verification reports all five checks; CONFIRMED only "
                                               "when all pass.")],
)
def verifications(context: dg.AssetExecutionContext, config: PerCandidateConfig, criteria: CriteriaResource,
                  store: ResultStore) -> dg.MaterializeResult:
    """Arithmetic, inputs, assumptions (sensitivity), omissions, constraints → CONFIRMED/REJECTED/UNCERTAIN."""
    pack = criteria.load()
    inputs, missing = load_night_inputs(store, pack.domain, context.partition_keys, node="verify",
                                        needs_analysis=True)
    items = [(c.as_of, c.id, (c, a)) for c, a in inputs]

    def work(pair: tuple[Candidate, Analysis | None]) -> Verification:
        candidate, analysis = pair
        assert analysis is not None
        return verify(pack, candidate, analysis)

    outcomes = run_bounded(items, work, node="verify", max_workers=config.max_workers)
    done: list[Verification] = [o.result for o in outcomes if o.result is not None]
    errors: list[RunError] = [o.error for o in outcomes if o.error is not None] + missing
    store.write_stage(pack.domain, verifications=done, errors=errors,
                      cleared=[(v.as_of, v.candidate_id, "verify") for v in done])
    record_outcomes(context, outcomes, missing, lambda v: {
        "status": v.status.value, "failed_checks": ", ".join(v.failed_checks) or "none",
        "fatal_assumption": v.fatal_assumption or "none",
    })
    failures = schemas.failures(schemas.VerificationRows, schemas.verification_frame(done))
    return dg.MaterializeResult(
        metadata={"verified": len(done), "errors": len(errors)},
        check_results=[dg.AssetCheckResult(check_name="five_checks_reported", passed=not failures,
                                           metadata={"failures": dg.MetadataValue.json(failures[:20]),
                                                     "verifications_checked": len(done)})],
    )
