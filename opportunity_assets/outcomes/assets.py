"""`outcomes[as_of]` and `backtest`: judgment quality, after the fact. Thin: the work is in logic.py and replay.py.

`outcomes` reads the night's stored verdicts and measures what became of each candidate, with only the rows
published by each window's date. Nothing on a verdict's path reads it. `backtest` reads the outcomes of a range
of nights and shows the report and its plot in the UI.
"""

import base64
from collections import Counter
from datetime import date
from typing import Any

import dagster as dg
from pydantic import Field

from opportunity_assets.night import nights_between
from opportunity_assets.outcomes.logic import (
    OutcomeStatus,
    VerdictOutcome,
    build_report,
    format_outcome,
    report_markdown,
)
from opportunity_assets.outcomes.plot import backtest_png
from opportunity_assets.outcomes.replay import backtest_png_path, backtest_report, measure_night, require_outcome
from opportunity_assets.records import Verdict
from resources.criteria import CriteriaResource
from resources.source import PointInTimeSource
from resources.store import ResultStore


def build_outcomes(nights: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    """`outcomes`, partitioned by the deployment's nights (`partitions.nightly_partitions`)."""

    @dg.asset(
        partitions_def=nights,
        deps=["brief"],
        group_name="judgment_quality",
        kinds={"duckdb", "python"},
    )
    def outcomes(context: dg.AssetExecutionContext, criteria: CriteriaResource, source: PointInTimeSource,
                 store: ResultStore) -> dg.MaterializeResult:
        """What became of each of the night's verdicts: the pack's `outcome:` over the window ending at t0 + horizon,
        read as known on as_of + horizon (pending until then). Never an input to a verdict. Measured too for the
        candidates that passed the hard filters but were capped (no verdict): the night's median candidate is
        taken over all of them, whatever the cap's order."""
        as_of = date.fromisoformat(context.partition_key)
        pack = criteria.load()
        spec = require_outcome(pack)
        with store.session():
            night = store.night(pack.domain, as_of)
            if night is None or night["criteria_fingerprint"] != pack.fingerprint:
                raise dg.Failure(f"no night of these criteria ({pack.fingerprint}) stored for {as_of}: run the night "
                                 "first (`opportunity run --as-of`)")
            verdicts: dict[str, Verdict | None] = {a.candidate_id: a.verdict
                                                   for a in store.analyses(pack.domain, as_of)}
            verdicts |= {cid: None for cid in store.capped_ids(pack.domain, as_of) if cid not in verdicts}
            statuses = {v.candidate_id: v.status for v in store.verifications(pack.domain, as_of)}
        measured = measure_night(pack, as_of, sorted(verdicts), today=date.today(), read=source.read)
        rows = [VerdictOutcome(as_of=as_of, candidate_id=cid, verdict=verdict, verification=statuses.get(cid),
                               outcome=measured[cid]) for cid, verdict in sorted(verdicts.items())]
        store.write_outcomes(pack.domain, as_of, [
            {"candidate_id": r.candidate_id, "criteria_fingerprint": pack.fingerprint,
             "outcome_definition": spec.model_dump_json(), "verdict": r.verdict.value if r.verdict else None,
             "verification": r.verification.value if r.verification else None, "status": r.outcome.status.value,
             "value": r.outcome.value, "record": r.outcome.model_dump_json()} for r in rows])

        night_report = build_report(domain=pack.domain, fingerprint=pack.fingerprint, spec=spec, rows=rows,
                                    nights=[as_of], missing=[], grain=pack.grain).periods
        counts = Counter(r.outcome.status.value for r in rows)
        by_verdict = night_report[0].by_verdict if night_report else []
        median = night_report[0].per_night[0].median if night_report else None
        table = ["| verdict | known | mean | median |", "|---|---:|---:|---:|"] + [
            f"| {g.group} | {g.known} | {format_outcome(g.mean, spec.change)} | "
            f"{format_outcome(g.median, spec.change)} |"
            for g in by_verdict if g.known or g.pending or g.gap]
        strong = next((g for g in by_verdict if g.group == Verdict.STRONG.value), None)
        return dg.MaterializeResult(metadata={
            "outcome_date": rows[0].outcome.outcome_date.isoformat() if rows else "",
            **{f"outcomes_{status.value}": counts.get(status.value, 0) for status in OutcomeStatus},
            "night_median": dg.MetadataValue.text(format_outcome(median, spec.change)),
            "strong_mean": dg.MetadataValue.text(format_outcome(strong.mean if strong else None, spec.change)),
            "by_verdict": dg.MetadataValue.md("\n".join(table)),
            "definition": spec.description or f"{spec.change} change of {spec.agg} {spec.metric}",
        })

    return outcomes



class BacktestConfig(dg.Config):
    start: str = Field(description="First night (YYYY-MM-DD).")
    end: str = Field(description="Last night (YYYY-MM-DD).")
    every: str = Field(default="month-end", description="day, week-end, month-end, quarter-end or year-end")


@dg.asset(deps=["outcomes"], group_name="judgment_quality", kinds={"python"})
def backtest(context: dg.AssetExecutionContext, config: BacktestConfig, criteria: CriteriaResource,
             store: ResultStore) -> dg.MaterializeResult:
    """Outcome by verdict and verification status, STRONG's hit rate against the median candidate, the verifier's
    lift, design and held-out periods apart; the plot as metadata. `opportunity backtest` materializes it."""
    pack = criteria.load()
    nights = nights_between(date.fromisoformat(config.start), date.fromisoformat(config.end), config.every)
    report = backtest_report(store, pack, nights)
    png = backtest_png(report)
    path = backtest_png_path(store.path, pack.domain, nights)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png)
    image = base64.b64encode(png).decode()
    metadata: dict[str, Any] = {
        "report": dg.MetadataValue.md(report_markdown(report) + f"\n![plot](data:image/png;base64,{image})\n"),
        "plot_path": dg.MetadataValue.path(str(path)),
        "nights": len(nights), "nights_missing": len(report.missing),
    }
    for period in report.periods:
        metadata[f"{period.label}_strong_hit_rate"] = period.hit_rate.rate
        metadata[f"{period.label}_verifier_lift"] = period.lift.lift
    context.log.info(f"backtest plot written to {path}")
    return dg.MaterializeResult(metadata=metadata)
