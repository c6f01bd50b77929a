"""What the two per-candidate assets share: their config, reading their inputs from the store, and
per-partition metadata. The assets stay thin; the work is in each stage's `logic.py`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Generic, TypeVar

import dagster as dg
from pydantic import Field

from opportunity_assets.fanout import Outcome, run_bounded
from opportunity_assets.llm.steps import Judged
from opportunity_assets.partitions import candidate_key, split_candidate_key
from opportunity_assets.records import Analysis, Candidate, RunError
from resources.model import ModelReply, ModelResource
from resources.store import ResultStore

Out = TypeVar("Out")
R = TypeVar("R")


class PerCandidateConfig(dg.Config):
    max_workers: int = Field(default=32, ge=1, le=64,
                             description="Threads per run over a night's candidates (model calls wait in them).")


def load_night_inputs(store: ResultStore, domain: str, keys: Sequence[str], *, node: str,
                      needs_analysis: bool = False) -> tuple[list[tuple[Candidate, Analysis | None]], list[RunError]]:
    """The scanned candidate (and its analysis) for each partition key; a key without them is an error record,
    except a candidate whose analysis already failed (its `analyze` error stands for it)."""
    by_night: dict[date, list[str]] = defaultdict(list)
    for key in keys:
        as_of, candidate_id = split_candidate_key(key)
        by_night[as_of].append(candidate_id)
    found: list[tuple[Candidate, Analysis | None]] = []
    missing: list[RunError] = []
    with store.session():
        nights = {as_of: (store.candidates(domain, as_of, went_on_only=True),
                          store.analyses(domain, as_of) if needs_analysis else [],
                          store.errors(domain, as_of)) for as_of in by_night}
    for as_of, ids in sorted(by_night.items()):
        stored_candidates, stored_analyses, stored_errors = nights[as_of]
        scanned = {c.id: c for c in stored_candidates}
        analyzed = {a.candidate_id: a for a in stored_analyses}
        failed_before = {e.candidate_id for e in stored_errors if e.node == "analyze"}
        for candidate_id in ids:
            if candidate_id not in scanned:
                missing.append(RunError(as_of=as_of, candidate_id=candidate_id, node=node,
                                        error=f"no scanned candidate going on for {as_of}|{candidate_id}: "
                                              "re-run candidates for that night"))
            elif needs_analysis and candidate_id in failed_before:
                continue  # its analysis failed and says so in its own error record; nothing to verify
            elif needs_analysis and candidate_id not in analyzed:
                missing.append(RunError(as_of=as_of, candidate_id=candidate_id, node=node,
                                        error="no analysis to verify (the analysis failed or has not run)"))
            else:
                found.append((scanned[candidate_id], analyzed.get(candidate_id)))
    return found, missing


def record_outcomes(context: dg.AssetExecutionContext, outcomes: Sequence[Outcome[Out]],
                    missing: Sequence[RunError], describe: Callable[[Out], dict[str, Any]]) -> None:
    """Per-partition metadata: what each candidate got, and how long it took."""
    for o in outcomes:
        metadata: dict[str, Any] = {"seconds": round(o.seconds, 4)}
        metadata.update(describe(o.result) if o.result is not None else {"error": o.error.error if o.error else ""})
        context.add_asset_metadata(metadata, partition_key=candidate_key(o.as_of, o.candidate_id))
    for e in missing:
        context.add_asset_metadata({"error": e.error}, partition_key=candidate_key(e.as_of, e.candidate_id))


def usage_metadata(reply: ModelReply | None, error: RunError | None) -> dict[str, Any]:
    """Per-partition model usage, or why the model step added nothing."""
    if error is not None:
        return {"model": f"failed: {error.error}"}
    if reply is None:
        return {}
    return {"model": "replayed" if reply.replayed else "called", "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens, "cache_read_tokens": reply.cache_read_tokens,
            "usd": round(reply.usd, 6)}


def usage_totals(replies: Sequence[ModelReply | None]) -> dict[str, Any]:
    """Per-node model totals: calls made now (replays cost nothing), tokens and dollars."""
    made = [r for r in replies if r is not None and not r.replayed]
    return {"model_calls": len(made), "model_replayed": sum(1 for r in replies if r is not None and r.replayed),
            "model_input_tokens": sum(r.input_tokens + r.cache_write_tokens + r.cache_read_tokens for r in made),
            "model_output_tokens": sum(r.output_tokens for r in made),
            "model_usd": round(sum(r.usd for r in made), 6)}


@dataclass(frozen=True)
class StageRun(Generic[R]):
    """What a per-candidate stage produced over the run's partitions."""

    done: list[R]
    fatal_errors: int
    model_errors: int
    metadata: dict[str, Any]
    """Per-node totals for the asset's materialization."""


def run_stage(context: dg.AssetExecutionContext, config: PerCandidateConfig, store: ResultStore,
              model: ModelResource, domain: str, *, node: str, model_node: str, needs_analysis: bool,
              work: Callable[[Candidate, Analysis | None], Judged[R]], record_ids: Callable[[R], tuple[date, str]],
              write: Callable[[list[R]], dict[str, Any]], describe: Callable[[R], dict[str, Any]]) -> StageRun[R]:
    """Load the run's candidates, do `work` in the bounded pool (a raise is that candidate's `node` error), write
    the results, error records and model calls in one transaction, and record per-partition metadata."""
    inputs, missing = load_night_inputs(store, domain, context.partition_keys, node=node,
                                        needs_analysis=needs_analysis)
    outcomes = run_bounded([(c.as_of, c.id, (c, a)) for c, a in inputs], lambda pair: work(*pair), node=node,
                           max_workers=config.max_workers)
    judged = [o.result for o in outcomes if o.result is not None]
    done = [j.record for j in judged]
    model_errors = [j.model_error for j in judged if j.model_error is not None]
    fatal = [o.error for o in outcomes if o.error is not None] + missing
    failed_model = {e.candidate_id for e in model_errors}
    cleared = [(*record_ids(r), name) for r in done for name in (node, model_node)
               if name == node or record_ids(r)[1] not in failed_model]
    store.write_stage(domain, errors=fatal + model_errors, model_calls=model.drain_records(), cleared=cleared,
                      **write(done))
    record_outcomes(context, outcomes, missing,
                    lambda j: {**describe(j.record), **usage_metadata(j.reply, j.model_error)})
    return StageRun(done=done, fatal_errors=len(fatal), model_errors=len(model_errors),
                    metadata={"errors": len(fatal), "model_errors": len(model_errors),
                              **usage_totals([j.reply for j in judged])})
