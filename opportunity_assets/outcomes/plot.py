"""The backtest's plot (PNG): per period, each verdict's outcome against the night's median candidate; among
STRONG, CONFIRMED against REJECTED/UNCERTAIN (the verifier's lift); and STRONG's advantage night by night.

Matplotlib's object API on the Agg canvas: no display, no pyplot global state (safe inside a Dagster run).
"""

from __future__ import annotations

import io
from datetime import timedelta

from opportunity_assets.outcomes.logic import BacktestReport

_COLOURS = {"design": "#4c72b0", "held-out": "#dd8452", "all": "#4c72b0"}


def backtest_png(report: BacktestReport) -> bytes:
    # Imported here: ~0.4 s that a night which draws no plot never pays.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    scale, unit = (100.0, "percentage points") if report.change == "relative" else (1.0, "outcome units")
    figure = Figure(figsize=(13, 4.4), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    by_verdict, by_status, by_night = figure.subplots(1, 3, width_ratios=[1.3, 0.9, 2.2])
    periods = report.periods
    width = 0.8 / max(len(periods), 1)

    groups = [g.group for g in periods[0].by_verdict] if periods else []
    for i, period in enumerate(periods):
        xs = [k + (i - (len(periods) - 1) / 2) * width for k in range(len(groups))]
        values = [(g.mean_advantage or 0.0) * scale for g in period.by_verdict]
        by_verdict.bar(xs, values, width, label=period.label, color=_COLOURS.get(period.label, "#55a868"))
    counts = ["/".join(str(p.by_verdict[k].known) for p in periods) for k in range(len(groups))]
    by_verdict.set_xticks(range(len(groups)), [f"{g.replace('INSUFFICIENT_DATA', 'NO DATA')}\nn={n}"
                                               for g, n in zip(groups, counts, strict=True)], fontsize=8)
    by_verdict.axhline(0, color="black", linewidth=0.8)
    by_verdict.set_ylabel(f"mean outcome − night median ({unit})")
    by_verdict.set_title("By verdict", fontsize=10)
    if periods:
        by_verdict.legend(fontsize=8)

    sides = ["CONFIRMED", "REJECTED or UNCERTAIN"]
    for i, period in enumerate(periods):
        xs = [k + (i - (len(periods) - 1) / 2) * width for k in range(2)]
        lift = period.lift
        values = [(lift.confirmed.mean_advantage or 0.0) * scale, (lift.doubted.mean_advantage or 0.0) * scale]
        by_status.bar(xs, values, width, color=_COLOURS.get(period.label, "#55a868"),
                      label=f"{period.label}: lift {(lift.lift or 0.0) * scale:+.2f}" if lift.lift is not None
                      else f"{period.label}: lift n/a")
    counts = ["/".join(str(p.lift.confirmed.known) for p in periods),
              "/".join(str(p.lift.doubted.known) for p in periods)]
    by_status.set_xticks(range(2), [f"{side}\nn={n}" for side, n in zip(sides, counts, strict=True)], fontsize=8)
    by_status.axhline(0, color="black", linewidth=0.8)
    by_status.set_title("STRONG, by verification", fontsize=10)
    if periods:
        by_status.legend(fontsize=8)

    for period in periods:
        points = [p for p in period.per_night if p.strong_advantage is not None]
        by_night.bar([p.as_of for p in points], [(p.strong_advantage or 0.0) * scale for p in points], width=25,
                     color=_COLOURS.get(period.label, "#55a868"), label=period.label)
    if report.design_until is not None and periods:
        by_night.axvline(report.design_until + timedelta(days=15), color="grey", linestyle="--", linewidth=1)
        by_night.annotate("held out →", (report.design_until + timedelta(days=45), 0), fontsize=8, color="grey",
                          xytext=(0, 4), textcoords="offset points")
    by_night.axhline(0, color="black", linewidth=0.8)
    by_night.set_title("STRONG picks' mean − night median, per night", fontsize=10)
    dates = AutoDateLocator()
    by_night.xaxis.set_major_locator(dates)
    by_night.xaxis.set_major_formatter(ConciseDateFormatter(dates))
    by_night.tick_params(axis="x", labelsize=8)
    if not any(p.strong_advantage is not None for period in periods for p in period.per_night):
        by_night.annotate("no STRONG verdict with a known outcome", (0.5, 0.5), xycoords="axes fraction",
                          ha="center")
    figure.suptitle(f"Backtest — {report.domain}: {report.outcome}", fontsize=10)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()
