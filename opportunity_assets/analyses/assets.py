"""`analyses[as_of|candidate]`: the pack's formula by code, for every candidate partition of the run."""


import dagster as dg

from opportunity_assets import schemas
from opportunity_assets.analyses.logic import analyze
from opportunity_assets.fanout import run_bounded
from opportunity_assets.partitions import candidate_partitions
from opportunity_assets.records import Analysis, Candidate, RunError
from opportunity_assets.stage import PerCandidateConfig, load_night_inputs, record_outcomes
from resources.criteria import CriteriaResource
from resources.store import ResultStore


@dg.asset(
    partitions_def=candidate_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    deps=[dg.AssetDep("candidates", partition_mapping=dg.AllPartitionMapping())],
    group_name="per_candidate",
    kinds={"python"},
    check_specs=[dg.AssetCheckSpec("verdicts_consistent", asset="analyses", blocking=True,
                                   description="Each verdict follows from its score and the pack's thresholds; "
                                               "no score exactly when INSUFFICIENT_DATA.")],
)
def analyses(context: dg.AssetExecutionContext, config: PerCandidateConfig, criteria: CriteriaResource,
             store: ResultStore) -> dg.MaterializeResult:
    """Inputs with provenance, the calculation step by step, score, verdict, assumptions and red flags."""
    pack = criteria.load()
    inputs, missing = load_night_inputs(store, pack.domain, context.partition_keys, node="analyze")
    items = [(c.as_of, c.id, c) for c, _ in inputs]

    def work(candidate: Candidate) -> Analysis:
        return analyze(pack, candidate)

    outcomes = run_bounded(items, work, node="analyze", max_workers=config.max_workers)
    done: list[Analysis] = [o.result for o in outcomes if o.result is not None]
    errors: list[RunError] = [o.error for o in outcomes if o.error is not None] + missing
    store.write_stage(pack.domain, analyses=done, errors=errors,
                      cleared=[(a.as_of, a.candidate_id, "analyze") for a in done])
    record_outcomes(context, outcomes, missing, lambda a: {
        "verdict": a.verdict.value, "score": a.score, "red_flags": len(a.red_flags),
        "inputs": dg.MetadataValue.json({k: n.value for k, n in a.numbers.items()}),
    })
    failures = schemas.failures(schemas.AnalysisRows, schemas.analysis_frame(pack, done))
    return dg.MaterializeResult(
        metadata={"analyzed": len(done), "errors": len(errors)},
        check_results=[dg.AssetCheckResult(check_name="verdicts_consistent", passed=not failures,
                                           metadata={"failures": dg.MetadataValue.json(failures[:20]),
                                                     "analyses_checked": len(done)})],
    )
