"""Shared fixtures: the bundled pack, and small synthetic sources written as real CSV files."""

from __future__ import annotations

import ast
import csv
import warnings
from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.verifications import integrity_spec

ROOT = Path(__file__).resolve().parent.parent
PACK = ROOT / "data" / "criteria" / "texas_housing.yaml"
COLUMNS = ["city", "year", "month", "sales", "volume", "median", "listings", "inventory", "date"]

warnings.filterwarnings("ignore", message="Found asset job named")


def imported_modules(file: Path, module: str) -> set[str]:
    """Every module that `file` (the module named `module`) imports, relative imports resolved; `from m import n`
    counts as importing both `m` and `m.n` (`n` may be a submodule)."""
    found = set()
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            package = module if file.name == "__init__.py" else module.rpartition(".")[0]
            for _ in range(max(node.level - 1, 0)):
                package = package.rpartition(".")[0]
            imported = f"{package}.{node.module}" if node.level and node.module else (node.module or package)
            found.add(imported)
            found |= {f"{imported}.{alias.name}" for alias in node.names}
    return found


def month_rows(city: str, *, start: tuple[int, int] = (2012, 1), months: int = 36, sales: float = 150.0,
               inventory: float = 6.0, median: float = 150_000.0,
               overrides: dict[tuple[int, int], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """A flat, healthy monthly series for one city; `overrides[(year, month)]` replaces cells of that month."""
    rows = []
    year, month = start
    for _ in range(months):
        row: dict[str, Any] = {"city": city, "year": year, "month": month, "sales": sales,
                               "volume": sales * median, "median": median, "listings": sales * inventory,
                               "inventory": inventory, "date": year + (month - 1) / 12}
        row.update((overrides or {}).get((year, month), {}))
        rows.append(row)
        month += 1
        if month == 13:
            year, month = year + 1, 1
    return rows


def write_csv(path: Path, rows: Iterable[dict[str, Any]], columns: list[str] = COLUMNS) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("NA" if v is None else v) for k, v in row.items()})
    return path


QUIET_INTEGRITY = {rule: {"effect": "note"} for rule in integrity_spec.RULES}
"""The data checks reporting only. The synthetic series are flat, without noise, so any change a test designs into
one (a market improving in January) is a level shift against its own history; tests of the data checks
(`test_integrity.py`) keep the bundled pack's effects."""


SIX_MOST_LIQUID: dict[str, Any] = {"caps.max_candidates": 6, "caps.min_candidates": 1, "caps.order_by": "sales_12m"}
"""Pack changes for a small real night: the six most liquid Texas markets (what the notification, sensor, UI and
PostgreSQL tests are written against: Austin and Collin County to act on in October 2011, Dallas joining in
November)."""


def write_pack(directory: Path, source: Path, *, quiet_integrity: bool = True, **changes: Any) -> Path:
    """The bundled pack pointed at `source`; `changes` are dotted keys, e.g. {"caps.max_candidates": 5}.
    `quiet_integrity`: the data checks' effects and the red flags' turned to `note` (see QUIET_INTEGRITY)."""
    raw = yaml.safe_load(PACK.read_text())
    raw["source"]["path"] = str(source)
    if quiet_integrity:
        raw["integrity"] = {**QUIET_INTEGRITY, "identities": [{**i, "effect": "note"}
                                                               for i in raw["integrity"]["identities"]]}
        raw["red_flags"] = [{**r, "effect": "note"} for r in raw["red_flags"]]
    for dotted, value in changes.items():
        node = raw
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(leaf)] = value
        else:
            node[leaf] = value
    path = directory / "pack.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def texas_pack() -> CriteriaPack:
    return load_criteria(PACK)


@pytest.fixture
def synthetic(tmp_path: Path) -> Callable[..., CriteriaPack]:
    """Build a pack over a synthetic source: synthetic(rows, **pack_changes) -> CriteriaPack."""

    def build(rows: Iterable[dict[str, Any]], **changes: Any) -> CriteriaPack:
        source = write_csv(tmp_path / "source.csv", rows)
        return load_criteria(write_pack(tmp_path, source, **changes))

    return build


def scanned(pack_path: Path, as_of: date
            ) -> tuple[dict[str, object], list[tuple[object, ...]], list[dict[str, object]]]:
    """What a night's scan of the pack makes of its source: each candidate's fate and metrics, the quarantined rows
    and the metrics table (two reads of one source compare equal when these do)."""
    from opportunity_assets.candidates.logic import scan
    from opportunity_assets.sources.snapshot import read_snapshot

    pack = load_criteria(pack_path)
    snapshot = read_snapshot(pack, as_of, today=date(2026, 12, 1))
    found, _ = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)
    return ({c.id: (c.went_on, c.capped, c.filters, c.metrics) for c in found},
            snapshot.quarantined.rows(), snapshot.metrics.to_dicts())


_LONGEST_FIRST = ("test_distributed.py", "test_ui.py")
"""Modules of minutes-long tests (Celery workers on other hosts; the daemon, the webserver and a browser), run
first: last in the alphabet, the UI's ran alone on one worker after the other had finished everything else."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`_LONGEST_FIRST`'s modules first, each module's tests in their order, the rest as collected (the same order
    on every xdist worker, which each collect)."""
    items.sort(key=lambda item: item.path.name not in _LONGEST_FIRST)
