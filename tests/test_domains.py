"""The two bundled domains shaped unlike Texas run whole nights from their packs alone: NYC flight routes (events
aggregated by route and week) and Australian accommodation (a quarterly panel)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from opportunity_assets.cli import main
from tests.conftest import ROOT

pytestmark = pytest.mark.slow

CRITERIA = ROOT / "data" / "criteria"


@pytest.mark.parametrize(("pack", "as_of", "label", "scanned", "grain"), [
    ("nyc_routes", "2013-06-30", r"2013-W\d\d\.\.2013-W\d\d", 213, "week"),
    ("aus_accommodation", "2009-12-31", r"2009-Q[1-4]\.\.2009-Q[1-4]", 8, "quarter"),
])
def test_a_bundled_domain_runs_a_night_in_its_own_grain(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        pack: str, as_of: str, label: str, scanned: int,
                                                        grain: str) -> None:
    args = ["--criteria", str(CRITERIA / f"{pack}.yaml"), "--store", str(tmp_path / "r.duckdb"),
            "--dagster-home", str(tmp_path / "home")]
    assert main(["check", *args]) == 0
    assert f"{pack} (" in capsys.readouterr().out
    assert main(["run", "--as-of", as_of, "--json", *args]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["criteria"]["domain"] == pack and len(state["candidates"]) == scanned
    went_on = {c["id"] for c in state["candidates"] if c["went_on"]}
    assert went_on and went_on == {a["candidate_id"] for a in state["analyses"]} \
        == {v["candidate_id"] for v in state["verifications"]} == {r["candidate_id"] for r in state["routes"]}
    assert not state["errors"]
    # windows are the grain's periods, named as the grain writes them, and nothing was read after as_of
    sources = [n["source"] for a in state["analyses"] for n in a["numbers"].values()]
    assert any(re.fullmatch(label, s["period"]) for s in sources)
    assert all(s["published_at"] <= as_of for s in sources)
    assert state["brief"]["words"] < 400 and f"as of {as_of}" in state["brief"]["markdown"]
    # the periods the skeptic leaves out are the grain's (trial 47: "leave-one-month-out" on quarters and years)
    findings = [v["checks"]["assumptions"]["finding"] for v in state["verifications"]]
    assert any(f"leave-one-{grain}-out" in f for f in findings) and not any("month" in f for f in findings)
