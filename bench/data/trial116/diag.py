"""Trial 116: the findings on one plant-night (kind, variant index, magnitude, entity, break, nights after)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

from plants import CLEAN, KINDS, PACK, mi, night  # noqa: E402

from bench.planted import judged, with_source  # noqa: E402

if __name__ == "__main__":
    kind, mag, var, ent, brk = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    after = int(sys.argv[6])
    label, fn = KINDS[kind][0 if mag == "subtle" else 1][var]
    k = CLEAN.month.map(mi)
    out = fn(CLEAN.copy(), CLEAN.decile == ent, k, mi(brk), ent)
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "size.csv"
        out.to_csv(p, index=False)
        as_of = night(mi(brk) + 1 + after)
        a, v = judged(with_source(PACK, p), as_of, ent.lower())
        print(kind, mag, label, ent, brk, as_of, "status", getattr(v, "status", None))
        for x in (v.data_findings if v else []):
            print("  ", x.rule, x.effect, ":", getattr(x, "message", x))
        print(out[(out.decile == ent) & (k >= mi(brk) - 3) & (k <= mi(brk) + after)].to_string())
