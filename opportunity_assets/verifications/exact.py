"""Identities that hold exactly, up to the rounding of one column (DESIGN §7b).

A derived column written rounded is not merely *near* the value its identity gives from the other columns: it *is*
that value, rounded. Texas writes months of inventory in tenths, and in every one of its 6,622 rows with a full
year of sales it equals listings / 12-month average sales to within half a tenth (measured on the bundled file;
3,615 rows of the design period alike). Judged as a ratio against a band of MADs, that identity is blurred by
its own rounding (a market near 2 months moves 2.5% a tenth); judged exactly, a period off by more than half a
rounding step cannot be the rounding: a column of the identity was changed after the derived figure was
computed (a shifted, stuck, lagged, borrowed or drifting feed), and no clean period is ever doubted by it.

Pure: the identity's form (`rounded_form`), and the fit of one entity's history (`fit`). Whether an identity is
exact is decided by the entity's own past, never declared: where its past periods are not all within rounding
(`EXACT_SHARE`), the identity is judged against its band as before (`integrity._identity`).

An identity of any other form (a chained index over its own lag and a return, `index / (lag(index, 1) * (1 +
ret))`) that held in the entity's past far tighter than a band of MADs can judge (its spread below the yardstick's
floor, `series.MIN_SCALE`, 0.5%) is judged against the bound its own past kept to (`tight`): trial 116's index
drifting 1% a month beside its returns was 2 floor-MADs a month, never a finding, while 98% of its past periods
were within a few millionths.

The fit: the identity `column / other` (or `other / column`) with `column` written in steps of `step` holds
exactly when `column = round(k × other, step)` for one factor k. Each period allows k an interval
`[(column − step/2) / other, (column + step/2) / other]`; the factors allowed by (nearly) every past period are
the fit, and a period whose interval misses them is off by the distance in steps shown in `ExactFit.off`.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

import numpy as np

from opportunity_assets import expressions
from opportunity_assets.verifications.series import robust_scale

EXACT_SHARE = 0.98
"""Share of the entity's past periods that must hold within rounding for the identity to count as exact (one
miss in 50 is tolerated: a revised figure, a rounding of the source's own)."""
_SHORT_MIN = 6
"""Fewest past periods to fit on where the entity has fewer than `min_history` (early in the data): then every
one of them must hold, and the rounding step must be fine (`_SHORT_STEP`), so that holding is not luck."""
_SHORT_STEP = 0.025
"""Largest rounding step, relative to the column's typical level, for a fit on a short past: a figure written to
within ±1.25% agrees with a ratio that is not an identity for six periods running by luck well under 1 in 1,000."""
_SLACK = 1e-6
"""Steps of slack for writing decimals as floats (4.65 is not exactly 93 / 20 in binary)."""


@dataclass(frozen=True)
class RoundedForm:
    """An identity read as `column = k × other`, the column written rounded."""

    column: str
    """The bare source column on one side of the ratio's division."""
    other: expressions.Expression
    """The other side, a series expression over the other columns."""


def rounded_form(ratio: expressions.Expression) -> RoundedForm | None:
    """`column / other` or `other / column` with a bare column name; None for any other shape (no side of it is one
    rounded figure)."""
    body = ratio.tree.body
    if not (isinstance(body, ast.BinOp) and isinstance(body.op, ast.Div)):
        return None
    for side, other in ((body.left, body.right), (body.right, body.left)):
        if isinstance(side, ast.Name) and side.id not in (other_names := _names(other)) and other_names:
            return RoundedForm(column=side.id, other=expressions.parse_series(expressions.quoted(other)))
    return None


def _names(node: ast.AST) -> set[str]:
    calls = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in calls}


@dataclass(frozen=True)
class ExactFit:
    """One entity's identity, found exact in its own past."""

    step: float
    """The column's rounding step (0.1 for whole tenths)."""
    factor: tuple[float, float]
    """The factors k allowed by the past: `column = round(k × other, step)` (about 1 for a true identity)."""
    held: int
    """Past periods within rounding of the fit."""
    checked: int
    """Past periods with both sides of the identity."""
    implied: np.ndarray
    """Per period, the column's value the other columns give (the fit's middle factor × other; NaN where undefined)."""
    off: np.ndarray
    """Per period, how far the column is from the nearest value the fit allows, in rounding steps: at most 0.5 where
    the identity holds, NaN where a side is missing."""

    def holds(self, t: int) -> bool:
        """Period `t` is within rounding of the identity (or cannot be judged)."""
        return not self.off[t] > 0.5 + _SLACK

    def reproduces(self, start: int, end: int) -> bool:
        """Every period `start`..`end` has both sides and is within rounding, and the value the other columns give
        moved over them: a run of one value there is the identity's value rounded, not a frozen feed."""
        off = self.off[start: end + 1]
        return bool(np.all(off <= 0.5 + _SLACK) and np.ptp(self.implied[start: end + 1]) > 0)


def fit(column: np.ndarray, other: np.ndarray, step: float, past_until: int, min_history: int) -> ExactFit | None:
    """The exact fit of `column = round(k × other, step)` on the periods before `past_until`, or None where the past
    does not show it: fewer than `EXACT_SHARE` of at least `min_history` past periods agree on one k, or (a short
    past, `_SHORT_MIN` periods or more) not every one of them does or the step is coarse (`_SHORT_STEP`)."""
    with np.errstate(all="ignore"):
        valid = np.isfinite(column) & np.isfinite(other) & (other != 0)
        low = np.where(valid, (column - step / 2) / other, np.nan)
        high = np.where(valid, (column + step / 2) / other, np.nan)
    low, high = np.fmin(low, high), np.fmax(low, high)
    past = np.flatnonzero(valid[:past_until])
    short = len(past) < min_history
    if len(past) < _SHORT_MIN or (short and step > _SHORT_STEP * float(np.median(np.abs(column[past])))):
        return None
    best, band = _deepest(low[past], high[past])
    if best < (len(past) if short else len(past) - math.floor((1 - EXACT_SHARE) * len(past))):
        return None
    k_low, k_high = band
    with np.errstate(all="ignore"):
        lowest, highest = np.fmin(k_low * other, k_high * other), np.fmax(k_low * other, k_high * other)
        distance = np.where(column < lowest, lowest - column, np.where(column > highest, column - highest, 0.0))
        off = np.where(valid, distance / step, np.nan)
        implied = np.where(valid, (k_low + k_high) / 2 * other, np.nan)
    return ExactFit(step=step, factor=(float(k_low), float(k_high)), held=best, checked=len(past),
                    implied=implied, off=off)


TIGHT_TIMES = 3.0
"""How many times the bound of its past (`TightFit.bound`) a period's ratio must lie out to be off: the bound is a
quantile of deviations no wider than rounding makes, so three times it is no rounding."""


@dataclass(frozen=True)
class TightFit:
    """An identity whose log ratio held in the entity's past within `bound` of `centre` in `held` of `checked`
    periods (at least `EXACT_SHARE`), where a robust scale of it is below the floor a yardstick keeps."""

    centre: float
    """The past's median log ratio."""
    bound: float
    """The `EXACT_SHARE` quantile of the past's distances from `centre` (log scale)."""
    held: int
    """Past periods within `bound`."""
    checked: int
    """Past periods with the ratio defined."""

    def off(self, level: float, rounding: float) -> bool:
        """A period's log ratio `level` lies beyond `TIGHT_TIMES` the past's bound, or the rounding of tonight's
        figures (`rounding`, log scale: a figure that fell to a few steps of its rounding is judged at its own
        precision, never the past's)."""
        return abs(level - self.centre) > TIGHT_TIMES * max(self.bound, rounding, _FLOAT)


_FLOAT = 1e-9
"""A log ratio's distance no identity is judged within: the error of computing it in floats."""


def tight(level: np.ndarray, past_until: int, min_history: int, floor: float) -> TightFit | None:
    """The tight fit of a log ratio's past (the periods before `past_until`), or None where it has fewer than
    `min_history` periods or its robust scale (`series.robust_scale`) is `floor` or more: a band of
    MADs judges it as it is."""
    past = level[:past_until]
    past = past[np.isfinite(past)]
    if len(past) < max(min_history, _SHORT_MIN):
        return None
    centre = float(np.median(past))
    if robust_scale(past, centre) >= floor:
        return None
    distance = np.abs(past - centre)
    bound = float(np.quantile(distance, EXACT_SHARE, method="higher"))
    return TightFit(centre=centre, bound=bound, held=int((distance <= bound).sum()), checked=len(past))


def _deepest(low: np.ndarray, high: np.ndarray) -> tuple[int, tuple[float, float]]:
    """The segment of factors inside the most intervals [low, high] (closed), and how many that is: a sweep over
    the sorted ends, an interval opening before one closing at the same point."""
    points = np.concatenate([low, high])
    kinds = np.concatenate([np.zeros(len(low)), np.ones(len(high))])  # 0 opens, 1 closes
    order = np.lexsort((kinds, points))
    depth, best, band = 0, 0, (float(low[0]), float(high[0]))
    for i, j in enumerate(order):
        if kinds[j] == 0:
            depth += 1
            if depth > best:
                best = depth
                band = (float(points[j]), float(points[order[i + 1]]))
        else:
            depth -= 1
    return best, band
