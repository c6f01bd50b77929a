"""Trial 137: each miss of plants.py (/tmp/t137/misses.json) scored on clean and on planted data, with the planted
night's findings (notes included); writes /tmp/t137/miss_scores.json, which rules.py reads for materiality."""
from __future__ import annotations

import json
import sys
import tempfile
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
sys.path.insert(0, str(HERE))

import plants  # noqa: E402

from bench.planted import judged, with_source  # noqa: E402


def main() -> None:
    misses = json.loads(Path("/tmp/t137/misses.json").read_text())
    cache: dict[tuple[str, str], float | None] = {}
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "d.csv"
        for kind, mag, _label, ent, b, as_of, a, _clean in misses:
            n = date.fromisoformat(as_of)
            if (ent, as_of) not in cache:
                analysis, _ = judged(plants.PACK, n, ent.lower())
                cache[ent, as_of] = analysis.score if analysis else None
            fn = plants.KINDS[kind][0 if mag == "subtle" else 1][1]
            d, cid = fn(plants.CLEAN.copy(), ent, b)
            d.to_csv(p, index=False)
            planted, v = judged(with_source(plants.PACK, p), n, cid.lower())
            rules = sorted({f.rule for f in v.data_findings}) if v else []
            out.append((kind, mag, ent, b, a, cache[ent, as_of], planted.score if planted else None, rules))
            print(kind, mag, ent, b, f"+{a}", "clean", cache[ent, as_of], "planted", out[-1][6], rules, flush=True)
    Path("/tmp/t137/miss_scores.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main()
