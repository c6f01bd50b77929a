"""`definitions.py` loads as Dagster loads it, with the graph DESIGN §1 describes."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import dagster as dg
import pytest
import yaml

import definitions
from opportunity_assets.night import DAGSTER_RUN_SETTINGS, prepare_in_process_runs
from opportunity_assets.partitions import CANDIDATE_PARTITIONS
from tests.conftest import ROOT, imported_modules


def test_definitions_load_with_the_graph_jobs_and_checks() -> None:
    defs = definitions.defs
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys >= {"candidates", "analyses", "verifications", "brief", "archive", "notifications"}
    assert {p.to_user_string() for p in graph.get(dg.AssetKey("verifications")).parent_keys} == {"analyses"}
    assert {p.to_user_string() for p in graph.get(dg.AssetKey("brief")).parent_keys} == {"verifications"}
    for name in ("scan_night", "analyze_night", "brief_night", "notify_night", "finish_night"):
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
    assert defs.resolve_job_def("finish_night").tags["llm"] == "anthropic"
    assert "llm" not in defs.resolve_job_def("scan_night").tags
    graph = defs.resolve_asset_graph()
    assert {p.to_user_string() for p in graph.get(dg.AssetKey("notifications")).parent_keys} == {"brief"}


def test_every_process_that_creates_runs_gets_the_same_dagster_settings() -> None:
    """The CLI sets them for itself; `make dev` and the Helm values must say the same, or UI runs differ."""
    expected = [f"{k}={v}" for k, v in DAGSTER_RUN_SETTINGS.items()]
    makefile = (ROOT / "Makefile").read_text()
    assert f"DAGSTER_RUN_SETTINGS := {' '.join(expected)}" in makefile
    assert "env $(DAGSTER_RUN_SETTINGS) $(BIN)/dagster dev" in makefile
    values = yaml.safe_load((ROOT / "deploy/k8s/values.yaml").read_text())
    for process in ("dagsterWebserver", "dagsterDaemon"):
        assert [f"{e['name']}={e['value']}" for e in values[process]["env"]] == expected, process
    assert values["runLauncher"]["config"]["k8sRunLauncher"]["envVars"] == expected


def test_every_documented_way_of_loading_the_code_names_one_code_location() -> None:
    """A run remembers the code location that made it, and the daemon launches it only from a location of that
    name. `make dev` and `dagster-daemon run` load the code from pyproject.toml, the README's shell backfill and
    production webserver by `-m definitions`: trial 68's `dagster job backfill -m definitions` beside `make dev`
    made three runs the daemon dropped ("Location definitions does not exist in workspace"), the backfill
    COMPLETED and its nights never scanned."""
    from dagster._core.workspace.load_target import ModuleTarget, PyProjectFileTarget

    from_pyproject = [o.location_name for o in PyProjectFileTarget(str(ROOT / "pyproject.toml")).create_origins()]
    by_module = [o.location_name for o in ModuleTarget(module_name="definitions", attribute=None,
                                                       working_directory=str(ROOT), location_name=None
                                                       ).create_origins()]
    assert from_pyproject == by_module == ["definitions"]
    readme = (ROOT / "README.md").read_text()
    assert "dagster job backfill -m definitions" in readme and "dagster-webserver -m definitions" in readme


def test_the_cli_applies_them_to_itself_one_planned_event_per_asset() -> None:
    """A night through `opportunity run` writes one planned event per per-candidate asset, not one per partition;
    in deterministic mode it never imports the model SDK nor the plotting library (~1.4 s of a 2.5 s run)."""
    env = {k: v for k, v in os.environ.items() if k not in DAGSTER_RUN_SETTINGS and not k.startswith("ANTHROPIC")}
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "opportunity_assets.cli", "run",
                               "--as-of", "2009-12-31", "--store", f"{tmp}/r.duckdb", "--dagster-home", f"{tmp}/home"],
                              env=env, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines()
                    if line.startswith("import time:")}
        assert "dagster" in imported and not {"anthropic", "matplotlib"} & imported
        instance = dg.DagsterInstance.from_config(f"{tmp}/home")
        run = next(r for r in instance.get_runs() if r.job_name == "analyze_night")
        planned = instance.get_records_for_run(
            run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED).records
        assert sorted(r.event_log_entry.dagster_event.asset_key.to_user_string() for r in planned) == [
            "analyses", "verifications"]
        instance.dispose()


def test_preparing_a_process_for_in_process_runs_keeps_a_users_setting_and_freezes_the_gc(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in DAGSTER_RUN_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", "7")
    try:
        prepare_in_process_runs()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert os.environ["DAGSTER_EVENT_BATCH_SIZE"] == "7"  # the user's value wins
    assert os.environ["DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS"] == "1"


def test_the_assets_steps_use_no_dagster() -> None:
    """Each asset wires a step that runs without Dagster (the benchmark's plain night calls the same steps)."""
    root = ROOT / "opportunity_assets"
    steps = [*root.glob("*/step.py"), root / "per_candidate" / "pipeline.py", root / "per_candidate" / "fanout.py",
             *root.glob("*/logic.py"), root / "brief" / "render.py", root / "brief" / "routing.py",
             root / "report" / "render.py", root / "report" / "svg.py", root / "reasons.py"]
    assert len([p for p in steps if p.name == "step.py"]) == 4
    for path in steps:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        assert "dagster" not in {m.split(".")[0] for m in imported_modules(path, module)}, path


@pytest.mark.parametrize(("env", "on"), [
    ({}, False),
    ({"ANTHROPIC_API_KEY": ""}, False),
    ({"ANTHROPIC_API_KEY": "  "}, False),
    ({"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}, False),
    ({"ANTHROPIC_API_KEY": "sk-test-not-a-real-key"}, True),
    ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, True),
])
def test_an_empty_api_key_means_model_checks_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                 env: dict[str, str], on: bool) -> None:
    from opportunity_assets.definitions import model_for
    from resources.store import ResultStore

    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert model_for(ResultStore(path=str(tmp_path / "r.duckdb"))).enabled() is on


def test_the_ui_shows_the_pack_opportunity_criteria_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Trial 42: `dagster dev` loads `definitions.py`, which names no pack: the UI was Texas's, whatever the user's
    domain, and no flag or variable said otherwise. $OPPORTUNITY_CRITERIA now names the pack, for the UI and the
    CLI alike; its nights start at that pack's data (the NYC routes' 2013-01-09)."""
    from opportunity_assets.cli import _parser
    from opportunity_assets.definitions import build_definitions

    pack = ROOT / "data" / "criteria" / "nyc_routes.yaml"
    monkeypatch.setenv("OPPORTUNITY_CRITERIA", str(pack))
    defs = build_definitions(store_path=str(tmp_path / "r.duckdb"))
    nights = defs.resolve_asset_graph().get(dg.AssetKey("candidates")).partitions_def
    assert isinstance(nights, dg.DailyPartitionsDefinition)
    assert nights.get_first_partition_key() == "2013-01-09"
    assert _parser().parse_args(["check"]).criteria == str(pack)
    monkeypatch.setenv("OPPORTUNITY_CRITERIA", " ")  # blank: the bundled Texas pack
    assert _parser().parse_args(["check"]).criteria.endswith("texas_housing.yaml")
