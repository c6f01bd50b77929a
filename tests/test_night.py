"""Whole nights through Dagster: the graph, idempotence, error isolation, the known-bad candidate, no look-ahead."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from opportunity_assets import night as nights
from opportunity_assets.brief.assets import build_brief_and_archive
from opportunity_assets.brief.render import WORD_LIMIT
from opportunity_assets.candidates.assets import build_candidates
from opportunity_assets.definitions import build_definitions, nights_of
from opportunity_assets.partitions import night_keys, night_range_tags
from opportunity_assets.per_candidate import pipeline
from opportunity_assets.per_candidate.assets import analyze_and_verify
from opportunity_assets.records import RunState, Verdict
from opportunity_assets.stopping import STOPPED
from resources.criteria import CriteriaResource
from resources.model import ModelOff
from resources.source import PointInTimeSource
from resources.store import ResultStore
from tests.conftest import PACK, month_rows, write_csv, write_pack

pytestmark = pytest.mark.slow

DESIGN_NIGHT = date(2009, 12, 31)


def _run(tmp_path: Path, as_of: date, pack: Path = PACK, instance: dg.DagsterInstance | None = None) -> RunState:
    defs = build_definitions(criteria_path=str(pack), store_path=str(tmp_path / "results.duckdb"))
    nights.run_night(defs, instance or dg.DagsterInstance.ephemeral(), as_of)
    return nights.state(defs, as_of)


def _comparable(run: RunState) -> dict:
    return json.loads(run.model_dump_json())


def test_whole_graph_through_materialize(tmp_path: Path) -> None:
    """The four assets materialized with dg.materialize(), as the UI would: scan, one run per night, brief. Each
    check says which night it judged: the nightly ones are that night's partition, every one names it."""
    partitions = nights_of(CriteriaResource(path=str(PACK)).load())
    candidates, brief_and_archive = build_candidates(partitions), build_brief_and_archive(partitions)
    resources = {"criteria": CriteriaResource(path=str(PACK)), "source": PointInTimeSource(),
                 "store": ResultStore(path=str(tmp_path / "results.duckdb")), "model": ModelOff()}
    instance = dg.DagsterInstance.ephemeral()
    key = DESIGN_NIGHT.isoformat()
    scanned = dg.materialize([candidates], partition_key=key, resources=resources, instance=instance)
    assert scanned.success
    keys = night_keys(instance, DESIGN_NIGHT)
    assert keys and all(k.startswith(f"{key}|") for k in keys)
    per_candidate = dg.materialize([analyze_and_verify], resources=resources, instance=instance,
                                   tags=night_range_tags(keys))
    assert per_candidate.success
    events = per_candidate.get_asset_materialization_events()
    partitions = {e.partition for e in events}
    assert partitions == set(keys)  # one run covered every candidate partition of the night
    by_asset = {(e.asset_key.to_user_string(), e.partition): e.materialization.metadata for e in events}
    assert len(by_asset) == 2 * len(keys)  # each asset, each partition, its own metadata:
    for partition in keys:
        analysis, verification = by_asset[("analyses", partition)], by_asset[("verifications", partition)]
        assert analysis["verdict"].value in {"STRONG", "MARGINAL", "SKIP", "INSUFFICIENT_DATA"}
        assert analysis["seconds"].value >= 0 and analysis["inputs"].value.startswith("- ")
        assert verification["status"].value in {"CONFIRMED", "REJECTED", "UNCERTAIN"}
        assert "failed_checks" in verification and "verdict" not in verification
    briefed = dg.materialize([brief_and_archive], partition_key=key, resources=resources, instance=instance)
    assert briefed.success
    checks = [*scanned.get_asset_check_evaluations(), *per_candidate.get_asset_check_evaluations(),
              *briefed.get_asset_check_evaluations()]
    names = {(c.asset_key.to_user_string(), c.check_name): c.passed for c in checks}
    assert names[("candidates", "filters_hold")] and names[("analyses", "verdicts_consistent")]
    assert names[("brief", "word_limit")] and names[("brief", "numbers_in_store")]
    assert names[("verifications", "five_checks_reported")] and names[("archive", "routes_valid")]
    for check in checks:
        nightly = check.asset_key.to_user_string() not in ("analyses", "verifications")
        assert check.partition == (key if nightly else None), check.check_name  # a range run: no one partition
        assert check.metadata["night"] == dg.MetadataValue.text(key), check.check_name
        assert all(not isinstance(v, dg.JsonMetadataValue) for v in check.metadata.values()), check.check_name
    by_name = {c.check_name: c.metadata for c in checks}
    assert by_name["numbers_in_store"]["numbers_not_in_store"] == dg.MetadataValue.text(
        "none: every number in the brief is a stored one")
    assert by_name["filters_hold"]["failures"] == dg.MetadataValue.text("none")
    assert by_name["required_input_coverage"]["coverage"].value.endswith("%")
    brief_md = next(e for e in briefed.get_asset_materialization_events() if e.asset_key == dg.AssetKey("brief"))
    assert "Morning brief" in brief_md.materialization.metadata["brief"].value
    # the night's summary reads as the brief's run summary, names and reasons, never a JSON object of counts
    # (trial 96: `summary` was `{"analyzed": 10, "by_tag": {...}, ...}` in the UI)
    brief_meta = brief_md.materialization.metadata
    assert all(not isinstance(v, dg.JsonMetadataValue) for v in brief_meta.values())
    assert brief_meta["summary"].value.startswith("- Scanned 46; passed filters")
    assert brief_meta["summary"].value in brief_meta["brief"].value


def test_night_summary_adds_up_and_brief_fits(tmp_path: Path) -> None:
    run = _run(tmp_path, DESIGN_NIGHT)
    s = run.summary
    assert s.scanned == len(run.candidates) == 46
    assert s.passed_filters == s.capped + s.analyzed + s.errors
    assert s.analyzed == len(run.routes) == sum(s.by_tag.values())
    assert run.brief is not None and run.brief.words < WORD_LIMIT
    assert run.as_of.isoformat() in run.run_id
    assert {c.id for c in run.candidates if c.went_on} == {a.candidate_id for a in run.analyses}


def test_one_run_over_two_nights_candidates_analyzes_both(tmp_path: Path) -> None:
    """A range of candidate partitions picked in the UI, or a backfill's run on a Celery worker, may span two nights,
    each with its own Austin: their analyses are each night's, not duplicates (the blocking check
    `verdicts_consistent` refused them as one candidate analyzed twice and stopped the run)."""
    defs = build_definitions(criteria_path=str(PACK), store_path=str(tmp_path / "results.duckdb"))
    instance = dg.DagsterInstance.ephemeral()
    earlier = date(2009, 11, 30)
    for as_of in (earlier, DESIGN_NIGHT):
        nights.execute_job(defs, "scan_night", instance, partition_key=as_of.isoformat())
    keys = sorted([*night_keys(instance, earlier), *night_keys(instance, DESIGN_NIGHT)])
    nights.execute_job(defs, "analyze_night", instance, tags={"dagster/asset_partition_range_start": keys[0],
                                                              "dagster/asset_partition_range_end": keys[-1]})
    for as_of in (earlier, DESIGN_NIGHT):
        state = nights.state(defs, as_of)
        assert {a.candidate_id for a in state.analyses} == {c.id for c in state.candidates if c.went_on}
        assert len(state.verifications) == len(state.analyses)


def test_rerun_is_idempotent(tmp_path: Path) -> None:
    instance = dg.DagsterInstance.ephemeral()
    first = _run(tmp_path, DESIGN_NIGHT, instance=instance)
    second = _run(tmp_path, DESIGN_NIGHT, instance=instance)
    assert _comparable(first) == _comparable(second)
    store = ResultStore(path=str(tmp_path / "results.duckdb"))
    counts = store.query("SELECT (SELECT count(*) FROM candidates) c, (SELECT count(*) FROM analyses) a, "
                         "(SELECT count(*) FROM verifications) v, (SELECT count(*) FROM routes) r")[0]
    assert counts == {"c": 46, "a": len(first.analyses), "v": len(first.verifications), "r": len(first.routes)}
    assert len(night_keys(instance, DESIGN_NIGHT)) == len(first.analyses)


def test_a_failing_candidate_is_an_error_record_and_the_night_goes_on(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    clean = _run(tmp_path / "clean", DESIGN_NIGHT)
    victim = clean.analyses[0].candidate_id
    real_analyze = pipeline.analyze

    def breaking(pack, candidate):  # type: ignore[no-untyped-def]
        if candidate.id == victim:
            raise RuntimeError("source row exploded")
        return real_analyze(pack, candidate)

    monkeypatch.setattr(pipeline, "analyze", breaking)
    broken = _run(tmp_path / "broken", DESIGN_NIGHT)
    assert [(e.candidate_id, e.node) for e in broken.errors] == [(victim, "analyze")]
    assert "source row exploded" in broken.errors[0].error
    assert broken.summary.errors == 1 and broken.summary.analyzed == clean.summary.analyzed - 1
    others = {a.candidate_id: (a.verdict, a.score) for a in clean.analyses if a.candidate_id != victim}
    assert {a.candidate_id: (a.verdict, a.score) for a in broken.analyses} == others
    assert {r.candidate_id: r.section_or_tag for r in broken.routes} == {
        r.candidate_id: r.section_or_tag for r in clean.routes if r.candidate_id != victim}
    assert broken.brief is not None and f"{victim} (analyze)" in broken.brief.markdown
    # The next clean run of the same night clears the error and restores the candidate.
    monkeypatch.setattr(pipeline, "analyze", real_analyze)
    healed = _run(tmp_path / "broken", DESIGN_NIGHT)
    assert healed.errors == [] and healed.summary.analyzed == clean.summary.analyzed



def test_an_inconsistent_verdict_fails_its_blocking_check_and_withholds_the_verifications(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """analyses and verifications share one step: the blocking check on analyses must still stop what follows."""
    real_analyze = pipeline.analyze

    def inconsistent(pack, candidate):  # type: ignore[no-untyped-def]
        analysis = real_analyze(pack, candidate)
        return analysis.model_copy(update={"verdict": Verdict.STRONG, "score": 1.0}) if analysis.score is not None \
            else analysis

    monkeypatch.setattr(pipeline, "analyze", inconsistent)
    defs = build_definitions(store_path=str(tmp_path / "results.duckdb"))
    instance = dg.DagsterInstance.ephemeral()
    with pytest.raises(nights.NightFailed, match="verdicts_consistent") as failed:
        nights.run_night(defs, instance, DESIGN_NIGHT)
    message = str(failed.value)  # one line: the check, and what it found (the first few, and how many more)
    assert "\n" not in message and 'failed verdict_matches_thresholds on {"candidate_id":"abilene"' in message
    assert message.count("verdict_matches_thresholds") == 3
    assert re.search(r", and \d+ more; analyses checked: \d+\); night stopped$", message)
    state = nights.state(defs, DESIGN_NIGHT)
    assert state.analyses and state.verifications == [] and state.brief is None
    materialized = {r.asset_key.to_user_string() for r in instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("verifications")), limit=5).records}
    assert materialized == set()

def _spike_source(tmp_path: Path) -> Path:
    rows = []
    for i in range(12):
        rows += month_rows(f"Town {i:02d}", sales=150.0 + 5 * i)
    rows += month_rows("Spike City", overrides={(2014, 11): {"sales": 2000.0}})
    return write_csv(tmp_path / "spike.csv", rows)


def test_known_bad_spike_is_not_in_act_on_these(tmp_path: Path) -> None:
    pack = write_pack(tmp_path, _spike_source(tmp_path))
    run = _run(tmp_path, date(2015, 1, 30), pack)
    analysis = next(a for a in run.analyses if a.candidate_id == "spike-city")
    verification = next(v for v in run.verifications if v.candidate_id == "spike-city")
    route = next(r for r in run.routes if r.candidate_id == "spike-city")
    assert analysis.verdict == "STRONG"  # the formula alone is fooled ...
    assert verification.status == "UNCERTAIN"  # ... the skeptic is not
    assert verification.fatal_assumption is not None and "2014-11" in verification.fatal_assumption
    assert route.section_or_tag == "needs_your_judgment"
    assert run.brief is not None
    act_section = run.brief.markdown.split("## Needs your judgment")[0]
    assert "Spike City" not in act_section


def test_missing_required_number_is_insufficient_data_and_never_invented(tmp_path: Path) -> None:
    rows = [r for i in range(12) for r in month_rows(f"Town {i:02d}")]
    rows += month_rows("Gappy", overrides={(2013, 11): {"inventory": None}})  # inside the year-ago window
    pack = write_pack(tmp_path, write_csv(tmp_path / "gap.csv", rows))
    run = _run(tmp_path, date(2015, 1, 30), pack)
    analysis = next(a for a in run.analyses if a.candidate_id == "gappy")
    assert analysis.verdict == "INSUFFICIENT_DATA" and analysis.score is None
    assert analysis.missing == ["inventory_3m_prev"] and "inventory_3m_prev" not in analysis.numbers
    assert next(r for r in run.routes if r.candidate_id == "gappy").section_or_tag == "data_gap"
    archived = ResultStore(path=str(tmp_path / "results.duckdb")).archive("texas_housing", tag="data_gap")
    assert [row["candidate_id"] for row in archived] == ["gappy"]


@pytest.mark.parametrize("as_of", [date(2005, 3, 31), date(2009, 12, 31), date(2015, 8, 30)])
def test_no_number_is_published_after_as_of(tmp_path: Path, as_of: date) -> None:
    run = _run(tmp_path, as_of)
    for a in run.analyses:
        assert all(n.source.published_at <= as_of for n in a.numbers.values()), a.candidate_id
    for c in run.candidates:
        assert all(date.fromisoformat(r["published_at"]) <= as_of for r in c.raw_data), c.id


def test_future_rows_are_never_read(tmp_path: Path) -> None:
    base = [r for i in range(12) for r in month_rows(f"Town {i:02d}", sales=150.0 + 7 * i)]
    future = [r for i in range(12) for r in month_rows(f"Town {i:02d}", start=(2015, 1), months=12,
                                                        sales=99_999.0, inventory=0.1)]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    without = write_pack(tmp_path / "a", write_csv(tmp_path / "a" / "s.csv", base))
    with_future = write_pack(tmp_path / "b", write_csv(tmp_path / "b" / "s.csv", base + future))
    as_of = date(2015, 1, 30)
    assert _comparable(_run(tmp_path / "a", as_of, without)) == _comparable(_run(tmp_path / "b", as_of, with_future))


def test_rescan_with_a_smaller_cap_drops_stale_partitions_and_records(tmp_path: Path) -> None:
    instance = dg.DagsterInstance.ephemeral()
    source = write_csv(tmp_path / "s.csv", [r for i in range(12) for r in month_rows(f"Town {i:02d}")])
    wide = _run(tmp_path, date(2015, 1, 30), write_pack(tmp_path, source), instance)
    narrow = _run(tmp_path, date(2015, 1, 30), write_pack(tmp_path, source, **{"caps.max_candidates": 10}),
                  instance)
    assert len(wide.analyses) == 12 and len(narrow.analyses) == 10 and narrow.summary.capped == 2
    assert len(night_keys(instance, date(2015, 1, 30))) == 10
    store = ResultStore(path=str(tmp_path / "results.duckdb"))
    assert store.query("SELECT count(*) n FROM analyses")[0]["n"] == 10


def test_a_brief_before_the_analyses_does_not_poison_later_briefs(tmp_path: Path) -> None:
    """'Materialize all' in the UI may run brief before the per-candidate run: its errors must not stick."""
    defs = build_definitions(store_path=str(tmp_path / "results.duckdb"))
    instance = dg.DagsterInstance.ephemeral()
    key = DESIGN_NIGHT.isoformat()
    nights.execute_job(defs, "scan_night", instance, partition_key=key)
    nights.execute_job(defs, "brief_night", instance, partition_key=key)
    early = nights.state(defs, DESIGN_NIGHT)
    assert early.summary.errors == early.summary.passed_filters - early.summary.capped  # nothing analyzed yet
    nights.execute_job(defs, "analyze_night", instance, tags=night_range_tags(night_keys(instance, DESIGN_NIGHT)))
    nights.execute_job(defs, "brief_night", instance, partition_key=key)
    late = nights.state(defs, DESIGN_NIGHT)
    assert late.errors == [] and len(late.routes) == len(late.analyses) > 0


def test_the_store_keeps_rows_for_the_candidates_going_on_only(tmp_path: Path) -> None:
    """A candidate that does not go on is stored with its metrics, filters, gaps and score, not its window rows
    (a night of ten thousand entities would store fifteen rows of each)."""
    run = _run(tmp_path, DESIGN_NIGHT)
    going, others = [c for c in run.candidates if c.went_on], [c for c in run.candidates if not c.went_on]
    assert going and others
    assert all(c.raw_data for c in going)
    assert all(not c.raw_data and c.filters and c.metrics for c in others)


def _scheduled_scan_failure(tmp_path: Path, **changes: object) -> str:
    """The one line a night the schedule or the UI starts fails with, on the bundled data under the pack with
    `changes`; nothing may be stored."""
    pack = write_pack(tmp_path, PACK.parent.parent / "txhousing.csv", **changes)
    candidates = build_candidates(nights_of(CriteriaResource(path=str(pack)).load()))
    store = ResultStore(path=str(tmp_path / "results.duckdb"))
    resources = {"criteria": CriteriaResource(path=str(pack)), "source": PointInTimeSource(), "store": store,
                 "model": ModelOff()}
    result = dg.materialize([candidates], partition_key=DESIGN_NIGHT.isoformat(), resources=resources,
                            instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    said = failure.step_failure_data.user_failure_data
    assert said is not None and said.description is not None
    (line,) = said.description.splitlines()
    assert store.candidates("texas_housing", DESIGN_NIGHT) == []
    return line


def test_a_pack_problem_only_the_candidates_show_fails_the_scheduled_scan_in_one_line(tmp_path: Path) -> None:
    """A formula component with no value for any candidate: `opportunity run` stops before the night; a night the
    schedule or the UI starts stops in its scan step, with the same line naming the key as a Dagster failure (no
    traceback to read), before anything is stored."""
    line = _scheduled_scan_failure(tmp_path, **{  # (`x - x` itself is refused at load, trial 141)
        "metrics.sales_3m_prev_again": {"agg": "sum", "column": "sales", "window": [12, 14], "unit": "count"},
        "required_inputs": ["sales_3m", "sales_3m_prev", "sales_3m_prev_again", "inventory_3m", "inventory_3m_prev"],
        "formula.components.0.expression": "sales_3m / (sales_3m_prev - sales_3m_prev_again)"})
    assert line.startswith("texas_housing, night 2009-12-31: key `formula.components.0.expression`: got "
                           "'sales_3m / (sales_3m_prev - sales_3m_prev_again)'; it has no value for any of the ")


def test_every_check_problem_fails_the_scheduled_scan_as_run_refuses_the_night(tmp_path: Path) -> None:
    """Not only what the candidates show: a problem the check finds in the source (bounds in another unit than
    their column, so most of the night's numbers are refused and quarantined) stopped `opportunity run`, but a
    night the schedule or the UI started ran on, and briefed every market UNCLEAR. Now its scan step fails with
    check's line, before anything is stored."""
    line = _scheduled_scan_failure(tmp_path, **{"source.bounds": {"inventory": [0, 1]}})
    assert line.startswith("texas_housing, night 2009-12-31: key `source.bounds.inventory`: got [0, 1]; "), line


def test_entities_named_by_numbers_and_a_quarantined_one_keep_the_night(tmp_path: Path) -> None:
    """Ids that are numbers (a county's PID) as the names shown, and one entity whose every row is a duplicated
    key, so the summary names it among the quarantined though it is no candidate: the brief's number check read
    "564" as a number the store did not hold and stopped the night (trial 6)."""
    rows = [r for i in range(12) for r in month_rows(str(4 + i), sales=150.0 + 9 * i)]
    rows += month_rows("564") * 2
    pack = write_pack(tmp_path, write_csv(tmp_path / "numbered.csv", rows))
    run = _run(tmp_path, date(2015, 1, 30), pack)
    assert run.brief is not None and "564 (" in run.brief.markdown


def test_a_night_its_scan_refuses_fails_in_the_steps_own_words(tmp_path: Path) -> None:
    """Trial 36: `opportunity backtest` over a range whose first night's windows reach past the history said
    "scan_night failed: candidates: dagster._core.definitions.events.Failure: texas_housing, night ...": the
    Dagster class of the step's deliberate failure is engine text, not the user's business."""
    with pytest.raises(nights.NightFailed) as failed:
        _run(tmp_path, date(2000, 12, 31))
    said = str(failed.value)
    assert said.startswith("scan_night failed: candidates: texas_housing, night 2000-12-31: key "
                           "`metrics.sales_3m_prev.window`: got [12, 14]"), said
    assert "dagster" not in said


@pytest.mark.parametrize("stop", ["dagster", "duckdb"])
def test_an_interrupted_step_says_so_in_words_not_dagsters_class_name(stop: str) -> None:
    """Trial 55: a backfill stopped by Ctrl-C ended "opportunity: scan_night failed: candidates:
    dagster._core.errors.DagsterExecutionInterruptedError"; stopped in a query, "brief_and_archive: RuntimeError:
    Query interrupted" (DuckDB's words). The step's line now says it was interrupted and what to do."""
    from dagster._core.errors import DagsterExecutionInterruptedError

    @dg.asset
    def candidates() -> None:
        if stop == "duckdb":
            raise RuntimeError("Query interrupted")
        raise DagsterExecutionInterruptedError()

    defs = dg.Definitions(assets=[candidates], jobs=[dg.define_asset_job("scan_night", selection=[candidates])])
    with pytest.raises(nights.NightFailed) as failed:
        nights.execute_job(defs, "scan_night", dg.DagsterInstance.ephemeral())
    assert str(failed.value) == (
        "scan_night failed: candidates: interrupted (Ctrl-C or a stop signal) before it finished: run the same command "
        "again (a night run again replaces its own; a backfill's nights already stored are kept)")


def test_a_run_stopped_between_its_steps_says_so_in_words() -> None:
    """A backfill stopped by Ctrl-C 4 s in, between two of a night's steps, ended "analyze_night failed: run failed":
    no step failed, and Dagster's run failure ("Execution was interrupted unexpectedly") was not read. It says it
    was interrupted, as a stopped step does; another run failure says Dagster's line."""
    from types import SimpleNamespace

    def result(*messages: str, raised: str | None = None) -> Any:
        error = SimpleNamespace(error=SimpleNamespace(cls_name=raised, message="") if raised else None)
        return SimpleNamespace(all_events=[SimpleNamespace(is_run_failure=True, message=m, event_specific_data=error)
                                           for m in messages])

    assert nights._run_failure(result("Execution was interrupted unexpectedly. No user initiated termination "
                                      "request was found, treating as failure.")) == STOPPED
    assert nights._run_failure(result('Execution of run for "analyze_night" failed.')) == \
        'Execution of run for "analyze_night" failed.'
    assert nights._run_failure(result()) == "run failed"
    assert nights._run_failure(result("An unexpected exception was thrown.", raised="KeyboardInterrupt")) == STOPPED


def test_a_stop_a_handler_swallowed_inside_a_run_is_raised_as_the_run_ends() -> None:
    """make test, under load: a backfill stopped by SIGINT 4 s in went on to its end and exited 0. Dagster takes
    SIGINT while it runs a job and, the signal landing after its last checkpoint, forgets it as the run ends. A
    stop any handler took inside `stops_witnessed` is raised on leaving it; none arriving, nothing is."""
    import os
    import signal

    from opportunity_assets.stopping import stops_witnessed

    swallowed: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signo, frame: swallowed.append(signo))  # as Dagster's capture
    try:
        with pytest.raises(KeyboardInterrupt), stops_witnessed():
            os.kill(os.getpid(), signal.SIGINT)
        assert swallowed == [signal.SIGINT]
        with stops_witnessed():
            pass
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_pack_edited_while_its_night_runs_stops_the_night_in_one_line(tmp_path: Path) -> None:
    """Trial 109: the pack file edited mid-night (a strong of 70 made 90 after the scan): each step loads the pack
    anew, so the night was stored half one, half the other: `nights` recorded the pack of 70, the verdicts and the
    brief were 90's (Austin "MARGINAL 88.1" with a strong of 70 on record), exit 0, nothing said. The steps after
    the scan refuse a pack that is not the one the night was scanned by, naming it and what to do."""
    from tests.conftest import ROOT, SIX_MOST_LIQUID

    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    defs = build_definitions(criteria_path=str(pack), store_path=str(tmp_path / "results.duckdb"))
    instance = dg.DagsterInstance.ephemeral()
    night = date(2011, 10, 31)
    nights.execute_job(defs, "scan_night", instance, partition_key=night.isoformat())
    scanned = nights.resources_of(defs)[0].fingerprint
    pack.write_text(pack.read_text().replace("strong: 70", "strong: 90"))
    edited = nights.resources_of(defs)[0].fingerprint
    assert edited != scanned
    keys = night_keys(instance, night)
    with pytest.raises(nights.NightFailed) as stopped:
        nights.execute_job(defs, "analyze_night", instance, tags=night_range_tags(keys))
    assert str(stopped.value) == (
        f"analyze_night failed: analyze_and_verify: criteria pack texas_housing: edited while the night 2011-10-31 "
        f"ran (scanned by its "
        f"version {scanned}, now {edited}): run the same command again to run the whole night with the pack as it "
        "is now")
    with pytest.raises(nights.NightFailed, match="finish_night failed: brief_and_archive: criteria pack texas_hous"):
        nights.execute_job(defs, "finish_night", instance, partition_key=night.isoformat())
    nights.run_night(defs, instance, night)  # run again: the whole night on the pack as it is now
    store = ResultStore(path=str(tmp_path / "results.duckdb"))
    assert store.night("texas_housing", night)["criteria_fingerprint"] == edited


def test_a_source_cut_short_is_told_by_the_nights_own_scan(tmp_path: Path) -> None:
    """Trial 142: a CSV truncated in place after `opportunity run`'s check stored a night of a third of its markets,
    told only as one quarantined row ("wrong field count"): the scan step checks for problems, not warnings, so a
    file cut short was never said by a scheduled night, nor by one whose file was cut after the command's check.
    The scan's own notes (the brief's run summary) say it now."""
    from opportunity_assets.candidates.step import scan_and_store
    rows = [row for city in ("Alpha", "Beta", "Gamma") for row in month_rows(city)]
    source = write_csv(tmp_path / "source.csv", rows)
    source.write_bytes(source.read_bytes()[:-40])
    pack = CriteriaResource(path=str(write_pack(tmp_path, source))).load()
    step = scan_and_store(pack, PointInTimeSource(), ResultStore(path=str(tmp_path / "results.duckdb")), ModelOff(),
                          date(2014, 12, 31))
    said = [note for note in step.report.notes if "ends in the middle of a record" in note]
    assert len(said) == 1 and said[0].startswith(f"key `source.path`: source file {source}"), step.report.notes
