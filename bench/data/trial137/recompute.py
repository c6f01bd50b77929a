"""Trial 137: the scan's metrics and score recomputed in pandas for a few respondents on two nights (is the harness
reading what the pack means?). Needs pandas (PYTHONPATH=.:/tmp/t135v/lib/python3.11/site-packages)."""
from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import scanned  # noqa: E402
from opportunity_assets.analyses.logic import analyze  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK = load_criteria(str(HERE / "laborsupply.yaml"))
D = pd.read_csv(HERE / "laborsupply.csv")


def mine(person: str, latest: int) -> dict[str, float]:
    v = D[D.person == person].set_index("year")
    w, h = v.lnwg, v.lnhr
    m = {"wage_growth_2y": w[latest] - w[latest - 2], "hours_now": h[latest],
         "earn_growth_1y": w[latest] + h[latest] - w[latest - 1] - h[latest - 1]}

    def part(x, lo, hi):
        return min(max((x - lo) / (hi - lo), 0.0), 1.0)
    m["score"] = 100 * (0.5 * part(m["wage_growth_2y"], 0.05, 0.25) + 0.3 * part(m["earn_growth_1y"], 0, 0.15)
                        + 0.2 * part(m["hours_now"], 7.5, 7.75))
    return m


if __name__ == "__main__":
    bad = n = 0
    for as_of, latest, people in ((date(1983, 6, 30), 1982, ["P104", "P400", "P001", "P250"]),
                                  (date(1987, 6, 30), 1986, ["P376", "P074", "P036", "P002"])):
        cands = {c.id: c for c in scanned(PACK, as_of)}
        for p in people:
            c = cands[p.lower()]
            want = mine(p, latest)
            got = {k: c.metrics.get(k) for k in want if k != "score"}
            if c.went_on:
                got["score"] = analyze(PACK, c).score
            for k, g in got.items():
                n += 1
                ok = g is not None and np.isclose(g, want[k], atol=1e-6)
                bad += not ok
                print(f"{as_of} {p} {k}: scan {g} pandas {want[k]:.6f} {'ok' if ok else 'DIFFERENT'}")
    print(f"{n} values, {bad} different")
