"""`brief[as_of]` and `archive[as_of]`: route every candidate of the night by fixed rules, write the brief
(`step.py`), and report it with its checks.
"""


from datetime import date, timedelta

import dagster as dg

from opportunity_assets.brief.render import WORD_LIMIT, run_summary
from opportunity_assets.brief.routing import BRIEF_SECTIONS
from opportunity_assets.brief.step import route_and_brief
from opportunity_assets.candidates.step import edited_mid_night
from opportunity_assets.history import changes_table, last_night_line, last_night_within
from opportunity_assets.metadata import check_metadata, table_value
from opportunity_assets.notify.assets import night_run_states
from opportunity_assets.notify.step import wait_for_previous_night
from opportunity_assets.report.render import ReportError
from opportunity_assets.report.step import report_path, write_night_report
from opportunity_assets.tables import bullets, candidate_links, candidates_table, check_failures, night_links
from resources.criteria import CriteriaResource
from resources.model import ModelResource
from resources.store import ResultStore

BRIEFS_AND_NOTIFIES = "finish_night"
"""The job that writes the brief and sends its notifications in one run (`opportunity run`, `backfill`)."""


def build_brief_and_archive(nights: dg.PartitionsDefinition,
                            earlier_night_wait_seconds: float = 0) -> dg.AssetsDefinition:
    """`brief` and `archive`, partitioned by the deployment's nights (`partitions.nightly_partitions`).

    In `BRIEFS_AND_NOTIFIES` the brief first waits, up to `earlier_night_wait_seconds`, for an earlier night still
    running, as the notification after it does (`notify.step.wait_for_previous_night`): two `opportunity run`s in
    parallel had the later night's brief and report say "new" against the night before that, while its message,
    which waited, said "still strong" against the one still running (trial 42). That run holds its slot through the
    notification's wait anyway; `brief_night`, a run of its own under the daemon, does not wait: the chain's
    sensors hold its request instead (`automation.sensors.hold_briefs`), so that it never holds a model slot
    (`llm`) that an earlier night's per-candidate run is queued for."""

    @dg.multi_asset(
        specs=[
            dg.AssetSpec("brief", partitions_def=nights, group_name="nightly_brief", kinds={"python"},
                         deps=[dg.AssetDep("verifications", partition_mapping=dg.AllPartitionMapping())],
                         description="The morning brief: act on these / needs your judgment / run summary."),
            dg.AssetSpec("archive", partitions_def=nights, group_name="nightly_brief", kinds={"duckdb"},
                         deps=[dg.AssetDep("verifications", partition_mapping=dg.AllPartitionMapping())],
                         description="Everything routed away from the brief, queryable by as_of, tag, candidate."),
        ],
        check_specs=[
            dg.AssetCheckSpec("word_limit", asset="brief", blocking=True, partitions_def=nights,
                              description=f"The brief is under {WORD_LIMIT} words."),
            dg.AssetCheckSpec("numbers_in_store", asset="brief", blocking=True, partitions_def=nights,
                              description="Every number written in the brief exists in the store."),
            dg.AssetCheckSpec("routes_valid", asset="archive", blocking=True, partitions_def=nights,
                              description="Every route is a known (destination, section or tag) pair."),
        ],
    )
    def brief_and_archive(context: dg.AssetExecutionContext, criteria: CriteriaResource, store: ResultStore,
                          model: ModelResource):
        """Route the night's candidates by fixed rules; write the brief and the archive; check what was written."""
        as_of = date.fromisoformat(context.partition_key)
        pack = criteria.load()
        if (said := edited_mid_night(store.night(pack.domain, as_of), pack, as_of)) is not None:
            raise dg.Failure(said)
        if context.job_name == BRIEFS_AND_NOTIFIES and earlier_night_wait_seconds > 0:
            wait_for_previous_night(store, pack.domain, as_of, within=last_night_within(pack.source.grain),
                                    wait_seconds=earlier_night_wait_seconds,
                                    run_states=night_run_states(context.instance, timedelta(days=2)))
        step = route_and_brief(pack, store, model, as_of)
        summary = step.summary
        try:  # the morning report, from the records just stored; a report that cannot be written never stops a night
            report: dg.MetadataValue | str = dg.MetadataValue.path(
                str(write_night_report(store, pack, as_of, report_path(store.path, pack.domain, as_of, ".html"))))
        except ReportError as exc:
            context.log.warning(str(exc))
            report = f"not written: {exc}"
        yield dg.MaterializeResult(
            asset_key="brief",
            metadata={"brief": dg.MetadataValue.md(step.brief.markdown), "report": report,
                      "brief_items": table_value(candidates_table(pack, sorted(
                          (r for r in step.rows if r.tag in BRIEF_SECTIONS),
                          key=lambda r: (BRIEF_SECTIONS.index(r.tag), -(r.score or 0.0))))),
                      "since_last_night": table_value(changes_table(step.changes)),
                      "candidate_pages": dg.MetadataValue.md(
                          candidate_links(step.rows, as_of, first=BRIEF_SECTIONS).text),
                      "nights_with_a_brief": dg.MetadataValue.md(night_links(store.briefed_nights(pack.domain)).text),
                      "last_night": last_night_line(step.last_night, step.changes,
                                                    last_night_within(pack.source.grain)),
                      "words": step.brief.words,
                      "act_on_these": summary.by_tag["act_on_these"],
                      "needs_your_judgment": summary.by_tag["needs_your_judgment"],
                      "summary": dg.MetadataValue.md(run_summary(step.brief.markdown)), "model_checks": step.model_mode,
                      "model_calls": step.cost.calls, "model_usd": step.cost.usd,
                      "model_worded_lines": step.worded_lines},
        )
        yield dg.MaterializeResult(
            asset_key="archive",
            metadata={"candidates": table_value(candidates_table(pack, step.rows)), "archived": step.archived,
                      **{f"tag_{tag}": n for tag, n in summary.by_tag.items() if tag not in
                         ("act_on_these", "needs_your_judgment")},
                      "query": dg.MetadataValue.md(f"`SELECT * FROM archive WHERE as_of = '{as_of}' AND tag = ?` "
                                                   f"in `{store.location}`, or `opportunity archive --as-of {as_of}`")},
        )
        night = as_of.isoformat()
        yield dg.AssetCheckResult(asset_key="brief", check_name="word_limit", passed=step.words < WORD_LIMIT,
                                  metadata=check_metadata(night, {"words": step.words, "limit": WORD_LIMIT}))
        yield dg.AssetCheckResult(asset_key="brief", check_name="numbers_in_store", passed=not step.unsupported,
                                  metadata=check_metadata(night, {"numbers_not_in_store": bullets(step.unsupported)
                                                                  if step.unsupported else
                                                                  "none: every number in the brief is a stored one"}))
        yield dg.AssetCheckResult(asset_key="archive", check_name="routes_valid", passed=not step.route_failures,
                                  metadata=check_metadata(night, {"routes": len(step.rows),
                                                                  "failures": check_failures(step.route_failures)}))

    return brief_and_archive
