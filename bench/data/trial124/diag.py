"""Trial 124: every finding (notes included) of one plant-night: diag.py KIND MAG ENT BREAK AFTER."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import plants

from bench.planted import judged, with_source

kind, mag, ent, brk, after = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
subtle, gross = plants.KINDS[kind]
label, fn = (subtle if mag == "subtle" else gross)[0]
out = fn(plants.CLEAN.copy(), plants.CLEAN.iso == ent, plants.CLEAN.year, brk)
print(out[(out.iso == ent) & out.year.between(brk - 12, brk + 3)]["pop"].tolist())
with tempfile.TemporaryDirectory() as tmp:
    p = Path(tmp) / "w.csv"
    out.to_csv(p, index=False)
    a, v = judged(with_source(plants.PACK, p), plants.night(brk + after), ent.replace("_", "-"))
    print(kind, mag, label, ent, brk, "+", after, "score", a.score if a else None)
    for f in v.data_findings if v else []:
        print("  ", f.rule, f.effect, ":", f.message)
