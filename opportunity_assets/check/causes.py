"""`opportunity check`: one cause said once (pure over the problem lines): a source key's problem is why the
metrics, filters and inputs that read it have no value, so their lines are dropped beside it; and, on a source of
too few entities for a unit judgment, the gaps and undated rows the night's few candidates show."""

from __future__ import annotations

import re

from opportunity_assets.check import candidates as check_candidates
from opportunity_assets.check.periods import undated_at_fault
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.records import Candidate

READING_KEYS = ("key `required_inputs.", "key `hard_filters.")
"""Problems of the keys that read a metric with no value for any candidate: said again, wrongly, beside a cause
that leaves the metric with none (figures that end, a joined table published later)."""


JUDGED_OVER_VALUES = ("key `hard_filters.", "key `formula.components.", "key `red_flags.")
"""Pack keys whose warnings judge a unit or a scale over the candidates' values: said again, wrongly, by values a
quarantining problem left (the few it did not refuse)."""


QUARANTINING_KEYS = re.compile(r"key `source\.(?:join\.\d+\.)?(?:" + "|".join((
    "bounds", "period_format", "period_column", "year_column", "month_column", "day_column", "quarter_column",
    "week_column", "columns", "aggregates",
    "thousands_separator", "decimal_separator", "signed", "grain", "entity_id", "shape", "known_at")) + ")")
"""The source keys, the main source's or a joined table's, whose problem is a cause of quarantined rows (a bound in
another unit, dates no pattern reads, a column of text, duplicated keys). Trial 25: a joined table's `year_column`
over dates was said again by the input it left unknown and by `caps.max_flagged`."""


_FINER_THAN_ROWS = re.compile(r"^key `source\.grain`: got '\w+'; every (row of .* falls (on the first day of a|in a) "
                              r"|entity's rows lie \d+ (to \d+ )?\w+ apart(,| or a multiple of it ))")
"""`source.grain`'s line for rows of month starts (or quarters', years') read by a finer grain, or for rows a whole
number of periods apart (`grain_finer_than_rows`: quarters read in months)."""


_NO_UNIX_TIME = re.compile(r"^key `source\.period_format`: got '[^']+' for column .*; its values are no Unix time ")
"""`source.period_format`'s line for Unix time over small numbers (`unix_time_of_no_time`): every row in 1970's
first moments, so every window but the latest finds nothing."""


_WINDOW_PAST = re.compile(r"^key `metrics\.(\w+)\.window`: .*expected a window within the source's history")


_WINDOW_KEY = re.compile(r"`metrics\.(\w+)\.window`")


_GAP_OF = re.compile(r"scanned \((\w+): ")


_CONDITION_OF = re.compile(r"^key `source\.aggregates\.(\w+)\.where\.\d+[.`]")
"""A problem naming an events aggregate's condition (`source.aggregates.avg_age.where.0.in`): the aggregate's name."""


_KEYS_DUPLICATED = re.compile(r"^key `source\.\w+`: got [^;]*; (\d+ rows share |it dates every row alike)")
"""`duplicated_keys`' line: most rows refused as duplicated keys, whichever key it names (trial 29: a snapshot of days
declared a panel by the week, its `source.grain` line followed by a window "past the history" of 1 week left)."""


_PERIOD_KEYS = tuple(f"key `source.{k}`" for k in (
    "period_format", "period_column", "year_column", "month_column", "day_column", "quarter_column", "week_column"))
"""The source keys whose problem leaves rows of no period: the history those left is short, so a window past it is
the same cause."""


_MOSTLY_TEXT_COLUMN = re.compile(r"^key `source\.(?:aggregates\.\w+\.column|columns\.\d+)`: '(.+?)'(?:: \d+ of \d+ "
                                 r"cells the night reads are not numbers| is empty in every row of the source)")


def _metrics_of_text(pack: CriteriaPack, problems: list[str]) -> set[str]:
    """The metrics reading a source column that a problem calls mostly text (`cell_problems`: `avg` over a tweet's
    text): every one is a gap for that cause, which the filters and required inputs reading them need not say again.
    On events, the aggregates over the column; on a panel, the column itself."""
    text = {m[1] for p in problems if (m := _MOSTLY_TEXT_COLUMN.match(p))}
    if not text:
        return set()
    fed = {name for name, a in pack.source.aggregates.items() if a.column in text} \
        if pack.source.shape == "events" else text
    return {name for name, spec in pack.metrics.items() if spec.column in fed or set(spec.columns or []) & fed}


_JOIN_OF = re.compile(r"^key `source\.join\.(\d+)[.`]")
"""A problem naming a joined table's key (`source.join.0.entity_id`): the join's index."""


def _metrics_of_joins(pack: CriteriaPack, problems: list[str]) -> set[str]:
    """The metrics reading a joined table's columns when a problem names one of its keys (ids that match none, no
    row by the night, a finer grain): the filters and required inputs they leave unknown are that problem again
    (trial 25: every mistake in a join was said a second time by `required_inputs`)."""
    named = {int(m[1]) for p in problems if (m := _JOIN_OF.match(p))}
    columns = {c for i in named if i < len(pack.source.join) for c in pack.source.join[i].columns}
    return {name for name, spec in pack.metrics.items() if spec.column in columns or set(spec.columns or []) & columns}


def _metrics_of_conditions(pack: CriteriaPack, problems: list[str]) -> set[str]:
    """The metrics reading an events aggregate whose `where` a problem names (`in: [female]` for `Female`: the
    aggregate keeps no event, so an `avg` of it, and an `age_days` dating by it, has no value): the filters and
    required inputs they leave unknown are that condition again."""
    named = {m[1] for p in problems if (m := _CONDITION_OF.match(p))}
    return {name for name, spec in pack.metrics.items() if spec.column in named or set(spec.columns or []) & named}


def lacking_of_few(pack: CriteriaPack, found: list[Candidate], problems: list[str]) -> list[str]:
    """On a source of too few entities for `check_candidates.problems`' judgment (a single series), the metrics
    its candidates lack tonight that a metric's own key explains (`min_rows` of more periods than the rows fill, a
    window over none), as warnings, each key once: check said only "metrics with gaps", the archive "is a gap".
    A gap of quarantined rows is said by their lines, and one whose cause a problem names (a window past the
    history) by that problem (`one_cause_once`)."""
    lacking = [w for w in check_candidates.unknown_for_all(pack, found, least=1) if w.startswith("key `metrics.")]
    kept = set(one_cause_once([*problems, *lacking], pack))
    out: list[str] = []
    keys: set[str] = set()
    for line in lacking:
        key = line.split(";")[0]
        if line in kept and key not in keys:
            keys.add(key)
            out.append(line)
    return out


def undated_of_few(pack: CriteriaPack, found: list[Candidate], problems: list[str], unparsed: list[str],
                    seen: int, undated: list[tuple[int, str]]) -> list[str]:
    """On a source of too few entities for `check_candidates.problems`' judgment (a single series), rows of no
    period (`undated`: each quarantined row's number and reason) that leave a required input or a filter's metric
    unknown for every candidate: one warning, naming the period key (`undated_at_fault`) unless a problem names it,
    or `source.path` for a line whose fields tell no period (a field too few). Trial 24: airquality's one city with a
    day written 31 June, or a line missing its day, left every metric unknown on every night, and check said ok."""
    if not undated or any(p.startswith(_PERIOD_KEYS) for p in problems):
        return []
    lacking = check_candidates.unknown_for_all(pack, found, least=1)
    if unparsed:
        return [w for w in undated_at_fault(pack, lacking, unparsed, seen, False) if w not in lacking]
    names = [line.split(": got ")[1].split(";")[0] for line in lacking]
    if not names:
        return []
    rows = ", ".join(f"{row} ({reason})" for row, reason in undated[:3]) + (", ..." if len(undated) > 3 else "")
    return [f"key `source.path`: source file {pack.path_of(pack.source)}: source row{'s' if len(undated) > 1 else ''} "
            f"{rows} tell{'' if len(undated) > 1 else 's'} no period, so {'they' if len(undated) > 1 else 'it'} may "
            "lie in any window and leave the series' every metric unknown on every night (no candidate has a value "
            f"of {', '.join(names)}): expected the rows mended or removed"]


def one_cause_once(problems: list[str], pack: CriteriaPack) -> list[str]:
    """The problems without those that say another's cause again: when a line names a key whose mistake quarantines
    rows (`QUARANTINING_KEYS`: `bounds: [0, 1]` on premiums in dollars, a `period_format` most rows fail), the
    filters and required inputs those rows leave unknown ("expected the source's rows mended") are the same cause,
    four more lines of it; and so are those whose gap is a metric's window that reaches past the history (its
    `metrics.X.window` line), the metric's `min_rows` among them. Without such a line (a third of the cells written
    `$200`), they stay. A source key said twice with the same value (its rows' line, then a metric they leave
    unknown traced back to it) is said once, and so is a metric's key said for each filter and input it leaves
    unknown (its `min_rows` behind a required input and a derived one). A column of text that metrics read
    (`_metrics_of_text`) leaves them gaps ("0 of 8 weeks of favs filled"): the filters and inputs reading them say it
    again. Rows of no period (a `year_column` of titles), or most refused as duplicated keys (`_KEYS_DUPLICATED`),
    leave a short history: windows past it say it again; so do rows all read into 1970's first moments
    (`_NO_UNIX_TIME`). An events aggregate's condition that keeps no event
    leaves the metrics reading it gaps (`_metrics_of_conditions`): their filters and inputs say it again."""
    quarantining = any(QUARANTINING_KEYS.match(p) for p in problems)
    undated = any(p.startswith(_PERIOD_KEYS) or _KEYS_DUPLICATED.match(p) for p in problems)
    problems = [p for p in problems if not (undated and _WINDOW_PAST.match(p))]
    past = {name for p in problems if _WINDOW_PAST.match(p) for name in _WINDOW_KEY.findall(p)} \
        | _metrics_of_text(pack, problems) \
        | _metrics_of_conditions(pack, problems) \
        | _metrics_of_joins(pack, problems)
    # a grain finer than the rows' (months read by the day), or every row in 1970's first moments (Unix time over
    # a count of days): every window between their dates finds nothing
    first_days = any(_FINER_THAN_ROWS.match(p) or _NO_UNIX_TIME.match(p) for p in problems)
    kept = [p for p in problems if not (quarantining and check_candidates.says_rows_mended(p))
            and not ((m := _GAP_OF.search(p)) and m[1] in past and p.startswith(("key `required_inputs.",
                                                                                "key `hard_filters.")))
            and not p.startswith(tuple(f"key `metrics.{metric}.min_rows`" for metric in past))
            and not (p.startswith(tuple(f"key `metrics.{metric}.window`" for metric in past))
                     and not _WINDOW_PAST.match(p))
            and not (first_days and p.startswith("key `metrics.") and (".min_rows`" in p or ".window`" in p))]
    said: set[str] = set()
    out = []
    for p in kept:
        opening = p.split(";")[0]
        if not (p.startswith(("key `source.", "key `metrics.")) and opening in said):
            out.append(p)
            said.add(opening)
    return out


_KEY_NAMED = re.compile(r"key `([^`]+)`")
"""The key a line opens with."""


def warnings_said_once(pack: CriteriaPack, problems: list[str], warnings: list[str], *, stale: bool,
                       windows_past: bool) -> list[str]:
    """The warnings left once what a problem, or a night after the data ends (`stale`), already says is left out:
    - on a stale night, an age filter refusing every candidate;
    - beside a source key that quarantines rows (`QUARANTINING_KEYS`), the candidates those rows flag past the cap,
      and the units of bounds and ranges judged over the values it left (trial 26: grouped thousands unread, a
      filter `>= 10000` was told "every candidate's stock lies within [17, 998]": the values under 1,000);
    - beside a window past the history (`windows_past`), the candidates past the cap with no value of its order
      (trial 40: the first night's `crowd_prev` a year back was said, then "12 candidates past the cap have no
      value of crowd_growth");
    - beside a row of no period, the filters' bounds judged over the entities it left a value: the few, not the
      scale;
    - a warning of a key a problem names already: the problem is what the key needs (trial 83: a range in percent
      over a share, a problem, was said again as a warning that few candidates fall in it)."""
    named = {m[1] for p in problems if (m := _KEY_NAMED.match(p))}
    warnings = [w for w in warnings if not ((m := _KEY_NAMED.match(w)) and m[1] in named)]
    if stale:
        ages = tuple(f"key `hard_filters.{n}.value`" for n, f in enumerate(pack.hard_filters)
                     if pack.metrics[f.metric].agg == "age_days")
        warnings = [w for w in warnings if not w.startswith(ages)]
    if any(QUARANTINING_KEYS.match(p) for p in problems):
        warnings = [w for w in warnings if not w.startswith(("key `caps.max_flagged`", *JUDGED_OVER_VALUES))]
    if windows_past:
        warnings = [w for w in warnings if not w.startswith("key `caps.max_flagged`: ")
                    or " candidates past the cap have no value of " not in w]
    if any("a row of no period leaves its entity's every metric unknown" in p for p in problems):
        warnings = [w for w in warnings if not w.startswith("key `hard_filters.")]
    return warnings
