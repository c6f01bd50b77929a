"""Trial 126: clean nights (every month-end, 2005-02..2017-08: latest month 2004-12..2017-06) on the
departures pack; act-on picks and the false doubt with findings. Writes /tmp/t126/clean_picks.json."""
from __future__ import annotations

import json
import sys
from calendar import monthrange
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import clean_picks  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK = load_criteria(str(HERE / "departures.yaml"))


def month_end(y: int, m: int) -> date:
    return date(y, m, monthrange(y, m)[1])


NIGHTS = [month_end(2005 + k // 12, k % 12 + 1) for k in range(1, 152)]

if __name__ == "__main__":
    picks, doubted = clean_picks(PACK, NIGHTS, sections=False)
    print(f"{len(NIGHTS)} nights; false doubt {doubted.pop('', 0)} of {len(picks)}; by rule {dict(doubted)}")
    Path("/tmp/t126").mkdir(exist_ok=True)
    Path("/tmp/t126/clean_picks.json").write_text(json.dumps([(c, n.isoformat()) for c, n in picks]))
