"""The `opportunity` command: run --json (the state object), backfill lines, cost, archive, clear errors."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from opportunity_assets.cli import main
from opportunity_assets.cost import load_prices, worst_case
from opportunity_assets.stopping import STOPPED
from tests.conftest import PACK, ROOT, write_pack

pytestmark = pytest.mark.slow

TEXAS = ROOT / "data" / "txhousing.csv"
STATE_FIELDS = {"run_id", "as_of", "criteria", "candidates", "analyses", "verifications", "routes", "brief",
                "errors", "summary", "cost"}


def _args(tmp_path: Path) -> list[str]:
    return ["--store", str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]


def test_a_mistyped_argument_is_answered_before_the_asset_graph_is_imported() -> None:
    """Trial 114: `--help` and a mistyped argument took 5-7 s, the whole asset graph and Dagster imported before
    argparse read a word. The command line is parsed on the CLI's own light imports; Dagster comes with a command."""
    probe = ("import sys\nfrom opportunity_assets.cli import main\ntry:\n    main(['run', '--as-of', 'notadate'])\n"
             "except SystemExit as stop:\n    print(stop.code, 'dagster' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.stdout.split() == ["2", "False"], done.stderr
    assert "'notadate' is not a date (YYYY-MM-DD)" in done.stderr


def test_the_command_gives_freed_memory_back_sooner_than_polars_would_unless_the_user_says_otherwise() -> None:
    """polars' jemalloc keeps freed pages for 1.5 s; a wide night's peak held every frame it had dropped. The
    package sets its own decay before polars is loaded (polars appends it after its own, and the last word wins);
    a value the user set is kept, polars' own handed down is not."""
    probe = ("import os\nimport opportunity_assets.command\nimport polars\nprint(os.environ['_RJEM_MALLOC_CONF'])")
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False,
                          env=env)
    assert done.stdout.strip().endswith(",dirty_decay_ms:0,muzzy_decay_ms:0"), done.stderr
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False,
                          env={**env, "_RJEM_MALLOC_CONF": "dirty_decay_ms:2000"})
    assert done.stdout.strip().endswith(",dirty_decay_ms:2000"), done.stderr
    # polars' own, handed down by a parent that loaded polars first (this test's process, the breadth bench's), is
    # no one's choice
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False,
                          env={**env, "_RJEM_MALLOC_CONF": "dirty_decay_ms:500,muzzy_decay_ms:1000"})
    assert done.stdout.strip().endswith(",dirty_decay_ms:0,muzzy_decay_ms:0"), done.stderr


def test_run_json_prints_the_state_object_field_for_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--as-of", "2009-12-31", "--json", *_args(tmp_path)]) == 0
    state = json.loads(capsys.readouterr().out)
    assert set(state) >= STATE_FIELDS
    assert set(state["criteria"]) == {"domain", "hard_filters", "thresholds"}
    assert {"id", "name", "raw_data", "source", "data_gaps", "filters"} <= set(state["candidates"][0])
    analysis = state["analyses"][0]
    assert {"candidate_id", "numbers", "calculation", "score", "verdict", "reasoning", "assumptions",
            "red_flags"} <= set(analysis)
    number = next(iter(analysis["numbers"].values()))
    assert set(number["source"]) == {"table", "entity", "period", "published_at"}
    verification = state["verifications"][0]
    assert set(verification["checks"]) == {"arithmetic", "inputs", "assumptions", "omissions", "constraints"}
    assert {"status", "failed_checks", "reason", "fatal_assumption"} <= set(verification)
    assert set(state["routes"][0]) >= {"candidate_id", "destination", "section_or_tag"}
    assert set(state["brief"]) >= {"markdown", "words"}
    assert set(state["summary"]) >= {"scanned", "passed_filters", "analyzed", "by_tag", "errors"}
    assert state["cost"] == {"calls": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0, "replayed_calls": 0,
                             "replayed_usd": 0.0}
    assert "off" in state["model_checks"]


def test_run_prints_the_brief_and_backfill_prints_one_line_per_night(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", *_args(tmp_path)]) == 0  # default: the latest night the data supports
    out = capsys.readouterr().out
    assert out.startswith("# Morning brief — texas_housing, as of 2015-08-30")
    assert "Model checks: off" in out and "## Run summary" in out
    assert main(["backfill", "--start", "2009-10-01", "--end", "2009-12-31", *_args(tmp_path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == ["2009-10-31", "2009-11-30", "2009-12-31"]
    assert all("scanned" in line and "STRONG" in line and "CONFIRMED" in line and "errors" in line for line in lines)


def test_archive_query_by_tag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--as-of", "2009-12-31", *_args(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["archive", "--as-of", "2009-12-31", "--tag", "below_threshold", *_args(tmp_path)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and all(r["tag"] == "below_threshold" and r["as_of"] == "2009-12-31" for r in rows)
    for row in rows:  # why, in words: the verdict and its score against the bar
        assert row["reason"].startswith(f"{row['verdict']}: score ") and "below strong 70.0" in row["reason"]
        # trial 78: a score the sum of weighted parts in binary, `43.99999999999999`, is written as the figure it is
        assert row["score"] == float(f"{row['score']:.15g}"), row["score"]
    # trial 33: the name as the brief shows it (`EWR` for the id `ewr`) found "nothing in the archive", exit 0
    shown = rows[0]["name"].upper()
    assert main(["archive", "--as-of", "2009-12-31", "--candidate", shown, *_args(tmp_path)]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == rows[:1]
    assert main(["archive", "--as-of", "2009-12-31", "--section", "act_on_these", *_args(tmp_path)]) == 0
    acted = json.loads(capsys.readouterr().out.splitlines()[0])["candidate_id"]
    assert main(["archive", "--as-of", "2009-12-31", "--candidate", acted, *_args(tmp_path)]) == 0
    captured = capsys.readouterr()  # nothing found: said on stderr, stdout stays (empty) JSON Lines
    assert captured.out == ""
    assert captured.err == f"opportunity: nothing in the archive of texas_housing for candidate {acted}, as of " \
        "2009-12-31; it went to act_on_these on 1 night(s) from 2009-12-31 (`--section act_on_these` lists them)\n"
    # trial 35: `--section` with `--candidate` listed the whole section, the candidate ignored; with `--tag`, the tag
    listed = [json.loads(line) for section in ("act_on_these", "needs_your_judgment")
              if main(["archive", "--as-of", "2009-12-31", "--section", section, *_args(tmp_path)]) == 0
              for line in capsys.readouterr().out.splitlines()]
    assert len(listed) > 1
    for row in listed:  # trial 68: ids, verdicts and scores only; the name the brief shows and why, as the archive's
        assert row["name"] and row["reason"].startswith(("STRONG and confirmed", "UNCERTAIN", "MARGINAL",
                                                         "STRONG"))
    one = listed[-1]
    assert main(["archive", "--as-of", "2009-12-31", "--section", one["section"], "--candidate",
                 one["candidate_id"].upper(), *_args(tmp_path)]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [one]
    with pytest.raises(SystemExit):
        main(["archive", "--section", one["section"], "--tag", "data_gap", *_args(tmp_path)])
    assert capsys.readouterr().err == "opportunity archive: error: argument --tag: not allowed with argument " \
        "--section\n"


def test_an_archive_night_or_candidate_the_store_never_saw_is_refused_not_nothing_found(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 36: `archive --as-of` a night not stored and `--candidate diarrhoea` (the store's `diarrhaea`) said
    "nothing in the archive", exit 0, the words of a night that archived none. Each is refused now, as `judge`
    refuses them, with the nights stored nearby or the ids meant."""
    assert main(["run", "--as-of", "2009-12-31", *_args(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["archive", "--as-of", "2009-12-30", *_args(tmp_path)]) == 2
    assert capsys.readouterr().err == "opportunity: --as-of 2009-12-30: no night of texas_housing is stored on it: " \
        "nights stored nearby: 2009-12-31\n"
    assert main(["archive", "--candidate", "austn", *_args(tmp_path)]) == 2
    assert capsys.readouterr().err == "opportunity: --candidate austn: no candidate of texas_housing by that id or " \
        "name was scanned on any stored night; did you mean austin, houston?\n"
    assert main(["archive", "--candidate", "sherm", *_args(tmp_path)]) == 2  # (trial 105: an id's start, `vic`)
    assert capsys.readouterr().err.endswith("by that id or name was scanned on any stored night; did you mean "
                                            "sherman-denison?\n")


def test_a_pack_or_store_given_twice_is_refused_not_the_last_taken(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 107: `run --criteria presidents.yaml --criteria sp500.yaml` ran the second pack alone (argparse keeps
    the last), and said nothing of the first."""
    with pytest.raises(SystemExit) as exc:
        main(["check", "--criteria", "a.yaml", "--criteria", "b.yaml"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == "opportunity check: error: argument --criteria: given twice (a.yaml, then " \
        "b.yaml); expected it once: a command reads one (run it once for each)\n"
    with pytest.raises(SystemExit):
        main(["archive", *_args(tmp_path), "--store", str(tmp_path / "other.duckdb")])
    assert "argument --store: given twice" in capsys.readouterr().err


def test_an_archive_of_a_store_holding_no_night_is_refused_naming_the_store(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 107: `archive --store` of a mistyped path made a new, empty store there and said "nothing in the archive
    of presidents", exit 0, the words of stored nights that archived none."""
    monkeypatch.delenv("OPPORTUNITY_STORE_URL", raising=False)
    typo = tmp_path / "reslts.duckdb"
    assert main(["archive", "--store", str(typo), "--dagster-home", str(tmp_path / "home")]) == 2
    assert capsys.readouterr().err == f"opportunity: --store {typo}: holds no night of any pack (a new store: a path " \
        "mistyped?): expected the store the nights were run into by `run` or `backfill`, or those first\n"


def test_an_archive_night_that_archived_none_names_the_sections_its_candidates_went_to() -> None:
    """Trial 107: `archive --as-of 2009-03-31` of a stored night whose one candidate went to needs_your_judgment
    said "nothing in the archive of sp500_monthly for as of 2009-03-31", no more, as if the night judged none."""
    from opportunity_assets.cli import _night_routed_instead

    class Store:
        def query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
            assert params == ["sp500_monthly", "2009-03-31"] and "destination = 'brief'" in sql
            return [{"section_or_tag": "needs_your_judgment", "n": 1}]


    said = _night_routed_instead(Store(), "sp500_monthly", date(2009, 3, 31), None, None, None)
    assert said == "; its 1 candidate went to needs_your_judgment (`--section needs_your_judgment --as-of " \
        "2009-03-31` lists it)"
    assert _night_routed_instead(Store(), "sp500_monthly", date(2009, 3, 31), "s-p-500", None, None) == ""


def test_an_archive_of_another_domain_s_store_names_the_criteria(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 57: `archive --store S` without `--criteria`, over a store of another pack's nights, said "nothing in
    the archive of texas_housing" (the default pack's), exit 0, as if that pack's nights had archived none."""
    pack = write_pack(tmp_path, TEXAS, **{"domain": "other_housing"})
    assert main(["run", "--as-of", "2009-12-31", "--criteria", str(pack), *_args(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["archive", *_args(tmp_path)]) == 2
    assert capsys.readouterr().err == "opportunity: --criteria: the store holds no night of texas_housing, the " \
        "pack's domain; it holds other_housing: expected the pack of one of those\n"
    assert main(["archive", "--criteria", str(pack), *_args(tmp_path)]) == 0


def test_an_archive_candidate_is_found_by_the_name_the_brief_shows_when_its_id_is_a_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 40: cities keyed by a code (`09001`) and named by another column: `archive --candidate Auckland`, the
    name the brief showed, was "no candidate ... by that id", exit 2, and `Aukland` had no "did you mean". The
    name finds the candidate the store holds under it, and a misspelt one is offered the name."""
    frame = pl.read_csv(TEXAS)
    codes = {city: f"{i:05d}" for i, city in enumerate(sorted(frame["city"].unique()))}
    frame.with_columns(pl.col("city").replace_strict(codes).alias("code")).write_csv(tmp_path / "tx.csv")
    pack = write_pack(tmp_path, tmp_path / "tx.csv", **{"source.entity_id": "code", "source.entity_name": "city"})
    args = ["--criteria", str(pack), *_args(tmp_path)]
    assert main(["run", "--as-of", "2009-12-31", *args]) == 0
    capsys.readouterr()
    assert main(["archive", "--as-of", "2009-12-31", "--tag", "below_threshold", *args]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["candidate_id"] == codes[row["name"]]
    assert main(["archive", "--as-of", "2009-12-31", "--candidate", row["name"], *args]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [row]
    assert main(["archive", "--candidate", row["name"] + "x", *args]) == 2
    assert capsys.readouterr().err.endswith(f"did you mean {row['name']}?\n")


def test_an_archive_candidate_that_did_not_go_on_past_the_scan_is_told_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 40: `archive --candidate "Miami Marlins"`, a club its `competitive` filter refused, said "nothing in
    the archive of mlb_sponsorship for candidate Miami Marlins" and no more. A candidate that stopped at the scan
    (a filter failed, capped) is told so, with the scan's reason."""
    import duckdb

    assert main(["run", "--as-of", "2009-12-31", *_args(tmp_path)]) == 0
    capsys.readouterr()
    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        candidate, reason = con.execute("SELECT candidate_id, reason FROM candidates WHERE NOT went_on "
                                        "ORDER BY candidate_id LIMIT 1").fetchone()
    assert main(["archive", "--candidate", candidate, *_args(tmp_path)]) == 0
    assert capsys.readouterr().err == (
        f"opportunity: nothing in the archive of texas_housing for candidate {candidate}; it did not go on past the "
        f"scan on 1 night(s) from 2009-12-31: {reason}\n")


def test_a_misspelt_archive_tag_or_section_is_refused_not_nothing_found(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 14: `archive --tag below_treshold` said "nothing in the archive ... for tag below_treshold", exit 0, as
    if the night had archived none; the tags and sections are a fixed set, so a misspelt one is refused as a
    misspelt `--every` is, naming the choices, before any store is read."""
    for option, value, choices, meant in (
            ("--tag", "below_treshold", "'data_gap', 'failed_verification', 'below_threshold'", "below_threshold"),
            ("--section", "act_on", "'act_on_these', 'needs_your_judgment'", "act_on_these")):
        with pytest.raises(SystemExit) as exited:
            main(["archive", option, value, *_args(tmp_path)])
        assert exited.value.code == 2
        # trial 34: after five lines of usage, and with no close choice offered; now one line with it
        assert capsys.readouterr().err.splitlines() == [
            f"opportunity archive: error: argument {option}: invalid choice: {value!r} (choose from {choices}); "
            f"did you mean {meant!r}?"]


def test_a_command_line_mistake_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 34: a date that is no date, a missing option or a misspelt command printed argparse's whole usage
    (three to five lines) before the one that says what is wrong. Trial 51: a week, `--as-of 2011-W36`, was read as
    its Monday, a night whose latest week was 2011-W34, and `20110905` as the day: each now names the day meant.
    Trial 101: `2016/02/28` and `2015-02-30` named no day; now the day meant, or the days the month has."""
    for argv, said in ((["check", "--as-of", "2015-02-30"],
                        "opportunity check: error: argument --as-of: '2015-02-30' is not a date (YYYY-MM-DD): "
                        "February 2015 has 28 days, not 30"),
                       # trial 101: other separators or orders were "not a date" with no day named
                       (["check", "--as-of", "2016/02/28"],
                        "opportunity check: error: argument --as-of: '2016/02/28' is not a date (YYYY-MM-DD): "
                        "expected 2016-02-28"),
                       (["run", "--as-of", "28.02.2016"],
                        "opportunity run: error: argument --as-of: '28.02.2016' is not a date (YYYY-MM-DD): "
                        "expected 2016-02-28"),
                       (["run", "--as-of", "03/04/2016"],
                        "opportunity run: error: argument --as-of: '03/04/2016' is not a date (YYYY-MM-DD): "
                        "expected 2016-04-03 or 2016-03-04"),
                       (["check", "--as-of", "yesterday"],
                        "opportunity check: error: argument --as-of: 'yesterday' is not a date (YYYY-MM-DD)"),
                       # trial 51: Python read a week as its Monday and a compact date as the day, silently
                       (["check", "--as-of", "2011-W36"],
                        "opportunity check: error: argument --as-of: '2011-W36' is a week, not a date (YYYY-MM-DD): a "
                        "night is a day, e.g. 2011-09-11, the Sunday that week ends on (its Monday, 2011-09-05, reads "
                        "the weeks published by then)"),
                       (["backtest", "--start", "20110905", "--end", "2011-12-31"],
                        "opportunity backtest: error: argument --start: '20110905' is not a date (YYYY-MM-DD): "
                        "expected 2011-09-05"),
                       (["backfill", "--start", "2001-01-01"],
                        "opportunity backfill: error: the following arguments are required: --end"),
                       (["chek"], "opportunity: error: argument command: invalid choice: 'chek' (choose from 'run', "
                                  "'backfill', 'check', 'cost', 'archive', 'backtest', 'calibrate', 'judge'); did you "
                                  "mean 'check'?")):
        with pytest.raises(SystemExit) as exited:
            main([*argv, *_args(tmp_path)] if argv[0] != "chek" else argv)
        assert exited.value.code == 2
        assert capsys.readouterr().err.splitlines() == [said]


def test_a_month_quarter_or_year_for_a_night_names_its_last_day(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 136: on a monthly pack `--as-of 2013-09` (a month, as the brief's periods are written) was "not a date
    (YYYY-MM-DD)" with no day named, where the README promises the day meant, as for a week (`2011-W36`): a month,
    a quarter or a bare year is the period, and its last day the night that reads it whole once published."""
    for argv, said in ((["check", "--as-of", "2013-09"],
                        "opportunity check: error: argument --as-of: '2013-09' is a month, not a date (YYYY-MM-DD): "
                        "a night is a day, e.g. 2013-09-30, the day that month ends on"),
                       (["backfill", "--start", "2013-01-01", "--end", "2013-Q3"],
                        "opportunity backfill: error: argument --end: '2013-Q3' is a quarter, not a date "
                        "(YYYY-MM-DD): a night is a day, e.g. 2013-09-30, the day that quarter ends on"),
                       (["run", "--as-of", "2006"],
                        "opportunity run: error: argument --as-of: '2006' is a year, not a date (YYYY-MM-DD): a night "
                        "is a day, e.g. 2006-12-31, the day that year ends on")):
        with pytest.raises(SystemExit) as exited:
            main([*argv, *_args(tmp_path)])
        assert exited.value.code == 2
        assert capsys.readouterr().err.splitlines() == [said]


def test_a_range_holding_no_night_names_the_range_and_every(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 55: `backtest` and `calibrate` over a range with no year-end in it said "opportunity: no nights in the
    range", naming neither the range nor `--every`. Each command now names them and the first such night."""
    said = ("opportunity: --start 2009-01-01 --end 2009-06-30 --every year-end: no year-end night lies in the range, "
            "the first after it is 2009-12-31: expected a range that holds one, or another --every")
    pack = str(Path(__file__).parent.parent / "data" / "criteria" / "texas_housing.yaml")
    for command in (["backfill"], ["backtest"], ["calibrate", "--against", pack]):
        assert main([*command, *_args(tmp_path), "--start", "2009-01-01", "--end", "2009-06-30",
                     "--every", "year-end"]) == 2
        assert capsys.readouterr().err.splitlines() == [said]


def test_bad_criteria_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_pack(tmp_path, PACK.parent.parent / "txhousing.csv", **{"thresholds.marginal": 95})
    assert main(["run", "--as-of", "2009-12-31", "--criteria", str(bad), *_args(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "thresholds" in err and "95" in err and "strong" in err
    assert not (tmp_path / "r.duckdb").exists()  # nothing written


def test_cost_prints_the_worst_case_arithmetic(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch,
                                               texas_pack) -> None:  # type: ignore[no-untyped-def]
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["cost", "--as-of", "2015-08-30", *_args(tmp_path)]) == 0
    out = capsys.readouterr().out
    estimate = worst_case(texas_pack, load_prices(), 30, model_checks_on=False)
    assert f"${estimate.worst_case_usd:.4f}" in out and "tonight, model checks off" in out and "$0.0000" in out
    # with a model configured (no call is made to price a night), tonight's figure is the worst case
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert main(["cost", "--as-of", "2015-08-30", *_args(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"tonight, model checks on: ${estimate.worst_case_usd:.4f}" in out


def test_a_channel_failing_after_its_retries_exits_nonzero_with_a_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings by flag (and by $OPPORTUNITY_AUTOMATION); a webhook on a closed local port fails; the night is
    stored all the same."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = tmp_path / "automation.yaml"
    settings.write_text(f"notifications:\n  attempts: 1\n  timeout_seconds: 2\n"
                        f"  channels:\n    webhook:\n      url: http://127.0.0.1:{port}/hook\n")
    assert main(["run", "--as-of", "2009-12-31", "--settings", str(settings), *_args(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "# Morning brief" in captured.out
    lines = [line for line in captured.err.splitlines() if "channel webhook failed" in line]
    assert len(lines) == 1 and lines[0].startswith("opportunity: 2009-12-31: channel webhook failed after its retries:")
    monkeypatch.setenv("OPPORTUNITY_AUTOMATION", str(settings))
    assert main(["run", "--as-of", "2009-12-31", *_args(tmp_path)]) == 1  # the same settings, by environment
    monkeypatch.setenv("OPPORTUNITY_AUTOMATION", str(tmp_path / "missing.yaml"))
    assert main(["run", "--as-of", "2009-12-31", *_args(tmp_path)]) == 2
    assert "missing.yaml" in capsys.readouterr().err


def test_a_channel_secret_whose_variable_is_unset_is_one_line_before_the_night(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 42: `{env: NAME}` unset let the night scan and analyze, then stopped it at its notification run with
    Dagster's config traceback and no brief; now `run` and `backfill` refuse it first, naming the key."""
    monkeypatch.delenv("OPPORTUNITY_T42_HOOK", raising=False)
    settings = tmp_path / "automation.yaml"
    settings.write_text("notifications:\n  channels:\n    webhook:\n      url: {env: OPPORTUNITY_T42_HOOK}\n")
    for command in (["run", "--as-of", "2009-12-31"], ["backfill", "--start", "2009-12-01", "--end", "2009-12-31"]):
        assert main([*command, "--settings", str(settings), *_args(tmp_path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "Traceback" not in err[0]
        assert "notifications.channels.webhook.url: {env: OPPORTUNITY_T42_HOOK}" in err[0] and "not set" in err[0]
    assert not (tmp_path / "r.duckdb").exists()  # nothing stored
    monkeypatch.setenv("OPPORTUNITY_T42_HOOK", "http://127.0.0.1:9/hook")
    assert main(["run", "--as-of", "2009-12-31", "--settings", str(settings), *_args(tmp_path)]) == 1  # refused port


def test_archive_finds_a_candidate_by_the_name_the_brief_shows_when_its_id_is_a_code(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 42: shops keyed by a code (`shop_id` s1) and named "Plain Shop": `archive --candidate "Plain Shop"` said
    "no candidate of shops by that id was scanned on any stored night", exit 2; the README promises the name the
    brief shows."""
    lines = ["month,shop_id,shop_name,sales"] + [f"{year}-{month:02d}-01,s{k},{name},{100 + k}"
                                                 for year in (2020, 2021) for month in range(1, 13)
                                                 for k, name in enumerate(["Plain Shop", "Other Shop"], start=1)]
    (tmp_path / "shops.csv").write_text("\n".join(lines) + "\n")
    pack = tmp_path / "shops.yaml"
    pack.write_text("""domain: shops
description: Shops whose sales grow.
source: {path: shops.csv, entity_id: shop_id, entity_name: shop_name, period_column: month, publication_lag_days: 10,
         columns: [sales]}
metrics:
  sales_3m: {agg: sum, column: sales, window: [0, 2], unit: count}
  sales_prev: {agg: sum, column: sales, window: [12, 14], unit: count}
  growth: {expression: "sales_3m / sales_prev - 1", unit: share}
hard_filters: [{name: big_enough, metric: sales_3m, op: ">=", value: 10}]
required_inputs: [growth]
formula: {scale: 100, components: [{name: growing, expression: growth, direction: higher_is_better,
                                    range: [0.0, 0.2], weight: 1.0, unit: percent}]}
thresholds: {strong: 60, marginal: 40}
next_action: "Visit {name}: {sales_3m} sales in three months."
""")
    common = ["--criteria", str(pack), *_args(tmp_path)]
    assert main(["run", "--as-of", "2022-01-10", *common]) == 0
    capsys.readouterr()
    assert main(["archive", "--candidate", "Plain Shop", *common]) == 0
    [row] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (row["candidate_id"], row["name"], row["tag"]) == ("s1", "Plain Shop", "below_threshold")
    assert main(["archive", "--candidate", "s2", *common]) == 0  # by id, as before
    assert json.loads(capsys.readouterr().out)["name"] == "Other Shop"
    assert main(["archive", "--candidate", "No Such Shop", *common]) == 2
    assert "no candidate of shops by that id or name was scanned" in capsys.readouterr().err


@pytest.mark.parametrize(("as_of", "says"), [("2999-12-31", "has not ended yet"), ("1999-12-31", "before the first"),
                                             ("2000-02-29", "before the first night, 2000-03-01 (the first the data")])
def test_an_impossible_night_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], as_of: str,
                                               says: str) -> None:
    assert main(["run", "--as-of", as_of, *_args(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and "Traceback" not in err[0]


def test_a_backfill_from_before_the_first_night_starts_there(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The range's nights before the first are skipped in one line; a range wholly before it names its flag."""
    assert main(["backfill", "--start", "1999-12-01", "--end", "2001-06-30", "--every", "quarter-end",
                 *_args(tmp_path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == ("1999-12-01..2000-02-29  skipped: before the first night, 2000-03-01 (the first the data "
                        "supports, or the pack's `nights.start`)")
    assert lines[1].startswith("2000-03-31  skipped: key `metrics.") and lines[-1].startswith("2001-06-30  scanned")
    assert main(["backfill", "--start", "1999-01-01", "--end", "1999-12-31", *_args(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--start 1999-01-01 is before the first night, 2000-03-01" in err[0]


@pytest.mark.parametrize("command", [["run"], ["backfill", "--start", "2009-11-30", "--end", "2009-12-31"], ["cost"],
                                     ["check"]])
def test_a_file_lacking_a_named_column_names_its_key_whatever_the_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    """Without `--as-of` the latest night is read from the file first: that read names the key too."""
    renamed = tmp_path / "tx.csv"
    text = (PACK.parent.parent / "txhousing.csv").read_text()
    renamed.write_text(text.replace("city,", "town,", 1))
    pack = write_pack(tmp_path, renamed)
    assert main([*command, "--criteria", str(pack), *_args(tmp_path)]) in (1, 2)
    out = capsys.readouterr()
    said = (out.err + out.out).strip()
    assert "key `source.entity_id`: got 'city'" in said and "lacks column(s) ['city']" in said
    assert "Traceback" not in said


def test_backfill_skips_the_nights_run_refuses_saying_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`run` refused a night whose windows reach past the history; `backfill` ran the same night."""
    assert main(["run", "--as-of", "2000-12-31", *_args(tmp_path)]) == 2
    refused = capsys.readouterr().err
    assert "key `metrics.sales_3m_prev.window`: got [12, 14]" in refused
    assert main(["backfill", "--start", "2000-12-01", "--end", "2001-06-30", "--every", "quarter-end",
                 *_args(tmp_path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    early, later, scanned = (line.split("  ")[:2] for line in lines[:3])
    assert early[0] == "2000-12-31" and early[1].startswith(
        "skipped: key `metrics.sales_3m_prev.window`: got [12, 14]; expected a window within the source's history: "
        "on 2000-12-31 no entity has more than 11 months published (windows count months, `source.grain`); so do 4 "
        "more (`metrics.sales_12m.window` [0, 11], ")
    assert later[0] == "2001-03-31" and "no entity has more than 14 months published" in later[1]
    assert early[1].endswith("from 2001-04-30 on if the history goes on as it has") and later[1].endswith(
        "from 2001-04-30 on if the history goes on as it has")
    assert scanned == ["2001-06-30", "scanned"]


SALES_3M_PREV_AGAIN = {"agg": "sum", "column": "sales", "window": [12, 14], "unit": "count"}
"""`sales_3m_prev` under a second name: a divisor `sales_3m_prev - sales_3m_prev_again` is zero for every candidate,
which only the night's figures show."""


@pytest.mark.parametrize(("change", "key"), [
    ({"metrics.sales_3m_prev_again": SALES_3M_PREV_AGAIN,  # (`x - x` itself is refused at load, trial 141)
      "required_inputs": ["sales_3m", "sales_3m_prev", "sales_3m_prev_again", "inventory_3m", "inventory_3m_prev"],
      "formula.components.0.expression": "sales_3m / (sales_3m_prev - sales_3m_prev_again)"},
     "key `formula.components.0.expression`: got 'sales_3m / (sales_3m_prev - sales_3m_prev_again)'; it has no "
     "value for any of the "),
    ({"integrity.identities.1.expected": [1000.0, 1500.0]},
     "key `integrity.identities.1.expected`: got [1000.0, 1500.0]; the ratio `volume / (sales * median)` lies "
     "outside it for "),
])
def test_a_problem_only_the_nights_candidates_show_stops_run_and_backfill(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict[str, object], key: str) -> None:
    """A component undefined for every candidate (r19: `fatal_1y / (miles_1y - miles_1y)`), a band most candidates
    lie outside: `check` named them and `run` printed a brief, rc 0. Both stop now, in `check`'s line, before
    anything is stored."""
    pack = write_pack(tmp_path, PACK.parent.parent / "txhousing.csv", quiet_integrity=False, **change)
    assert main(["check", "--as-of", "2009-12-31", "--criteria", str(pack), *_args(tmp_path)]) == 1
    assert key in capsys.readouterr().out
    for command in (["run", "--as-of", "2009-12-31"], ["backfill", "--start", "2009-11-01", "--end", "2009-12-31"]):
        assert main([*command, "--criteria", str(pack), *_args(tmp_path)]) == 2
        out = capsys.readouterr()
        (line,) = out.err.strip().splitlines()
        assert line.startswith(f"opportunity: texas_housing, night 2009-12-31: {key}"), line
        assert "Traceback" not in out.err and out.out == ""
        assert not (tmp_path / "r.duckdb").exists()  # nothing stored


def test_run_checks_the_nights_candidates_on_its_own_scan(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The check before the night scans the night's candidates; the night's scan step is given that result: one
    scan a night, as before the check scanned (a wide source's scan is its dearest step after the read)."""
    from opportunity_assets.candidates import logic

    scans: list[object] = []
    real = logic._scan
    monkeypatch.setattr(logic, "_scan", lambda *args: scans.append(args[1]) or real(*args))
    assert main(["run", "--as-of", "2009-12-31", *_args(tmp_path)]) == 0
    assert "# Morning brief" in capsys.readouterr().out
    assert len(scans) == 1


def test_output_piped_into_a_reader_that_stops_ends_without_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 7: `opportunity check --criteria pack.yaml | head -3` ended in a `BrokenPipeError` traceback once
    `head` had its three lines."""
    import io
    import sys

    class ClosedPipe:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:  # (a pipe's descriptor; here none to point at the null device)
            raise io.UnsupportedOperation("fileno")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["check", "--criteria", str(PACK)]) == 141


def test_backtest_skips_the_nights_run_refuses_saying_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 36: a backtest whose range began on a night the windows reach past the history stopped at that night,
    exit 2, in Dagster's words ("scan_night failed: candidates: dagster._core.definitions.events.Failure: ...");
    `backfill` skips such a night in its line. So does the backtest now, the night counted as missing."""
    assert main(["backtest", "--start", "2000-12-01", "--end", "2001-06-30", "--every", "quarter-end",
                 *_args(tmp_path)]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0].startswith("2000-12-31  skipped: key `metrics.sales_3m_prev.window`: got [12, 14]; "), lines[0]
    assert lines[1].startswith("2001-03-31  skipped: key `metrics.sales_3m_prev.window`")
    assert lines[2] == "2001-06-30  ran     outcomes 28 known, 3 with a gap in a window (never measured)", lines[2]
    assert "dagster" not in out.out + out.err and "Traceback" not in out.err


def test_a_backtest_from_before_the_first_night_starts_there_as_a_backfill_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trials 125, 130 and 133: `backtest --start 1977-06-01` was refused ("is before the first night") where
    `backfill` over the same range skipped the nights before the first in one line. The backtest now does the same,
    in the same words (on stderr under `--json`, stdout staying JSON); a range wholly before it names its flag."""
    assert main(["backtest", "--start", "1999-12-01", "--end", "2001-06-30", "--every", "quarter-end",
                 *_args(tmp_path)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == ("1999-12-01..2000-02-29  skipped: before the first night, 2000-03-01 (the first the data "
                        "supports, or the pack's `nights.start`)")
    assert lines[1].startswith("2000-03-31  skipped: key `metrics.")
    assert any(line.startswith("2001-06-30  ran") for line in lines)
    assert main(["backtest", "--start", "1999-12-01", "--end", "2001-06-30", "--every", "quarter-end", "--json",
                 *_args(tmp_path)]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) and out.err.startswith("1999-12-01..2000-02-29  skipped: before the first night")
    assert main(["backtest", "--start", "1999-01-01", "--end", "1999-12-31", *_args(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--start 1999-01-01 is before the first night, 2000-03-01" in err[0]


def _towns_pack_after_a_night(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """After the bundled pack's night of 2009-12-31: a pack under the same `domain` reading another file by another
    key (the Texas file with its `city` column named `town`)."""
    assert main(["run", "--as-of", "2009-12-31", *_args(tmp_path)]) == 0
    capsys.readouterr()
    other = tmp_path / "towns.csv"
    other.write_text((PACK.parent.parent / "txhousing.csv").read_text().replace("city,", "town,", 1))
    return write_pack(tmp_path, other, **{"source.entity_id": "town", "source.entity_name": "town"})


def test_a_pack_of_another_source_under_the_same_domain_does_not_replace_its_nights(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 36: a pack copied as a template, its `domain` not renamed, reading another file by another key, ran
    the night another pack had stored in the shared store and replaced it, silently (1,778 schools became 2 causes
    of death). Now the night stops in one line naming `domain`, and the stored night stays."""
    pack = _towns_pack_after_a_night(tmp_path, capsys)
    assert main(["run", "--as-of", "2009-12-31", "--criteria", str(pack), *_args(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("opportunity: texas_housing, night 2009-12-31: key `domain`: got 'texas_housing'; the "
                           "store already holds this domain's night 2009-12-31, made by a pack reading 'txhousing' ("
                           "../txhousing.csv) by 'city', and this pack reads 'txhousing' ("), line
    assert line.endswith("towns.csv) by 'town': the night would replace the other pack's: expected a `domain` of "
                         "this pack's own (each pack sharing a store needs one)"), line
    assert main(["archive", "--as-of", "2009-12-31", "--tag", "below_threshold", *_args(tmp_path)]) == 0
    assert capsys.readouterr().out  # the first pack's night, as it was
    edited = write_pack(tmp_path, PACK.parent.parent / "txhousing.csv", **{"caps.max_candidates": 20})
    assert main(["run", "--as-of", "2009-12-31", "--criteria", str(edited), *_args(tmp_path)]) == 0  # an edit


def test_a_pack_of_another_source_under_the_same_domain_is_refused_on_a_night_of_its_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 44: a second pack under the first one's `domain`, run on another night, stored it beside the first
    pack's nights, said nothing: one archive and one history for two sources. Now it stops in one line naming
    `domain`, and nothing is stored."""
    pack = _towns_pack_after_a_night(tmp_path, capsys)
    assert main(["run", "--as-of", "2010-06-30", "--criteria", str(pack), *_args(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("opportunity: texas_housing, night 2010-06-30: key `domain`: got 'texas_housing'; the "
                           "store already holds this domain's night 2009-12-31, made by a pack reading"), line
    assert "the night would sit among the other pack's, one archive and one history for both" in line
    assert main(["archive", "--as-of", "2010-06-30", *_args(tmp_path)]) == 2  # no such night stored


def test_a_backfill_whose_source_breaks_mid_range_exits_1_saying_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 36: the source file replaced by a broken one while a backfill ran: the nights after it were each
    "skipped: key `source.path`: ...", and the backfill exited 0, an unattended run's log reading as fine. An early
    night short of history is skipped as before; one skipped after a night ran is a source broken mid-range:
    exit 1, said on stderr, the nights that ran stored."""
    from opportunity_assets.check import pack as check

    real = check.check_pack

    def broken_on_one_night(pack: Any, as_of: Any = None, **kwargs: Any) -> Any:
        checked = real(pack, as_of, **kwargs)
        if str(as_of) != "2009-11-30":
            return checked
        return dataclasses.replace(checked, problems=["key `source.path`: source file tx.csv is empty"])

    monkeypatch.setattr(check, "check_pack", broken_on_one_night)
    assert main(["backfill", "--start", "2009-09-01", "--end", "2009-12-31", *_args(tmp_path)]) == 1
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    assert [line.split("  ")[:2][0] for line in lines] == ["2009-09-30", "2009-10-31", "2009-11-30", "2009-12-31"]
    assert lines[2] == "2009-11-30  skipped: key `source.path`: source file tx.csv is empty"
    assert out.err.strip().splitlines()[-1] == "opportunity: 1 night(s) skipped after 2009-09-30 had run, from " \
        "2009-11-30 (each line says why): the source broke mid-range?"


def test_a_backfill_skipping_nights_for_its_windows_alone_says_so_not_a_broken_source(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 138: a weekly backfill over a television series' season skipped its first weeks after the night before
    the season had run, each line naming `metrics.tech_3.min_rows` or `metrics.tech_prev.window` over weeks no
    entity has rows in (the break between series), and stderr guessed "the source broke mid-range?". Nights skipped
    for the pack's windows alone say so; exit 1 as before, for an unattended log."""
    from opportunity_assets.check import pack as check

    real = check.check_pack

    def short_on_one_night(pack: Any, as_of: Any = None, **kwargs: Any) -> Any:
        checked = real(pack, as_of, **kwargs)
        if str(as_of) != "2009-11-30":
            return checked
        return dataclasses.replace(checked, problems=[
            "key `metrics.sales_3m.window`: got [0, 2]; no entity has a row in 2009-09..2009-11"])

    monkeypatch.setattr(check, "check_pack", short_on_one_night)
    assert main(["backfill", "--start", "2009-09-01", "--end", "2009-12-31", *_args(tmp_path)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "opportunity: 1 night(s) skipped after 2009-09-30 had run, from 2009-11-30 (each line says why): the pack's "
        "windows reach periods with no rows (a break between seasons, or a `window` or `min_rows` to change?)")


STOPS = [(signal.SIGINT, 0.3), (signal.SIGTERM, 0.3), (signal.SIGINT, 4.0), (signal.SIGTERM, 4.0)]
"""Ctrl-C and a stop signal, while Dagster is imported and later (checking, reading, or inside a night's step)."""


@pytest.mark.parametrize(("stop", "after"), STOPS)
def test_a_command_stopped_by_its_user_says_so_in_one_line_wherever_it_lands(tmp_path: Path, stop: int,
                                                                             after: float) -> None:
    """Trial 57: a backfill stopped by SIGTERM printed a traceback ending "RuntimeError: Query interrupted" (DuckDB's
    word for a query Ctrl-C stopped); Ctrl-C in a command's first seconds printed the traceback of Dagster's import,
    and SIGTERM there ended it without a word. Stopped while importing or while checking, reading or running a night,
    the command says it was interrupted and what to do, in one line, and no traceback."""
    command = [sys.executable, "-c", "import sys; from opportunity_assets.command import main; sys.exit(main())",
               "backfill", "--start", "2008-01-01", "--end", "2009-12-31", *_args(tmp_path)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "CI": "1"},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(after)
    process.send_signal(stop)
    _, err = process.communicate(timeout=120)
    assert process.returncode in (2, 130), err  # (2: a night's step stopped, `NightFailed`)
    assert "Traceback" not in err and "Error" not in err, err
    assert err.strip().splitlines()[-1].endswith(STOPPED), err


def test_a_stop_that_comes_out_as_another_error_is_still_told_as_the_stop(monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """CI's run of 248022b: SIGTERM 0.3 s in landed while pydantic-core built a validator, which raised the
    KeyboardInterrupt as a `SchemaError`, and the command printed its traceback. An error raised after a stop
    arrived is the stop, told in one line."""
    from opportunity_assets import cli, command, stopping

    def import_broken_by_the_stop() -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except KeyboardInterrupt:
            raise RuntimeError('Error building "literal" validator: KeyboardInterrupt') from None
        return 0

    monkeypatch.setattr(cli, "main", import_broken_by_the_stop)
    monkeypatch.setattr(stopping, "_stops", [])
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert command.main() == command.INTERRUPTED
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert capsys.readouterr().err == f"opportunity: {STOPPED}\n"


def test_a_stop_python_swallowed_while_importing_is_told_not_run_past(monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A stop 0.45 s in landed in importlib's module-lock callback: Python printed "Exception ignored in" with a
    traceback, and the backfill ran on to its end, exit 0. Such a stop is not printed, and the command, once imported,
    ends as stopped."""
    from opportunity_assets import cli, command, stopping

    class Finalized:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)

    ran: list[bool] = []
    monkeypatch.setattr(cli, "main", lambda: ran.append(True) or 0)
    monkeypatch.setattr(stopping, "_stops", [])
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    handlers = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        stopping.stop_on_sigterm()
        Finalized()  # (a stop raised in a finalizer: unraisable)
        assert command.main() == command.INTERRUPTED
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert not ran
    assert capsys.readouterr().err == f"opportunity: {STOPPED}\n"


def test_the_installed_command_is_the_entry_that_tells_a_stop() -> None:
    """`opportunity` runs `command.main` (a stop told in one line), not `cli.main` bare."""
    text = (ROOT / "pyproject.toml").read_text()
    assert 'opportunity = "opportunity_assets.command:main"' in text


def test_the_command_module_run_by_python_dash_m_runs_the_command() -> None:
    """Trial 60: `python -m opportunity_assets.command check --criteria PACK` (the entry the installed command
    runs, from a checkout without the console script) printed nothing and exited 0: the module had no `__main__`
    block, so no check was made and none said so. It runs the command, as `python -m opportunity_assets.cli`
    does."""
    done = subprocess.run([sys.executable, "-m", "opportunity_assets.command", "check", "--criteria", "nowhere.yaml"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, "CI": "1"})
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("opportunity: criteria file "), done.stderr


def test_a_stop_is_told_from_other_errors_by_what_raised_it() -> None:
    """Ctrl-C, a stop signal, DuckDB's interrupted query, and Dagster's interruption raised outside a step are a
    user's stop; any other error is not, and keeps its own message."""
    from dagster._core.errors import DagsterExecutionInterruptedError

    from opportunity_assets.stopping import is_interruption

    assert is_interruption(KeyboardInterrupt()) and is_interruption(RuntimeError("Query interrupted"))
    assert is_interruption(DagsterExecutionInterruptedError())
    assert not is_interruption(RuntimeError("Conversion Error: Date out of range")) and not is_interruption(
        ValueError("Query interrupted"))


def _texas_night_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[str], Path, list[str]]:
    """A copy of the bundled Texas file and its pack, and night 2009-12-31 run once on them: (the copy, its lines,
    the pack, the command that ran the night)."""
    source = tmp_path / "tx.csv"
    lines = TEXAS.read_text().splitlines(keepends=True)
    source.write_text("".join(lines))
    pack = write_pack(tmp_path, source)
    command = ["run", "--as-of", "2009-12-31", "--criteria", str(pack), *_args(tmp_path)]
    assert main(command) == 0
    capsys.readouterr()
    return source, lines, pack, command


def test_a_night_whose_latest_rows_are_all_refused_says_so_in_the_brief(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 104: a year's rows sent twice, every one refused as a duplicated key, left the night a year behind,
    its metrics the year before's as if current; the command warned on stderr, the brief said only how many rows
    were quarantined, and a scheduled night said nothing anywhere. The brief's run summary says it."""
    source = tmp_path / "tx.csv"
    lines = TEXAS.read_text().splitlines(keepends=True)
    source.write_text("".join(lines + [line for line in lines if ",2009,11," in line]))
    command = ["run", "--as-of", "2009-12-31", "--criteria", str(write_pack(tmp_path, source)), *_args(tmp_path)]
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "- The source's latest month published, 2009-11, is quarantined in every row (duplicated key), so " \
           "tonight's latest period is 2009-10, its figures read as if current (the quarantine says why)." in out, out


def test_a_night_after_the_data_ends_says_so_in_the_brief(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 105: a night half a year after the source's last rows (a feed that stopped) was warned of on the
    command's stderr only, and a scheduled night said nothing: the brief acted on the old figures as current. The
    brief's run summary says it; a night the data reaches says nothing of it."""
    command = ["run", "--criteria", str(write_pack(tmp_path, TEXAS)), *_args(tmp_path)]
    assert main([*command, "--as-of", "2016-03-31"]) == 0
    out = capsys.readouterr().out
    assert "- The source's latest period is 2015-07, though 7 months after it, to 2016-02, would be published by " \
           "tonight and no row holds one: tonight's figures are 2015-07's, 244 days old, read as if current (a feed " \
           "that stopped, or a night after the data ends?)." in out, out
    assert main([*command, "--as-of", "2015-08-30"]) == 0
    assert "read as if current" not in capsys.readouterr().out


def test_a_night_run_again_on_a_source_changed_in_place_says_so(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 63: a night run again after its source was changed in place (a year's figures revised over the first
    ones, no `published_column`) replaced the brief it gave then with another, and nothing said so; a file replaced
    by a shorter one was told "the night is too early for the pack". The same pack's night run again on the
    source as it was is silent; on a source revised since, a warning names `source.published_column` with a
    figure then and now; on one that lost history, the refusal says the store holds the night as read then."""
    source, lines, _, command = _texas_night_run(tmp_path, capsys)
    assert main(command) == 0  # the source as it was: the same figures, nothing said
    assert "changed in place" not in capsys.readouterr().err
    revised = [line.replace("Austin,2009,11,", "Austin,2009,11,1") if line.startswith("Austin,2009,11,") else line
               for line in lines]
    source.write_text("".join(revised))
    assert main(command) == 0
    warning = next(line for line in capsys.readouterr().err.splitlines() if "changed in place" in line)
    assert warning.startswith("opportunity: warning: key `source.published_column`: night 2009-12-31 is stored, by "
                              "this pack, with other figures than the source gives it now: "), warning
    assert "Austin's " in warning and " then, " in warning and " now" in warning
    assert "expected a `published_column`" in warning
    source.write_text("".join([lines[0], *(line for line in revised[1:] if int(line.split(",")[1]) >= 2009)]))
    assert main(command) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "the store holds night 2009-12-31, run by this pack on the source as it was then" in line, line


def test_a_new_night_whose_source_dropped_an_entity_of_the_night_before_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 86: a monthly file re-published without one of its entities; the next night's brief went on without
    it, nothing said, where a night run again was warned of. The next night of the same source is silent; of a
    source that lost an entity's every row, a warning names `source.path`, the night before and the entity."""
    source, lines, pack, _ = _texas_night_run(tmp_path, capsys)
    command = ["run", "--as-of", "2010-01-31", "--criteria", str(pack), *_args(tmp_path)]
    assert main(command) == 0
    assert "no row the night reads now" not in capsys.readouterr().err
    source.write_text("".join(line for line in lines if not line.startswith("Austin,")))
    assert main(["run", "--as-of", "2010-02-28", "--criteria", str(pack), *_args(tmp_path)]) == 0
    warning = next(line for line in capsys.readouterr().err.splitlines() if "no row the night reads now" in line)
    assert warning.startswith("opportunity: warning: key `source.path`: 1 entity of night 2010-01-31, the latest "
                              "this pack stored before this one, has no row the night reads now (e.g. Austin)"), \
        warning
    # an entity gone from the scan whose rows the source still holds (its latest row out of the history's reach,
    # its rows refused tonight) was not removed: only an id with no row at all is said
    from opportunity_assets.cli import _ids_with_rows
    from opportunity_assets.criteria import load_criteria
    assert _ids_with_rows(load_criteria(pack), ["austin", "dallas", "atlantis"]) == {"dallas"}


def test_a_night_run_again_by_a_pack_edited_for_a_renamed_column_says_its_source_changed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial 73: a file replaced by a newer download, past figures revised and a column renamed (`median` to
    `median_price`), the pack edited for the new name alone: the night run again replaced the figures it stored
    with nothing said, where the unedited pack was warned of. The metrics the edit left as they were are held to
    the stored night's; an edit to how the rows are read (the lag rule) compares none."""
    import re

    source, lines, pack, command = _texas_night_run(tmp_path, capsys)
    revised = [line.replace("Austin,2009,11,", "Austin,2009,11,1") if line.startswith("Austin,2009,11,") else line
               for line in lines]
    source.write_text("".join([revised[0].replace("median", "median_price"), *revised[1:]]))
    pack.write_text(re.sub(r"\bmedian\b", "median_price", pack.read_text()))
    assert main(command) == 0
    warning = next(line for line in capsys.readouterr().err.splitlines() if "changed in place" in line)
    assert warning.startswith("opportunity: warning: key `source.published_column`: night 2009-12-31 is stored, by "
                              "this pack before an edit (held to the "), warning
    assert "Austin's sales_" in warning and " then, " in warning, warning
    pack.write_text(pack.read_text().replace("publication_lag_days: 30", "publication_lag_days: 45"))
    assert main(command) == 0
    assert "changed in place" not in capsys.readouterr().err
