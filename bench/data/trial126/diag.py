"""Trial 126: every finding (notes included) of one plant-night: diag.py KIND MAG ENT YEAR MONTH AFTER."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import plants

from bench.planted import judged, with_source

kind, mag, ent = sys.argv[1], sys.argv[2], sys.argv[3]
b, after = int(sys.argv[4]) * 12 + int(sys.argv[5]) - 1, int(sys.argv[6])
subtle, gross = plants.KINDS[kind]
label, fn = (subtle if mag == "subtle" else gross)[0]
out = plants.planted(fn, ent, b, b + after)
mine = (out.kind == ent).to_numpy()
print(out[mine & (b - 14 <= plants.T) & (b + after >= plants.T)]["departures"].tolist())
with tempfile.TemporaryDirectory() as tmp:
    p = Path(tmp) / "d.csv"
    out.to_csv(p, index=False)
    a, v = judged(with_source(plants.PACK, p), plants.night(b + after), ent)
    print(kind, mag, label, ent, b, "+", after, "score", a.score if a else None)
    for f in v.data_findings if v else []:
        print("  ", f.rule, f.effect, ":", f.message)
