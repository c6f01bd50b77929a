"""History: a candidate's score and verdict across nights in its partition's metadata (an SVG plot and the nights
as a table), and "since last night" on the brief and in the report: new, still strong, dropped with why."""

from __future__ import annotations

import base64
import re
from datetime import date
from typing import Any

import dagster as dg
import pytest

from opportunity_assets import night as nights
from opportunity_assets.definitions import build_definitions
from opportunity_assets.history import DROPPED, NEW, STILL_STRONG, history_markdown, points, since_last_night
from opportunity_assets.reasons import CandidateRow
from opportunity_assets.records import Analysis, Verdict
from opportunity_assets.report.render import render_html
from opportunity_assets.report.step import read_report
from tests.conftest import ROOT, SIX_MOST_LIQUID, write_pack

LAST, NIGHT = date(2011, 9, 30), date(2011, 10, 31)
THRESHOLDS = {"strong": 70.0, "marginal": 55.0}


def _row(cid: str, tag: str, score: float | None, reason: str) -> CandidateRow:
    return CandidateRow(candidate_id=cid, name=cid.title(), filters={}, capped=False, went_on=True, verdict=None,
                        score=score, status=None, tag=tag, reason=reason)


def test_since_last_night_names_new_still_strong_and_dropped_with_why() -> None:
    tonight = [_row("austin", "act_on_these", 88.1, "STRONG and confirmed (score 88.1)"),
               _row("collin", "act_on_these", 87.0, "STRONG and confirmed (score 87.0)"),
               _row("dallas", "needs_your_judgment", 75.0, "UNCERTAIN, fragile: inventory_3m (+5%) flips it"),
               _row("waco", "below_threshold", 33.0, "SKIP: score 33.0 below strong 70.0")]
    last = {"austin": ("Austin", 76.3), "dallas": ("Dallas", 80.2), "plano": ("Plano", 71.0)}
    changes = since_last_night(last, tonight)
    assert [(c.candidate_id, c.change) for c in changes] == [
        ("austin", STILL_STRONG), ("collin", NEW), ("dallas", DROPPED), ("plano", DROPPED)]
    dallas, plano = changes[2], changes[3]
    assert (dallas.last_night, dallas.tonight) == (80.2, 75.0)
    assert dallas.why == "UNCERTAIN, fragile: inventory_3m (+5%) flips it"
    assert plano.why == "not scanned tonight" and plano.tonight is None
    assert since_last_night({}, tonight)[0].change == NEW


def test_history_is_an_svg_plot_and_a_table_of_nights() -> None:
    stored = [{"as_of": date(2011, 8, 31), "verdict": "SKIP", "score": 40.04},
              {"as_of": NIGHT, "verdict": "SKIP", "score": 10.0}]  # tonight's re-run replaces it
    tonight = Analysis(as_of=NIGHT, candidate_id="austin", numbers={}, calculation=[], components={}, score=88.08,
                       verdict=Verdict.STRONG, reasoning="", assumptions=[], red_flags=[])
    history = points(stored, tonight)
    assert [(p.as_of, p.verdict, p.score) for p in history] == [(date(2011, 8, 31), "SKIP", 40.04),
                                                               (NIGHT, "STRONG", 88.08)]
    text = history_markdown(history, THRESHOLDS).text
    image = re.search(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\)", text)
    assert image and base64.b64decode(image.group(1)).decode().startswith("<svg")
    assert "| 2011-10-31 | STRONG | 88.1 |\n| 2011-08-31 | SKIP | 40.0 |" in text  # latest first, by its unit


@pytest.mark.slow
def test_two_nights_give_each_partition_its_history_and_the_brief_its_changes(tmp_path: Any) -> None:
    pack = write_pack(tmp_path, ROOT / "data" / "txhousing.csv", **SIX_MOST_LIQUID)
    defs = build_definitions(criteria_path=str(pack), store_path=str(tmp_path / "results.duckdb"))
    instance = dg.DagsterInstance.ephemeral()
    for night in (LAST, NIGHT):
        nights.run_night(defs, instance, night)

    def latest(asset: str, partition: str) -> dict[str, Any]:
        record = instance.fetch_materializations(dg.AssetRecordsFilter(
            asset_key=dg.AssetKey(asset), asset_partitions=[partition]), limit=1).records[0]
        assert record.asset_materialization is not None
        return {k: v.value for k, v in record.asset_materialization.metadata.items()}

    austin = str(latest("analyses", f"{NIGHT}|austin")["history"])
    assert "data:image/svg+xml;base64," in austin
    assert "| 2011-10-31 | STRONG | 88.1 |\n| 2011-09-30 | STRONG | 76.3 |" in austin
    brief = latest("brief", NIGHT.isoformat())
    assert brief["last_night"] == "against 2011-09-30: 1 new, 1 still strong, 0 dropped"
    changes = {r.data["id"]: r.data for r in brief["since_last_night"].records}
    assert changes["austin"]["change"] == STILL_STRONG and changes["austin"]["last_night"] == 76.3
    assert changes["collin-county"]["change"] == NEW and set(changes) == {"austin", "collin-county"}
    first = latest("brief", LAST.isoformat())
    assert first["last_night"].startswith("no earlier night with a brief within 45 days")
    # every brief links the nights that have one, latest first, each with how many to act on
    links = str(brief["nights_with_a_brief"])
    assert links.index("[2011-10-31](/assets/brief?view=partitions&partition=2011-10-31)") < links.index("[2011-09-30]")
    assert "2011-10-31): 2 to act on" in links and "2011-09-30): 1 to act on" in links
    assert str(first["nights_with_a_brief"]).count("to act on") == 1
    loaded, store = nights.resources_of(defs)
    report = read_report(store, loaded, NIGHT)
    assert report.last_night == LAST and [c.change for c in report.changes] == [STILL_STRONG, NEW]


@pytest.mark.slow
def test_a_quarterly_packs_quarter_end_nights_each_compare_with_the_one_before(tmp_path: Any) -> None:
    """Trial 42: the bundled Australian accommodation pack, run at its quarter-ends, found no night before within 45
    days: every brief said every candidate was new and the report "No earlier night with a brief in the store",
    and the Australian Capital Territory leaving the act-on list on 2010-12-31 was never said to have dropped."""
    defs = build_definitions(criteria_path=str(ROOT / "data" / "criteria" / "aus_accommodation.yaml"),
                             store_path=str(tmp_path / "results.duckdb"))
    instance = dg.DagsterInstance.ephemeral()
    first, second = date(2010, 9, 30), date(2010, 12, 31)
    for night in (first, second):
        nights.run_night(defs, instance, night)
    loaded, store = nights.resources_of(defs)
    report = read_report(store, loaded, second)
    assert report.last_night == first
    assert [(c.candidate_id, c.change) for c in report.changes] == [("australian-capital-territory", DROPPED)]
    [record] = instance.fetch_materializations(dg.AssetRecordsFilter(
        asset_key=dg.AssetKey("brief"), asset_partitions=[second.isoformat()]), limit=1).records
    assert record.asset_materialization is not None
    said = record.asset_materialization.metadata["last_night"].value
    assert said == "against 2010-09-30: 0 new, 0 still strong, 1 dropped"
    assert read_report(store, loaded, first).last_night is None
    assert "within 106 days" in render_html(read_report(store, loaded, first))
