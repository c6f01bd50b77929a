"""Trial 139: the clean design nights (month-ends 2003-01..2009-12): each night's act-on picks without the checks'
effects and their section with them (the false-doubt baseline); writes /tmp/t139/clean.json for `rules.py`."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bench.planted import DESIGN, night_fates
from opportunity_assets.criteria import load_criteria
from opportunity_assets.night import nights_between
from resources.criteria import DEFAULT_PACK


def main() -> None:
    pack = load_criteria(DEFAULT_PACK)
    out = []
    for as_of in nights_between(*DESIGN, "month-end"):
        for cid, fate in sorted(night_fates(pack, as_of).items()):
            if fate.quiet_section == "act_on_these":
                out.append((str(as_of), cid, fate.section, list(fate.rules)))
    doubted = [o for o in out if o[2] != "act_on_these"]
    print(f"clean design picks {len(out)}, doubted by the checks {len(doubted)} ({len(doubted) / len(out):.1%})")
    for o in doubted:
        print("  ", *o)
    Path("/tmp/t139").mkdir(exist_ok=True)
    Path("/tmp/t139/clean.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main()
