"""Where a command looks when told nothing: the bundled criteria pack, the result store, and the environment
variable that names another pack. Nothing here imports Dagster, so that `opportunity --help` and a mistyped
argument answer at once (trial 114: 5-7 s before an argument's error, the whole asset graph imported first)."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_PACK = Path(__file__).resolve().parent.parent / "data" / "criteria" / "texas_housing.yaml"
"""The bundled Texas pack, which `make run` scans."""
DEFAULT_STORE = "var/results.duckdb"
"""The result store of a command given no `--store` (nor `$OPPORTUNITY_STORE_URL`)."""
CRITERIA_ENV = "OPPORTUNITY_CRITERIA"
"""Environment variable naming the criteria pack when none is given: how `dagster dev` (`definitions.py`, which
passes no path) shows another domain than Texas, as `--criteria` does for `opportunity` (trial 42: the README's UI
had no way to another pack short of writing Python)."""


def criteria_path_from_environment() -> str:
    """$OPPORTUNITY_CRITERIA when set (not blank), else the bundled Texas pack."""
    return os.environ.get(CRITERIA_ENV, "").strip() or str(DEFAULT_PACK)
