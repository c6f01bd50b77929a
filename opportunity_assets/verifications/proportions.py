"""Columns tonight's entities hold in proportion: sizes of one thing (a state's output, its employment and its
capital; a market's sales and their dollar volume), whose ratio spreads across entities far less than either does.

A size's own level says nothing of its units (the states' output spreads over orders of magnitude); its proportion
to the entity's other sizes does (`off_ratio`): a latest proportion far off tonight's entities', and beyond every
other entity's by a unit slip's size, is a column in other units than theirs (×10 in every row leaves no break in
its own history).

Tried and withdrawn (stop 50): the same proportions along the entity's own history, a change that moved a column
off its proportion to each of its partners far outside its past changes of them. On Produc it caught no plant the
shifts had not (the ones that reach act-on broke six years before the night, outside the judged span) and doubted
four more clean picks, states' private capital in its re-benchmark years (1976, 1986), whose proportion to public
capital moves by ±1% in other years.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

import numpy as np

from opportunity_assets.verifications.integrity_spec import IntegritySpec
from opportunity_assets.verifications.peers import beyond_others
from opportunity_assets.verifications.series import (
    MIN_SCALE,
    Findings,
    format_number,
    robust,
    unit_sized,
)

_MIN_ENTITIES = 8
"""Fewest scanned entities with both figures positive for a pair's proportion to be a yardstick (as
`peers.levels`)."""
_EXPLAINED = ("level_shift", "spike", "out_of_range", "off_level", "off_move", "off_peers")
"""Findings that already say a column's move or level is off: its proportions are not judged again."""

IN_PROPORTION = 0.5
"""Most a pair of columns' log ratio may spread across tonight's entities, against the narrower spread of the two
columns' own log levels, for the pair to be sizes of one thing held in proportion (`ratios`). On the design panels a
state's output and employment spread 0.09 of that, its capital and output 0.23, a country's GDP and population 0.15,
Texas' sales and volume 0.2; a rate beside a size, or two rates, spread as widely as either (0.6 and over)."""


def ratios(now: Mapping[str, np.ndarray], skip: Collection[str] = ()) -> dict[str, dict[str, dict[str, float]]]:
    """The pairs of columns tonight's entities hold in proportion (`IN_PROPORTION`), from each entity's latest
    figures (`now`: one entity a position), by the first column of the pair in `now`'s order and then the second:
    the median and robust scale of their log ratios, their count, and the two largest and two smallest log ratios
    (so that an entity's own can be told beyond every other's). Columns in `skip` (a share, a signed column: no
    size) are in no pair; a pair needs `_MIN_ENTITIES` entities with both figures positive."""
    logs: dict[str, np.ndarray] = {}
    for column, latest in now.items():
        if column not in skip:
            with np.errstate(all="ignore"):
                logs[column] = np.where(latest > 0, np.log(np.where(latest > 0, latest, 1.0)), np.nan)
    names = list(logs)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            both = np.isfinite(logs[first]) & np.isfinite(logs[second])
            if both.sum() < _MIN_ENTITIES:
                continue
            ratio = np.sort(logs[first][both] - logs[second][both])
            stick, one, two = robust(ratio, ""), robust(logs[first][both], ""), robust(logs[second][both], "")
            if stick is None or one is None or two is None or stick.scale > IN_PROPORTION * min(one.scale, two.scale):
                continue
            out.setdefault(first, {})[second] = {
                "median": stick.median, "scale": stick.scale, "count": float(len(ratio)), "top": float(ratio[-1]),
                "second": float(ratio[-2]), "bottom": float(ratio[0]), "next": float(ratio[1])}
    return out


Pairs = Mapping[str, Mapping[str, Mapping[str, float]]]
"""`ratios`' answer: by a pair's first column, then its second, the pair's figures across tonight's entities."""
_Off = tuple[float, float, float, float, float]


def _proportions(values: Mapping[str, np.ndarray], last: int, pairs: Pairs, factor: float, threshold: float,
                 explained: Collection[str]) -> tuple[dict[str, list[str]], dict[str, dict[str, _Off]]]:
    """Each column's judged partners (both figures positive in the latest period, neither's move or level already a
    finding: `explained`), and those it lies off: (z, times beyond every other entity's, its proportion,
    tonight's typical one, their count), each as the column against its partner."""
    judged: dict[str, list[str]] = {}
    off: dict[str, dict[str, _Off]] = {}
    for first, partners in pairs.items():
        for second, stats in partners.items():
            if first in explained or second in explained or first not in values or second not in values:
                continue
            a, b = float(values[first][last]), float(values[second][last])
            if not (math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0):
                continue
            judged.setdefault(first, []).append(second)
            judged.setdefault(second, []).append(first)
            own = math.log(a) - math.log(b)
            z = (own - stats["median"]) / max(stats["scale"], MIN_SCALE)
            _, gap = beyond_others(own, z > 0, [stats[k] for k in ("top", "second", "bottom", "next")])
            if abs(z) >= threshold and gap > 0 and unit_sized(gap, factor):
                count = stats["count"]
                off.setdefault(first, {})[second] = (z, math.exp(gap), own, stats["median"], count)
                off.setdefault(second, {})[first] = (-z, math.exp(gap), -own, -stats["median"], count)
    return judged, off


def off_ratio(found: Findings, spec: IntegritySpec, pairs: Pairs, skip: Collection[str] = ()) -> None:
    """A column whose latest figure stands off tonight's proportion to most other columns it is held in proportion
    with (`ratios`): `level_shift.threshold_mads` or more robust scales of their log ratios from the median, and
    beyond every other entity's by a unit slip's size (`out_of_range.factor`'s square root), with `out_of_range`'s
    effect. The column off against more than half its partners, two or more, is named (each of those is off against
    it alone); one with a single partner is named with it, either of the two in other units (stop 50's held-out
    firms: a firm's capital ×10 read as its market value off, the value's one partner; capital's other, investment,
    spreads too widely across firms to say). A column in `skip` (one tonight's entities carry
    alike) or one whose move or level is already a finding (`shifts`', `off_level`'s) is not judged. Trial 67: a
    state's output, or a country's GDP, ×10 in every row spreads no wider than the states' sizes do, and reached
    act-on; against the state's employment and capital it is ×10."""
    if not pairs:
        return
    series = found.series
    last = series.length - 1
    explained = set(skip) | {f.column for f in found.items if f.rule in _EXPLAINED}
    judged, off = _proportions(series.values, last, pairs, spec.out_of_range.factor,
                               spec.level_shift.threshold_mads, explained)
    order = {column: i for i, column in enumerate(series.values)}
    suspects = {c for c, partners in judged.items() if len(off.get(c, {})) > len(partners) / 2}
    for column in sorted(suspects, key=order.__getitem__):
        partners = judged[column]
        if len(partners) == 1 and partners[0] in suspects and (
                len(judged[partners[0]]) > 1 or order[partners[0]] < order[column]):
            continue  # the partner is the one off against its others, or the pair is said once, on its first
        pair = len(partners) == 1  # (its partner's other partners, further apart, may not tell: both named)
        partner = max(off[column], key=lambda p: abs(off[column][p][0]))
        z, beyond, own, typical, count = off[column][partner]  # (a proportion is said against the median's: a
        # county's vehicle miles per resident, 0.0000846 against 0.00000871, read as digits to count)
        value, theirs = float(series.values[column][last]), float(series.values[partner][last])
        side = "above" if z > 0 else "below"
        others = [p for p in off[column] if p != partner]
        also = f", and off against its {', '.join(others)} too" if others else ""
        units = f"{column} or {partner}" if pair else column
        found.add("off_ratio", spec.out_of_range.effect, column, [last], value, abs(z),
                  f"{column} {format_number(value)} in {series.periods[last]} stands to its {partner} "
                  f"({format_number(theirs)}) at {format_number(math.exp(own - typical))} times the proportion "
                  f"tonight's {int(count)} entities hold at the median, {abs(z):.1f} MADs {side} it and "
                  f"{beyond:.1f} times {side} every other entity's{also}: {units} in other units than theirs (a unit "
                  "slip?)", f"confirm the units of {units.replace(' or ', ' and ')} with the source")

