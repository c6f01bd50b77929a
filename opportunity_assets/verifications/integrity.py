"""Is the source itself believable? The skeptic's checks on the rows, not on the arithmetic (DESIGN §7b).

Pure: takes a candidate's as_of-filtered rows (its metric windows and `integrity.history_periods` of history) and
the night's cross-section, returns findings. Every numeric column the source declares is judged, scored or not,
over the periods the metrics read (the judged span: 0 to the widest window back), each against the entity's own
history before that span: robust statistics (median and MAD of its past period-on-period and year-on-year
changes), so a volatile small market and a steady large one are each their own yardstick.

- level shift or unit change: a change far outside the entity's past changes that stays;
- spike: a one-period spike or drop, reverted the next period;
- out of range: a value many times beyond every earlier value of the entity's (a unit slip where the history is
  too short or noisy for its changes to be a yardstick);
- stuck feed: a column unchanged for a run its own past makes improbable; a row that repeats another exactly;
- precision: a value written with more decimals than any of the column's past values had, or a run of values
  on a coarser grid than its past made likely (rounded, estimated);
- staleness: a column that stopped reporting while the entity's latest period goes on;
- identities declared in the pack (ratios that hold in the domain): exactly, to the rounding of a derived column,
  where the entity's own past holds them so (`exact.py`); else against the entity's own band of the ratio, and
  against the declared band when the own history is short or was itself off throughout;
- cross-section: the latest change far outside that night's distribution across all scanned entities.

Integrity findings (the rows contradict each other or themselves) are reported under INPUTS, plausibility
findings (a value far outside what this entity or tonight's entities do) under ASSUMPTIONS. What a finding does
is its rule's `effect` in the pack; code applies it (logic.py), never a model.

Changes are measured on a log scale (a unit slip of 1000 is the same size at any level). "MADs" are robust
standard deviations: 1.4826 × the median absolute deviation, which equals the standard deviation for normal
data and is not moved by the few broken periods it is meant to catch.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from opportunity_assets import expressions
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import significant
from opportunity_assets.periods import Grain
from opportunity_assets.records import Candidate, CopiedFigures, DataFinding, Refusal, RepeatedEvents
from opportunity_assets.verifications import exact
from opportunity_assets.verifications.integrity_spec import Identity, IntegritySpec

_MIN_SCALE = 0.005
"""Floor of a robust scale on the log scale (0.5%): a column rounded to a few values must not make every move
look enormous."""
_MIN_SAMPLE = 6
"""Fewest values a robust yardstick is computed from."""
_MIN_AT_BOUND = 3
"""Times a column stood at its bound before its rate of staying there is a yardstick of its own."""
_FEW_VALUES = 3
"""Fewest earlier values a series too new for a rule's own minimum is judged from (at a stricter bound)."""
_MIN_PEERS = 8
"""Fewest scanned entities for a cross-section."""
INTEGRITY_RULES = ("stuck", "repeated_row", "stale", "precision", "rounded", "copied", "echoed", "interpolated",
                   "refused", "repeated_events")
"""Rules (besides identities) reported under INPUTS; the others under ASSUMPTIONS."""


@dataclass(frozen=True)
class Yardstick:
    """Robust location and scale of a sample, and where it comes from."""

    median: float
    scale: float
    """1.4826 × MAD, floored (see `_MIN_SCALE`)."""
    count: int
    since: str
    """First period of the sample, `YYYY-MM`."""

    def z(self, value: float) -> float:
        return (value - self.median) / self.scale


def robust(values: np.ndarray, since: str) -> Yardstick | None:
    """Median and MAD-scale of the finite values, or None with fewer than `_MIN_SAMPLE`."""
    sample = values[np.isfinite(values)]
    if len(sample) < _MIN_SAMPLE:
        return None
    median = float(np.median(sample))
    mad = float(np.median(np.abs(sample - median)))
    scale = 1.4826 * mad if mad > 0 else 1.2533 * float(np.mean(np.abs(sample - median)))
    return Yardstick(median=median, scale=max(scale, _MIN_SCALE), count=len(sample), since=since)


def log_level(values: np.ndarray) -> np.ndarray:
    """log(x + 1% of the column's median positive level): defined at zero, a ratio scale elsewhere. A column that
    goes negative (a delay, a balance, a growth rate) has no log: asinh(x / its median size) instead, about linear
    within its usual size, where it crosses zero, and logarithmic beyond it, so a unit slip (minutes written as
    seconds) is as far out there as on a count."""
    finite = values[np.isfinite(values)]
    with np.errstate(all="ignore"):
        if len(finite) and bool((finite < 0).any()):
            size = np.abs(finite[finite != 0])
            return np.arcsinh(values / (float(np.median(size)) if len(size) else 1.0))
        positive = finite[finite > 0]
        offset = 0.01 * float(np.median(positive)) if len(positive) else 1.0
        return np.log(values + offset)


def unit_step(values: np.ndarray) -> float:
    """For a column of whole numbers (a count), the change one unit makes at its median level on the log scale:
    no move of a count is smaller, so its yardstick's scale is never below it (a route going from 2 carriers to
    3 is one step, not a level shift). 0 for a column with fractions."""
    finite = values[np.isfinite(values)]
    if not len(finite) or not on_grid(finite, 1.0):
        return 0.0
    pair = np.array([float(np.median(finite)), float(np.median(finite)) + 1.0])
    signed = bool((finite < 0).any())  # then on the column's own scale (`log_level`)
    level = log_level(np.concatenate([finite, pair]))[-2:] if signed else log_level(pair)
    return float(level[1] - level[0])


def period_changes(values: np.ndarray) -> np.ndarray:
    """Each period's change from the one before on the log scale (`log_level`); NaN for the first period and
    wherever either value is missing."""
    level = log_level(values)
    step = np.full(len(values), np.nan)
    step[1:] = level[1:] - level[:-1]
    return step


@dataclass(frozen=True)
class Series:
    """One candidate's rows as arrays in time order (index 0 = oldest kept period; NaN = no value)."""

    periods: list[str]
    """Each index's period as a reader sees it (`2015-07` for a month, `periods.Grain.label`)."""
    values: dict[str, np.ndarray]
    judged_from: int
    """First index of the judged span (the periods the metrics read)."""
    per_year: int = 12
    """Periods in a year at the source's grain: the lag of the year-on-year change."""

    @property
    def length(self) -> int:
        return len(self.periods)

    def back(self, index: int) -> int:
        return self.length - 1 - index


def series_of(candidate: Candidate, columns: Sequence[str], judged_periods: int, grain: Grain) -> Series | None:
    """The candidate's raw rows as arrays; None without a published period."""
    if candidate.anchor_period is None or not candidate.raw_data:
        return None
    reach = max(int(row["periods_ago"]) for row in candidate.raw_data)
    length = reach + 1
    values = {c: np.full(length, np.nan) for c in columns}
    for row in candidate.raw_data:
        index = reach - int(row["periods_ago"])
        for c in columns:
            if row.get(c) is not None:
                values[c][index] = float(row[c])
    periods = [grain.label(grain.back(candidate.anchor_period, reach - i)) for i in range(length)]
    return Series(periods=periods, values=values, judged_from=max(0, length - judged_periods),
                  per_year=grain.per_year)


def _yardstick(series: Series, changes: np.ndarray, min_history: int, *, start: int = 1) -> Yardstick | None:
    """The entity's own yardstick: the changes before the judged span if there are enough, else all of them."""
    past = changes[: series.judged_from]
    if np.isfinite(past).sum() >= min_history:
        return robust(past, series.periods[start])
    return robust(changes, series.periods[start])


def format_number(value: float) -> str:
    """A source value as findings write it (the brief's number check reads it back the same way)."""
    return significant(value, 3 if value != 0 and abs(value) < 1 else 4)


def _moved(change: float) -> str:
    return f"{math.expm1(change):+.0%}"


def _span(periods: Sequence[str]) -> str:
    return periods[0] if len(periods) == 1 else f"{periods[0]}..{periods[-1]}"


class _Findings:
    """Collects findings, each with its rule's effect."""

    def __init__(self, series: Series) -> None:
        self.series = series
        self.items: list[DataFinding] = []

    def add(self, rule: str, effect: str, column: str, indices: Sequence[int], value: float | None,
            size: float | None, message: str, resolve: str | None = None) -> None:
        periods = [self.series.periods[i] for i in indices]
        check = "inputs" if rule in INTEGRITY_RULES or rule.startswith(("identity:", "exact:")) else "assumptions"
        self.items.append(DataFinding(
            rule=rule, check=check, column=column, periods=periods,
            periods_back=[self.series.back(i) for i in indices], value=value,
            size=None if size is None else round(size, 1), effect=effect, message=message,
            to_resolve=resolve or f"confirm {_span(periods)} {column} with the source"))


# ---- the checks ------------------------------------------------------------------------------------------
def _seasonal(series: Series, changes: np.ndarray) -> np.ndarray:
    """Each change against the same change a year earlier: what is left of it once the season is taken out."""
    out = np.full(series.length, np.nan)
    year = series.per_year
    out[year:] = changes[year:] - changes[:-year]
    return out


def _far(stick: Yardstick, season: Yardstick | None, value: float, seasonal: float) -> float:
    """How far out a change is, in MADs of the entity's own changes; where a year of history exists, it must be
    far out against the same change a year earlier too (a move the season makes every year is not a defect)."""
    z = stick.z(value)
    if season is not None and math.isfinite(seasonal):
        z_season = season.z(seasonal)
        return math.copysign(min(abs(z), abs(z_season)), z) if z * z_season > 0 else 0.0
    return z


def _shifts(found: _Findings, spec: IntegritySpec, column: str) -> None:
    """Level shifts and unit changes (period-on-period and year-on-year), and one-period spikes or drops (a
    change far out, reverted the next period)."""
    series = found.series
    raw = series.values[column]
    step = period_changes(raw)
    stick = _yardstick(series, step, spec.min_history)
    if stick is None:
        return
    quantum = unit_step(raw)
    if quantum > stick.scale:
        stick = dataclasses.replace(stick, scale=quantum)
    seasonal = _seasonal(series, step)
    season_stick = _yardstick(series, seasonal, spec.min_history, start=min(series.per_year, series.length - 1))
    if season_stick is not None and season_stick.count < spec.min_history:
        season_stick = None  # too few year-earlier changes to excuse a move as the season's (a short history)
    judged = range(max(series.judged_from, 1), series.length)
    skip: set[int] = set()
    worst: dict[str, tuple[float, int]] = {}
    for t in judged:
        if t in skip or not math.isfinite(step[t]):
            continue
        z = _far(stick, season_stick, step[t], seasonal[t])
        if abs(z) >= min(spec.level_shift.threshold_mads, spec.spike.threshold_mads):
            after = stick.z(step[t + 1]) if t + 1 < series.length and math.isfinite(step[t + 1]) else 0.0
            reverted = after * math.copysign(1, z) <= -0.5 * abs(z)
            rule = "spike" if reverted else "level_shift"
            threshold = (spec.spike if reverted else spec.level_shift).threshold_mads
            if abs(z) >= threshold and abs(z) > abs(worst.get(rule, (0.0, 0))[0]):
                worst[rule] = (z, t)
            if reverted:
                skip.add(t + 1)
    for rule, (z, t) in sorted(worst.items()):
        where = "above" if z > 0 else "below"
        what = ("a one-period spike, reverted the next period" if rule == "spike" and z > 0 else
                "a one-period drop, reverted the next period" if rule == "spike" else
                "and it stays" if t + 1 < series.length else "in the latest period")
        found.add(rule, (spec.spike if rule == "spike" else spec.level_shift).effect, column, [t], float(raw[t]),
                  abs(z), f"{column} {format_number(float(raw[t]))} in {series.periods[t]} moved {_moved(step[t])} "
                  f"from the period before: {abs(z):.1f} MADs {where} its period-on-period changes since "
                  f"{stick.since} (typically {_moved(stick.median)} ± {stick.scale:.1%}), {what}")


def _before(values: np.ndarray, accumulate: np.ufunc, empty: float) -> np.ndarray:
    """Per period, `accumulate` (np.fmax, np.fmin, np.add) over the periods before it (`empty` before the first)."""
    out = np.full(len(values), empty)
    out[1:] = accumulate.accumulate(values)[:-1]
    return out


def _out_of_range(found: _Findings, spec: IntegritySpec, column: str, signed: bool) -> None:
    """A judged value `factor` times beyond every value before it (in size where the column may go negative), or
    below the smallest positive one before it (a column that may not): a unit slip the period it starts, however
    short or noisy the history; a series with fewer than `min_history` earlier values (but `_FEW_VALUES`) at the
    factor squared. Not judged: a proportion staying within [0, 1] (its swings are bounded, not
    slips), or a count whose values before are too few units for a factor to mean a unit. A column that may go
    negative (`signed`, or any value below zero) crosses zero: a value near zero is no slip there."""
    rule, series = spec.out_of_range, found.series
    raw = series.values[column]
    finite = np.isfinite(raw)
    signed = signed or bool((raw[finite] < 0).any())
    size = np.abs(raw) if signed else raw
    seen = _before(finite.astype(float), np.add, 0.0)
    top = _before(np.where(finite, size, -np.inf), np.fmax, -np.inf)
    bottom = _before(np.where(finite & (size > 0), size, np.inf), np.fmin, np.inf)
    fractions = _before((finite & ~_on_grid_each(np.nan_to_num(raw), 1.0)).astype(float), np.add, 0.0)
    # a series too new for `min_history` values (an annual panel's first years) is judged from `_FEW_VALUES` on,
    # at the square of the factor: a hundredfold step is no market's move whatever its spread
    needed = np.where(seen >= rule.min_history, rule.factor, rule.factor ** 2)
    with np.errstate(all="ignore"):
        proportion = (not signed) & (top <= 1) & (raw >= 0) & (raw <= 1)
        few_units = (fractions == 0) & (top < needed)
        over = np.where((top > 0) & ~few_units, size / top, 0.0)
        under = np.where((not signed) & np.isfinite(bottom) & (size > 0), bottom / size, 0.0)
        enough = seen >= min(rule.min_history, _FEW_VALUES)
        far = np.where(finite & enough & ~proportion, np.fmax(over, under) / needed, 0.0)
    far[: series.judged_from] = 0.0
    t = int(np.argmax(far))
    if far[t] < 1.0:
        return
    far = far * needed
    value, high = float(raw[t]), over[t] >= under[t]
    side = f"{far[t]:.0f} times the largest" if high else f"1/{far[t]:.0f} of the smallest positive"
    found.add("out_of_range", rule.effect, column, [t], value, float(far[t]),
              f"{column} {format_number(value)} in {series.periods[t]} is {side} of its {int(seen[t])} earlier values "
              f"since {series.periods[0]} ({format_number(float(top[t] if high else bottom[t]))}"
              f"{' in size' if signed else ''}): beyond anything the entity published before (a unit slip?)")


def resolution(values: np.ndarray, smallest_change: float) -> float:
    """The step the column is written in: the largest power of ten all its values are multiples of (0.1 for
    whole tenths, 1 for a count, 100 for prices rounded to hundreds); its smallest change where its values are
    not written on such a grid."""
    finite = values[np.isfinite(values)]
    places = decimals(finite, 6)
    if places is None:
        return smallest_change
    grid = 10.0 ** -places
    while grid < 1e9 and on_grid(finite, grid * 10):
        grid *= 10
    return min(grid, smallest_change)


_ROWS_AT_ONCE = 1024
"""Rows of a matrix `resolutions` tests together."""


def _rows_on_grid(values: np.ndarray, rows: np.ndarray, power: int) -> np.ndarray:
    """Of `rows`, those whose every finite value is a multiple of 10^`power` (`on_grid`), a few rows at a time."""
    keep = np.zeros(len(rows), dtype=bool)
    with np.errstate(invalid="ignore"):
        for start in range(0, len(rows), _ROWS_AT_ONCE):  # (each test makes a few copies of what it reads)
            part = values[rows[start:start + _ROWS_AT_ONCE]]
            keep[start:start + len(part)] = np.all(_on_grid_each(part, 10.0 ** power) | ~np.isfinite(part), axis=1)
    return rows[keep]


def resolutions(values: np.ndarray) -> np.ndarray:
    """`resolution(row, math.inf)` of each row of a matrix at once (NaN where a row has no finite value): every
    entity's step without one Python call per entity (a wide night has 10k). As `resolution` does: rows of whole
    numbers climb by tens while on the grid (to 1e9), the others take the fewest decimals (to 6) that hold them;
    each power is tested only on the rows still climbing or looking, mostly two passes in all."""
    out = np.full(len(values), math.inf)
    rows = np.flatnonzero(np.isfinite(values).any(axis=1))
    whole = _rows_on_grid(values, rows, 0)
    out[whole] = 1.0
    for power in range(1, 10):
        whole = _rows_on_grid(values, whole, power)
        out[whole] = 10.0 ** power
    looking = rows[np.isinf(out[rows])]  # no whole numbers: the fewest decimals
    for power in range(-1, -7, -1):
        held = _rows_on_grid(values, looking, power)
        out[held] = 10.0 ** power
        looking = np.setdiff1d(looking, held)
    out[np.setdiff1d(np.arange(len(values)), rows)] = np.nan
    return out


def repeat_probability(values: np.ndarray, at: float | None = None) -> float | None:
    """How likely one period's value is to equal the period before's, for a column with these values: the
    larger of the rate at which they repeated and the chance a change smaller than the column's resolution
    happens (`resolution`, against the robust spread of its changes: a column rounded to 0.1 that moves by 0.1
    or 0.2 repeats often; a count moving by dozens rarely; a dollar total almost never; a counter that grows by
    the same step every period never); and, where the value `at` is the column's bound (its past maximum or
    minimum) and it stood there `_MIN_AT_BOUND` times before, the rate at which it stayed there (a count at its
    ceiling, a week's 168 hours, repeats by design). None with fewer than `_MIN_SAMPLE` changes."""
    diffs = np.diff(values)
    finite = np.isfinite(diffs)
    if at is not None and math.isfinite(at) and np.isfinite(values).any():
        bound = at >= np.nanmax(values) or at <= np.nanmin(values)
        there = finite & (values[:-1] == at)
        if bound and there.sum() >= _MIN_AT_BOUND:
            stays = float(np.mean(diffs[there] == 0))
            rest = repeat_probability(values)
            return None if rest is None else max(rest, stays)
    diffs = diffs[finite]
    if len(diffs) < _MIN_SAMPLE:
        return None
    moved = np.abs(diffs[diffs != 0])
    if not len(moved):
        return 1.0
    rate = float(np.mean(diffs == 0))
    centre = float(np.median(diffs))
    spread = 1.4826 * float(np.median(np.abs(diffs - centre)))
    if spread == 0:  # most changes the same step: a flat column repeats, a steady counter never stands still
        return 1.0 if centre == 0 else rate
    # P(|change| < half a resolution step) for changes spread around 0 (not around their median: the changes of
    # a rounded column are themselves rounded, so a slow trend's median change is one whole step)
    by_resolution = resolution(values, float(moved.min())) / (spread * math.sqrt(2 * math.pi))
    return min(1.0, max(rate, by_resolution))


def _stuck(found: _Findings, spec: IntegritySpec, column: str, fits: Sequence[exact.ExactFit] = ()) -> None:
    """The longest run of unchanged periods reaching into the judged span, against the column's own chance of
    repeating in the `min_history` periods before the run began (a column is "normally moving" as it moved just
    before, not as it moved years earlier: a calm year repeats a rounded column more often). A run that an exact
    identity of the column reproduces from columns that did move (`fits`) is that identity's value rounded, not a
    frozen feed."""
    series = found.series
    raw = series.values[column]
    run, best = 0, (0, 0)
    for t in range(1, series.length):
        same = math.isfinite(raw[t]) and raw[t] == raw[t - 1]
        run = run + 1 if same else 0
        if t >= series.judged_from and run > best[0]:
            best = (run, t)
    run, end = best
    if run < spec.stuck.min_periods:
        return
    start = end - run
    if any(fit.reproduces(start, end) for fit in fits):
        return
    rate = repeat_probability(raw[max(0, start - spec.min_history): start + 1], float(raw[end]))
    if rate is None or rate ** run >= spec.stuck.max_probability:
        return
    indices = list(range(start, end + 1))
    found.add("stuck", spec.stuck.effect, column, indices, float(raw[end]), float(run + 1),
              f"{column} unchanged at {format_number(float(raw[end]))} for {run + 1} periods "
              f"({_span([series.periods[i] for i in indices])}); "
              f"before that it repeated with probability {rate:.1%} a period, so a run this long has "
              f"probability {rate ** run:.1e}")


def _repeated_rows(found: _Findings, spec: IntegritySpec, columns: Sequence[str]) -> None:
    """A judged row equal, in every filled column, to another period's row, where the entity's own past rows
    (nearly) never repeat: the latest such row is reported, with how many there are."""
    series = found.series
    table = np.column_stack([series.values[c] for c in columns])
    filled = np.isfinite(table)
    # each row's nearest earlier row with the same filled columns and the same values in them, by one pass over
    # the rows keyed by their bytes (-0.0 written as 0.0): a comparison of every pair cost a night 0.4 s
    twin_of: list[int | None] = []
    latest: dict[tuple[bytes, bytes], int] = {}
    for t, (row, mask) in enumerate(zip(table, filled, strict=True)):
        key = (mask.tobytes(), (np.where(mask, row, 0.0) + 0.0).tobytes())
        twin_of.append(latest.get(key) if mask.sum() >= spec.repeated_rows.min_columns else None)
        latest[key] = t

    past = [twin_of[t] is not None for t in range(series.judged_from) if filled[t].sum()]
    rate = (sum(past) + 1) / (len(past) + 2)
    if len(past) < _MIN_SAMPLE or rate > spec.repeated_rows.max_rate:
        return
    twins = [(t, twin) for t in range(series.judged_from, series.length) if (twin := twin_of[t]) is not None]
    if not twins:
        return
    t, twin = twins[-1]
    more = f"; {len(twins)} judged rows repeat an earlier one" if len(twins) > 1 else ""
    names = ", ".join(c for c, f in zip(columns, filled[t], strict=True) if f)
    found.add("repeated_row", spec.repeated_rows.effect, "row", [twin, t], None, float(len(twins)),
              f"the row for {series.periods[t]} repeats {series.periods[twin]} exactly in all {int(filled[t].sum())} "
              f"filled columns ({names}){more}; {rate:.0%} of the entity's past rows repeated an earlier one",
              f"confirm the {series.periods[t]} row with the source (it repeats {series.periods[twin]})")


def _stale(found: _Findings, spec: IntegritySpec, column: str, latest_row: int) -> None:
    """A column whose latest value is `stale.periods` behind the latest published period, or missing from the
    entity's own latest row while its other columns report."""
    series = found.series
    raw = series.values[column]
    present = np.flatnonzero(np.isfinite(raw))
    if not len(present):
        return
    last = int(present[-1])
    lag = series.length - 1 - last
    # the fill before the judged span; with a short history, up to its last value where `_MIN_SAMPLE` periods lead
    # to it (its own silence since is what is judged, not a gap in its past), else over every period
    if series.judged_from >= spec.min_history:
        past = np.isfinite(raw[: series.judged_from])
    else:
        past = np.isfinite(raw[: last + 1] if last + 1 >= _MIN_SAMPLE else raw)
    fill = float(past.mean()) if len(past) else 0.0
    if fill < spec.stale.min_fill or lag == 0 or (lag < spec.stale.periods and last >= latest_row):
        return
    behind = f"{lag} period{'s' if lag > 1 else ''} behind the latest {series.periods[-1]}"
    found.add("stale", spec.stale.effect, column, [last], float(raw[last]), float(lag),
              f"{column} last reported {series.periods[last]}, {behind}"
              + ("" if last >= latest_row else
                 f", while the entity's other columns report {series.periods[latest_row]}")
              + f", though it was filled in {fill:.0%} of past periods",
              f"obtain {column} after {series.periods[last]} from the source")


def decimals(values: np.ndarray, most: int) -> int | None:
    """The fewest decimals (0 to `most`) every finite value is written with; None if some need more."""
    finite = values[np.isfinite(values)]
    return next((places for places in range(most + 1) if on_grid(finite, 10.0 ** -places)), None)


def on_grid(values: np.ndarray, step: float) -> bool:
    """Every value a whole multiple of `step`, up to the error of writing it as a float (a relative 1e-9: 2.3 is
    23 tenths, 1,234,567.5 is not a whole number)."""
    return bool(np.all(_on_grid_each(values, step)))


def _on_grid_each(values: np.ndarray, step: float) -> np.ndarray:
    """`on_grid` of each value apart."""
    scaled = values / step
    return np.abs(scaled - np.round(scaled)) <= 1e-9 * np.maximum(1.0, np.abs(scaled))


def _precision(found: _Findings, spec: IntegritySpec, column: str) -> None:
    """A judged value with more decimals than every past value of the column had."""
    series = found.series
    raw = series.values[column]
    past = raw[: series.judged_from]
    if np.isfinite(past).sum() < spec.min_history:
        return
    places = decimals(past, spec.precision.max_decimals)
    if places is None:
        return
    judged = raw[series.judged_from:]
    with np.errstate(invalid="ignore"):  # a value with more decimals is off the grid of `places` decimals
        off = np.isfinite(judged) & ~_on_grid_each(judged, 10.0 ** -places)
    finer = [series.judged_from + int(i) for i in np.flatnonzero(off)]
    if not finer:
        return
    t = finer[0]
    unit = "whole numbers" if places == 0 else f"at most {places} decimal{'s' if places > 1 else ''}"
    more = f", and {len(finer) - 1} later value{'s' if len(finer) > 2 else ''} too" if len(finer) > 1 else ""
    found.add("precision", spec.precision.effect, column, finer, float(raw[t]), float(len(finer)),
              f"{column} {significant(float(raw[t]), 12)} in {series.periods[t]} has more decimals than any of its "
              f"{int(np.isfinite(past).sum())} values since {series.periods[0]} ({unit}){more}: the figure was "
              f"computed or converted differently",
              f"confirm {column} from {series.periods[t]} on with the source (its unit and how it is computed)")


_COARSER_GRIDS = 3
"""Grids judged beyond the column's own: 10, 100 and 1,000 times its resolution."""


def _rounded(found: _Findings, spec: IntegritySpec, column: str) -> None:
    """A run of judged values on a grid coarser than the column's own (sales in whole numbers now all in round tens
    or hundreds: the feed rounds, estimates or converts them), where its past values fell on that grid too rarely
    for such a run by chance: the chance of a value on the grid is the share of its past new values that were
    (Laplace-smoothed), and a run counts where that share raised to the run's length is below
    `precision.max_probability` (as for `stuck`). Only values that moved count (a repeat is `stuck`'s, and says
    nothing of rounding), and a zero is on every grid: it counts neither way. The `precision` rule's effect; judged
    in the columns the metrics read only: a figure rounded is still the figure, and only there can its lost
    precision move a verdict (the Texas file writes listings, which no metric reads, in round tens for months)."""
    series, rule = found.series, spec.precision
    raw = series.values[column]
    past = raw[: series.judged_from]
    if np.isfinite(past).sum() < spec.min_history or decimals(past, 6) is None:
        return
    own = resolution(past, math.inf)
    previous = np.concatenate([[np.nan], raw[:-1]])
    with np.errstate(invalid="ignore"):
        moved = np.isfinite(raw) & (raw != 0) & (raw != previous)
    past_moved = np.flatnonzero(moved[: series.judged_from])
    worst: tuple[float, float, float, list[int]] | None = None
    for power in range(1, _COARSER_GRIDS + 1):
        grid = own * 10.0 ** power
        on = _on_grid_each(np.nan_to_num(raw), grid)
        share = (float(on[past_moved].sum()) + 1) / (len(past_moved) + 2)
        run: list[int] = []
        best: list[int] = []
        for t in range(series.judged_from, series.length):
            if moved[t]:
                run = [*run, t] if on[t] else []
                best = run if len(run) > len(best) else best
        chance = share ** len(best)
        if best and chance < rule.max_probability and (worst is None or chance < worst[0]):
            worst = (chance, grid, float(on[past_moved].mean()) if len(past_moved) else 0.0, best)
    if worst is None:
        return
    chance, grid, share, run = worst
    shown = ", ".join(format_number(float(raw[t])) for t in run[-4:])
    found.add("rounded", rule.effect, column, run, float(raw[run[-1]]), float(len(run)),
              f"{column} is a multiple of {format_number(grid)} in each of its {len(run)} changed values "
              f"{_span([series.periods[run[0]], series.periods[run[-1]]])} ({shown}), a grid {share:.0%} of its past "
              f"values since {series.periods[0]} fell on (written to {format_number(own)}): a run this long has "
              f"probability {chance:.1e}; the figure is rounded, estimated or converted",
              f"confirm {column} from {series.periods[run[0]]} on with the source (rounded or estimated?)")


def _longest_run(match: np.ndarray, first: int) -> list[int]:
    """The indices of the longest run of `match` from index `first` on (the earliest of equally long ones)."""
    run: list[int] = []
    best: list[int] = []
    for t in range(first, len(match)):
        run = [*run, t] if match[t] else []
        best = run if len(run) > len(best) else best
    return best


def _echoed(found: _Findings, spec: IntegritySpec, column: str) -> None:
    """The longest run of judged changes each equal to the change a year earlier (`Series.per_year` periods) to
    the rounding of the four figures, both moves real (an unchanged pair is `stuck`'s), where such a run is too
    improbable (`EchoRule`): the per-change chance is the larger of the entity's past rate of echoes before the
    run and the rounding band's width against the spread of its past differences from a year earlier (a rate
    smoothed up from none, 1 in 46 past changes, would hide a four-change echo of a year ago behind a floor the
    rounding does not justify). On the log scale; positive figures only (a ratio means nothing across zero)."""
    series, rule = found.series, spec.echoed
    lag, raw = series.per_year, series.values[column]
    if lag < 2 or series.length <= lag + 1 + rule.min_periods:
        return
    past = raw[: series.judged_from]
    if not np.isfinite(past).any():
        return
    step = resolution(past[np.isfinite(past)], math.inf)
    with np.errstate(all="ignore"):
        inverse = np.where(raw > 0, 1 / raw, np.nan)
        change = np.full(series.length, np.nan)
        change[1:] = np.log(raw[1:] * inverse[:-1])
        band = np.full(series.length, np.nan)
        band[1:] = step / 2 * (inverse[1:] + inverse[:-1])
        echo, tolerance = np.full(series.length, np.nan), np.full(series.length, np.nan)
        echo[lag:], tolerance[lag:] = change[lag:] - change[:-lag], band[lag:] + band[:-lag]
        moved = np.isfinite(change) & (change != 0)
        judged = np.zeros(series.length, dtype=bool)
        judged[lag:] = moved[lag:] & moved[:-lag] & np.isfinite(echo[lag:]) & np.isfinite(tolerance[lag:])
        match = judged & (np.abs(echo) <= tolerance)
    best = _longest_run(match, max(series.judged_from, lag + 1))
    if len(best) < rule.min_periods:
        return
    before = np.flatnonzero(judged[: best[0]])
    if len(before) < spec.min_history:
        return
    spread = robust(echo[before], series.periods[int(before[0])])
    if spread is None:
        return
    rate = float(match[before].mean())
    per_change = np.maximum(rate, np.minimum(1.0, 2 * tolerance[best] / (spread.scale * math.sqrt(2 * math.pi))))
    chance = float(np.prod(per_change))
    if chance >= rule.max_probability:
        return
    shown = ", ".join(f"{_moved(float(change[t]))} in {series.periods[t]} as in {series.periods[t - lag]}"
                      for t in best[-3:])
    found.add("echoed", rule.effect, column, best, float(raw[best[-1]]), float(len(best)),
              f"{column} moved as it did a year earlier in each of its {len(best)} changes "
              f"{_span([series.periods[best[0]], series.periods[best[-1]]])} ({shown}), to the rounding of the "
              f"figures; its changes since {spread.since} matched a year earlier's so closely {rate:.0%} of the "
              f"time: a run this long has probability {chance:.1e}; last year's figures republished (or rescaled)?",
              f"confirm {column} from {series.periods[best[0]]} on with the source (a year earlier's figures?)")


def _second_differences(raw: np.ndarray, step: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per period, its distance from the straight line through the two periods before (`x[t] - 2x[t-1] + x[t-2]`)
    and from their constant rate (the same on the log scale), each with the band the rounding of the three figures
    to `step[t]` allows (half a step each, weighted 1, 2, 1); NaN where a figure is missing (or not positive, for
    the rate)."""
    n = len(raw)
    line, rate = np.full(n, np.nan), np.full(n, np.nan)
    line_band, rate_band = np.full(n, np.nan), np.full(n, np.nan)
    line[2:] = raw[2:] - 2 * raw[1:-1] + raw[:-2]
    line_band[2:] = 2 * step[2:]
    with np.errstate(all="ignore"):
        positive = np.where(raw > 0, raw, np.nan)
        level, inverse = np.log(positive), 1 / positive
        rate[2:] = level[2:] - 2 * level[1:-1] + level[:-2]
        rate_band[2:] = step[2:] / 2 * (inverse[2:] + 2 * inverse[1:-1] + inverse[:-2])
    return line, line_band, rate, rate_band


def _interpolated(found: _Findings, spec: IntegritySpec, column: str) -> None:
    """The longest run of judged periods each on the straight line, or the constant rate, through the two periods
    before it (to the rounding of the three figures; both moves real: an unchanged pair is `stuck`'s), where such
    a run is too improbable (`InterpolatedRule`): per period, the larger of the entity's past rate of moves so even
    before the run and the two rounding bands' widths against the spread of its past second differences (each on
    its own scale, added)."""
    series, rule = found.series, spec.interpolated
    raw = series.values[column]
    if series.length < 2 + rule.min_periods:
        return
    past = raw[: series.judged_from]
    if not np.isfinite(past).any():
        return
    written = resolution(past[np.isfinite(past)], math.inf)
    if not math.isfinite(written):  # figures on no grid (computed to full precision): no rounding to judge within
        return
    step = np.full(series.length, written)
    for t in range(max(series.judged_from, 2), series.length):  # judged figures written coarser: their own rounding
        if math.isfinite(own := resolution(raw[t - 2: t + 1], math.inf)):
            step[t] = max(step[t], own)
    line, line_band, rate, rate_band = _second_differences(raw, step)
    moved = np.zeros(series.length, dtype=bool)
    moved[1:] = np.isfinite(raw[1:]) & np.isfinite(raw[:-1]) & (raw[1:] != raw[:-1])
    judged = np.zeros(series.length, dtype=bool)
    judged[2:] = moved[2:] & moved[1:-1]
    with np.errstate(invalid="ignore"):
        match = judged & ((np.abs(line) <= line_band) | (np.abs(rate) <= rate_band))
    best = _longest_run(match, max(series.judged_from, 2))
    if len(best) < rule.min_periods:
        return
    before = np.flatnonzero(judged[: best[0]])
    if len(before) < spec.min_history:
        return
    since = series.periods[int(before[0])]
    line_spread, rate_spread = robust(line[before], since), robust(rate[before], since)
    if line_spread is None:
        return
    by_rounding = 2 * line_band[best] / (line_spread.scale * math.sqrt(2 * math.pi))
    if rate_spread is not None:
        by_rounding = by_rounding + 2 * np.nan_to_num(rate_band[best], nan=0.0) / (rate_spread.scale
                                                                                  * math.sqrt(2 * math.pi))
    even = float(match[before].mean())
    chance = float(np.prod(np.maximum(even, np.minimum(1.0, by_rounding))))
    if chance >= rule.max_probability:
        return
    start = best[0] - 2
    shown = ", ".join(format_number(float(v)) for v in raw[start: best[-1] + 1][-6:])
    found.add("interpolated", rule.effect, column, list(range(start, best[-1] + 1)), float(raw[best[-1]]),
              float(len(best)),
              f"{column} moved by an even step or rate in each of its {len(best) + 1} moves "
              f"{_span([series.periods[start], series.periods[best[-1]]])} ({shown}), to the rounding of the figures; "
              f"its moves since {since} were so even {even:.0%} of the time: a run this long has probability "
              f"{chance:.1e}; figures filled in (interpolated or carried forward), not measured?",
              f"confirm {column} from {series.periods[start + 1]} on with the source (filled in, not measured?)")


def _exact_fit(series: Series, spec: IntegritySpec, identity: Identity) -> exact.ExactFit | None:
    """The identity's exact fit on the entity's own past (`exact.fit`), where one side is a bare column written
    rounded; None where it has no such form or the past does not hold it to the rounding."""
    form = identity.rounded
    if form is None or form.column not in series.values:
        return None
    values = series.values[form.column]
    past = values[: series.judged_from]
    if decimals(past, 6) is None:
        return None
    other = expressions.evaluate_series(form.other, series.values)
    return exact.fit(values, other, resolution(past, math.inf), series.judged_from, spec.min_history)


def _exact_identity(found: _Findings, identity: Identity, fit: exact.ExactFit) -> bool:
    """Judged periods where the identity's rounded column is not the value the other columns give, rounded; True
    where there are any (a finding added)."""
    series = found.series
    assert identity.rounded is not None
    column, other = identity.rounded.column, identity.rounded.other.text
    off = [t for t in range(series.judged_from, series.length) if not fit.holds(t)]
    if not off:
        return False
    latest, worst = off[-1], max(off, key=lambda t: float(fit.off[t]))
    value = float(series.values[column][latest])
    since = series.periods[int(np.flatnonzero(np.isfinite(fit.off))[0])]
    more = "" if len(off) == 1 else (
        f"; {len(off) - 1} earlier judged period{'s' if len(off) > 2 else ''} off too"
        + ("" if worst == latest else f", the most {float(fit.off[worst]):.1f} steps in {series.periods[worst]}"))
    names = "/".join(sorted(identity.parsed.names))
    past = f"all {fit.checked}" if fit.held == fit.checked else f"{fit.held} of the {fit.checked}"
    found.add(f"exact:{identity.name}", identity.effect, column, off, value, float(fit.off[latest]),
              f"{column} {format_number(value)} in {series.periods[latest]} is not {other} = "
              f"{format_number(float(fit.implied[latest]))} written to {format_number(fit.step)}: it is "
              f"{float(fit.off[latest]):.2f} steps of {format_number(fit.step)} away, more than rounding allows, "
              f"though {past} of its past periods since {since} were within rounding ({identity.name}){more}",
              f"confirm {_span([series.periods[t] for t in off])} {names} with the source")
    return True


def _identity(found: _Findings, spec: IntegritySpec, identity: Identity,
              fit: exact.ExactFit | None = None) -> None:
    series = found.series
    ratio = expressions.evaluate_series(identity.parsed, series.values)
    with np.errstate(all="ignore"):
        level = np.where(ratio > 0, np.log(ratio), np.nan)
    columns = "/".join(sorted(identity.parsed.names))
    judged = np.arange(series.judged_from, series.length)
    judged = judged[np.isfinite(level[judged])]
    if fit is not None and _exact_identity(found, identity, fit):
        return  # exact to the rounding in the entity's past: a band of MADs would only blur it
    if not len(judged):
        return
    own = _yardstick(series, level, spec.min_history, start=0)
    own_history = own is not None and np.isfinite(level[: series.judged_from]).sum() >= spec.min_history
    if own is not None and fit is None:
        z = np.array([own.z(level[t]) for t in judged])
        single = int(np.argmax(np.abs(z)))
        persistent = (0.0, 0)
        for s in range(len(judged) - 2):
            tail = z[s:]
            typical = float(np.median(tail))
            stat = abs(typical) * math.sqrt(len(tail)) / 1.2533  # the median of k values, in its own SDs
            if abs(typical) >= 2 and stat > abs(persistent[0]):
                persistent = (math.copysign(stat, typical), s)
        usual = math.exp(own.median)
        if abs(z[single]) >= identity.threshold_mads:
            t = int(judged[single])
            found.add(f"identity:{identity.name}", identity.effect, identity.name, [t], float(ratio[t]),
                      float(abs(z[single])),
                      f"{identity.name} ({identity.ratio}) is {format_number(float(ratio[t]))} in {series.periods[t]}: "
                      f"{abs(z[single]):.1f} MADs {'above' if z[single] > 0 else 'below'} its usual "
                      f"{format_number(usual)} "
                      f"(± {own.scale:.1%}) since {own.since}",
                      f"confirm {series.periods[t]} {columns} with the source")
            return
        if abs(persistent[0]) >= identity.threshold_mads:
            indices = [int(t) for t in judged[persistent[1]:]]
            typical_ratio = float(np.median(ratio[indices]))
            found.add(f"identity:{identity.name}", identity.effect, identity.name, indices, typical_ratio,
                      float(abs(persistent[0])),
                      f"{identity.name} ({identity.ratio}) has been {format_number(typical_ratio)} since "
                      f"{series.periods[indices[0]]} (the median of those {len(indices)} periods), off its usual "
                      f"{format_number(usual)} (± {own.scale:.1%}) since {own.since}: {abs(persistent[0]):.1f} MADs "
                      "as a run",
                      f"confirm {columns} since {series.periods[indices[0]]} with the source")
            return
    if identity.expected is None:
        return
    low, high = identity.expected
    recent = float(np.median(ratio[judged]))
    own_inside = own_history and own is not None and low <= math.exp(own.median) <= high
    if not low <= recent <= high and not own_inside:
        indices = [int(t) for t in judged]
        found.add(f"identity:{identity.name}", identity.effect, identity.name, indices, recent, None,
                  f"{identity.name} ({identity.ratio}) is {format_number(recent)} over "
                  f"{_span([series.periods[i] for i in indices])}, "
                  f"outside the domain's band {format_number(low)}-{format_number(high)}"
                  + ("" if own_history else " (too little own history to judge it against)"),
                  f"confirm {columns} with the source")


def _cross_section(found: _Findings, spec: IntegritySpec, column: str, peers: Mapping[str, float]) -> None:
    series = found.series
    if peers.get("count", 0) < _MIN_PEERS:
        return
    change = latest_change(series.values[column])
    if change is None:
        return
    z = (change - peers["median"]) / max(peers["scale"], _MIN_SCALE)
    if abs(z) >= spec.cross_section.threshold_mads:
        last = series.length - 1
        found.add("cross_section", spec.cross_section.effect, column, [last - 1, last],
                  float(series.values[column][last]), abs(z),
                  f"{column} moved {_moved(change)} into {series.periods[last]}: {abs(z):.1f} MADs "
                  f"{'above' if z > 0 else 'below'} tonight's {int(peers['count'])} entities (typically "
                  f"{_moved(peers['median'])} ± {peers['scale']:.1%})")


def _copied(found: _Findings, spec: IntegritySpec, column: str, copied: CopiedFigures) -> None:
    """The scan found the column's latest figures in other entities' (`verifications.copies`)."""
    series = found.series
    values = series.values.get(column)
    if values is None:
        return
    last = series.length - 1
    indices = list(range(last - copied.periods + 1, last + 1))
    shown = ", ".join(format_number(float(values[i])) for i in indices)
    whose = ", ".join(copied.others[:3]) + (f" and {len(copied.others) - 3} more" if len(copied.others) > 3 else "")
    span = _span([series.periods[i] for i in indices])
    what = (f"are {whose}'s figures exactly, period for period: another entity's data (a join on the wrong key?)"
            if copied.scale is None else
            f"are {whose}'s figures times {copied.scale:.3g}, change for change within rounding: another entity's "
            "data rescaled (imputed from a donor, a borrowed history?)")
    found.add("copied", spec.copied.effect, column, indices, float(values[last]), float(copied.periods),
              f"{column} {shown} in {span} {what}; the chance of such a coincidence is {copied.chance:.1g} "
              f"({copied.basis})",
              f"confirm {span} {column} with the source: it matches {whose}'s")


def _refused(found: _Findings, spec: IntegritySpec, refused: Sequence[Refusal]) -> None:
    """The entity's figures in the periods judged that the source refused when read: one finding per column (or
    for whole rows), naming its periods and why."""
    index = {period: i for i, period in enumerate(found.series.periods)}
    by_column: dict[str, list[Refusal]] = {}
    for refusal in refused:
        if refusal.period in index:
            for column in refusal.columns or ["row"]:
                by_column.setdefault(column, []).append(refusal)
    for column, refusals in sorted(by_column.items()):
        indices = sorted({index[r.period] for r in refusals})
        periods = [found.series.periods[i] for i in indices]
        what = "the whole row" if column == "row" else column
        why = "; ".join(dict.fromkeys(r.why for r in refusals))
        found.add("refused", spec.refused.effect, column, indices, None, float(len(indices)),
                  f"{what} in {_span(periods)} was refused when the source was read ({why}): the night reads "
                  f"{'it' if len(indices) == 1 else 'them'} as a gap, but the feed wrote a bad figure in a period the "
                  "metrics reach",
                  f"confirm {_span(periods)} {'rows' if column == 'row' else column} with the source")


_MIN_SHARE_SCALE = 0.02
"""Floor of the scale of an entity's past shares of copied events: a past with none is no yardstick of zero width."""


def _repeated_events(found: _Findings, spec: IntegritySpec, periods: Sequence[RepeatedEvents]) -> None:
    """The judged period whose share of rows repeating another far exceeds the entity's past periods' shares."""
    rule = spec.repeated_events
    index = {period: i for i, period in enumerate(found.series.periods)}
    dated = [(index[p.period], p) for p in periods if p.period in index and p.events > 0]
    past = [(t, p.repeated / p.events) for t, p in dated if t < found.series.judged_from]
    stick = robust(np.array([share for _, share in past]), found.series.periods[past[0][0]]) if past else None
    worst: tuple[float, int, RepeatedEvents] | None = None
    for t, p in dated:
        share = p.repeated / p.events
        if t < found.series.judged_from or share < rule.min_share:
            continue
        z = (share - stick.median) / max(stick.scale, _MIN_SHARE_SCALE) if stick is not None else math.inf
        if (z >= rule.threshold_mads if stick is not None else share >= 0.5) and (worst is None or z > worst[0]):
            worst = (z, t, p)
    if worst is None:
        return
    z, t, p = worst
    share = p.repeated / p.events
    against = (f"against {stick.median:.0%} ± {max(stick.scale, _MIN_SHARE_SCALE):.0%} in its past periods since "
               f"{stick.since} ({z:.1f} MADs above)") if stick is not None else "with too few past periods to judge "\
        "against, and every row having a twin on average"
    found.add("repeated_events", rule.effect, "events", [t], share, None if stick is None else z,
              f"{p.repeated} of the {p.events} rows read in {p.period} repeat another of them in every column the "
              f"night reads ({share:.0%}), {against}: a feed loaded twice counts each copy again in every count and "
              "sum", f"confirm {p.period}'s rows with the source (sent twice?)")


# ---- public surface --------------------------------------------------------------------------------------
def latest_change(values: np.ndarray) -> float | None:
    """The latest period-on-period change (log scale), if both periods have a value."""
    if len(values) < 2 or not (math.isfinite(values[-1]) and math.isfinite(values[-2])):
        return None
    return float(period_changes(values)[-1])


def two_period_changes(before: np.ndarray, now: np.ndarray) -> np.ndarray:
    """`latest_change` of each pair (before, now) at once: NaN where either is missing or not positive enough (the
    night's cross-section takes one per entity and column: tens of thousands on a wide night)."""
    positive = (before > 0).astype(float) + (now > 0).astype(float)
    total = np.where(before > 0, before, 0.0) + np.where(now > 0, now, 0.0)
    with np.errstate(all="ignore"):
        offset = np.where(positive > 0, 0.01 * total / np.maximum(positive, 1.0), 1.0)
        valid = np.isfinite(before) & np.isfinite(now) & (before + offset > 0) & (now + offset > 0)
        return np.where(valid, np.log(now + offset) - np.log(before + offset), np.nan)


def night_peers(before: Mapping[str, np.ndarray], now: Mapping[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """The night's cross-section: per column, the median, robust scale and count of every scanned entity's latest
    period-on-period change (`before` and `now`: each column's two latest values, one entity a position). A
    reference distribution, never a ranking."""
    out: dict[str, dict[str, float]] = {}
    for column, latest in now.items():
        stick = robust(two_period_changes(before[column], latest), "")
        if stick is not None:
            out[column] = {"median": stick.median, "scale": stick.scale, "count": float(stick.count)}
    return out


def check(pack: CriteriaPack, candidate: Candidate) -> list[DataFinding]:
    """Every integrity and plausibility finding on the candidate's rows, each with its rule's effect."""
    spec = pack.integrity
    columns = pack.columns
    series = series_of(candidate, columns, pack.max_window + 1, pack.grain)
    if series is None:
        return []
    found = _Findings(series)
    filled = np.column_stack([np.isfinite(series.values[c]) for c in columns]).sum(axis=1)
    rows_reported = np.flatnonzero(filled >= max(1, len(columns) - 1))
    latest_row = int(rows_reported[-1]) if len(rows_reported) else -1  # the entity's latest (nearly) full row
    fits = {i.name: _exact_fit(series, spec, i) for i in spec.identities}
    signed = pack.source.signed_panel_columns
    read = {c for m in pack.metrics.values() for c in [m.column, *(m.columns or [])] if c is not None}
    for column in columns:
        if np.isfinite(series.values[column]).sum() < 2:
            continue
        _shifts(found, spec, column)
        _out_of_range(found, spec, column, column in signed)
        _stuck(found, spec, column, [fit for i in spec.identities if (fit := fits[i.name]) is not None
                                     and i.rounded is not None and i.rounded.column == column])
        _stale(found, spec, column, latest_row)
        _precision(found, spec, column)
        _echoed(found, spec, column)
        _interpolated(found, spec, column)
        if column in read:
            _rounded(found, spec, column)
        if column in candidate.peers:
            _cross_section(found, spec, column, candidate.peers[column])
    for column, copied in sorted(candidate.copies.items()):
        _copied(found, spec, column, copied)
    if pack.source.shape != "events":
        _refused(found, spec, candidate.refused)
    else:
        _repeated_events(found, spec, candidate.repeated_events)
    if len(columns) >= spec.repeated_rows.min_columns:
        _repeated_rows(found, spec, columns)
    for identity in spec.identities:
        _identity(found, spec, identity, fits[identity.name])
    return found.items


_WHAT = {"level_shift": "level shift", "spike": "one-period spike or drop", "cross_section": "outlier against tonight's"
         " entities"}


def headline(finding: DataFinding, *, blinded: bool = False) -> str:
    """The finding in a few words, with only numbers its record holds (value, size) and its periods, or with
    periods counted back from the latest when `blinded` (a model prompt holds no calendar dates)."""
    def when(i: int) -> str:
        return f"{finding.periods_back[i]} periods back" if blinded else finding.periods[i]

    if finding.rule.startswith("red_flag:"):
        return f"red flag {finding.column}"
    if finding.rule == "repeated_row":
        return f"the row {when(-1)} repeats the row {when(0)}"
    if finding.rule == "stuck":
        return f"{finding.column} unchanged for {finding.size:.0f} periods to {when(-1)}"
    if finding.rule == "precision":
        return f"{finding.column} has more decimals than ever from {when(0)}"
    if finding.rule == "rounded":
        return f"{finding.column} on a coarser grid than ever for {finding.size:.0f} values to {when(-1)}"
    if finding.rule == "echoed":
        return f"{finding.column} moving as a year earlier for {finding.size:.0f} changes to {when(-1)}"
    if finding.rule == "interpolated":
        return f"{finding.column} moving by an even step for {finding.size:.0f} periods to {when(-1)}"
    if finding.rule == "copied":
        return f"{finding.column} equals another entity's figures for the {finding.size:.0f} periods to {when(-1)}"
    if finding.rule.startswith("exact:"):
        return (f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)} is {finding.size:.1f} rounding "
                f"steps from what its identity {finding.rule.removeprefix('exact:')} gives, more than rounding allows")
    if finding.rule == "repeated_events":
        return f"rows of {when(-1)}: {format_number(finding.value or 0.0)} of them copies of another"
    if finding.rule == "refused":
        what = "the whole row" if finding.column == "row" else finding.column
        where = when(-1) if len(finding.periods) == 1 else f"{when(0)} to {when(-1)}"
        return f"{what} in {where} refused when read"
    if finding.rule == "out_of_range":
        return (f"{finding.column} {format_number(finding.value or 0.0)} in {when(-1)}: {finding.size:.0f} times "
                "beyond every earlier value")
    if finding.rule == "stale":
        return f"{finding.column} last reported {when(-1)}, {finding.size:.0f} periods behind"
    value = "" if finding.value is None else f" {format_number(finding.value)}"
    where = when(-1) if len(finding.periods) == 1 else f"{when(0)} to {when(-1)}"
    if finding.size is None:
        return f"{finding.column}{value} over {where}, outside the domain's band"
    what = _WHAT.get(finding.rule, "off its own band")
    return f"{finding.column}{value} in {where}: {finding.size:.1f} MADs, {what}"


def history_summary(pack: CriteriaPack, candidate: Candidate) -> dict[str, dict[str, Any]]:
    """A compact, dateless summary of each column's own history for the model verifier: the latest value, its
    latest period-on-period change and how that compares with the entity's past changes."""
    series = series_of(candidate, pack.columns, pack.max_window + 1, pack.grain)
    if series is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for column in pack.columns:
        raw = series.values[column]
        present = np.flatnonzero(np.isfinite(raw))
        if not len(present):
            continue
        step = period_changes(raw)
        stick = _yardstick(series, step, pack.integrity.min_history)
        last = int(present[-1])
        entry: dict[str, Any] = {"latest": float(raw[last]), "periods_back": series.back(last),
                                 "periods_kept": len(present)}
        if stick is not None and math.isfinite(step[last]):
            entry["latest_change"] = _moved(step[last])
            entry["typical_change"] = f"{_moved(stick.median)} ± {stick.scale:.1%}"
            entry["latest_change_mads"] = round(stick.z(step[last]), 1)
        out[column] = entry
    return out
