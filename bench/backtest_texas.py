"""Report: the Texas pack's backtest over its design period (2003-01..2009-12 month-ends) and its held-out period
(2010-01..2014-07 month-ends; an outcome needs 12 months of later data, and the data ends 2015-07). Prints the
tables and where the plot is; the `backtest` asset shows both in the Dagster UI.

    .venv/bin/python bench/backtest_texas.py [--store var/results.duckdb] [--dagster-home var/dagster_home]
        [--criteria PACK] [--design-only]

`--criteria`: a variant of the Texas pack (same design period); `--design-only`: the design period's nights only,
for choosing between variants without looking at the held-out period.

Nights already in the store for the same criteria are reused; the others run through Dagster (~3 s each, so a
first run takes several minutes). Not part of the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from datetime import date

from opportunity_assets import night as nights
from opportunity_assets.definitions import DEFAULT_STORE, build_definitions
from opportunity_assets.outcomes.logic import report_markdown
from opportunity_assets.outcomes.replay import backtest_png_path, run_backtest
from resources.criteria import DEFAULT_PACK

warnings.filterwarnings("ignore")
DESIGN = (date(2003, 1, 1), date(2009, 12, 31))
HELD_OUT = (date(2010, 1, 1), date(2014, 7, 31))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", default=DEFAULT_STORE)
    parser.add_argument("--dagster-home", default=None)
    parser.add_argument("--criteria", default=str(DEFAULT_PACK))
    parser.add_argument("--design-only", action="store_true")
    args = parser.parse_args()
    defs = build_definitions(criteria_path=args.criteria, store_path=args.store)
    pack, store = nights.resources_of(defs)
    assert pack.outcome is not None and pack.outcome.design_until == DESIGN[1], "the pack's design period moved"
    dates = nights.nights_between(DESIGN[0], DESIGN[1] if args.design_only else HELD_OUT[1], "month-end")
    started = time.perf_counter()
    report = run_backtest(defs, nights.local_instance(args.dagster_home), dates, every="month-end",
                          say=lambda line: print(line, file=sys.stderr, flush=True))
    print(report_markdown(report))
    print(f"Plot: {backtest_png_path(store.path, pack.domain, dates)}")
    print(f"{len(dates)} nights ({DESIGN[0]:%Y-%m}..{DESIGN[1]:%Y-%m} design, {HELD_OUT[0]:%Y-%m}..{HELD_OUT[1]:%Y-%m} "
          f"held out) in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
