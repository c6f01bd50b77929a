"""Trial 137: clean nights (each June's end, 180 days' lag: latest year 1981..1988) on the credit-line pack; act-on
picks and the false doubt with findings, design nights (latest 1981..1984) and held-out (1985..1988) apart. Writes
/tmp/t137/clean_picks.json."""
from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import clean_picks  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK = load_criteria(str(HERE / "laborsupply.yaml"))
DESIGN = [date(y + 1, 6, 30) for y in range(1981, 1985)]
HELD_OUT = [date(y + 1, 6, 30) for y in range(1985, 1989)]

if __name__ == "__main__":
    out = {}
    for name, nights in (("design", DESIGN), ("held-out", HELD_OUT)):
        picks, doubted = clean_picks(PACK, nights, sections=False)
        print(f"{name}: {len(nights)} nights; false doubt {doubted.pop('', 0)} of {len(picks)};"
              f" by rule {dict(doubted)}")
        out[name] = [(c, n.isoformat()) for c, n in picks]
    Path("/tmp/t137").mkdir(exist_ok=True)
    Path("/tmp/t137/clean_picks.json").write_text(json.dumps(out))
