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

from bench.planted import judged, night_fates  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402
from opportunity_assets.night import nights_between  # noqa: E402

PACK = load_criteria(str(HERE / os.environ.get("PACK_FILE", "size_momentum.yaml")))
NIGHTS = nights_between(date(1991, 1, 31), date(1992, 2, 29), "month-end")


if __name__ == "__main__":
    picks = doubted = 0
    listed = []
    for as_of in NIGHTS:
        fates = night_fates(PACK, as_of)
        strong = sorted(c for c, f in fates.items() if f.quiet_section == "act_on_these")
        print(as_of, "act-on (quiet):", strong, " sections:", {c: f.section for c, f in fates.items()
                                                               if f.section != "archive" and f.section[:3] != "not"})
        for cid in strong:
            picks += 1
            listed.append((cid, as_of.year * 12 + as_of.month - 2))  # the latest month (lag 5 days)
            f = fates[cid]
            if f.section != "act_on_these":
                doubted += 1
                a, v = judged(PACK, as_of, cid)
                print(f"   DOUBTED {cid} -> {f.section} by {f.rules}")
                for x in v.data_findings:
                    if x.effect != "note":
                        print("      ", x.rule, x.effect, ":", getattr(x, "message", x))
    print(f"false doubt {doubted} of {picks}")
    Path("/tmp/t116").mkdir(exist_ok=True)
    Path("/tmp/t116/clean_picks.json").write_text(json.dumps(listed))
