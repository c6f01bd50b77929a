"""Trial 132: clean nights (each June's end, 1982..1988: latest year 1981..1987) on the municipal-spending pack;
act-on picks and the false doubt with findings. Writes /tmp/t132/clean_picks.json."""
from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import clean_picks  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK = load_criteria(str(HERE / "munexp.yaml"))
NIGHTS = [date(y, 6, 30) for y in range(1982, 1989)]

if __name__ == "__main__":
    picks, doubted = clean_picks(PACK, NIGHTS, sections=False)
    print(f"{len(NIGHTS)} nights; false doubt {doubted.pop('', 0)} of {len(picks)}; by rule {dict(doubted)}")
    Path("/tmp/t132").mkdir(exist_ok=True)
    Path("/tmp/t132/clean_picks.json").write_text(json.dumps([(c, n.isoformat()) for c, n in picks]))
