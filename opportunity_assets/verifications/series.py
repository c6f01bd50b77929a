"""One candidate's rows as arrays, and the yardsticks the data checks measure them with (DESIGN §7b).

Pure: the robust location and scale (median and MAD) of an entity's own past, changes on a log scale, the grid a
column is written on (its resolution) and the chance it repeats; and the findings every rule adds to, each filed
under INPUTS or ASSUMPTIONS by its rule. `integrity.py` runs the rules; this module holds what they share.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from opportunity_assets.formatting import percent_change, significant
from opportunity_assets.periods import Grain
from opportunity_assets.records import Candidate, DataFinding

MIN_SCALE = 0.005
"""Floor of a robust scale on the log scale (0.5%): a column rounded to a few values must not make every move
look enormous."""
MIN_SAMPLE = 6
"""Fewest values a robust yardstick is computed from."""
DOMAIN_CHANGES = 12
"""Changes the domain's scale counts as where a short history's scale is pulled toward it (`widened`): a year of a
monthly source's, twelve of an annual panel's."""
_MIN_AT_BOUND = 3
"""Times a column stood at its bound before its rate of staying there is a yardstick of its own."""
INTEGRITY_RULES = ("stuck", "repeated_row", "stale", "precision", "rounded", "copied", "echoed", "interpolated",
                   "refused", "repeated_events", "partial_period", "absorbed")
"""Rules (besides identities) reported under INPUTS; the others under ASSUMPTIONS."""


@dataclass(frozen=True)
class Yardstick:
    """Robust location and scale of a sample, and where it comes from."""

    median: float
    scale: float
    """1.4826 × MAD, floored (see `MIN_SCALE`)."""
    count: int
    since: str
    """First period of the sample, `YYYY-MM`."""

    def z(self, value: float) -> float:
        return (value - self.median) / self.scale


def band_chance(width: float, spread: float, distance: float = 0.0) -> float:
    """The chance that a move spread normally (standard deviation `spread`) about its centre lands in a band `width`
    wide `distance` from that centre: the density there times the width, at most 1. A figure's step over its moves'
    spread is the chance it stays put, or follows another's figure, by its rounding alone."""
    z = distance / spread
    return min(1.0, width * math.exp(-z * z / 2) / (spread * math.sqrt(2 * math.pi)))


def robust_scale(sample: np.ndarray, centre: float) -> float:
    """The robust scale of `sample` (finite values) about `centre`: 1.4826 × its median absolute deviation, which is
    the standard deviation for normal data, or, where more than half the values sit on the centre, 1.2533 × the mean
    absolute deviation (likewise). 0 for no values."""
    if not len(sample):
        return 0.0
    distance = np.abs(sample - centre)
    mad = float(np.median(distance))
    return 1.4826 * mad if mad > 0 else 1.2533 * float(np.mean(distance))


def robust(values: np.ndarray, since: str) -> Yardstick | None:
    """Median and MAD-scale of the finite values, or None with fewer than `MIN_SAMPLE`."""
    sample = values[np.isfinite(values)]
    if len(sample) < MIN_SAMPLE:
        return None
    median = float(np.median(sample))
    return Yardstick(median=median, scale=max(robust_scale(sample, median), MIN_SCALE), count=len(sample),
                     since=since)


def log_level(values: np.ndarray, signed: bool = False) -> np.ndarray:
    """log(x + 1% of the column's median positive level): defined at zero, a ratio scale elsewhere. A column that
    goes negative (a delay, a balance, a growth rate) has no log: asinh(x / its median size) instead, about linear
    within its usual size, where it crosses zero, and logarithmic beyond it, so a unit slip (minutes written as
    seconds) is as far out there as on a count. So has a column the pack declares `signed` while its kept values
    happen to stay positive (a log exchange rate above zero for years): on the log scale its ordinary moves near
    zero, 0.084 to 0.003, would be a fall of 96%, many times any move it made further from zero."""
    finite = values[np.isfinite(values)]
    with np.errstate(all="ignore"):
        if len(finite) and (signed or bool((finite < 0).any())):
            size = np.abs(finite[finite != 0])
            return np.arcsinh(values / (float(np.median(size)) if len(size) else 1.0))
        return np.log(values + _offset(finite))


COUNT_OFFSET = 0.5
"""The least offset of a count's log (`_offset`): half its unit, the started log of counts."""


def _offset(finite: np.ndarray) -> float:
    """What `log_level` adds before the log: 1% of the column's median positive level, so that zero has a log and
    the scale is a ratio's elsewhere; for a column of whole numbers (a count), at least half a unit. A count of a
    few events a period goes to 0 by chance: at 1% of a median of 2, 2 -> 0 was a fall of 4.6 on the log scale,
    ten times one event's step, and read as a level shift (trial 47: a state's data breaches, 2, 0, 0, 2 a quarter,
    "4.6 MADs ... and it stays"). At half a unit it is 1.6, as far as 2 -> 10; a count in the hundreds is as before."""
    positive = finite[finite > 0]
    offset = 0.01 * float(np.median(positive)) if len(positive) else 1.0
    return max(offset, COUNT_OFFSET) if len(finite) and on_grid(finite, 1.0) else offset


def unit_step(values: np.ndarray, signed: bool = False) -> float:
    """For a column of whole numbers (a count), the change one unit makes at its median level on the log scale:
    no move of a count is smaller, so its yardstick's scale is never below it (a route going from 2 carriers to
    3 is one step, not a level shift). 0 for a column with fractions. `signed`: as `log_level`'s."""
    finite = values[np.isfinite(values)]
    if not len(finite) or not on_grid(finite, 1.0):
        return 0.0
    pair = np.array([float(np.median(finite)), float(np.median(finite)) + 1.0])
    signed = signed or bool((finite < 0).any())  # then on the column's own scale (`log_level`)
    level = log_level(np.concatenate([finite, pair]), signed)[-2:] if signed else np.log(pair + _offset(finite))
    return float(level[1] - level[0])


def period_changes(values: np.ndarray, signed: bool = False) -> np.ndarray:
    """Each period's change from the one before on the log scale (`log_level`; `signed`: a column the pack declares
    may go negative); NaN for the first period and wherever either value is missing."""
    return _steps(log_level(values, signed))


def _steps(level: np.ndarray) -> np.ndarray:
    """Each period's change of `level` from the one before; NaN for the first period and where either is NaN."""
    step = np.full(len(level), np.nan)
    step[1:] = level[1:] - level[:-1]
    return step


def is_share(values: np.ndarray) -> bool:
    """Whether a column's kept values are a proportion, each within [0, 1]: a share a percent slip took out of
    that range is judged on `log_level`'s scale, as any column."""
    finite = values[np.isfinite(values)]
    return bool(len(finite)) and bool(((finite >= 0) & (finite <= 1)).all())


def share_level(values: np.ndarray) -> np.ndarray:
    """A share (`is_share`) on the arcsine-square-root scale, the scale on which a proportion of n events has the
    same noise, 1 / (4n), at any level."""
    return np.arcsin(np.sqrt(np.clip(values, 0.0, 1.0)))


def share_changes(values: np.ndarray) -> np.ndarray:
    """Each period's change of a share from the one before on `share_level`'s scale: on the log scale a share of
    three events going from a third to none was a fall of 4.6, as far as a hundredfold slip (trial 47: "theft_share
    0 moved -100%: 6.7 MADs"); here it is 0.62, about twice one event's noise."""
    return _steps(share_level(values))


def share_noise(events: np.ndarray) -> np.ndarray:
    """Per period, the binomial noise of a share's change from the period before (`share_changes`' scale) given
    each period's count of events: √(1/(4n₁) + 1/(4n₂)), with no real change at all. A share of 2 or 3 events
    moves by halves and thirds, 0.5 to 0.7 on that scale, by chance alone; no yardstick of a change is narrower
    than that. NaN where either count is unknown."""
    with np.errstate(all="ignore"):
        inverse = np.where(events > 0, 1.0 / events, np.nan)
    noise = np.full(len(events), np.nan)
    noise[1:] = 0.5 * np.sqrt(inverse[1:] + inverse[:-1])
    return noise


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


def yardstick(series: Series, changes: np.ndarray, min_history: int, *, start: int = 1,
              domain: float | None = None) -> Yardstick | None:
    """The entity's own yardstick: the changes before the judged span if there are enough, else all of them; its
    scale widened toward `domain` (`widened`) where its changes are few."""
    past = changes[: series.judged_from]
    stick = robust(past if np.isfinite(past).sum() >= min_history else changes, series.periods[start])
    return stick if stick is None or domain is None else widened(stick, domain)


def unit_sized(move: float, unit_slip: float) -> bool:
    """Whether a change (log scale) lies nearer a unit slip (`unit_slip`: `out_of_range.factor`, either way) than no
    change at all (a move, or a figure's distance from another's): beyond its square root, ×3.2 or -68% for the
    default 10. A unit change comes with the period's own move (×0.1 with a usual +2% is ×0.102), so the factor
    itself would be a coin's toss."""
    return abs(move) >= 0.5 * math.log(unit_slip)


def widened(stick: Yardstick, domain: float) -> Yardstick:
    """The entity's scale pulled toward the domain's (`domain`: the robust scale of tonight's entities' changes of
    the same column), each weighted by the changes behind it: the entity's `count`, the domain's
    `DOMAIN_CHANGES` (an empirical-Bayes mean on the log scale). A MAD of a dozen changes is itself uncertain (its
    spread is about ±1.2/√n of it, ±35% at 12), and an entity whose few changes happened to be alike read its
    domain's ordinary moves as 4-10 MADs (trial 48: a state's cigarette sales +7% against ± 1.7% of six changes);
    with a hundred changes (a monthly market since 2000) its own scale keeps nine tenths of the weight. Never
    narrowed: an entity noisier than its peers is still measured by its own noise, not by calmer entities'."""
    weight = stick.count / (stick.count + DOMAIN_CHANGES)
    pooled = math.exp(weight * math.log(stick.scale) + (1 - weight) * math.log(max(domain, MIN_SCALE)))
    return dataclasses.replace(stick, scale=max(stick.scale, pooled))


def format_number(value: float) -> str:
    """A source value as findings write it (the brief's number check reads it back the same way)."""
    return significant(value, 3 if value != 0 and abs(value) < 1 else 4)


def as_percent(change: float) -> str:
    return percent_change(math.expm1(change))


def period_span(periods: Sequence[str]) -> str:
    return periods[0] if len(periods) == 1 else f"{periods[0]}..{periods[-1]}"


class Findings:
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
            to_resolve=resolve or f"confirm {period_span(periods)} {column} with the source"))


DECIMALS = 6
"""The most decimals a column's step is looked for in by default (`resolution`, `resolutions`)."""

FINEST_DECIMALS = 12
"""The most decimals a figure's step is looked for in where only its last written digit matters (a copy, a row
carried forward): Swedish municipalities' spending per head is written to 7 (Ecdat MunExp, trial 132)."""


def resolution(values: np.ndarray, smallest_change: float, most: int = DECIMALS) -> float:
    """The step the column is written in: the largest power of ten all its values are multiples of (0.1 for
    whole tenths, 1 for a count, 100 for prices rounded to hundreds), looked for to `most` decimals; its smallest
    change where its values are not written on such a grid."""
    finite = values[np.isfinite(values)]
    places = decimals(finite, most)
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
            keep[start:start + len(part)] = np.all(on_grid_each(part, 10.0 ** power) | ~np.isfinite(part), axis=1)
    return rows[keep]


def resolutions(values: np.ndarray, most: int = DECIMALS) -> np.ndarray:
    """`resolution(row, math.inf)` of each row of a matrix at once (NaN where a row has no finite value): every
    entity's step without one Python call per entity (a wide night has 10k). As `resolution` does: rows of whole
    numbers climb by tens while on the grid (to 1e9), the others take the fewest decimals (to `most`) that hold them;
    each power is tested only on the rows still climbing or looking, mostly two passes in all."""
    out = np.full(len(values), math.inf)
    rows = np.flatnonzero(np.isfinite(values).any(axis=1))
    whole = _rows_on_grid(values, rows, 0)
    out[whole] = 1.0
    for power in range(1, 10):
        whole = _rows_on_grid(values, whole, power)
        out[whole] = 10.0 ** power
    looking = rows[np.isinf(out[rows])]  # no whole numbers: the fewest decimals
    for power in range(-1, -most - 1, -1):
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
    ceiling, a week's 168 hours, repeats by design). None with fewer than `MIN_SAMPLE` changes."""
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
    if len(diffs) < MIN_SAMPLE:
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
    # a rounded column are themselves rounded, so a slow trend's median change is one whole step), made rarer
    # where the changes centre well away from 0 (`_off_zero`)
    step = written_step(values, float(moved.min()))
    by_resolution = step / (spread * math.sqrt(2 * math.pi)) * _off_zero(centre, step, spread, len(diffs))
    return min(1.0, max(rate, by_resolution))


_SINGLE_DIGITS = 7
"""Significant digits of a single-precision float, as many feeds store figures they print as doubles."""


def written_step(values: np.ndarray, smallest_change: float) -> float:
    """`resolution`, or, for figures written with more decimals than it reads (a single-precision float printed
    as a double), the resolution of the figures to their `_SINGLE_DIGITS` significant digits, as the float holds
    them: 126.154060363770 is 126.1541, on a grid of 0.0001; a tax of 32.5000038146973 is 32.5, on a grid of 0.1
    (a rate set in round figures). Such a column's smallest past change (0.21 packs a head) is no step it is
    written in, and taken as one it made an exact repeat of a seven-digit figure look as likely as a move of 0.2.
    (`copied` keeps the smallest change: a national index every entity carries, 1.076, 1.096, on a panel too short
    for its past coincidences to be counted, would be every entity's copy.)"""
    finite = values[np.isfinite(values)]
    if not len(finite) or decimals(finite, 6) is not None:
        return resolution(values, smallest_change)
    held = np.array([float(f"{v:.{_SINGLE_DIGITS}g}") for v in finite])
    return resolution(held, smallest_change)


def _off_zero(centre: float, step: float, spread: float, changes: int) -> float:
    """How much rarer than at its centre a change within a step of zero is, for a column whose changes centre
    more than a step away from zero (a population growing 2% a year, every change +700 ± 40, never stands still
    by chance): the normal density at zero against at the centre, the centre taken a step nearer zero (a slow
    trend of a rounded column moves by one step). Never below 1 / (changes + 1): a past of that many changes
    none near zero rules out no rarer chance (changes have heavier tails than a normal's)."""
    far = max(0.0, abs(centre) - step) / spread
    return max(math.exp(-0.5 * far * far), 1.0 / (changes + 1))


def decimals(values: np.ndarray, most: int) -> int | None:
    """The fewest decimals (0 to `most`) every finite value is written with; None if some need more."""
    finite = values[np.isfinite(values)]
    return next((places for places in range(most + 1) if on_grid(finite, 10.0 ** -places)), None)


_GRID_SLACK = 1e-3
"""The most of a step that counts as the error of writing a figure as a float. A relative 1e-9 alone grows with the
figure: a GDP of 2,940,224,847,627 is 294 million steps of 10,000 and .76 of one, and 1e-9 of 294 million is .29
of a step, so every whole figure in the trillions read as a multiple of 10,000, and the `rounded` rule doubted
figures written to the dollar as rounded (trial 47). A float's own error in such a quotient is below a millionth
of a step up to figures of 10^9 steps."""


def on_grid(values: np.ndarray, step: float) -> bool:
    """Every value a whole multiple of `step`, up to the error of writing it as a float (a relative 1e-9, at most
    `_GRID_SLACK` of a step: 2.3 is 23 tenths, 1,234,567.5 is not a whole number, 2,940,224,847,627 is no
    multiple of 10,000)."""
    return bool(np.all(on_grid_each(values, step)))


def on_grid_each(values: np.ndarray, step: float) -> np.ndarray:
    """`on_grid` of each value apart; a value too large to scale (1e308 over a step below 1) is on no grid, with no
    numpy warning on the night's stderr (trial 59: "RuntimeWarning: overflow encountered in divide")."""
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = values / step
        slack = np.minimum(1e-9 * np.maximum(1.0, np.abs(scaled)), _GRID_SLACK)
        return np.abs(scaled - np.round(scaled)) <= slack


