"""The morning report: reasons in words (pure), the HTML's content and escaping (pure), and whole nights: the PDF
read back with poppler (pages as PNG, text), the brief's metadata, the email's attachment, `run --report`'s
bad paths."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import dagster as dg
import pytest
import yaml
from PIL import Image

from opportunity_assets import night as nights
from opportunity_assets.cli import main
from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.definitions import build_definitions
from opportunity_assets.reasons import NOT_ANALYZED, CandidateRow, candidate_rows
from opportunity_assets.records import (
    Analysis,
    Candidate,
    CheckOutcome,
    FilterResult,
    Route,
    Status,
    Summary,
    Verdict,
    Verification,
)
from opportunity_assets.report.render import History, Report, ReportError, check_target, render_html
from opportunity_assets.report.step import read_report, report_path
from opportunity_assets.report.svg import HistoryPoint
from resources.store import ResultStore
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack
from tests.receivers import SmtpReceiver

NIGHT = date(2011, 10, 31)
EARLIER = (date(2011, 8, 31), date(2011, 9, 30))
ACT_ON = ("Austin", "Collin County")
"""The six most liquid markets' act-on candidates on 2011-10-31 (tests/conftest.py, SIX_MOST_LIQUID)."""


# ---- reasons, without Dagster --------------------------------------------------------------------------------------

def _candidate(cid: str, *, metrics: dict[str, float | None], filters: dict[str, FilterResult],
               went_on: bool = True, capped: bool = False, gaps: tuple[str, ...] = (),
               preliminary: float | None = None) -> Candidate:
    return Candidate(as_of=NIGHT, id=cid, name=cid.title(), raw_data=[], source="txhousing", metrics=metrics,
                     anchor_period=date(2011, 9, 1), data_gaps=list(gaps), filters=filters, went_on=went_on,
                     capped=capped, preliminary_score=preliminary)


def _verification(cid: str, status: Status, failed: tuple[str, ...] = (), reason: str = "All five checks pass.",
                  **more: object) -> Verification:
    checks = {name: CheckOutcome(passed=name not in failed, finding="")
              for name in ("arithmetic", "inputs", "assumptions", "omissions", "constraints")}
    return Verification(as_of=NIGHT, candidate_id=cid, status=status, checks=checks, failed_checks=list(failed),
                        reason=reason, fatal_assumption=None, **more)  # type: ignore[arg-type]


def _analysis(cid: str, verdict: Verdict, score: float | None, *, missing: tuple[str, ...] = (),
              flags: tuple[str, ...] = ()) -> Analysis:
    return Analysis(as_of=NIGHT, candidate_id=cid, numbers={}, calculation=[], components={}, score=score,
                    verdict=verdict, missing=list(missing), reasoning="", assumptions=[], red_flags=list(flags))


def test_every_candidate_gets_its_reason_in_words(texas_pack: CriteriaPack) -> None:
    passing = {"liquidity": FilterResult.PASS, "freshness": FilterResult.PASS, "coverage": FilterResult.PASS}
    metrics = {"sales_12m": 2000.0, "days_since_data": 1.0, "coverage_15m": 1.0}
    candidates = [
        _candidate("thin", metrics={**metrics, "sales_12m": 540.0}, went_on=False,
                   filters={**passing, "liquidity": FilterResult.FAIL}),
        _candidate("gappy", metrics={**metrics, "coverage_15m": None},
                   filters={**passing, "coverage": FilterResult.UNCLEAR},
                   gaps=("coverage_15m: 0 of 15 months filled in 2010-07..2011-09; needs 1",
                         "inventory_3m_prev: 0 of 3 months of inventory filled in 2010-07..2010-09; needs 3")),
        _candidate("cut", metrics=metrics, filters=passing, went_on=False, capped=True, preliminary=28.27),
        _candidate("broken", metrics=metrics, filters=passing),
        _candidate("flagged", metrics=metrics, filters=passing),
        _candidate("star", metrics=metrics, filters=passing),
        _candidate("waiting", metrics=metrics, filters=passing),
    ]
    analyses = [_analysis("gappy", Verdict.INSUFFICIENT_DATA, None, missing=("inventory_3m_prev",)),
                _analysis("broken", Verdict.STRONG, 81.0),
                _analysis("flagged", Verdict.SKIP, 31.04, flags=("thin_market: one month is half the sales",)),
                _analysis("star", Verdict.STRONG, 88.1)]
    verifications = [_verification("gappy", Status.CONFIRMED),
                     _verification("broken", Status.REJECTED, ("arithmetic",), "Arithmetic: score 81 ≠ 79."),
                     _verification("flagged", Status.CONFIRMED), _verification("star", Status.CONFIRMED)]
    routes = [Route(as_of=NIGHT, candidate_id=cid, destination=dest, section_or_tag=tag, rule="r")  # type: ignore[arg-type]
              for cid, dest, tag in (("gappy", "archive", "data_gap"), ("broken", "archive", "failed_verification"),
                                     ("flagged", "archive", "below_threshold"), ("star", "brief", "act_on_these"))]
    rows = {r.candidate_id: r for r in candidate_rows(texas_pack, candidates, analyses, verifications, routes)}
    assert list(rows) == sorted(rows)
    assert rows["thin"].tag == NOT_ANALYZED and rows["thin"].filters["liquidity"] == "FAIL"
    assert rows["thin"].reason == "liquidity failed: sales_12m 540 (needs >= 600)"
    assert rows["gappy"].tag == "data_gap" and rows["gappy"].verdict == "INSUFFICIENT_DATA"
    assert rows["gappy"].reason.startswith(
        "INSUFFICIENT_DATA: missing input inventory_3m_prev (0 of 3 months of inventory filled in 2010-07..2010-09")
    assert rows["cut"].capped and rows["cut"].reason == "capped: beyond max_candidates=30, preliminary score 28.3"
    assert rows["cut"].score is None  # a score column holds analyses' scores only
    assert rows["broken"].reason == "REJECTED, failed arithmetic: Arithmetic: score 81 ≠ 79"
    assert rows["flagged"].reason == "SKIP: score 31.0 below strong 70.0; red flags: thin_market"
    assert rows["flagged"].score_text == "31.0"
    assert rows["star"].reason == "STRONG and confirmed (score 88.1)"
    assert rows["waiting"].tag == "pending" and rows["waiting"].reason == "goes on to analysis"


def _report(rows: list[CandidateRow]) -> Report:
    return Report(
        domain="texas_housing", as_of=NIGHT, description="d", rows=rows,
        brief_markdown="# Morning brief — texas_housing, as of 2011-10-31\n\n## Act on these\n"
                       "- **Dallas &amp; &lt;Fort Worth\\>** (score 71.5): next\n",
        summary=Summary(scanned=1, passed_filters=0, capped=0, analyzed=0, errors=0,
                        by_tag={"act_on_these": 1, "needs_your_judgment": 0}),
        thresholds={"strong": 70.0, "marginal": 55.0},
        histories=[History("dallas", "Dallas & <Fort Worth>", [HistoryPoint(date(2011, 9, 30), "MARGINAL", 60.0),
                                                               HistoryPoint(NIGHT, "STRONG", 71.5)])],
        rendered_at=datetime(2011, 11, 1, 7, 0))


def test_the_html_is_dated_branded_and_names_are_text_never_markup(texas_pack: CriteriaPack) -> None:
    rows = candidate_rows(texas_pack, [_candidate("x", metrics={"sales_12m": 10.0, "days_since_data": 1.0,
                                                                "coverage_15m": 1.0}, went_on=False,
                                                  filters={"liquidity": FilterResult.FAIL,
                                                           "freshness": FilterResult.PASS,
                                                           "coverage": FilterResult.PASS})])
    html = render_html(_report([replace(rows[0], name="<script>alert(1)</script>")]))
    assert "Opportunity scanner" in html and "as of <strong>2011-10-31</strong>" in html
    assert "rendered 2011-11-01 07:00 UTC" in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Dallas &amp; &lt;Fort Worth&gt;" in html  # the brief's escaped Markdown, and the history's title
    assert "<h1>Morning report" in html and "Morning brief —" not in html  # the brief's own title is the header's
    assert "liquidity failed: sales_12m 10 (needs &gt;= 600)" in html
    assert html.count("<svg") == 2  # the distribution and one history


def test_the_report_path_must_be_pdf_or_html_in_a_folder_that_can_be_written(tmp_path: Path) -> None:
    assert check_target(tmp_path / "new" / "r.PDF") == "pdf" and check_target(tmp_path / "r.htm") == "html"
    with pytest.raises(ReportError, match=r"the extension must be \.pdf or \.html \(got \.txt\)"):
        check_target(tmp_path / "r.txt")
    (tmp_path / "file").write_text("")
    with pytest.raises(ReportError, match="is not a folder this process can write in"):
        check_target(tmp_path / "file" / "r.pdf")


# ---- whole nights ------------------------------------------------------------------------------------------------

def _poppler(tool: str) -> str:
    """Debian's poppler-utils tool; missing, the test fails saying how to install it (never skipped)."""
    found = shutil.which(tool)
    if found is None:
        pytest.fail(f"{tool} (poppler-utils) is not installed: run `bash .ci/services.sh` (`make test` does)")
    return found


def _pdf_text(path: Path) -> str:
    return subprocess.run([_poppler("pdftotext"), "-layout", str(path), "-"], check=True, capture_output=True,
                          text=True).stdout


def _pages(path: Path, out: Path) -> list[Path]:
    subprocess.run([_poppler("pdftoppm"), "-r", "60", "-png", str(path), str(out / "page")], check=True)
    return sorted(out.glob("page-*.png"))


def _ink(page: Path) -> float:
    """Share of pixels that are not white."""
    image = Image.open(page).convert("L")
    histogram = image.histogram()
    return 1 - sum(histogram[250:]) / (image.width * image.height)


@pytest.mark.slow
def test_run_report_writes_a_readable_pdf_with_the_brief_plots_and_archive(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    args = ["--criteria", str(pack), "--store", str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]
    for earlier in EARLIER:
        assert main(["run", "--as-of", earlier.isoformat(), *args]) == 0
    target = tmp_path / "out" / "morning.pdf"
    assert main(["run", "--as-of", NIGHT.isoformat(), "--report", str(target), *args]) == 0
    assert f"report: {target}" in capsys.readouterr().out
    pages = _pages(target, tmp_path)
    assert 2 <= len(pages) <= 4
    assert all(_ink(page) > 0.02 for page in pages)  # every page has content, none is blank
    text = _pdf_text(target)
    assert "Opportunity scanner" in text and "Morning report" in text and "as of 2011-10-31" in text
    assert all(name in text for name in ACT_ON)
    assert "Act on these: score across nights" in text and "2011-08-31" in text  # the history's first night
    assert "Archive" in text and "below_threshold" in text
    assert "Since last night" in text and "Against 2011-09-30" in text and "still strong" in text
    store = ResultStore(path=str(tmp_path / "r.duckdb"))
    archived = store.archive("texas_housing", as_of=NIGHT)
    assert archived and all(row["name"] in text for row in archived)
    report = read_report(store, nights.resources_of(build_definitions(
        criteria_path=str(pack), store_path=str(tmp_path / "r.duckdb")))[0], NIGHT)
    assert [h.name for h in report.histories] == list(ACT_ON)
    assert [len(h.points) for h in report.histories] == [3, 3]  # three nights each, tonight's last
    html = tmp_path / "r.html"
    assert main(["run", "--as-of", NIGHT.isoformat(), "--report", str(html), *args]) == 0
    assert html.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.slow
def test_bad_report_paths_are_one_line_before_the_night(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--store", str(tmp_path / "r.duckdb"), "--dagster-home", str(tmp_path / "home")]
    (tmp_path / "file").write_text("")
    for path, message in ((tmp_path / "x.txt", "the extension must be .pdf or .html"),
                          (tmp_path / "file" / "x.pdf", "is not a folder this process can write in")):
        assert main(["run", "--as-of", NIGHT.isoformat(), "--report", str(path), *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not (tmp_path / "r.duckdb").exists()  # refused before any night was run


@pytest.mark.slow
def test_the_brief_links_its_report_and_the_email_attaches_the_pdf(tmp_path: Path) -> None:
    smtp = SmtpReceiver()
    try:
        pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
        settings = tmp_path / "automation.yaml"
        settings.write_text(yaml.safe_dump({"notifications": {"channels": {"email": {
            "host": "127.0.0.1", "port": smtp.port, "starttls": False, "sender": "scanner@test.local",
            "recipients": ["analyst@test.local"]}}}}))
        store_path = str(tmp_path / "results.duckdb")
        defs = build_definitions(criteria_path=str(pack), store_path=store_path, settings_path=str(settings))
        instance = dg.DagsterInstance.ephemeral()
        nights.run_night(defs, instance, NIGHT)
    finally:
        smtp.close()
    brief = instance.fetch_materializations(dg.AssetRecordsFilter(
        asset_key=dg.AssetKey("brief"), asset_partitions=[NIGHT.isoformat()]), limit=1).records[0]
    assert brief.asset_materialization is not None
    html = Path(str(brief.asset_materialization.metadata["report"].value))
    assert html == report_path(store_path, "texas_housing", NIGHT, ".html") and html.exists()
    assert all(name in html.read_text() for name in ACT_ON)

    [(recipients, mail)] = smtp.messages
    assert recipients == ["analyst@test.local"]
    [attachment] = list(mail.iter_attachments())  # type: ignore[attr-defined]
    assert attachment.get_content_type() == "application/pdf"
    assert attachment.get_filename() == "texas_housing-2011-10-31.pdf"
    pdf = tmp_path / "attached.pdf"
    pdf.write_bytes(attachment.get_content())
    assert pdf.read_bytes() == report_path(store_path, "texas_housing", NIGHT, ".pdf").read_bytes()
    text = _pdf_text(pdf)
    assert all(name in text for name in ACT_ON) and "2011-10-31" in text
    body = mail.get_body(preferencelist=("plain",))  # type: ignore[attr-defined]
    assert "The morning report is attached: texas_housing-2011-10-31.pdf" in body.get_content()


def test_a_wide_night_lists_the_first_candidates_left_out_and_counts_the_rest(texas_pack: CriteriaPack) -> None:
    """Ten thousand candidates not analyzed would print two hundred pages: the report lists MAX_LEFT_OUT of them,
    the cap's cuts first, and says how many more the archive holds."""
    from opportunity_assets.report.render import MAX_LEFT_OUT

    failed = candidate_rows(texas_pack, [_candidate("x", metrics={"sales_12m": 10.0, "days_since_data": 1.0,
                                                                  "coverage_15m": 1.0}, went_on=False,
                                                    filters={"liquidity": FilterResult.FAIL,
                                                             "freshness": FilterResult.PASS,
                                                             "coverage": FilterResult.PASS})])[0]
    rows = [replace(failed, candidate_id=f"m{i:05d}", name=f"Market {i:05d}", capped=i % 1000 == 7)
            for i in range(MAX_LEFT_OUT + 1234)]
    report = _report(rows)
    assert len(report.left_out) == MAX_LEFT_OUT and report.left_out_more == 1234
    assert [r.candidate_id for r in report.left_out[:2]] == ["m00007", "m01007"]  # the cap's cuts first
    html = render_html(report)
    assert html.count('<td class="name">Market ') == MAX_LEFT_OUT
    assert "and 1,234 more not analyzed tonight" in html and "opportunity archive --as-of 2011-10-31" in html
    assert not _report(rows[:MAX_LEFT_OUT]).left_out_more


def test_the_stored_reasons_of_candidates_left_out_read_as_their_records_would(tmp_path: Path) -> None:
    """A wide night's rows come from what the scan stored (no record parsed back): the same rows, capped and
    filtered out alike, as the records give; a night stored before reasons were reads its records."""
    pack_path = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    store_path = str(tmp_path / "results.duckdb")
    nights.run_night(build_definitions(criteria_path=str(pack_path), store_path=store_path),
                     dg.DagsterInstance.ephemeral(), NIGHT)
    store, pack = ResultStore(path=store_path), load_criteria(pack_path)
    from_records = candidate_rows(pack, store.candidates(pack.domain, NIGHT), store.analyses(pack.domain, NIGHT),
                                  store.verifications(pack.domain, NIGHT), store.routes(pack.domain, NIGHT),
                                  store.errors(pack.domain, NIGHT))
    left_out = [r for r in from_records if r.tag == NOT_ANALYZED]
    assert any(r.capped for r in left_out) and any(not r.capped for r in left_out)
    assert read_report(store, pack, NIGHT).rows == from_records
    with store._connect() as con:  # a store written before `candidates.reason` was
        con.execute("UPDATE candidates SET reason = NULL")
    assert read_report(store, pack, NIGHT).rows == from_records


@pytest.mark.parametrize("score", [100.0, 99.0, 60.0, 0.0])
def test_the_latest_score_is_labelled_inside_its_plot_even_at_the_top(score: float) -> None:
    """Trial 119: a candidate scoring 100.0 had its label drawn above the plot's top edge, cut in half in the
    report's small multiples and in the UI's `history` alike."""
    import re

    from opportunity_assets.report.svg import score_history

    svg = score_history([HistoryPoint(date(1996, 6, 30), "STRONG", 70.0), HistoryPoint(date(1997, 6, 30), "STRONG",
                                                                                       score)],
                        {"strong": 65.0, "marginal": 45.0})
    [(y, size)] = [(float(y), float(size)) for y, size, text in re.findall(
        r'<text x="[\d.]+" y="([\d.]+)" [^>]*font-size="([\d.]+)"[^>]*>([^<]*)</text>', svg) if text == f"{score:.1f}"]
    height = float(re.search(r'height="(\d+)"', svg).group(1))  # type: ignore[union-attr]
    assert y - size >= 0 and y <= height - 12  # the whole label inside, above the dates' row


def test_a_long_names_count_of_nights_is_never_split_across_lines(tmp_path: Path) -> None:
    """Trial 119: under a long name, a history's caption broke between its count and its word ("MCDONNELL DOUGLAS
    CORP 1" / "night") in the PDF."""
    from opportunity_assets.report.render import render_pdf

    name = "MCDONNELL DOUGLAS CORP"
    report = replace(_report([]), histories=[History("mcdonnell-douglas-corp", name, [HistoryPoint(NIGHT, "STRONG",
                                                                                                   100.0)])])
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(render_pdf(render_html(report)))
    text = _pdf_text(pdf)
    assert name in text
    assert any(line.strip().endswith("1 night") for line in text.splitlines() if name in line or "night" in line)
    assert not any(line.strip() == "night" or line.rstrip().endswith(f"{name}  1") for line in text.splitlines())
