"""Wiring: the asset graph, its jobs and the resources chosen for this deployment (or one CLI run)."""

from __future__ import annotations

import warnings

import dagster as dg

# Deliberate uses of beta/preview APIs (single-run backfill policy, DESIGN §3); not news on every import.
warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)
warnings.filterwarnings("ignore", message="Found asset job named")

from opportunity_assets.analyses.assets import analyses
from opportunity_assets.brief.assets import brief_and_archive
from opportunity_assets.candidates.assets import candidates
from opportunity_assets.partitions import nightly_partitions
from opportunity_assets.verifications.assets import verifications
from resources.criteria import DEFAULT_PACK, CriteriaResource
from resources.source import PointInTimeSource
from resources.store import ResultStore

DEFAULT_STORE = "var/results.duckdb"

scan_night = dg.define_asset_job("scan_night", selection=[candidates], partitions_def=nightly_partitions,
                                 description="Scan one night: candidates and their dynamic partitions.")
analyze_night = dg.define_asset_job("analyze_night", selection=[analyses, verifications],
                                    description="Analyze and verify a night's candidate partitions in one run.")
brief_night = dg.define_asset_job("brief_night", selection=dg.AssetSelection.assets("brief", "archive"),
                                  partitions_def=nightly_partitions,
                                  description="Route the night's candidates; write the brief and the archive.")


def build_definitions(criteria_path: str | None = None, store_path: str | None = None) -> dg.Definitions:
    return dg.Definitions(
        assets=[candidates, analyses, verifications, brief_and_archive],
        jobs=[scan_night, analyze_night, brief_night],
        resources={
            "criteria": CriteriaResource(path=criteria_path or str(DEFAULT_PACK)),
            "source": PointInTimeSource(),
            "store": ResultStore(path=store_path or DEFAULT_STORE),
        },
    )
