"""`verifications[as_of|candidate]`: the skeptic's five checks on every analysis of the run."""


import dagster as dg

from opportunity_assets import schemas
from opportunity_assets.llm.steps import Judged, judge_verification
from opportunity_assets.partitions import candidate_partitions
from opportunity_assets.records import Analysis, Candidate, Verification
from opportunity_assets.stage import PerCandidateConfig, run_stage
from opportunity_assets.verifications.logic import verify
from resources.criteria import CriteriaResource
from resources.model import ModelResource
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
                  store: ResultStore, model: ModelResource) -> dg.MaterializeResult:
    """Arithmetic, inputs, assumptions (sensitivity), omissions, constraints → CONFIRMED/REJECTED/UNCERTAIN."""
    pack = criteria.load()

    def work(candidate: Candidate, analysis: Analysis | None) -> Judged[Verification]:
        assert analysis is not None  # load_night_inputs(needs_analysis=True) keeps only analyzed candidates
        return judge_verification(model, pack, candidate, analysis, verify(pack, candidate, analysis))

    run = run_stage(
        context, config, store, model, pack.domain, node="verify", model_node="verifier_model",
        needs_analysis=True, work=work, record_ids=lambda v: (v.as_of, v.candidate_id),
        write=lambda done: {"verifications": done},
        describe=lambda v: {"status": v.status.value, "failed_checks": ", ".join(v.failed_checks) or "none",
                            "fatal_assumption": v.fatal_assumption or "none", "model_noise": v.model_noise})
    failures = schemas.failures(schemas.VerificationRows, schemas.verification_frame(run.done))
    return dg.MaterializeResult(
        metadata={"verified": len(run.done), **run.metadata},
        check_results=[dg.AssetCheckResult(check_name="five_checks_reported", passed=not failures,
                                           metadata={"failures": dg.MetadataValue.json(failures[:20]),
                                                     "verifications_checked": len(run.done)})],
    )
