"""`analyses[as_of|candidate]` and `verifications[as_of|candidate]`: one step over a night's candidate partitions.

Two assets, one op: each candidate is analyzed then verified in its own thread (`pipeline.py`). Either asset can
be materialized alone, from the UI or a partition range; verifications alone re-verifies the stored analyses.
"""

from concurrent.futures import Future, ThreadPoolExecutor

import dagster as dg
from pydantic import Field

from opportunity_assets.candidates.step import edited_mid_night
from opportunity_assets.metadata import as_metadata, check_metadata
from opportunity_assets.partitions import candidate_partitions, split_candidate_key
from opportunity_assets.per_candidate.pipeline import Stages, run_candidates, store_checked
from opportunity_assets.tables import check_failures
from resources.criteria import CriteriaResource
from resources.model import ModelResource
from resources.store import ResultStore

ANALYSES = dg.AssetKey("analyses")
VERIFICATIONS = dg.AssetKey("verifications")


class PerCandidateConfig(dg.Config):
    max_workers: int = Field(default=32, ge=1, le=64,
                             description="Threads per run over a night's candidates (model calls wait in them).")


@dg.multi_asset(
    name="analyze_and_verify",
    specs=[
        dg.AssetSpec(ANALYSES, group_name="per_candidate", kinds={"python"}, skippable=True,
                     deps=[dg.AssetDep("candidates", partition_mapping=dg.AllPartitionMapping())],
                     description="Inputs with provenance, the calculation step by step, score, verdict, "
                                 "assumptions and red flags."),
        dg.AssetSpec(VERIFICATIONS, group_name="per_candidate", kinds={"python"}, skippable=True, deps=[ANALYSES],
                     description="Arithmetic, inputs, assumptions (sensitivity), omissions, constraints → "
                                 "CONFIRMED / REJECTED / UNCERTAIN."),
    ],
    partitions_def=candidate_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    can_subset=True,
    check_specs=[
        dg.AssetCheckSpec("verdicts_consistent", asset=ANALYSES, blocking=True,
                          description="Each verdict follows from its score and the pack's thresholds; no score "
                                      "exactly when INSUFFICIENT_DATA. A failure withholds the verifications."),
        dg.AssetCheckSpec("five_checks_reported", asset=VERIFICATIONS, blocking=True,
                          description="Every verification reports all five checks; CONFIRMED only when all pass."),
    ],
)
def analyze_and_verify(context: dg.AssetExecutionContext, config: PerCandidateConfig, criteria: CriteriaResource,
                       store: ResultStore, model: ModelResource):
    """Analyze and verify every candidate partition of the run; write records, errors and model calls at once."""
    pack = criteria.load()
    for as_of in sorted({split_candidate_key(key)[0] for key in context.partition_keys}):
        if (said := edited_mid_night(store.night(pack.domain, as_of), pack, as_of)) is not None:
            raise dg.Failure(said)
    stages = Stages(analyze=ANALYSES in context.selected_asset_keys,
                    verify=VERIFICATIONS in context.selected_asset_keys)
    # Per-partition metadata is recorded by one thread as each candidate's record is done, while the others' model
    # calls run: each `add_asset_metadata` checks its key against the instance's partitions (86 a night).
    recorded: dict[tuple[str, str], Future[None]] = {}
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="partition-metadata") as recorder:

        def record(stage: str, key: str, metadata: dict) -> None:
            recorded[(stage, key)] = recorder.submit(context.add_asset_metadata, as_metadata(metadata),
                                                     asset_key=ANALYSES if stage == "analysis" else VERIFICATIONS,
                                                     partition_key=key)

        night = run_candidates(store, model, pack, context.partition_keys, stages, max_workers=config.max_workers,
                               on_record=record)
    for done in recorded.values():
        done.result()  # whatever the recorder met is raised here, in the step
    checks = store_checked(store, model, pack, night, stages)
    # The run's candidate partitions span a night (or, from a hand-picked range, several): its checks say which.
    nights = ", ".join(sorted({split_candidate_key(key)[0].isoformat() for key in context.partition_keys}))

    if stages.analyze:
        for key, metadata in night.analysis_metadata.items():
            if ("analysis", key) not in recorded:
                context.add_asset_metadata(as_metadata(metadata), asset_key=ANALYSES, partition_key=key)
        # No night totals here: they would be every candidate partition's metadata (the night's are on brief).
        yield dg.MaterializeResult(asset_key=ANALYSES, check_results=[
            dg.AssetCheckResult(asset_key=ANALYSES, check_name="verdicts_consistent", passed=not checks.inconsistent,
                                metadata=check_metadata(nights, {"failures": check_failures(checks.inconsistent),
                                                                 "analyses_checked": len(night.analyses)}))])
    if checks.verifications_kept:
        for key, metadata in night.verification_metadata.items():
            if ("verification", key) not in recorded:
                context.add_asset_metadata(as_metadata(metadata), asset_key=VERIFICATIONS, partition_key=key)
        yield dg.MaterializeResult(asset_key=VERIFICATIONS, check_results=[
            dg.AssetCheckResult(asset_key=VERIFICATIONS, check_name="five_checks_reported",
                                passed=not checks.incomplete,
                                metadata=check_metadata(nights, {"failures": check_failures(checks.incomplete),
                                                                 "verifications_checked": len(night.verifications)}))])
