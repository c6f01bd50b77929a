"""Trial 137: every finding (notes included) of one plant-night: diag.py KIND MAG ENT BREAK AFTER."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import plants

from bench.planted import judged, with_source

kind, mag, ent = sys.argv[1], sys.argv[2], sys.argv[3]
b, after = int(sys.argv[4]), int(sys.argv[5])
label, fn = plants.KINDS[kind][0 if mag == "subtle" else 1]
out, cid = fn(plants.CLEAN.copy(), ent, b)
print(out[out.person == cid].sort_values("year")[["year", *plants.COLS]].to_string(index=False))
with tempfile.TemporaryDirectory() as tmp:
    p = Path(tmp) / "d.csv"
    out.to_csv(p, index=False)
    a, v = judged(with_source(plants.PACK, p), plants.night(b + after), cid.lower())
    print(kind, mag, label, cid, b, "+", after, "score", a.score if a else None)
    for f in v.data_findings if v else []:
        print("  ", f.rule, f.effect, ":", f.message)
