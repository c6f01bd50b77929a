"""Trial 116: clean month-end nights on the size-momentum pack; act-on picks and the false doubt, with findings.
Writes the picks to /tmp/t116/clean_picks.json for rules.py."""
from __future__ import annotations

import json
import os
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import clean_picks  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402
from opportunity_assets.night import nights_between  # noqa: E402

PACK = load_criteria(str(HERE / os.environ.get("PACK_FILE", "size_momentum.yaml")))
NIGHTS = nights_between(date(1991, 1, 31), date(1992, 2, 29), "month-end")


if __name__ == "__main__":
    picks, doubted = clean_picks(PACK, NIGHTS)
    print(f"false doubt {doubted['']} of {len(picks)}")
    Path("/tmp/t116").mkdir(exist_ok=True)  # each pick's latest month (lag 5 days)
    Path("/tmp/t116/clean_picks.json").write_text(json.dumps([(c, n.year * 12 + n.month - 2) for c, n in picks]))
