"""Wiring: the asset graph, its jobs and the resources chosen for this deployment (or one CLI run)."""

from __future__ import annotations

import os
import warnings
from datetime import date, timedelta

import dagster as dg

# Deliberate uses of beta/preview APIs (single-run backfill policy, DESIGN §3); not news on every import.
warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)
warnings.filterwarnings("ignore", message="Found asset job named")

from opportunity_assets.automation.schedules import build_nightly_schedule
from opportunity_assets.automation.sensors import build_chain_sensors
from opportunity_assets.automation.settings import ModelSettings, load_settings
from opportunity_assets.brief.assets import build_brief_and_archive
from opportunity_assets.candidates.assets import build_candidates
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.defaults import DEFAULT_STORE, criteria_path_from_environment
from opportunity_assets.distributed import executor_for_environment
from opportunity_assets.notify.assets import build_notifications
from opportunity_assets.outcomes.assets import backtest, build_outcomes
from opportunity_assets.partitions import first_night, nightly_partitions
from opportunity_assets.per_candidate.assets import analyze_and_verify
from opportunity_assets.periods import last_possible_night
from opportunity_assets.sources.facts import publication_span
from opportunity_assets.sources.reading import SourceError
from resources.criteria import CriteriaResource
from resources.model import AnthropicModel, ModelOff, ModelResource
from resources.notifier import notifier_from_settings
from resources.source import PointInTimeSource
from resources.store import STORE_URL_VARIABLE, ResultStore

MODEL_RUN_TAGS = {"llm": "anthropic"}
"""On every job whose steps may call the model: the run queue's `llm` tag limit (deploy/dagster*.yaml) bounds
how many such runs are in flight at once, so model calls across runs stay under the API's rate limits."""


def nights_of(pack: CriteriaPack, today: date | None = None) -> dg.DailyPartitionsDefinition:
    """The deployment's nights: from the pack's `nights.start`, or the first night its source supports (the first
    publication date of its rows, read now), to the latest night that has ended. A source that cannot be read now
    (a database down, a broken file) gives only the latest night: the scan, and `opportunity check`, say why."""
    latest, override = last_possible_night(today), pack.nights.start if pack.nights else None
    try:
        span = None if override else publication_span(pack, latest)
    except SourceError:
        span = None
    return nightly_partitions(first_night(override, span, latest))


def night_jobs(nights: dg.PartitionsDefinition, candidates: dg.AssetsDefinition, notifications: dg.AssetsDefinition,
               outcomes: dg.AssetsDefinition) -> list[dg.UnresolvedAssetJobDefinition]:
    """The jobs: `scan_night` is the UI's way to run a night (its page's Materialize… takes a date or a range), and
    the sensors' and `opportunity`'s first step; the chain runs the others."""
    return [
        dg.define_asset_job("scan_night", selection=[candidates], partitions_def=nights,
                            description="Scan one night (or a range: one run each): candidates and their dynamic "
                                        "partitions. The chain's sensors take each night from there to its brief."),
        dg.define_asset_job("analyze_night", selection=[analyze_and_verify], tags=MODEL_RUN_TAGS,
                            description="Analyze and verify a night's candidate partitions in one run."),
        dg.define_asset_job("brief_night", selection=dg.AssetSelection.assets("brief", "archive"),
                            partitions_def=nights, tags=MODEL_RUN_TAGS,
                            description="Route the night's candidates; write the brief and the archive."),
        dg.define_asset_job("notify_night", selection=[notifications], partitions_def=nights,
                            description="Send the night's act-on-these candidates on every configured channel."),
        dg.define_asset_job(
            "finish_night", selection=dg.AssetSelection.assets("brief", "archive", "notifications"),
            partitions_def=nights, tags=MODEL_RUN_TAGS,
            description="brief_night then notify_night in one run (`opportunity run` and backfills): a failed "
                        "blocking check of the brief skips the notifications, as the chain of sensors would."),
        dg.define_asset_job("outcomes_night", selection=[outcomes], partitions_def=nights,
                            description="Measure what became of a past night's verdicts (judgment quality)."),
        dg.define_asset_job("backtest_report", selection=[backtest],
                            description="Outcomes of a range of nights by verdict and verification, with the plot "
                                        "(`opportunity backtest` runs it)."),
    ]


def model_for(store: ResultStore, *, refresh: bool = False, settings: ModelSettings | None = None) -> ModelResource:
    """Chosen at wiring time: the real SDK when an API key or an Anthropic-compatible base URL is configured,
    deterministic mode otherwise. Only the variables' presence is looked at here; their values reach the
    resource through `EnvVar` when a run starts, and never appear in code, logs or metadata. An empty (or blank)
    variable counts as unset: `ANTHROPIC_API_KEY= opportunity run` is deterministic mode, not 61 failing calls.
    `settings`: the automation settings' `model` section (batches, timeouts, retries)."""
    has_key, has_url = (bool(os.environ.get(name, "").strip()) for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"))
    if not (has_key or has_url):
        return ModelOff()
    return AnthropicModel(api_key=dg.EnvVar("ANTHROPIC_API_KEY") if has_key else None,
                          base_url=dg.EnvVar("ANTHROPIC_BASE_URL") if has_url else None,
                          store=store, refresh=refresh, **(settings or ModelSettings()).given())


def build_definitions(criteria_path: str | None = None, store_path: str | None = None,
                      model: ModelResource | None = None, refresh: bool = False,
                      settings_path: str | None = None) -> dg.Definitions:
    """`settings_path`: schedule, sensors and notification channels (default deploy/automation.yaml).

    The result store is the DuckDB file at `store_path`, or, when OPPORTUNITY_STORE_URL is set (not blank), the
    PostgreSQL database it names; only its presence is looked at here, its value reaches the store through
    `EnvVar`. The same for the executor: with OPPORTUNITY_CELERY_BROKER set, the steps of the runs the daemon or the
    UI launch are Celery tasks on the workers (`distributed.py`)."""
    criteria = CriteriaResource(path=criteria_path or criteria_path_from_environment())
    nights = nights_of(criteria.load())
    candidates, notifications, outcomes = build_candidates(nights), build_notifications(nights), build_outcomes(nights)
    jobs = {job.name: job for job in night_jobs(nights, candidates, notifications, outcomes)}
    shared = bool(os.environ.get(STORE_URL_VARIABLE, "").strip())
    store = ResultStore(path=store_path or DEFAULT_STORE, url=dg.EnvVar(STORE_URL_VARIABLE) if shared else None)
    settings = load_settings(settings_path)
    notifier = notifier_from_settings(settings.notifications, store.path)
    return dg.Definitions(
        # Groups in the pipeline's order, each upstream of the next only: nightly_scan (candidates), per_candidate
        # (analyses, verifications), nightly_brief (brief, archive, notifications), judgment_quality.
        assets=[candidates, analyze_and_verify, build_brief_and_archive(nights, notifier.earlier_night_wait_seconds),
                notifications, outcomes, backtest],
        jobs=list(jobs.values()),
        # Each job's steps run one after another (a night's candidates share one step's thread pool), so a
        # process per step only adds Python starts: under `dagster dev` on 2 cores a scan run took 17 s with
        # the default multiprocess executor and 8 s in process, a per-candidate run 25 s and 9 s. With a broker
        # configured, each step is a Celery task on the workers instead (opportunity_assets/distributed.py).
        executor=executor_for_environment(),
        schedules=[build_nightly_schedule(jobs["scan_night"], settings.schedule)],
        sensors=build_chain_sensors(per_candidate_job=jobs["analyze_night"], brief_job=jobs["brief_night"],
                                    notify_job=jobs["notify_night"],
                                    channels=notifier.channel_names(),
                                    claim_expiry=timedelta(seconds=notifier.claim_expiry_seconds),
                                    earlier_night_wait=timedelta(seconds=notifier.earlier_night_wait_seconds),
                                    interval_seconds=settings.sensors.minimum_interval_seconds,
                                    running=settings.sensors.enabled),
        resources={
            "criteria": criteria,
            "source": PointInTimeSource(),
            "store": store,
            "model": model if model is not None else model_for(store, refresh=refresh, settings=settings.model),
            "notifier": notifier,
        },
    )
