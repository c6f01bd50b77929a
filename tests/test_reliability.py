"""The README's "Reliability" table quotes the tests' own settings; this keeps the two in step."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests import test_cli, test_fuzz, test_instance_storage, test_isolation, test_model
from tests.conftest import ROOT


def _table() -> dict[str, str]:
    """What is tried (first cell, up to its first parenthesis or comma) → how often (second cell)."""
    section = (ROOT / "README.md").read_text().split("## Reliability\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return {cells[0].removeprefix("| "): cells[1] for cells in rows[1:]}


def _tests_named(module: Path, pattern: str) -> list[str]:
    tree = ast.parse(module.read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and re.search(pattern, n.name)]


def _how_often(starts: str) -> str:
    table = _table()
    matches = [often for what, often in table.items() if what.startswith(starts)]
    assert len(matches) == 1, (starts, list(table))
    return matches[0]


def test_the_reliability_table_quotes_the_tests() -> None:
    assert _how_often("Criteria packs with 1-4 keys") == f"{test_fuzz.PACK_CASES} cases"
    assert _how_often("Any text or bytes as a pack") == f"{test_fuzz.PACK_TEXT_CASES} cases"
    assert _how_often("Sources of three markets") == f"{test_fuzz.SOURCE_CASES} cases"
    assert _how_often("Whole deterministic nights") == f"{test_fuzz.BRIEF_CASES} cases"
    assert _how_often("One market's rows corrupted") == f"{test_isolation.ISOLATION_CASES} cases"
    assert _how_often("Model API faults on one call") == f"{len(test_model.FAULT_SCRIPTS)} scripts"
    tests = ROOT / "tests"
    mid_night = _tests_named(tests / "test_model.py", r"faults_mid_night|all_failed|budget_ceiling")
    assert _how_often("Model faults mid-night") == f"{len(mid_night)} nights"
    channels = _tests_named(tests / "test_notify.py", r"failures_are_retried|failing_channel_is_recorded")
    assert _how_often("Notification channels failing") == f"{len(channels)} tests"
    kills = _tests_named(tests / "test_automation.py", r"killed")
    assert _how_often("kill -9 of a night") == f"{len(kills)} kills"
    assert _how_often("Parallel first use") == (f"{test_instance_storage.HOME_RACES} homes x "
                                                f"{test_instance_storage.RACING_PROCESSES} processes")
    overtaking = _tests_named(tests / "test_notify.py", r"overtakes|still_running_after_the_wait")
    assert _how_often("A night that overtakes") == f"{len(overtaking)} tests"
    assert _how_often("A command stopped by its user") == f"{len(test_cli.STOPS)} stops"
