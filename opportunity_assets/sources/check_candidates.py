"""`opportunity check`'s problems that only the night's candidates show: a formula component (or a derived metric it
or a hard filter reads) with no value for any of them, an identity band most of them lie outside. `run` stops on them
too (the check before a night scans, and the night's scan step is given the same result).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from opportunity_assets import expressions
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.formatting import significant
from opportunity_assets.records import Candidate


class CandidateProblem(ValueError):
    """Problems of the pack that only the night's candidates show, one line each (`problems`): a night stops on
    them before anything is stored, however it was started (`opportunity run`, the schedule, the UI)."""


def problems(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """Every problem the night's candidates show (`undefined_components`, `identities_off_band`)."""
    return undefined_components(pack, found) + identities_off_band(pack, found)


def undefined_components(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """A formula component, or a derived metric the formula or a hard filter reads, with no value for any candidate
    that passed the hard filters although its inputs are all there (a division by zero for each): every one of them
    would be a data gap. Evaluated as the analyzer does (`expressions.why_undefined`)."""
    passing = [c for c in found if c.went_on or c.capped]
    read = dict.fromkeys([*pack.required_inputs, *(f.metric for f in pack.hard_filters)])
    derived = [(f"metrics.{name}.expression", pack.metrics[name].expression or "", pack.metrics[name].parsed)
               for name in read if pack.metrics[name].agg == "derived"]
    components = [(f"formula.components.{n}.expression", c.expression, c.parsed)
                  for n, c in enumerate(pack.formula.components)]
    problems = []
    for key, text, parsed in [*derived, *components]:
        reasons = []  # one per candidate with its inputs, until one has a value (a wide night's first, mostly)
        for candidate in passing:
            if not all(isinstance(candidate.metrics.get(name), int | float)
                       and math.isfinite(candidate.metrics[name] or 0.0) for name in parsed.names):
                continue
            if (undefined := expressions.why_undefined(parsed, candidate.metrics)) is None:
                break
            reasons.append(str(undefined))
        else:
            if reasons:
                why = Counter(reasons).most_common(1)[0][0]
                problems.append(
                    f"key `{key}`: got {text!r}; it has no value for any of the {len(reasons)} candidates that pass "
                    f"the hard filters with its inputs ({why}), so each would be archived as a data gap: expected an "
                    "expression with a value for them")
    return problems


def identities_off_band(pack: CriteriaPack, found: list[Candidate]) -> list[str]:
    """An identity whose `expected` band most candidates going on lie outside (at least 3 of them, more than half):
    the band is the pack's mistake (a ratio written per thousand, a band for another unit), not every entity's
    data; judged as the skeptic would, each candidate by the median of its ratio over its kept history."""
    from opportunity_assets.verifications.integrity import series_of

    banded = [(n, identity) for n, identity in enumerate(pack.integrity.identities) if identity.expected is not None]
    if not banded:
        return []
    going = [s for c in found if c.went_on and (s := series_of(c, pack.columns, pack.max_window + 1, pack.grain))]
    problems = []
    for n, identity in banded:
        assert identity.expected is not None
        ratios = [expressions.evaluate_series(identity.parsed, series.values) for series in going]
        typical = [float(np.nanmedian(r)) for r in ratios if np.isfinite(r).any()]
        low, high = identity.expected
        outside = [r for r in typical if not low <= r <= high]
        if len(outside) >= 3 and len(outside) > len(typical) / 2:
            problems.append(
                f"key `integrity.identities.{n}.expected`: got {list(identity.expected)}; the ratio "
                f"`{identity.ratio}` lies outside it for {len(outside)} of the {len(typical)} candidates going on "
                f"(their typical value {significant(float(np.median(typical)), 4)}): expected the band the ratio "
                "lies in across the domain (its 5-95% range, in the ratio's own unit), or no `expected`: each "
                "entity is then judged against its own history alone")
    return problems
