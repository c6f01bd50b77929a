"""`definitions.py` loads as Dagster loads it, with the graph DESIGN §1 describes."""

from __future__ import annotations

import dagster as dg

import definitions
from opportunity_assets.partitions import CANDIDATE_PARTITIONS


def test_definitions_load_with_the_graph_jobs_and_checks() -> None:
    defs = definitions.defs
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys >= {"candidates", "analyses", "verifications", "brief", "archive", "notifications"}
    assert {p.to_user_string() for p in graph.get(dg.AssetKey("verifications")).parent_keys} == {"analyses"}
    assert {p.to_user_string() for p in graph.get(dg.AssetKey("brief")).parent_keys} == {"verifications"}
    for name in ("scan_night", "analyze_night", "brief_night", "notify_night"):
        assert defs.resolve_job_def(name) is not None
    per_candidate = graph.get(dg.AssetKey("analyses")).partitions_def
    assert isinstance(per_candidate, dg.DynamicPartitionsDefinition) and per_candidate.name == CANDIDATE_PARTITIONS
    assert isinstance(graph.get(dg.AssetKey("candidates")).partitions_def, dg.DailyPartitionsDefinition)
    checks = {(k.asset_key.to_user_string(), k.name) for k in graph.asset_check_keys}
    assert checks == {("candidates", "filters_hold"), ("candidates", "required_input_coverage"),
                      ("analyses", "verdicts_consistent"), ("verifications", "five_checks_reported"),
                      ("brief", "word_limit"), ("brief", "numbers_in_store"), ("archive", "routes_valid"),
                      ("notifications", "channels_delivered")}


def test_definitions_run_themselves_schedule_sensors_and_the_llm_tag() -> None:
    defs = definitions.defs
    assert [s.name for s in defs.schedules or []] == ["nightly_scan"]
    assert [s.name for s in defs.sensors or []] == ["chain_after_scan", "chain_after_verifications",
                                                    "chain_after_brief"]
    assert all(s.default_status == dg.DefaultSensorStatus.RUNNING for s in defs.sensors or [])
    assert defs.resolve_job_def("analyze_night").tags["llm"] == "anthropic"
    assert defs.resolve_job_def("brief_night").tags["llm"] == "anthropic"
    assert "llm" not in defs.resolve_job_def("scan_night").tags
    graph = defs.resolve_asset_graph()
    assert {p.to_user_string() for p in graph.get(dg.AssetKey("notifications")).parent_keys} == {"brief"}
