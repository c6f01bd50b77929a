"""`analyses[as_of|candidate]`: the pack's formula by code, for every candidate partition of the run."""


import dagster as dg

from opportunity_assets import schemas
from opportunity_assets.analyses.logic import analyze
from opportunity_assets.llm.steps import judge_analysis
from opportunity_assets.partitions import candidate_partitions
from opportunity_assets.stage import PerCandidateConfig, run_stage
from resources.criteria import CriteriaResource
from resources.model import ModelResource
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
             store: ResultStore, model: ModelResource) -> dg.MaterializeResult:
    """Inputs with provenance, the calculation step by step, score, verdict, assumptions and red flags."""
    pack = criteria.load()
    run = run_stage(
        context, config, store, model, pack.domain, node="analyze", model_node="analyzer_model",
        needs_analysis=False,
        work=lambda candidate, _: judge_analysis(model, pack, candidate, analyze(pack, candidate)),
        record_ids=lambda a: (a.as_of, a.candidate_id), write=lambda done: {"analyses": done},
        describe=lambda a: {"verdict": a.verdict.value, "score": a.score, "red_flags": len(a.red_flags),
                            "inputs": dg.MetadataValue.json({k: n.value for k, n in a.numbers.items()})})
    failures = schemas.failures(schemas.AnalysisRows, schemas.analysis_frame(pack, run.done))
    return dg.MaterializeResult(
        metadata={"analyzed": len(run.done), **run.metadata},
        check_results=[dg.AssetCheckResult(check_name="verdicts_consistent", passed=not failures,
                                           metadata={"failures": dg.MetadataValue.json(failures[:20]),
                                                     "analyses_checked": len(run.done)})],
    )
