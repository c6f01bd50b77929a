"""Trial 113: clean quarter-end nights on the prison pack; act-on picks and the false doubt, with findings."""
from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import clean_picks  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402
from opportunity_assets.night import nights_between  # noqa: E402

PACK = load_criteria(str(HERE / "prison_remand.yaml"))
NIGHTS = nights_between(date(2014, 3, 31), date(2016, 12, 31), "quarter-end")


if __name__ == "__main__":
    picks, doubted = clean_picks(PACK, NIGHTS)
    print(f"false doubt {doubted['']} of {len(picks)}")
