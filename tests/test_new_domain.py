"""A new domain is a YAML pack and a data file, no Python: a whole night on a made-up franchise source."""

from __future__ import annotations

import csv
import json
import math
import random
from datetime import date
from pathlib import Path

import pytest

from opportunity_assets.cli import main

pytestmark = pytest.mark.slow

PACK = """
domain: franchise_sites
description: Towns where opening a coffee franchise looks attractive now.
source:
  table: town_monthly
  path: towns.csv
  entity_id: town_code
  entity_name: town
  year_column: yr
  month_column: mo
  publication_lag_days: 10
  columns: [visits, competitors]
metrics:
  visits_6m:      {agg: sum, column: visits, window: [0, 5], unit: count}
  visits_6m_prev: {agg: sum, column: visits, window: [12, 17], unit: count}
  competitors_now: {agg: last, column: competitors, window: [0, 2], min_rows: 1, unit: count}
  filled:         {agg: coverage, columns: [visits], window: [0, 17], unit: share}
hard_filters:
  - {name: enough_traffic, metric: visits_6m, op: ">=", value: 6000}
  - {name: covered, metric: filled, op: ">=", value: 0.8}
required_inputs: [visits_6m, visits_6m_prev, competitors_now]
formula:
  components:
    - {name: growth, expression: "visits_6m / visits_6m_prev - 1", direction: higher_is_better,
       range: [0.0, 0.5], weight: 0.6, label: "visit growth", unit: percent}
    - {name: crowding, expression: "competitors_now", direction: lower_is_better,
       range: [0, 10], weight: 0.4, label: "competitors", unit: number}
thresholds: {strong: 75, marginal: 50}
uncertainty: {visits_6m: 0.02}
omissions:
  - {name: competition, description: "how many competitors there are", requires: [competitors_now]}
next_action: "Walk the high street of {name}."
models:
  analyzer: {model: claude-haiku-5-5, max_input_tokens: 1000, max_output_tokens: 300}
  verifier: {model: claude-sonnet-5-5, max_input_tokens: 1000, max_output_tokens: 300}
  brief: {model: claude-haiku-5-5, max_input_tokens: 2000, max_output_tokens: 400}
caps: {min_candidates: 1}
"""


def _write_source(path: Path) -> None:
    """Two years a town: visits growing steadily (Brookfield doubles), with a few percent of month-to-month noise
    as real counts have, each town its own (one noise for all made Brookfield Thinford's figures times 10, change
    for change: a rescaled copy the skeptic doubts), so the data checks' defaults see believable data."""
    towns = {"BRK": ("Brookfield", 1000, 2.0, 1), "DUL": ("Dullsville", 1100, 1.0, 8),
             "THN": ("Thinford", 100, 2.0, 0)}
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["town_code", "town", "yr", "mo", "visits", "competitors"])
        for phase, (code, (name, start, growth, competitors)) in enumerate(towns.items()):
            for i in range(24):
                year, month = 2023 + i // 12, i % 12 + 1
                visits = round(start * growth ** (i / 23) * (1 + 0.04 * math.sin(2.3 * i + phase)))
                writer.writerow([code, name, year, month, visits, competitors])


def test_a_new_domain_runs_a_whole_night_from_yaml_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pack.yaml").write_text(PACK)
    _write_source(tmp_path / "towns.csv")
    args = ["--criteria", str(tmp_path / "pack.yaml"), "--store", str(tmp_path / "r.duckdb"),
            "--dagster-home", str(tmp_path / "home")]
    assert main(["run", "--as-of", "2025-01-10", "--json", *args]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["criteria"]["domain"] == "franchise_sites"
    filters = {c["id"]: c["filters"] for c in state["candidates"]}
    assert filters["thn"]["enough_traffic"] == "FAIL"
    verdicts = {a["candidate_id"]: a["verdict"] for a in state["analyses"]}
    assert verdicts == {"brk": "STRONG", "dul": "SKIP"}
    sections = {r["candidate_id"]: r["section_or_tag"] for r in state["routes"]}
    assert sections == {"brk": "act_on_these", "dul": "below_threshold"}
    assert "Walk the high street of Brookfield." in state["brief"]["markdown"]
    numbers = state["analyses"][0]["numbers"]
    assert numbers["visits_6m"]["source"] == {"table": "town_monthly", "entity": "brk",
                                              "period": "2024-07..2024-12", "published_at": "2025-01-10"}


def test_entities_named_by_numbers_and_a_bad_line_do_not_stop_the_night(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Seattle's pet licences by ZIP code (trial 5): the run summary names candidates the cap cut with no
    preliminary score (`98026 (licence_growth missing)`) and entities with quarantined rows (`98108 (1: 10 fields,
    expected 8)`), and `numbers_in_store` read the ZIP codes and the field counts as numbers the store does not
    hold: every night stopped ("numbers not in store: 98026, ..."). Names the brief writes are names, and a
    quarantined line's reason is written without numbers, so the night is stored and the brief prints."""
    pack = PACK.replace("caps: {min_candidates: 1}", "caps: {min_candidates: 1, max_candidates: 1}")
    (tmp_path / "pack.yaml").write_text(pack)
    _write_source(tmp_path / "towns.csv")
    with (tmp_path / "towns.csv").open() as handle:
        text = handle.read()
    # ZIP codes for ids and names; a fourth town with no visits a year earlier (no preliminary score: cut, named)
    for code, zip_code in (("BRK", "98108"), ("DUL", "98117"), ("THN", "98126")):
        text = text.replace(f"{code},", f"{zip_code},").replace(
            {"BRK": "Brookfield", "DUL": "Dullsville", "THN": "Thinford"}[code] + ",", f"{zip_code},")
    late = "".join(f"98026,98026,{2023 + i // 12},{i % 12 + 1},{0 if i < 12 else 2000},3\n" for i in range(24))
    text += late + "98108,98108,2024,12,1500,1,surplus,fields\n"
    (tmp_path / "towns.csv").write_text(text)
    args = ["--criteria", str(tmp_path / "pack.yaml"), "--store", str(tmp_path / "r.duckdb"),
            "--dagster-home", str(tmp_path / "home")]
    assert main(["run", "--as-of", "2025-01-10", *args]) == 0, capsys.readouterr().err
    brief = capsys.readouterr().out
    assert "placed last: 98026 (" in brief
    assert "for 98108 (1: wrong field count)" in brief


def _readme_first_pack() -> str:
    """The YAML block under the README's `<!-- first-pack -->` marker."""
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    return text.split("<!-- first-pack -->\n```yaml\n", 1)[1].split("```", 1)[0]


def _write_licences(path: Path) -> None:
    """Three years of licences, one row each, in twelve ZIP codes: some busier each year, some not, two in three
    for a dog."""
    rng = random.Random(3)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["issued", "zip", "species"])
        for ordinal in range(date(2016, 1, 1).toordinal(), date(2018, 12, 31).toordinal() + 1):
            day = date.fromordinal(ordinal)
            for k in range(12):
                busy = 2 + k % 5 + (k % 3) * (day.year - 2016)
                for _ in range(rng.randint(0, busy)):
                    writer.writerow([day.isoformat(), f"981{k:02d}", rng.choice(["Dog", "Dog", "Cat"])])


def test_the_readmes_first_pack_checks_and_runs_a_night_as_written(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The README's first pack, as printed there, over a file of the shape it describes: `check` is clean and a
    night prints a brief. It leaves out `table` (the file's name, `licences`) and the components' labels (their
    names): a first pack needs neither."""
    (tmp_path / "pack.yaml").write_text(_readme_first_pack())
    _write_licences(tmp_path / "licences.csv")
    args = ["--criteria", str(tmp_path / "pack.yaml"), "--store", str(tmp_path / "r.duckdb"),
            "--dagster-home", str(tmp_path / "home")]
    assert main(["check", *args]) == 0
    assert ": ok" in capsys.readouterr().out
    assert main(["run", "--as-of", "2018-12-31", "--json", *args]) == 0
    state = json.loads(capsys.readouterr().out)
    act_on = [r["candidate_id"] for r in state["routes"] if r["section_or_tag"] == "act_on_these"]
    assert act_on and "## Act on these" in state["brief"]["markdown"]
    assert "growing +" in state["brief"]["markdown"]  # the component's name as its label
    numbers = next(a for a in state["analyses"] if a["candidate_id"] == act_on[0])["numbers"]
    assert numbers["licences_3m"]["source"]["table"] == "licences"
