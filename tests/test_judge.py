"""The human's judgment: `opportunity judge` refuses bad input and writes nothing; a judgment shows in the brief;
judge → label → calibration, end to end on one synthetic night."""

from __future__ import annotations

import getpass
import shutil
from datetime import date, datetime
from pathlib import Path

import dagster as dg
import pytest

from opportunity_assets import night as nights
from opportunity_assets.cli import main
from opportunity_assets.criteria import load_criteria
from opportunity_assets.definitions import build_definitions
from resources.store import ResultStore
from tests.conftest import month_rows, write_csv, write_pack

pytestmark = pytest.mark.slow

NIGHT = date(2015, 1, 30)
DOMAIN = "texas_housing"


@pytest.fixture(scope="module")
def night_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One night through Dagster: twelve flat towns (SKIP) and Spike City, whose one-month spike makes the formula
    say STRONG and the verifier UNCERTAIN. Data runs to 2015-12, so the night's outcomes are known: flat prices
    for the towns (0%), +20% for Spike City, which beats the night's median."""
    base = tmp_path_factory.mktemp("night")
    rows = [r for letter in "ABCDEFGHIJKL" for r in month_rows(f"Town {letter}", months=48)]
    rows += month_rows("Spike City", months=48, overrides={
        (2014, 11): {"sales": 2000.0}, **{(2015, m): {"median": 180_000.0} for m in range(1, 13)}})
    pack = write_pack(base, write_csv(base / "source.csv", rows), outcome={
        "metric": "median", "agg": "avg", "window_months": 3, "horizon_months": 12})
    defs = build_definitions(criteria_path=str(pack), store_path=str(base / "results.duckdb"))
    nights.run_night(defs, dg.DagsterInstance.ephemeral(), NIGHT)
    return base


@pytest.fixture
def workdir(night_dir: Path, tmp_path: Path) -> Path:
    """A private copy of the night's store (judgments write to it) and pack (it reads the night's source)."""
    for name in ("results.duckdb", "pack.yaml"):
        shutil.copy(night_dir / name, tmp_path / name)
    return tmp_path


def _args(workdir: Path, store: str = "results.duckdb") -> list[str]:
    return ["--criteria", str(workdir / "pack.yaml"), "--store", str(workdir / store)]


def _judge(workdir: Path, *extra: str) -> int:
    return main(["judge", *_args(workdir), *extra])


def _count(workdir: Path) -> int:
    return int(ResultStore(path=str(workdir / "results.duckdb")).query("SELECT count(*) AS n FROM judgments")[0]["n"])


def test_judge_refuses_bad_input_and_writes_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", *_args(workdir, "none.duckdb"), "--as-of", "2015-01-30", "--candidate", "spike-city",
                 "--decision", "pass"]) == 2
    assert "no result store" in capsys.readouterr().err and not (workdir / "none.duckdb").exists()
    assert _judge(workdir, "--as-of", "2015-01-29", "--candidate", "spike-city", "--decision", "pass") == 2
    err = capsys.readouterr().err
    assert "no run stored for texas_housing on 2015-01-29" in err and "2015-01-30" in err
    assert _judge(workdir, "--as-of", "2015-01-30", "--candidate", "spike-citty", "--decision", "pass") == 2
    err = capsys.readouterr().err
    assert "unknown candidate 'spike-citty'" in err and "did you mean spike-city" in err
    # a night not yet ended cannot be run first (trial 55: the hint said "Run `opportunity run --as-of 2030-12-31`")
    assert _judge(workdir, "--as-of", "2030-12-31", "--candidate", "spike-city", "--decision", "pass") == 2
    err = capsys.readouterr().err
    assert "no run stored for texas_housing on 2030-12-31" in err and "2030-12-31 has not ended yet" in err
    assert "opportunity run" not in err
    with pytest.raises(SystemExit):
        _judge(workdir, "--as-of", "2015-01-30", "--candidate", "spike-city", "--decision", "maybe")
    assert _count(workdir) == 0


def test_judge_takes_the_name_the_brief_shows(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 55: the brief shows names and `archive --candidate` takes them; `judge --candidate "Florida Marlins"`
    answered "unknown candidate ...; did you mean florida-marlins?". A name one candidate of the night bears is
    that candidate."""
    assert _judge(workdir, "--as-of", "2015-01-30", "--candidate", " spike city ", "--decision", "pass") == 0
    assert capsys.readouterr().out.startswith("recorded: 2015-01-30 spike-city pass by ")
    assert ResultStore(path=str(workdir / "results.duckdb")).latest_judgments(DOMAIN, NIGHT) == {"spike-city": "pass"}


def test_a_judgment_is_recorded_and_the_next_brief_shows_it(workdir: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert _judge(workdir, "--as-of", "2015-01-30", "--candidate", "spike-city", "--decision", "pass",
                  "--note", "one month carries the sales", "--who", "alice") == 0
    assert capsys.readouterr().out.strip() == \
        "recorded: 2015-01-30 spike-city pass by alice (one month carries the sales)"
    assert _judge(workdir, "--as-of", "2015-01-30", "--candidate", "town-a", "--decision", "unsure") == 0
    store = ResultStore(path=str(workdir / "results.duckdb"))
    rows = store.judgments(DOMAIN)
    assert [(r["candidate_id"], r["decision"], r["who"], r["note"]) for r in rows] == [
        ("spike-city", "pass", "alice", "one month carries the sales"), ("town-a", "unsure", getpass.getuser(), None)]
    assert all(isinstance(r["judged_at"], datetime) for r in rows)
    # the brief of that night and of later nights shows the latest judgment; earlier nights' do not
    assert store.latest_judgments(DOMAIN, date(2015, 1, 29)) == {}
    assert store.latest_judgments(DOMAIN, date(2015, 3, 31)) == {"spike-city": "pass", "town-a": "unsure"}

    defs = build_definitions(criteria_path=str(workdir / "pack.yaml"), store_path=str(workdir / "results.duckdb"))
    result = defs.resolve_job_def("brief_night").execute_in_process(instance=dg.DagsterInstance.ephemeral(),
                                                                    partition_key=NIGHT.isoformat())
    assert result.success and all(c.passed for c in result.get_asset_check_evaluations())  # numbers_in_store too
    brief = (store.brief(DOMAIN, NIGHT) or {})["markdown"]
    spike_line = next(line for line in brief.splitlines() if "**Spike City**" in line)
    assert spike_line.endswith("*(you judged: pass)*")
    assert brief.count("you judged") == 1  # town-a is archived (below threshold), not in the brief

    assert _judge(workdir, "--as-of", "2015-01-30", "--candidate", "spike-city", "--decision", "pursue") == 0
    assert store.latest_judgments(DOMAIN, NIGHT)["spike-city"] == "pursue"  # the latest judgment wins


def test_judge_label_calibration_round_trip(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = workdir / "pack.yaml"
    new_dir = workdir / "new"
    new_dir.mkdir()
    source = load_criteria(old).source_path  # the same candidates: calibrate refuses packs over other sources
    new = write_pack(new_dir, source, **{"thresholds.strong": 90}, outcome={
        "metric": "median", "agg": "avg", "window_months": 3, "horizon_months": 12})
    calibrate = ["calibrate", "--criteria", str(new), "--against", str(old), "--store", str(workdir / "results.duckdb"),
                 "--start", "2015-01-30", "--end", "2015-01-30", "--every", "day"]
    # Spike City's outcome beat the night's median: OLD's STRONG agrees with it; nothing for NEW to fix
    assert main(calibrate) == 2
    assert "no bad cases" in capsys.readouterr().err
    # the human says pass: that judgment is now its label, OLD got it wrong, and NEW fixes it without harm
    assert _judge(workdir, "--as-of", "2015-01-30", "--candidate", "spike-city", "--decision", "pass") == 0
    capsys.readouterr()
    assert main(calibrate) == 0
    out = capsys.readouterr().out
    assert "Bad cases (1 pairs): agreement 0.0 → 100.0; Δ_bad +100.0 points" in out
    assert "Δ_pop +0.0 points" in out and "Quadrant: Q1 PASS — accept." in out
    assert "spike-city" in out and "bad" in out and "(judgment: pass" in out and "STRONG → MARGINAL" in out
    # the same pack against itself fixes nothing
    assert main([*calibrate[:2], str(old), *calibrate[3:]]) == 1
    assert "Quadrant: Q3 NO-OP" in capsys.readouterr().out
    # packs over another source, or with another yardstick, are not comparable
    elsewhere = write_pack(new_dir, shutil.copy(source, workdir / "copy.csv"), outcome={
        "metric": "median", "agg": "avg", "window_months": 3, "horizon_months": 12})
    assert main([*calibrate[:2], str(elsewhere), *calibrate[3:]]) == 2
    assert "sources differ" in capsys.readouterr().err
    moved = write_pack(new_dir, source, outcome={"metric": "median", "agg": "avg", "window_months": 3,
                                                 "horizon_months": 6})
    assert main([*calibrate[:2], str(moved), *calibrate[3:]]) == 2
    assert "yardstick must not move" in capsys.readouterr().err
    # a NEW pack that names a candidate is refused before any scoring
    lookup = write_pack(new_dir, source, **{"hard_filters.0.name": "not_spike_city"}, outcome={
        "metric": "median", "agg": "avg", "window_months": 3, "horizon_months": 12})
    assert main([*calibrate[:2], str(lookup), *calibrate[3:], "--json"]) == 1
    out = capsys.readouterr().out
    assert '"quadrant": null' in out and "names entity 'Spike City'" in out


def test_calibration_leaves_out_the_nights_run_refuses(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 55: calibrate scored both packs on nights `run` refuses (the windows reaching past the history, a year
    an extract skips), each candidate a data gap, and printed "Nights 9 ... Q3 NO-OP" as if they were judged;
    the backtest skips such nights in their lines. Now the gate leaves them out the same way."""
    from opportunity_assets.outcomes.calibration import DEFAULT_CONFIG, load_calibration_config
    from opportunity_assets.outcomes.replay import run_calibration

    old = workdir / "pack.yaml"
    early = date(2012, 3, 31)  # three months of data: the pack's 12-month windows reach past them
    calibrate = ["calibrate", "--criteria", str(old), "--against", str(old), "--store", str(workdir / "results.duckdb"),
                 "--start", early.isoformat(), "--end", early.isoformat(), "--every", "day"]
    assert main(calibrate) == 2
    err = capsys.readouterr().err
    assert err.startswith("opportunity: every night of the range is one `run` refuses (2012-03-31  skipped: key "
                          "`metrics."), err
    assert len(err.strip().splitlines()) == 1
    assert _judge(workdir, "--as-of", NIGHT.isoformat(), "--candidate", "spike-city", "--decision", "pass") == 0
    pack = load_criteria(old)
    (workdir / "new").mkdir()
    new = load_criteria(write_pack(workdir / "new", pack.source_path, **{"thresholds.strong": 90}, outcome={
        "metric": "median", "agg": "avg", "window_months": 3, "horizon_months": 12}))
    result = run_calibration(new, pack, ResultStore(path=str(workdir / "results.duckdb")), [early, NIGHT],
                             load_calibration_config(DEFAULT_CONFIG), today=date.today())
    assert result.nights == 1 and result.accepted
    assert [line.split(": key ")[0] for line in result.skipped] == ["2012-03-31  skipped"]
