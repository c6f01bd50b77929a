"""Report: a pack's backtest over its design period and its held-out period (the pack's `outcome.design_until`
splits them). Prints the tables and where the plot is; the `backtest` asset shows both in the Dagster UI.

    .venv/bin/python bench/backtest.py [--criteria PACK] [--start D] [--end D] [--every month-end]
        [--store var/results.duckdb] [--dagster-home var/dagster_home] [--design-only]

Defaults are the Texas pack's: 2003-01..2014-07 month-ends (2003-2009 design, 2010 on held out; an outcome needs 12
months of later data, and the data ends 2015-07). For the other bundled domains, `PACKS` below holds their spans.
`--design-only`: the design period's nights only, for choosing between variants without looking at the held-out
period.

Nights already in the store for the same criteria are reused; the others run through Dagster (~3 s each, so a
first run takes minutes). Not part of the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from datetime import date
from pathlib import Path

from opportunity_assets import night as nights
from opportunity_assets.definitions import DEFAULT_STORE, build_definitions
from opportunity_assets.outcomes.logic import report_markdown
from opportunity_assets.outcomes.replay import backtest_png_path, run_backtest
from opportunity_assets.periods import EVERY
from resources.criteria import DEFAULT_PACK

warnings.filterwarnings("ignore")
CRITERIA = Path(DEFAULT_PACK).parent
PACKS: dict[str, tuple[date, date, str]] = {
    "texas_housing.yaml": (date(2003, 1, 1), date(2014, 7, 31), "month-end"),
    "aus_accommodation.yaml": (date(2000, 1, 1), date(2015, 6, 30), "quarter-end"),
    "nyc_routes.yaml": (date(2013, 3, 1), date(2013, 11, 30), "week-end"),
}
"""Each bundled pack's backtest span (nights with a known outcome) and cadence."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--criteria", default=str(DEFAULT_PACK))
    parser.add_argument("--start", type=date.fromisoformat)
    parser.add_argument("--end", type=date.fromisoformat)
    parser.add_argument("--every", choices=EVERY)
    parser.add_argument("--store", default=DEFAULT_STORE)
    parser.add_argument("--dagster-home", default=None)
    parser.add_argument("--design-only", action="store_true")
    args = parser.parse_args()
    start, end, every = PACKS.get(Path(args.criteria).name, (None, None, "month-end"))
    start, end, every = args.start or start, args.end or end, args.every or every
    if start is None or end is None:
        parser.error("--start and --end are needed for a pack not in PACKS")
    defs = build_definitions(criteria_path=args.criteria, store_path=args.store)
    pack, store = nights.resources_of(defs)
    assert pack.outcome is not None and pack.outcome.design_until is not None, "the pack has no design period"
    until = pack.outcome.design_until
    dates = [d for d in nights.nights_between(start, end, every) if not args.design_only or d <= until]
    started = time.perf_counter()
    report = run_backtest(defs, nights.local_instance(args.dagster_home), dates, every=every,
                          say=lambda line: print(line, file=sys.stderr, flush=True))
    print(report_markdown(report))
    print(f"Plot: {backtest_png_path(store.path, pack.domain, dates)}")
    print(f"{len(dates)} nights ({start}..{until} design, after that held out; {every}) "
          f"in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
