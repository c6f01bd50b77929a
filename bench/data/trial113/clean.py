"""Trial 113: clean quarter-end nights on the prison pack; act-on picks and the false doubt, with findings."""
from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import judged, night_fates  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402
from opportunity_assets.night import nights_between  # noqa: E402

PACK = load_criteria(str(HERE / "prison_remand.yaml"))
NIGHTS = nights_between(date(2014, 3, 31), date(2016, 12, 31), "quarter-end")


if __name__ == "__main__":
    picks = doubted = 0
    for as_of in NIGHTS:
        fates = night_fates(PACK, as_of)
        strong = sorted(c for c, f in fates.items() if f.quiet_section == "act_on_these")
        print(as_of, "act-on (quiet):", strong, " sections:", {c: f.section for c, f in fates.items()
                                                               if f.section != "archive" and f.section[:3] != "not"})
        for cid in strong:
            picks += 1
            f = fates[cid]
            if f.section != "act_on_these":
                doubted += 1
                a, v = judged(PACK, as_of, cid)
                print(f"   DOUBTED {cid} -> {f.section} by {f.rules}")
                for x in v.data_findings:
                    if x.effect != "note":
                        print("      ", x.rule, x.effect, ":", getattr(x, "message", x))
    print(f"false doubt {doubted} of {picks}")
