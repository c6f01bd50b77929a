"""Trial 121: clean nights (each July's end, 1992..2005: the latest year 1991..2004) on the road-safety pack; act-on
picks and the false doubt with findings; with PACK_FILE=road_safety_identity.yaml also the entity-nights the identity
is judged tight on (exact.tight: the past's robust spread under 0.5%). Writes /tmp/t121/clean_picks<suffix>.json."""
from __future__ import annotations

import json
import os
import sys
from datetime import date
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.planted import clean_picks  # noqa: E402
from opportunity_assets.criteria import load_criteria  # noqa: E402

PACK_FILE = os.environ.get("PACK_FILE", "road_safety.yaml")
PACK = load_criteria(str(HERE / PACK_FILE))
NIGHTS = [date(y, 7, 31) for y in range(1992, 2006)]


TIGHT: dict = {}
"""(night, entity) -> the identity's TightFit (or None) and its judged periods' distances, as the verifier saw them."""


def _instrument() -> None:
    """Record every exact.tight the verifier makes (the candidate's id is not passed: the level series is keyed by the
    night and its first finite values, matched to entities after)."""
    from opportunity_assets.verifications import exact
    real = exact.tight

    def spy(level, past_until, min_history, floor):
        fit = real(level, past_until, min_history, floor)
        TIGHT.setdefault(CURRENT[0], []).append((fit, [float(x) for x in level[past_until:]]))
        return fit
    exact.tight = spy


CURRENT = [None]
_instrument()


if __name__ == "__main__":
    picks, doubted = clean_picks(PACK, NIGHTS, sections=False, on_night=lambda night: CURRENT.__setitem__(0, night))
    print(f"false doubt {doubted.pop('')} of {len(picks)}; by rule {dict(doubted)}")
    calls = sum(len(v) for v in TIGHT.values())
    fits = [f for v in TIGHT.values() for f, _ in v if f is not None]
    print(f"exact.tight called {calls} times (entity-nights judged by the identity without an exact fit), "
          f"tight {len(fits)}; bound (x3, as %) quantiles 10/50/90/max:",
          [round(300 * float(np.quantile([f.bound for f in fits], q)), 3) for q in (0.1, 0.5, 0.9, 1.0)]
          if fits else [])
    Path("/tmp/t121").mkdir(exist_ok=True)
    Path(f"/tmp/t121/clean_picks_{PACK_FILE}.json").write_text(json.dumps([(c, n.isoformat()) for c, n in picks]))
