"""The criteria pack: one YAML file per domain (DESIGN §6). A new domain needs a pack and a data file, no code.

`load_criteria(path)` validates everything a night depends on before any row is read; a bad pack raises
`CriteriaError` naming the key, the bad value and what was expected.
"""

from __future__ import annotations

import ast
import difflib
import errno
import functools
import hashlib
import math
import os
import re
import string
from collections.abc import Container, Mapping
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from pathlib import Path
from textwrap import shorten
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from opportunity_assets import expressions
from opportunity_assets.formatting import format_value
from opportunity_assets.grounding import numeric_leaves, unsupported_numbers
from opportunity_assets.periods import FIRST_NIGHT, Grain
from opportunity_assets.sources import archives
from opportunity_assets.sources.extensions import DUCKDB_SUFFIXES, format_named_by, suffix_of
from opportunity_assets.sources.spec import TABLE_NAME, PackModel, SourceSpec
from opportunity_assets.sources.spec import KeyProblem as _KeyProblem
from opportunity_assets.sources.spec import Within as _Within
from opportunity_assets.text import masked_url
from opportunity_assets.verifications.integrity_spec import MAX_HISTORY, Effect, IntegritySpec

_NAME = r"^[a-z][a-z0-9_]*$"


_NOT_A_SHARE = frozenset({"usd", "count", "months", "days"})
"""The metric units a share from 0 to 1 is not (each writes 0.42 in the brief as something else)."""


class CriteriaError(ValueError):
    """A criteria pack that cannot be used; the message names the key, the value and what was expected."""


class _Spec(PackModel):
    """A section of the pack (`sources.spec.PackModel`: no truth value for a number)."""


Aggregation = Literal["sum", "avg", "min", "max", "last", "coverage", "age_days", "derived"]


class MetricSpec(_Spec):
    agg: Aggregation
    """How the metric is computed from the source's history; `derived` (implied by `expression`): from other
    metrics."""
    expression: str | None = None
    """`derived` only: arithmetic over other metrics, e.g. `sales_3m / sales_3m_prev - 1`. A gap in an input, or an
    undefined result (a division by 0), is a gap."""
    column: str | None = None
    """Column aggregated (all aggregations but `coverage`)."""
    columns: list[str] | None = None
    """Columns whose filled share is measured (`coverage` only)."""
    window: tuple[int, int] = (0, 0)
    """Periods (of the source's grain) back from the latest published period, inclusive: (0, 2) is the latest
    three."""
    min_rows: int | None = None
    """Filled rows needed for a value; default: every period of the window. Fewer gives no value (a gap)."""
    unit: Literal["count", "months", "usd", "share", "days", "number"] = "number"
    description: str = ""

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        if isinstance(data, dict) and "expression" in data and "agg" not in data:
            return {**data, "agg": "derived"}
        return data

    @model_validator(mode="after")
    def _shape(self) -> MetricSpec:
        lo, hi = self.window
        if lo < 0 or hi < lo:
            raise _Within("window", list(self.window), "[from, to] periods back with 0 <= from <= to")
        if self.agg == "derived":
            if not self.expression:
                raise ValueError("agg `derived` needs `expression` (arithmetic over other metrics)")
            if self.column or self.columns or self.window != (0, 0) or self.min_rows is not None:
                raise ValueError("a derived metric (`expression`) takes no `column`, `columns`, `window` or "
                                 "`min_rows`: its inputs are other metrics")
            return self
        if self.expression is not None:
            raise ValueError(f"`expression` makes a derived metric; agg `{self.agg}` aggregates a column instead")
        if self.agg == "coverage":
            if not self.columns:
                raise _Within("columns", None, "a list of source columns: agg `coverage` needs them")
        elif not self.column:
            raise _Within("column", None, f"a source column: agg `{self.agg}` needs one")
        if self.min_rows is not None and not 1 <= self.min_rows <= hi - lo + 1:
            raise _Within("min_rows", self.min_rows, f"from 1 to the window's length, {hi - lo + 1}")
        return self

    @cached_property
    def parsed(self) -> expressions.Expression:
        """The derived metric's expression, parsed (validated on load)."""
        return expressions.parse(self.expression or "")

    @property
    def value_column(self) -> str:
        """The aggregated column (every aggregation but `coverage` has one; validated on load)."""
        if self.column is None:
            raise ValueError(f"agg {self.agg} has no single column")
        return self.column

    @property
    def required_rows(self) -> int:
        lo, hi = self.window
        return self.min_rows if self.min_rows is not None else hi - lo + 1


def _comparison_of(rule: dict[str, Any]) -> str:
    """A filter's `metric`, `op` and `value` written as one comparison, as a red flag's `when` takes them."""
    return " ".join(str(rule.get(k, "?")) for k in ("metric", "op", "value"))


class HardFilter(_Spec):
    name: str = Field(pattern=_NAME)
    metric: str
    op: Literal[">=", ">", "<=", "<"]
    value: float = Field(strict=True)
    """A number as written: YAML's `true` or `"600"` is no bound (lax, `true` was read as 1)."""
    description: str = ""

    @model_validator(mode="before")
    @classmethod
    def _not_a_red_flag(cls, data: Any) -> Any:
        """A filter written as a red flag, `{name, when}`, is one mistake: pydantic would say it as four (`metric`,
        `op`, `value` missing, `when` unknown), none of them the fix."""
        if isinstance(data, dict) and "when" in data and not {"metric", "op", "value"} & data.keys():
            raise _Within("when", data["when"], "a hard filter's `metric`, `op` and `value` (`{metric: growth, "
                          "op: \">=\", value: 0.1}`): `when` and `message` are a red flag's keys (`red_flags`)")
        return data

    def holds(self, x: float) -> bool:
        return {">=": x >= self.value, ">": x > self.value, "<=": x <= self.value, "<": x < self.value}[self.op]


class Component(_Spec):
    name: str = Field(pattern=_NAME)
    expression: str
    direction: Literal["higher_is_better", "lower_is_better"]
    range: tuple[float, float]
    """Values at or beyond the ends normalise to 0 and 1 (absolute, never relative to other candidates)."""
    weight: float = Field(gt=0, le=1)
    label: str
    """The words the brief and the analysis write for it; by default its name, `schedule_growth` as 'schedule
    growth'."""
    unit: Literal["percent", "share", "months", "number"] = "number"
    """How the component's raw value is written: `percent` a signed change (+12.0%), `share` a level (37%)."""

    @model_validator(mode="before")
    @classmethod
    def _label_by_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and "label" not in data and isinstance(data.get("name"), str):
            return {**data, "label": data["name"].replace("_", " ")}
        return data

    @field_validator("range")
    @classmethod
    def _increasing(cls, value: tuple[float, float]) -> tuple[float, float]:
        if not value[0] < value[1]:
            raise ValueError("[low, high] with low < high (`direction` says which end is better)")
        return value

    @cached_property
    def parsed(self) -> expressions.Expression:
        return expressions.parse(self.expression)

    def normalise(self, raw: float) -> float:
        lo, hi = self.range
        share = min(max((raw - lo) / (hi - lo), 0.0), 1.0)
        return share if self.direction == "higher_is_better" else 1.0 - share


class Formula(_Spec):
    components: list[Component] = Field(min_length=1)
    scale: float = Field(default=100, gt=0)

    @model_validator(mode="after")
    def _weights(self) -> Formula:
        total = sum(c.weight for c in self.components)
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise _Within("components", [c.weight for c in self.components], f"weights that sum to 1 (these sum to "
                          f"{total:g})")
        names = [c.name for c in self.components]
        if len(set(names)) != len(names):
            raise _Within("components", names, "component names that are unique")
        return self


class Thresholds(_Spec):
    strong: float
    marginal: float

    @property
    def levels(self) -> tuple[float, float]:
        """The scores a verdict changes at: a score is written on its own side of each (`format_score`)."""
        return self.strong, self.marginal

    @model_validator(mode="after")
    def _order(self) -> Thresholds:
        if not self.marginal < self.strong:
            raise _Within("marginal", self.marginal, f"a score below strong ({self.strong:g})")
        return self


class RedFlagRule(_Spec):
    name: str = Field(pattern=_NAME)
    when: str
    """A comparison over metrics, e.g. `sales_peak_3m / sales_3m > 0.5`."""
    message: str
    effect: Effect = "note"
    """What the flag does when it holds: `note` reports it; `doubt` makes a STRONG UNCERTAIN; `reject` REJECTED."""

    @model_validator(mode="before")
    @classmethod
    def _not_a_filter(cls, data: Any) -> Any:
        """A red flag written as a hard filter, `{name, metric, op, value}`, is one mistake: pydantic would say it as
        five (`when` and `message` missing, three keys unknown), none of them the fix (trial 34)."""
        if isinstance(data, dict) and "when" not in data and {"metric", "op"} <= data.keys():
            filter_keys = {k: data[k] for k in ("metric", "op", "value") if k in data}
            raise _Within("when", filter_keys, f"a comparison, `when: \"{_comparison_of(data)}\"`, and the "
                          "`message` the brief quotes: `metric`, `op` and `value` are a hard filter's keys")
        return data

    @model_validator(mode="after")
    def _says_something(self) -> RedFlagRule:
        """Trial 101: `message: ''` loaded, and a rejected candidate's archive reason read "red flag rich: ;"."""
        if not self.message.strip():
            raise _Within("message", self.message, "the text the analysis and a rejected candidate's archive reason "
                          "quote when the flag holds (`Incomes this high are top-coded in the survey`)")
        if (placeholder := re.search(r"\{[^{}]*\}", self.message)) is not None:
            # written as `next_action` is, it was quoted braces and all (trial 141: a rejected candidate's archive
            # reason read "red flag tiny_plot: only {land} ha")
            raise _Within("message", self.message, f"plain text, quoted as written: `{placeholder[0]}` would stay in "
                          "braces (only `next_action` is a template; the analysis shows the metrics beside the flag)")
        return self

    @cached_property
    def parsed(self) -> expressions.Expression:
        return expressions.parse(self.when)


class OmissionItem(_Spec):
    name: str = Field(pattern=_NAME)
    description: str
    requires: list[str] = Field(min_length=1)
    """Metrics an analysis must report (sourced) to have covered this item."""


class Coverage(_Spec):
    min_required_inputs_share: float = Field(default=0.8, ge=0, le=1)
    """Share of the night's candidates that must have every required input (asset check)."""


_AS_INT = TypeAdapter(int)
"""An int field's own reading of a value (`"5"` and `5.0` are 5; `5.5` is refused)."""

_MIN_CANDIDATES = 10
"""Candidates passing the hard filters below which the brief notes a thin night, unless the pack says otherwise."""


class Caps(_Spec):
    max_candidates: int = Field(default=30, ge=1)
    min_candidates: int = Field(default=_MIN_CANDIDATES, ge=0)
    order_by: str | None = "score"
    """What orders candidates for the cap, best first (ties and missing values: by id): `score`, the pack's own
    formula on the scan's metrics (the default: the in-depth work goes to the best candidates, not the largest),
    or a metric name (with `descending`). None: by id."""
    descending: bool = True
    max_flagged: int | None = Field(default=None, ge=0)
    """How many candidates flagged past the cap (a quarantined row or cell in a metric's reach, or a gap in the cap
    order's metric) go on besides `max_candidates`, best placed first (by their remaining rows); the rest are capped
    and named. None: as many as `max_candidates` (a night's in-depth work at most doubles, however much of the source
    is refused). One entity's bad rows move no other candidate while the flagged fit."""
    retries: int = Field(default=1, ge=0, le=5)
    cost_ceiling_usd: float = Field(default=0.50, ge=0)

    @property
    def flagged_bound(self) -> int:
        """`max_flagged`, or `max_candidates` when unset."""
        return self.max_candidates if self.max_flagged is None else self.max_flagged

    @model_validator(mode="before")
    @classmethod
    def _fewer_by_default(cls, data: Any) -> Any:
        """`min_candidates` left out is its default, 10, or `max_candidates` where that is fewer: trial 33's
        `caps: {max_candidates: 2}` was refused as "key `caps.min_candidates`: got 10", a key the pack never wrote
        (below the floor, the brief only notes the night's few candidates). `max_candidates` is read as its field
        reads it: trial 35's quoted `"5"` was refused so still."""
        if isinstance(data, dict) and "min_candidates" not in data:
            raw = data.get("max_candidates")
            try:
                most = _AS_INT.validate_python(raw)
            except ValidationError:
                return data  # (the field says what is wrong with it)
            if isinstance(raw, bool):
                return data
            if 1 <= most < _MIN_CANDIDATES:
                return {**data, "min_candidates": most}
        return data

    @model_validator(mode="after")
    def _order(self) -> Caps:
        if self.min_candidates > self.max_candidates:
            raise _Within("min_candidates", self.min_candidates, f"at most max_candidates ({self.max_candidates})")
        return self


class OutcomeSpec(_Spec):
    """How a verdict's realised outcome is measured once its horizon has passed (backtest and calibration only,
    never an input to a verdict): the change of `agg` of `metric` over the `window_periods` ending at the night's
    latest published period t0, to the same window ending at t0 + `horizon_periods`, read as known on
    as_of + `horizon_periods` (rows published by then only). Periods are the source's grain (months for Texas);
    `window_months` and `horizon_months` are accepted as the same keys."""

    metric: str
    """Source column measured (one of `source.columns`)."""
    agg: Literal["sum", "avg", "min", "max", "last"] = "avg"
    """Aggregate of the column over each window; every period of a window must be filled, or there is no outcome."""
    window_periods: int = Field(default=3, ge=1, le=400)
    horizon_periods: int = Field(default=12, ge=1, le=1200)
    change: Literal["relative", "difference"] = "relative"
    """`relative`: end / start - 1 (0.05 = +5%); `difference`: end - start, in the column's unit."""
    direction: Literal["higher_is_better", "lower_is_better"] = "higher_is_better"
    """Which way a candidate's outcome beats another's."""
    design_until: date | None = None
    """Last as_of the pack was designed on; the backtest reports later nights separately, as held out."""
    description: str = ""
    _month_keys: dict[str, int] = PrivateAttr(default_factory=dict)
    """The keys written by their first names (`window_months`: its value), which count months only on a month grain
    (`CriteriaPack` refuses them on another)."""

    @model_validator(mode="wrap")
    @classmethod
    def _month_names(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> OutcomeSpec:
        """The keys' first names, from when every source was monthly."""
        named: dict[str, int] = {}
        if isinstance(data, dict):
            data = dict(data)
            for old, new in (("window_months", "window_periods"), ("horizon_months", "horizon_periods")):
                if old in data and new in data:  # (trial 107: told "unknown key (did you mean `window_periods`?)")
                    raise _Within(old, data[old], f"it or `{new}` ({data[new]!r}), not both: `{old}` is "
                                  f"`{new}`'s first name, one key")
                if old in data:
                    named[old] = data[new] = data.pop(old)
        spec: OutcomeSpec = handler(data)
        spec._month_keys = named
        return spec


def _months_on_another_grain(named: dict[str, int], grain: str) -> _KeyProblem:
    """`outcome.window_months` (or `horizon_months`) on a pack whose grain is not the month: the key counts the
    grain's periods, so `window_months: 1` on a weekly source was one week, silently."""
    old, value = next(iter(named.items()))
    new = old.replace("_months", "_periods")
    return _KeyProblem(f"outcome.{old}", value, f"`{new}` counting {grain}s (`source.grain`): `{old}` counts the "
                       f"grain's periods, so {value} would be {value} {grain}{'s' if value != 1 else ''}, not "
                       f"{value} month{'s' if value != 1 else ''}")


class Nights(_Spec):
    """Which nights the UI offers as partitions. Without this key they start on the first night the source
    supports (the first publication date of its rows) and end on the latest night that has ended (yesterday, UTC)."""

    start: date
    """The first night instead of the data's: e.g. `nights: {start: 2003-01-31}` to hide the early years whose
    windows are still filling. A night that has ended (on or before yesterday, UTC)."""

    @field_validator("start")
    @classmethod
    def _ended(cls, value: date) -> date:
        latest = datetime.now(UTC).date() - timedelta(days=1)
        if value > latest:
            raise ValueError(f"a night that has ended, on or before {latest}")
        if value < FIRST_NIGHT:
            raise ValueError(f"a night on or after {FIRST_NIGHT} (earlier rows are the first nights' history; a "
                             "partition a day from earlier is too many, and before 1000 no date Dagster can write)")
        return value


class ModelRole(_Spec):
    model: str
    max_input_tokens: int = Field(gt=0)
    max_output_tokens: int = Field(gt=0)


class Models(_Spec):
    analyzer: ModelRole
    verifier: ModelRole
    brief: ModelRole

    @model_validator(mode="after")
    def _independent(self) -> Models:
        if self.verifier.model == self.analyzer.model:
            raise _Within("verifier.model", self.verifier.model, "a model other than the analyzer's (the skeptic "
                          "must not be the analyzer)")
        return self


DEFAULT_MODELS = {"analyzer": {"model": "claude-haiku-5-5", "max_input_tokens": 2500, "max_output_tokens": 600},
                  "verifier": {"model": "claude-sonnet-5-5", "max_input_tokens": 2500, "max_output_tokens": 600},
                  "brief": {"model": "claude-haiku-5-5", "max_input_tokens": 4000, "max_output_tokens": 800}}
"""The model roles of a pack that names none (the bundled packs' choice); unused in deterministic mode."""


class CriteriaPack(_Spec):
    domain: str = Field(pattern=_NAME)
    description: str
    source: SourceSpec
    metrics: dict[str, MetricSpec] = Field(min_length=1)
    hard_filters: list[HardFilter] = Field(min_length=1)
    required_inputs: list[str] = Field(min_length=1)
    formula: Formula
    thresholds: Thresholds
    coverage: Coverage = Coverage()
    uncertainty: dict[str, float] = Field(default_factory=dict)
    """Relative band per input (0.05 = ±5%) used by the verifier's sensitivity check."""
    red_flags: list[RedFlagRule] = Field(default_factory=list)
    omissions: list[OmissionItem] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    """Domain assumptions every analysis states, besides the structural ones code derives."""
    next_action: str
    """Template for the brief's next action: `{name}` and any `{metric}` (formatted as stored)."""
    caps: Caps = Caps()
    models: Models = Field(default_factory=lambda: Models.model_validate(DEFAULT_MODELS))
    """Per role; optional (`DEFAULT_MODELS`)."""
    outcome: OutcomeSpec | None = None
    """How verdicts are scored after the fact (backtest, calibration); optional, never read by a verdict."""
    integrity: IntegritySpec = IntegritySpec()
    """How the verifier doubts the source itself: level shifts, spikes, stuck feeds, identities (DESIGN §7b)."""
    nights: Nights | None = None
    """The nights the UI offers (`Nights`); None: from the data's first night. Never read by a verdict."""
    pack_path: Path | None = Field(default=None, exclude=True)

    @field_validator("metrics")
    @classmethod
    def _metric_names(cls, value: dict[str, MetricSpec]) -> dict[str, MetricSpec]:
        for name in value:
            if not re.match(_NAME, name):
                raise _Within(name, name, f"a metric name matching {_NAME} (lower case, digits and _)")
        return value

    @field_validator("uncertainty")
    @classmethod
    def _bands(cls, value: dict[str, float]) -> dict[str, float]:
        for name, band in value.items():
            if not 0 < band < 1:
                raise _Within(name, band, "a relative band between 0 and 1 (5% is 0.05)")
        return value

    def _share_of(self, metric: str) -> str | None:
        """What makes a metric a share from 0 to 1 by construction, in words (a coverage; an average, minimum,
        maximum or latest value of an events `share` aggregate), or None."""
        spec = self.metrics[metric]
        if spec.agg == "coverage":
            return "a coverage (the filled share of its window)"
        shares = {name for source in (self.source, *self.source.join) for name, a in source.aggregates.items()
                  if a.agg == "share"}
        if spec.agg in ("avg", "min", "max", "last") and spec.column in shares:
            return f"the {spec.agg} of `{spec.column}`, an events `share` aggregate"
        return None

    def _summed_share(self, spec: MetricSpec) -> str | None:
        """What a `sum` of an events `share` aggregate under `unit: share` expected instead, or None for any other
        metric: each period's share is from 0 to 1, and their sum over a window is no share (trial 112: four weeks'
        shares summed to 3.2, and check blamed the formula's range over it)."""
        shares = {name for source in (self.source, *self.source.join) for name, a in source.aggregates.items()
                  if a.agg == "share"}
        if spec.agg != "sum" or spec.unit != "share" or spec.column not in shares:
            return None
        periods = spec.window[1] - spec.window[0] + 1
        return (f"`agg: avg` (or `min`, `max`, `last`): `{spec.column}` is an events `share` aggregate, a share from 0 "
                f"to 1 in each period, and a sum of shares is no share (1.0 in each of {periods} periods sums to "
                f"{periods}); for the share of the window's events, divide two counts summed over it")

    def share_component(self, component: Component) -> str | None:
        """What makes a formula component's value a share from 0 to 1 by construction (its expression one metric
        that is, `_share_of`), in words, or None."""
        name = component.expression.strip()
        return self._share_of(name) if name in self.metrics else None

    def _one_of_columns(self, columns: set[str]) -> str:
        """What a name of the panel's columns is, in the words of the pack's shape: an events pack has no
        `source.columns` (its panel's columns are its aggregates' names: trial 17's `outcome.metric: film` was told
        "one of source.columns")."""
        if self.source.shape == "events":
            return f"one of the aggregates' names (`source.aggregates`: events are counted into them) {sorted(columns)}"
        return f"one of source.columns {sorted(columns)}"

    def _column_expected(self, column: str, columns: set[str]) -> str:
        """What a key naming a panel column (a metric's, the outcome's) expected instead of `column`: the events'
        aggregates, a wide source's `value` (an entity's own column is no panel column), or `source.columns`."""
        src, wide = self.source, self.source.wide
        if src.shape == "events" and src.join:  # (trial 40: a joined column misspelt in its table's `columns` was
            # offered as the metric's column, a "did you mean" away from a second error)
            lists = " or ".join(f"`source.join.{i}.columns` (table {j.table!r})" for i, j in enumerate(src.join))
            return (f"one of the panel's columns {sorted(columns)}, the aggregates' names (`source.aggregates`) and "
                    f"the joined tables' columns (or that name added to {lists}, if it is a joined table's column "
                    "list that is wrong)")
        if src.shape == "events":
            return f"one of the aggregates' names (`source.aggregates`: events are counted into them) {sorted(columns)}"
        if wide is not None and column in wide.columns:
            return (f"one of the panel's columns {sorted(columns)}: {column!r} is one of `source.wide.columns`, an "
                    f"entity's series, whose values every entity's metric reads as `{wide.value}` "
                    f"(`source.wide.value`)")
        if wide is not None:
            return f"one of the panel's columns {sorted(columns)} (`source.wide.value`, and any joined table's columns)"
        if src.join:  # (trial 25: a joined table's column was told to be added to `source.columns`)
            lists = " or ".join(["`source.columns`", *(f"`source.join.{i}.columns` (table {j.table!r})"
                                                       for i, j in enumerate(src.join))])
            return (f"one of the panel's columns {sorted(columns)}, the source's and its joined tables' (or that name "
                    f"added to {lists}, the list of the table that has it, if it is the column list that is wrong)")
        return (f"one of source.columns {sorted(columns)} (or that name added to `source.columns`, if it is the column "
                "list that is wrong)")

    @model_validator(mode="after")
    def _references(self) -> CriteriaPack:
        metrics, columns = set(self.metrics), set(self.source.panel_columns)
        _names_unique("hard_filters", [f.name for f in self.hard_filters])
        _names_unique("red_flags", [r.name for r in self.red_flags])
        _names_unique("omissions", [o.name for o in self.omissions])
        readers: dict[str, list[str]] = {}  # each column name the metrics read: the keys reading it
        read_by: dict[str, list[str]] = {}  # each source column a metric reads as its value: the metrics reading it
        for name, spec in self.metrics.items():
            for key, column in ([(f"metrics.{name}.column", spec.column)] if spec.column else
                                [(f"metrics.{name}.columns.{i}", c) for i, c in enumerate(spec.columns or [])]):
                readers.setdefault(column, []).append(key)
            if spec.column:
                read_by.setdefault(spec.column, []).append(name)
        for name, spec in self.metrics.items():
            if spec.agg == "derived":
                _check_expression(f"metrics.{name}.expression", spec.expression or "", metrics - {name},
                                  comparison=False, what="another metric", itself=name)
            read = [(f"metrics.{name}.column", spec.column)] if spec.column else \
                [(f"metrics.{name}.columns.{i}", c) for i, c in enumerate(spec.columns or [])]
            for key, column in read:
                if column not in columns and (listed := _listed_in_another_case(self.source, column,
                                                                                readers[column], readers)):
                    raise listed
                if column not in columns:
                    close = [c for c in sorted(columns) if c.casefold() == column.casefold()] or \
                        difflib.get_close_matches(column, sorted(columns), n=1)  # (`GSP` for `gsp`: case first)
                    hint = f"; did you mean {close[0]!r}?" if close else ""
                    raise _KeyProblem(key, column, self._column_expected(column, columns) + hint)
        for name in self.metrics:
            unit = self.metrics[name].unit
            if unit in _NOT_A_SHARE and (bounded := self._share_of(name)) is not None:

                raise _KeyProblem(f"metrics.{name}.unit", unit, f"`unit: share`: {name} is {bounded}, a share from "
                                  f"0 to 1, and `unit: {unit}` writes a share of 0.42 in the brief as "
                                  f"{format_value(0.42, unit)!r}")
        for name, spec in self.metrics.items():
            if (summed := self._summed_share(spec)) is not None:
                raise _KeyProblem(f"metrics.{name}.agg", spec.agg, summed)
        for i, f in enumerate(self.hard_filters):
            if f.metric not in metrics:
                raise _KeyProblem(f"hard_filters.{i}.metric", f.metric,
                                  f"a metric name {sorted(metrics)}{_did_you_mean(f.metric, metrics)}")
            if (bounded := self._share_of(f.metric)) is not None and not _can_hold(f.op, f.value, 0.0, 1.0):
                raise _KeyProblem(f"hard_filters.{i}.value", f.value, f"a value from 0 to 1: {f.metric} is "
                                  f"{bounded}, a share from 0 to 1, so `{f.op} {f.value:g}` never holds (90% is "
                                  "0.9)")
        for i, name in enumerate(self.required_inputs):
            if name not in metrics:
                raise _KeyProblem(f"required_inputs.{i}", name,
                                  f"a metric name {sorted(metrics)}{_did_you_mean(name, metrics)}")
        for i, c in enumerate(self.formula.components):
            _check_expression(f"formula.components.{i}.expression", c.expression, set(self.required_inputs),
                              comparison=False, what="a required input", listed_in=(metrics, "required_inputs"),
                              read_by=read_by)
            if (bounded := self.share_component(c)) is not None and not _fits_a_share(c.range):
                low, high = c.range
                raise _KeyProblem(f"formula.components.{i}.range", [low, high], f"a range a share fills, within "
                                  f"[0, 1]: {c.expression.strip()} is {bounded}, a share from 0 to 1, so it can "
                                  f"reach little of [{low:g}, {high:g}] (30% is 0.3)")
        scale = self.formula.scale
        for name, value in (("strong", self.thresholds.strong), ("marginal", self.thresholds.marginal)):
            if not 0 < value <= scale or (name == "strong" and scale > 1 and value <= scale / 100):
                bar, other = 0.7 * scale, 70 if scale != 100 else 0.7  # a bar of 70% on this scale, and its slip
                raise _KeyProblem(f"thresholds.{name}", value, f"a score on the formula's scale, above "
                                  f"{scale / 100 if name == 'strong' and scale > 1 else 0:g} and at most {scale:g} "
                                  f"(`formula.scale`: a score runs 0 to {scale:g}; a bar of 70% is {bar:g}, not "
                                  f"{other:g})")
        for i, r in enumerate(self.red_flags):
            _check_expression(f"red_flags.{i}.when", r.when, metrics, comparison=True, what="a metric",
                              read_by=read_by)
            if (bound := _bound_on_a_metric(r.parsed)) is None or (bounded := self._share_of(bound[0])) is None:
                continue
            metric, op, value = bound
            share = f"{metric} is {bounded}, a share from 0 to 1, so `{op} {value:g}`"
            if not _can_hold(op, value, 0.0, 1.0):  # (trial 94: `adults > 20`, copied from a pack in percent)
                raise _KeyProblem(f"red_flags.{i}.when", r.when, f"a bound from 0 to 1: {share} never holds, "
                                  "flagging no one (90% is 0.9)")
            if not _can_hold(_NEGATED[op], value, 0.0, 1.0):
                raise _KeyProblem(f"red_flags.{i}.when", r.when, f"a bound a share lies either side of: {share} "
                                  "holds for every value, flagging every candidate")
        for i, o in enumerate(self.omissions):
            for name in o.requires:
                if name not in metrics:
                    raise _KeyProblem(f"omissions.{i}.requires", name,
                                      f"a metric name {sorted(metrics)}{_did_you_mean(name, metrics)}")
        for name in self.uncertainty:
            if name not in self.required_inputs:
                raise _KeyProblem(f"uncertainty.{name}", name, f"a required input {self.required_inputs}"
                                  f"{_did_you_mean(name, set(self.required_inputs))}")
        for i, identity in enumerate(self.integrity.identities):
            key = f"integrity.identities.{i}.ratio"
            try:
                parsed = expressions.parse_series(identity.ratio)
            except expressions.ExpressionError as exc:
                raise _KeyProblem(key, identity.ratio, f"a series expression over source columns: {exc}") from None
            unknown = sorted(parsed.names - columns)
            if unknown:
                raise _KeyProblem(key, identity.ratio, f"names that are each {self._one_of_columns(columns)}; "
                                  f"unknown: {unknown}" + _did_you_mean(unknown[0], columns))
            if not parsed.names:  # (trial 141: `1 / 2` loaded; `check` then said only that it lay outside `expected`)
                raise _KeyProblem(key, identity.ratio, f"a ratio over source columns ({', '.join(sorted(columns)[:3])}"
                                  "...): one of numbers alone is the same in every period and entity, and judges "
                                  "nothing")
            if (beyond := _window_beyond(parsed, self.history_reach + 1)) is not None:
                raise _KeyProblem(key, identity.ratio, beyond)
        if self.history_reach >= MAX_HISTORY:
            widest = max(self.metrics, key=lambda name: self.metrics[name].window[1])
            raise _KeyProblem(f"metrics.{widest}.window", list(self.metrics[widest].window),
                              f"a window reaching at most {MAX_HISTORY - 1 - self.integrity.min_history} periods "
                              f"back: the history kept for a candidate (its windows, and `integrity.min_history` "
                              f"periods before them for the data checks) is at most {MAX_HISTORY} periods")
        if self.outcome is not None and self.outcome.metric not in columns:
            raise _KeyProblem("outcome.metric", self.outcome.metric,
                              self._column_expected(self.outcome.metric, columns)
                              + _did_you_mean(self.outcome.metric, columns))
        if self.outcome is not None and self.source.grain != "month" and self.outcome._month_keys:
            raise _months_on_another_grain(self.outcome._month_keys, self.source.grain)
        _derived_order(self.metrics)  # refuses a cycle
        for reserved in ("entity_id", "entity_name"):
            if reserved in metrics:
                raise _KeyProblem(f"metrics.{reserved}", reserved, "another name: each metrics row has an "
                                  f"`{reserved}` of its own")
        if "score" in metrics:
            raise _KeyProblem("metrics.score", "score", "another name: `score` is the formula's own (caps.order_by)")
        if self.caps.order_by not in (None, "score") and self.caps.order_by not in metrics:
            raise _KeyProblem("caps.order_by", self.caps.order_by, f"`score` or a metric name {sorted(metrics)}"
                              + _did_you_mean(self.caps.order_by, {*metrics, "score"}))
        if (worst_first := self._order_keeps_the_worst()) is not None:
            raise worst_first
        if not self.next_action.strip():  # (trial 101: the act-on line ended "Next: ", with nothing after it)
            raise _KeyProblem("next_action", self.next_action, "the next step for an act-on candidate, written as "
                              "a template of `{name}` and the metrics' names (`Call the agent in {name} this week.`)")
        try:
            fields = list(string.Formatter().parse(self.next_action))
        except ValueError:  # (its words, not Python's "Single '}' encountered in format string": trial 33)
            raise _KeyProblem("next_action", self.next_action, "a template with balanced braces: each `{` closed by "
                              "a `}` around `name` or a metric's name, `{name}`, and a brace meant as text written "
                              "twice, `{{`") from None
        for _, field, fmt, conversion in fields:
            if field is None:
                continue
            if fmt or conversion:
                shown = "{" + field + ("!" + conversion if conversion else "") + (":" + fmt if fmt else "") + "}"
                raise _KeyProblem("next_action", shown, "plain `{name}` or `{metric}` placeholders (numbers are "
                                  "formatted by code)")
            if field != "name" and field not in metrics:
                # `{name}` among the choices, case aside first (trial 26: `{Name}` was offered nothing)
                choices = ["name", *sorted(metrics)]
                close = [c for c in choices if c.lower() == field.lower()] or \
                    difflib.get_close_matches(field, choices, n=1)
                raise _KeyProblem("next_action", "{" + field + "}", f"`{{name}}` or a metric's name: `{field}` is no "
                                  f"metric of the pack ({', '.join(sorted(metrics))})"
                                  + (f"; did you mean `{{{close[0]}}}`?" if close else ""))
        _check_rendered(self.next_action, {name: spec.unit for name, spec in self.metrics.items()})
        _check_labels(self)
        return self

    # ---- derived views -------------------------------------------------------------------------------
    @property
    def source_path(self) -> Path:
        """The source file (a PostgreSQL source has none: its URL is in `source.url_env`)."""
        return self.path_of(self.source)

    def path_of(self, source: SourceSpec) -> Path:
        """A source's (or a joined table's) file, relative to the pack file (the pack's folder for a query over
        files: `SourceSpec.over_files`). A leading `~` is the home folder, as a shell reads it (trial 44:
        `path: ~/houses.csv`, a file in the home folder, was "expected an existing file (looked at
        /packs/~/houses.csv)", a folder named `~` beside the pack)."""
        base = self.pack_path.parent if self.pack_path else Path.cwd()
        # (not `Path.resolve`, which raises Python's "Symlink loop from ..." for links leading back to themselves:
        # such a path is told by `_loops`, naming its key, trial 142)
        path = Path(os.path.realpath(base / Path(source.path or "").expanduser()))
        # a ZIP archive's file, extracted once (`sources.archives`); raises ArchiveError naming the key at fault
        return archives.extracted(path, source.member) if archives.is_archive(source.path) and path.is_file() else path

    def _order_keeps_the_worst(self) -> _KeyProblem | None:
        """`caps.order_by` a metric the formula scores `lower_is_better` as a component by itself, with `descending`
        left at its default: the cap would keep the highest, the worst by the pack's own formula (trial 27: ordered by
        `unit_cost_change`, it cut the airline of the best score, 94.8, silently). `descending: true` written keeps
        them as asked."""
        if not self.caps.descending or "descending" in self.caps.model_fields_set:
            return None
        component = next((c for c in self.formula.components if c.direction == "lower_is_better"
                          and c.expression.strip() == self.caps.order_by), None)
        if component is None:
            return None
        return _KeyProblem("caps.descending", True, f"`descending: false` (the lowest first): `caps.order_by` "
                           f"{self.caps.order_by!r} is formula component `{component.name}`, lower_is_better, and "
                           "`descending` (true unless written) would keep the highest, the worst by the formula, "
                           "and cut the best (or `descending: true` written, to keep the highest all the same)")

    @property
    def written_numbers(self) -> list[float]:
        """The numbers the pack writes in its expressions (derived metrics, formula components, red flags), as
        written: a verification quotes a red flag's rule in the brief ("decide whether crash (dip < -0.15) rules it
        out"), a number the store holds only as the pack's text."""
        parsed = [*(m.parsed for m in self.metrics.values() if m.agg == "derived"),
                  *(c.parsed for c in self.formula.components), *(r.parsed for r in self.red_flags)]
        return [number for expression in parsed for number in expression.constants]

    @cached_property
    def derived_order(self) -> list[str]:
        """The derived metrics, each after the metrics it reads."""
        return _derived_order(self.metrics)

    def with_derived(self, values: dict[str, float | None], *, keep: frozenset[str] = frozenset()
                     ) -> dict[str, float | None]:
        """`values` (the aggregated metrics) with every derived metric computed from them, in code; a gap or an
        undefined result is a gap. `keep`: derived metrics whose given value stands (a perturbed input)."""
        out = dict(values)
        for name in self.derived_order:
            if name in keep:
                continue
            try:
                value = expressions.evaluate_compiled(self.metrics[name].parsed, out)
            except expressions.MissingValue:
                value = None
            out[name] = value if value is None or math.isfinite(value) else None
        return out

    def base_metrics(self, name: str) -> list[str]:
        """The aggregated metrics a metric rests on: itself, or a derived metric's inputs all the way down."""
        spec = self.metrics[name]
        if spec.agg != "derived":
            return [name]
        return list(dict.fromkeys(m for used in sorted(spec.parsed.names) for m in self.base_metrics(used)))

    def derived_metrics(self, name: str) -> list[str]:
        """The derived metrics a metric is or rests on: itself if derived, and those its expression reads, all the
        way down (`base_metrics`' counterpart)."""
        spec = self.metrics[name]
        if spec.agg != "derived":
            return []
        return list(dict.fromkeys([name, *(m for used in sorted(spec.parsed.names) if used in self.metrics
                                           for m in self.derived_metrics(used))]))

    @property
    def columns(self) -> list[str]:
        """The panel's value columns (the source's and its joins'): what metrics, identities and checks read."""
        return self.source.panel_columns

    @property
    def grain(self) -> Grain:
        """The period the windows count in (`source.grain`)."""
        return Grain(self.source.grain)

    @property
    def max_window(self) -> int:
        return max(spec.window[1] for spec in self.metrics.values())

    @property
    def carried_span(self) -> int:
        """Periods back from the latest, that one included, in which an entity needs a row (read or refused) to be
        judged: the metrics' widest window and a year of periods before it, within `history_reach`. With none there,
        the source no longer records it (`Candidate.gone`); a row a period or two late is still in it. An events
        source's row is an event (its panel sums a silence as 0)."""
        return min(self.max_window + 1 + self.grain.per_year, self.history_reach + 1)

    @property
    def history_reach(self) -> int:
        """Periods back (0 = the latest) of history the scan keeps: the metrics' windows and the integrity
        yardstick (`integrity.history_periods`, or the widest window and `min_history` periods before it); by the
        week, also a year and `min_history` periods more, the fewest whose year-earlier changes excuse a move the
        season makes every year (trial 57: with the 72 weeks kept, Ansett's first class down 57% into Christmas
        week, as 70% the year before, was doubted as a level shift "and it stays"). A month's 37 lie within the
        default; a day's 390 would multiply a daily pack's rows by five, and its calendar is `stays`' to judge."""
        season = self.grain.per_year + self.integrity.min_history if self.grain.name == "week" else 0
        return max(self.integrity.history_periods - 1, self.max_window + self.integrity.min_history, season)

    @property
    def fingerprint(self) -> str:
        """Hash of the pack's criteria: which criteria produced a record. Not where its files lie, how outcomes
        are measured afterwards, which nights are offered, which models judge or what they may cost: none of that
        changes a code verdict."""
        # how a file separates its fields says nothing of its rows: `delimiter`, like `path`, is left out; and
        # `entity` and `events_from` unset are left out, so a pack without them keeps the fingerprint it had before
        # the key
        unset = {k: True for k in ("entity", "events_from") if getattr(self.source, k) is None}
        caps = {"cost_ceiling_usd", "retries"} | ({"max_flagged"} if self.caps.max_flagged is None else set())
        # an integrity rule added since the fingerprints were pinned is left out at its default, as a key unset is
        later = {rule for rule in _RULES_SINCE_PINNED
                 if getattr(self.integrity, rule) == type(getattr(self.integrity, rule))()}
        # a rule whose default changed since is fingerprinted at today's default as at the pinned one
        pinned = self
        for rule, fields in _DEFAULTS_SINCE_PINNED.items():
            if (spec := getattr(self.integrity, rule)) == type(spec)():
                pinned = pinned.model_copy(update={"integrity": pinned.integrity.model_copy(
                    update={rule: spec.model_copy(update=fields)})})
        dumped = pinned.model_dump_json(exclude={"pack_path": True, "nights": True, "outcome": True, "models": True,
                                               "source": {"path": True, "delimiter": True, **unset,
                                                          "join": {"__all__": {"delimiter", "entity",
                                                                               "events_from"}}},
                                               "caps": caps, "integrity": later})
        return hashlib.sha256(dumped.encode()).hexdigest()[:12]


_RULES_SINCE_PINNED = ("partial_period", "absorbed")
"""Integrity rules added after the bundled pack's fingerprint was pinned (`tests/test_criteria.py`): at their
defaults they are left out of `CriteriaPack.fingerprint`, so a pack keeps the fingerprint its stored nights hold."""


_DEFAULTS_SINCE_PINNED: dict[str, dict[str, Any]] = {"repeated_events": {"min_share": 0.25}}
"""Integrity rules whose defaults changed after the bundled pack's fingerprint was pinned, with the pinned values
(stop 54: `repeated_events.min_share` 0.25 -> 0.02): a rule at today's default is fingerprinted as at the pinned
one, so a pack keeps the fingerprint its stored nights hold, as for a rule added since."""


def _fits_a_share(bounds: tuple[float, float]) -> bool:
    """Whether a share's values (0 to 1) can fill at least half a range (`[-0.1, 1.1]` yes, `[0, 30]` no)."""
    low, high = bounds
    return max(0.0, min(high, 1.0) - max(low, 0.0)) >= (high - low) / 2


def _listed_in_another_case(src: SourceSpec, column: str, keys: list[str], read: Container[str] = ()
                            ) -> _KeyProblem | None:
    """A name several metrics read alike (`keys`, 2 or more), listed in `source.columns` in another case only
    (`Close` for `close`), or spelt a letter or two otherwise where no metric reads the name listed (`inventry`
    for `inventory`; `read`: the columns the metrics read): the list's slip, the name it lists told to be spelt as
    they read it (trial 72: each metric was told "did you mean 'Close'?", and once mended, the list told of the
    file's `close`; trial 89: a misspelt list entry, `mral`, had each metric told "did you mean 'mral'?", toward
    the typo); None otherwise, a metric's own slip."""
    if len(keys) < 2 or src.shape == "events" or src.wide is not None:
        return None
    index = next((i for i, c in enumerate(src.columns) if c != column and c.casefold() == column.casefold()), None)
    spelt = index is None
    if index is None:
        unread = [c for c in src.columns if c not in read]
        close = difflib.get_close_matches(column, unread, n=1, cutoff=0.8)
        index = src.columns.index(close[0]) if close else None
    if index is None:
        return None
    listed = src.columns[index]
    shown = ", ".join(keys[:3]) + (", ..." if len(keys) > 3 else "")
    differs = f"; {listed!r} is read by no metric" if spelt else ", which differs only in case"
    return _KeyProblem(f"source.columns.{index}", listed, f"the name as the {len(keys)} metrics reading it spell it "
                       f"({column!r}: {shown}){differs}; did you mean {column!r}? (or those "
                       f"metrics' column {listed!r}, if that is how the file writes it)")


def _did_you_mean(name: str, names: set[str]) -> str:
    """`; did you mean `population`?` for a misspelt name among `names`, else nothing."""
    close = difflib.get_close_matches(name, sorted(names), n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


_NEGATED = {">=": "<", ">": "<=", "<=": ">", "<": ">="}
_MIRRORED = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}
_OPS = {ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=", ast.Lt: "<"}


def _bound_on_a_metric(expr: expressions.Expression) -> tuple[str, str, float] | None:
    """(metric, op, number) of a comparison of one metric with one number, either way round (`20 < adults` is
    `adults > 20`), or None for any other expression."""
    body = expr.tree.body
    if not isinstance(body, ast.Compare) or (op := _OPS.get(type(body.ops[0]))) is None:
        return None
    left, right = body.left, body.comparators[0]
    if isinstance(right, ast.Name) and not isinstance(left, ast.Name):
        left, right, op = right, left, _MIRRORED[op]
    negative = isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub)
    number = right.operand if isinstance(right, ast.UnaryOp) and negative else right
    if not isinstance(left, ast.Name) or not isinstance(number, ast.Constant) \
            or not isinstance(number.value, int | float):
        return None
    return left.id, op, -float(number.value) if negative else float(number.value)


def _can_hold(op: str, value: float, low: float, high: float) -> bool:
    """Whether `x op value` holds for some x from `low` to `high`."""
    return {">=": value <= high, ">": value < high, "<=": value >= low, "<": value > low}[op]


def _derived_order(metrics: dict[str, MetricSpec]) -> list[str]:
    """Derived metrics in an order where each comes after those it reads; a cycle is a key problem."""
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done" or metrics[name].agg != "derived":
            return
        if state.get(name) == "open":
            cycle = [*path[path.index(name):], name]
            raise _KeyProblem(f"metrics.{name}.expression", metrics[name].expression,
                              f"no cycle among derived metrics (found {' -> '.join(cycle)})")
        state[name] = "open"
        for used in sorted(metrics[name].parsed.names):
            if used in metrics:
                visit(used, [*path, name])
        state[name] = "done"
        order.append(name)

    for name in metrics:
        visit(name, [])
    return order


def _column_named(text: str, read_by: Mapping[str, list[str]]) -> str:
    """Where an expression names a source column that metrics read (`read_by`: column -> those metrics), which they
    are, as the clause that ends its problem; else nothing (trial 125: `MPG.highway < 20` in a red flag was told
    only that `MPG.highway` "is not allowed", and a plain column name was offered the nearest metric by spelling)."""
    for column in sorted((c for c in read_by if c not in read_by[c]), key=len, reverse=True):
        if re.search(rf"(?<![\w.]){re.escape(column)}(?![\w.])", text):
            metrics = ", ".join(f"`{m}`" for m in read_by[column])
            which = f"metric {metrics} reads" if len(read_by[column]) == 1 else f"metrics {metrics} read"
            return f"; `{column}` is a source column, which {which}: expected the metric's name in its place"
    return ""


def _check_expression(key: str, text: str, allowed: set[str], *, comparison: bool, what: str,
                      listed_in: tuple[set[str], str] | None = None, itself: str | None = None,
                      read_by: Mapping[str, list[str]] | None = None) -> None:
    """`listed_in`: names that exist but must also be listed in a key to be used here (a metric the formula uses
    must be a required input), and that key. `itself`: the derived metric the expression computes. `read_by`: the
    source columns metrics read, each with those metrics (`_column_named`)."""
    try:
        parsed = expressions.parse(text)
    except expressions.ExpressionError as exc:
        raise _KeyProblem(key, text, f"an arithmetic expression: {exc}{_column_named(text, read_by or {})}") from None
    if itself is not None and itself in parsed.names:
        raise _KeyProblem(key, text, f"names that are each {what} {sorted(allowed)}: `{itself}` is this metric "
                          "itself, and a metric cannot be computed from its own value")
    if parsed.is_comparison != comparison:
        raise _KeyProblem(key, text, "a comparison such as `a / b > 0.5`" if comparison
                          else "an arithmetic expression without a comparison")
    unknown = sorted(parsed.names - allowed)
    if listed_in is not None and unknown and set(unknown) <= listed_in[0]:
        raise _KeyProblem(key, text, f"names that are each {what} {sorted(allowed)}; {unknown} "
                          f"{'is a metric' if len(unknown) == 1 else 'are metrics'} but not in `{listed_in[1]}`: "
                          "add it there")
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(allowed), n=1)
        hint = _column_named(unknown[0], read_by or {}) or (
            f"; did you mean `{close[0]}` for `{unknown[0]}`?" if close else "")
        raise _KeyProblem(key, text, f"names that are each {what} {sorted(allowed)}; unknown: {unknown}{hint}")


_YAML_WORDS = (
    ("found character '\\t'", "a tab in the indentation: YAML indents with spaces only"),
    ("mapping values are not allowed here", "a `key: value` where none can start: a line indented deeper than the "
     "keys beside it, a line above it with no `:`, or a value holding `: ` unquoted"),
    ("expected <block end>", "a line indented otherwise than the keys beside it: expected each key of a section at "
     "the same number of spaces"),
    ("but found another document", "a second document (`---`) starts here: expected one pack, one mapping of keys, "
     "per file"),
    ("found unexpected end of stream", "a quote or bracket opened and never closed"),
)
"""PyYAML's words for the slips a pack's author makes, in the pack's words (trial 44: a key indented one space too
deep was "mapping values are not allowed here", a second `---` "but found another document", PyYAML's text)."""


def yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's error in one line: what, in words where the slip is a common one, and where (line and column, from
    1, with the line as written)."""
    problem = getattr(exc, "problem", None) or str(exc)
    problem = next((words for start, words in _YAML_WORDS if problem.startswith(start)), problem)
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return " ".join(problem.split())
    lines = str(mark.buffer or "").splitlines()
    written = lines[mark.line].strip(" \t\0") if mark.line < len(lines) else ""
    where = f"line {mark.line + 1}, column {mark.column + 1}" + (f", {shorten(written, 60)!r}" if written else "")
    return " ".join(f"{where}: {problem}".split())


def _check_rendered(template: str, units: dict[str, str]) -> None:
    """The template as the brief will write it must pass the brief's own number check (every number one the store
    holds): rendered with sample values in each metric's format, the only numbers in it may be those values. A
    literal number in the text ("call 3 agents") or a unit written beside a placeholder (`{rate_3m}%`, `${median}`,
    which the check reads as another number) would stop a night at `numbers_in_store`; here it stops the load."""
    beside = re.search(r"\$\{[^}]*\}|\{[^}]*\}\s?%", template)
    if beside:
        raise _KeyProblem("next_action", template, f"no unit written beside a placeholder (found "
                          f"{beside.group(0)!r}): the metric's `unit` (usd, share) writes $ and %, and a number "
                          "written as a percent is read as another number by the brief's check")
    samples = {name: {"share": 0.1234, "number": 0.0537}.get(unit, 1234.5678) for name, unit in units.items()}
    fields = {"name": "Name", **{n: format_value(v, units[n]) for n, v in samples.items()}}
    problems = unsupported_numbers(template.format(**fields), list(samples.values()), date.max)
    if problems:
        raise _KeyProblem("next_action", template, f"text whose only numbers are `{{metric}}` placeholders, with "
                          f"no unit written beside one (the metric's `unit` writes $ and %); as written, the brief "
                          f"would show {problems[0]!r}, a number the store does not hold")


def _check_labels(pack: CriteriaPack) -> None:
    """A component's `label` is written in the brief before the component's value ("murder rate 2.66"), and every
    number in the brief must be one the store holds; of a label's text the store holds only the pack's own numbers
    (it keeps the pack). A number of any other kind in a label ("murders per 10,000") stopped every night whose
    act-on list that component led, at `numbers_in_store` and naming no key; here it stops the load."""
    held = list(numeric_leaves(pack.model_dump(mode="json")))
    for index, component in enumerate(pack.formula.components):
        problems = unsupported_numbers(component.label, held, date.max)
        if problems:
            raise _KeyProblem(f"formula.components.{index}.label", component.label,
                              f"a label with no number the pack does not hold: the brief writes the label beside "
                              f"the component's value, and {problems[0]!r} is a number the store does not hold, "
                              f"which would stop the night at `numbers_in_store` (write it in words, \"murder rate\", "
                              f"and the unit in the metric's `description`)")


def _names_unique(section: str, names: list[str]) -> None:
    """Refuses an item of a list section whose `name` an earlier item has: its results are kept by name, so the
    later one hid the earlier (trial 33: two filters named `busy`, the first refusing every candidate, the second
    passing them, and check counted 3 passing)."""
    for index, name in enumerate(names):
        if name in names[:index]:
            raise _KeyProblem(f"{section}.{index}.name", name, f"a name of its own: `{section}.{names.index(name)}` "
                              "is named so, and a result kept by name would hide one of them")


_MAX_EXPANDED = 100_000
"""Values a pack's anchors and aliases may expand to: a large pack writes some thousands."""


class _AliasBomb(yaml.YAMLError):
    """A YAML document whose aliases expand to more values than any pack writes."""


def _expanded(node: yaml.Node, sizes: dict[int, int]) -> int:
    """How many values `node` holds once every alias is written out; over `_MAX_EXPANDED` (or an alias inside its
    own anchor, without end) raises _AliasBomb. Counted on the composed nodes, each counted once (`sizes`), so a
    "billion laughs" is told in a blink: PyYAML shares what an alias names and loads it as fast, but whatever later
    walks or writes out the value (a check, its error message) has the billion to go through (trial 142: `domain:`
    such an alias hung `check` past a minute)."""
    if id(node) in sizes:
        if sizes[id(node)] < 0:
            raise _AliasBomb(f"got an alias inside its own anchor's block (`&name` ... `*name`, line "
                             f"{node.start_mark.line + 1}), which expands without end; expected each alias to name a "
                             "block written before it, outside it")
        return sizes[id(node)]
    sizes[id(node)] = -1
    children = node.value if isinstance(node, yaml.SequenceNode) else \
        [item for pair in node.value for item in pair] if isinstance(node, yaml.MappingNode) else []
    size = 1 + sum(_expanded(child, sizes) for child in children)
    if size > _MAX_EXPANDED and size > 2 * len(sizes):
        raise _AliasBomb(f"got anchors and aliases (`&name`, `*name`) expanding to over {_MAX_EXPANDED:,} values "
                         f"from {len(sizes):,} written (aliases of blocks of aliases, a \"billion laughs\"?); "
                         "expected each alias to name a block a pack writes a few times")
    sizes[id(node)] = size
    return size


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key written twice in one mapping (PyYAML keeps the later one silently), and a
    document whose aliases expand past any pack (`_expanded`)."""

    def construct_document(self, node: yaml.Node) -> Any:
        _expanded(node, {})
        return super().construct_document(node)


def _unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} written twice (first at line {seen[key] + 1}): the later would win",
                key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def _date_or_text(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> object:
    """A date YAML reads, or, for one no calendar has (`2013-12-40`, `1985-02-29`), its text: PyYAML raised
    Python's "day is out of range for month" from inside the load, which the user saw with no key and no value
    (trial 33); as text, the key's own check names it ("got '2013-12-40'; expected a valid date")."""
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError:
        return loader.construct_scalar(node)


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp", _date_or_text)


def _int_or_text(loader: _UniqueKeyLoader, node: yaml.ScalarNode) -> object:
    """A whole number YAML reads, or, for one YAML 1.1 reads in another base, its text as written: a leading zero
    is octal there and a colon base 60 (trial 44: `window: [02, 010]` was told "got [2, 8]", and a ZIP code listed
    in a `where`, `in: [02134]`, was compared as '1116'). As text, a key taking a number reads `010` as 10 and a
    listed value is the code as written."""
    if re.fullmatch(r"[-+]?0[0-9_]+|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+", node.value):
        return loader.construct_scalar(node)
    return loader.construct_yaml_int(node)


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _int_or_text)


def _yaml_kind(raw: object) -> str:
    """What a YAML document that is no mapping holds, in words (a list, a text, a number), with its start."""
    kind = "a list (lines starting `- `)" if isinstance(raw, list) else \
        "a number" if isinstance(raw, int | float) else "a text" if isinstance(raw, str) else "a single value"
    return f"{kind}, {shorten(repr(raw), 40)}"


_BINARY_KINDS = ((b"PK\x03\x04", "a ZIP archive (an Excel workbook, .xlsx, is one)"), (b"PAR1", "a Parquet file"),
                 (b"\xd0\xcf\x11\xe0", "an old Excel workbook (.xls)"), (b"\x1f\x8b", "a gzip file"),
                 (b"%PDF", "a PDF"))


def _binary_kind(path: Path) -> str | None:
    """What a file that is no text is, by its first bytes (a workbook, a Parquet file), if it is one of those."""
    with path.open("rb") as fh:
        head = fh.read(12)
    if head[8:12] == b"DUCK":
        return "a DuckDB database"
    return next((what for magic, what in _BINARY_KINDS if head.startswith(magic)), None)


def _utf16_first_line(head: bytes) -> str | None:
    """The first line of a file's first bytes, shortened, if they are UTF-16 text (a byte-order mark, or a NUL in
    nearly every other byte, as ASCII is in UTF-16 without one); else None. Trial 142: a pack saved as "Unicode
    text" was "not UTF-8 text (byte 0)", where a UTF-16 data file is named as one (`sources.sniff`)."""
    pairs = head[:len(head) // 2 * 2]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = pairs.decode("utf-16", "replace")
    elif len(pairs) >= 8 and pairs[1::2].count(0) >= 0.9 * len(pairs) / 2:
        text = pairs.decode("utf-16-le", "replace")
    elif len(pairs) >= 8 and pairs[0::2].count(0) >= 0.9 * len(pairs) / 2:
        text = pairs.decode("utf-16-be", "replace")
    else:
        return None
    first = next((line for line in text.removeprefix("\ufeff").splitlines() if line.strip()), "")
    return shorten(first, 60, placeholder="...")


def _yaml_files(folder: Path) -> list[str]:
    """The names of the YAML files in `folder`, sorted."""
    return sorted(p.name for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def _yaml_meant(missing: Path) -> str:
    """`; did you mean 'pack.yaml'?` for a YAML file beside the missing one whose name it likely is, its extension
    left off or misspelt (trial 107: `--criteria presidents`, for presidents.yaml, was "not found", no more); else
    nothing."""
    if not missing.parent.is_dir():
        return ""
    yamls = _yaml_files(missing.parent)
    same = [name for name in yamls if Path(name).stem == missing.stem]
    close = same or difflib.get_close_matches(missing.name, yamls, n=1, cutoff=0.8)
    return f"; did you mean {str(missing.with_name(close[0]))!r}?" if close else ""


_TEXT_DATA = {".csv": "a CSV file", ".tsv": "a CSV file", ".jsonl": "a JSON Lines file",
              ".ndjson": "a JSON Lines file"}
"""Extensions of text data files, by what they are (a `.gz` after them aside)."""


def _text_data_file(path: Path, kind: str, error: type[ValueError]) -> None:
    """Raise for a CSV or JSON Lines file given as the pack, once it reads as no mapping (trial 118: the data given
    to `--criteria` was "not valid YAML (line 135, column 6, 'Notes:' ...)" of its notes below the table, "got a
    text", or "expected '<document start>', but found '{'": YAML's words of a file that is no YAML)."""
    suffix = suffix_of(path).removesuffix(".gz")
    if kind == "criteria" and suffix in _TEXT_DATA:
        raise error(f"{kind} file {path}: got {_TEXT_DATA[suffix]} (its extension {suffix}), not a criteria pack; "
                    "expected the YAML file (a data file is named by the pack's `source.path`)")


def read_yaml_mapping(path: Path, kind: str, error: type[ValueError]) -> dict[str, Any]:
    """A YAML file that must hold a mapping; `error` names the file (`kind file PATH: …`) and the problem."""
    if path.is_dir():  # (trial 105: a pack's folder was told "not found")
        yamls = _yaml_files(path)
        inside = f" (it holds {', '.join(yamls[:5])})" if yamls else " (it holds no .yaml file)"
        raise error(f"{kind} file {path}: got a folder{inside}; expected the YAML file itself")
    if not path.is_file():
        raise error(f"{kind} file {path}: not found{_yaml_meant(path)}")
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # a SafeLoader
    except UnicodeDecodeError as exc:
        binary = _binary_kind(path)
        if binary:  # (trial 105: the data file given as the pack was told "not UTF-8 text (byte 12)")
            data = " (a data file is named by the pack's `source.path`)" if kind == "criteria" else ""
            raise error(f"{kind} file {path}: got {binary}, not YAML text; expected the YAML file{data}") from None
        if (first := _utf16_first_line(path.read_bytes()[:400])) is not None:
            raise error(f"{kind} file {path}: not UTF-8 text: it looks like UTF-16 text (first line {first!r}); "
                        "expected the file saved as UTF-8") from None
        raise error(f"{kind} file {path}: not UTF-8 text (byte {exc.start})") from None
    except _AliasBomb as exc:
        raise error(f"{kind} file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        _text_data_file(path, kind, error)
        raise error(f"{kind} file {path}: not valid YAML ({yaml_problem(exc)})") from None
    if not isinstance(raw, dict):  # (in words: trial 30's empty pack was told "got NoneType", Python's class name)
        _text_data_file(path, kind, error)
        got = "nothing (an empty file, or only comments)" if raw is None else _yaml_kind(raw)
        raise error(f"{kind} file {path}: got {got}; expected a mapping of keys, one `key: value` a line")
    return raw


_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
"""A path written as a URL (`https://…/sales.csv`, `s3://bucket/…`): read as a file name, it was "expected an existing
file (looked at /data/https:/…)", as if the file had been misplaced (trial 37). In a query over files, a quoted
one (`read_csv('https://…')`) had DuckDB try to install its web extension, and say so in its own words."""
_URL_IN_QUERY = re.compile(r"'([A-Za-z][A-Za-z0-9+.-]*)://")


def load_criteria(path: str | Path) -> CriteriaPack:
    """Read and validate a pack. Raises CriteriaError naming the key, the value and what was expected."""
    path = Path(path)
    raw = read_yaml_mapping(path, "criteria", CriteriaError)
    settings = [k for k in ("schedule", "sensors", "notifications") if k in raw]
    if settings and "domain" not in raw:  # (trial 105: told "key `domain`: missing" for each of a pack's keys)
        raise CriteriaError(f"criteria file {path}: got the automation settings (its keys "
                            f"{', '.join(f'`{k}`' for k in settings)}): expected a criteria pack (`domain`, "
                            "`source`, `metrics`, ...); settings go to `--settings`")
    _tables_unnamed(raw, path)
    try:
        pack = CriteriaPack.model_validate({**raw, "pack_path": path.resolve()})
    except ValidationError as exc:
        errors = _one_per_union(exc.errors())
        # a line said once: `window: []` lacks both items, one error each, and both are the pair's one line
        lines = dict.fromkeys(_without_moved(_one_per_mapping(errors), errors))
        raise CriteriaError(f"criteria file {path}: " + "; ".join(lines)) from None
    for within, source in pack.source.keyed:
        if source.over_files and source.query and (scheme := _URL_IN_QUERY.search(source.query)) is not None:
            raise CriteriaError(f"criteria file {path}: key `{within}.query`: got {source.query!r}; it reads a URL "
                                f"({scheme[1]}), which is never fetched (a night reads files on this machine, no "
                                "network): expected the file downloaded, named relative to the pack")
        if source.format == "postgres" or source.over_files:
            continue
        if source.path is not None and (scheme := _URL.match(source.path)) is not None:
            raise CriteriaError(f"criteria file {path}: key `{within}.path`: got {source.path!r}; a URL ({scheme[1]}), "
                                "which is never fetched (a night reads files on this machine, no network): expected "
                                "the file downloaded, its path relative to the pack")
        try:
            found = pack.path_of(source)
        except archives.ArchiveError as exc:
            raise CriteriaError(f"criteria file {path}: key `{within}.{exc.key}`: {exc}") from None
        if _loops(found):
            raise CriteriaError(f"criteria file {path}: key `{within}.path`: got {source.path!r}; {found} is a "
                                "symbolic link that leads back to itself (a loop of links): expected a link to the "
                                "data file, or the file")
        if found.is_dir():  # (trial 44: a folder was "expected an existing file (looked at /data)", as if absent)
            held = _data_files(found)[:5]
            raise CriteriaError(f"criteria file {path}: key `{within}.path`: got {source.path!r}; {found} is a "
                                f"folder: expected a data file's path" + (f", such as one of {held}" if held else ""))
        if not found.is_file():
            raise CriteriaError(f"criteria file {path}: key `{within}.path`: got {source.path!r}; "
                                f"expected an existing file (looked at {found}){_likely_file(found, source.path)}")
    return pack


def _loops(path: Path) -> bool:
    """Whether `path` is a symbolic link leading, link by link, back to itself: neither a file nor a folder, nor
    missing (trial 142: `Path.resolve` raised "Symlink loop from ..." as a traceback)."""
    try:
        path.resolve(strict=True)
    except RuntimeError:  # (Python 3.11's word for a loop)
        return True
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _tables_unnamed(raw: dict[str, Any], path: Path) -> None:
    """A DuckDB database file read with no `table` (nor `query`), in `source` or a join: the key named with the
    file's tables (trial 101: "key `source.table`: missing; expected a value", the file's tables nowhere)."""
    source = raw.get("source")
    if not isinstance(source, dict):
        return
    joins: list[Any] = source["join"] if isinstance(source.get("join"), list) else []
    for within, spec in [("source", source), *((f"source.join.{i}", j) for i, j in enumerate(joins))]:
        written = spec.get("path") if isinstance(spec, dict) else None
        if not isinstance(written, str) or "table" in spec or spec.get("query") is not None:
            continue
        file = Path(written).expanduser()
        file = file if file.is_absolute() else path.parent / file
        member = spec.get("member") if isinstance(spec.get("member"), str) else None
        read = archives.member_read(file, member) if archives.is_archive(written) and file.is_file() else file.name
        if read is None or spec.get("format", "duckdb" if read.lower().endswith(DUCKDB_SUFFIXES) else None) != "duckdb":
            continue  # (an archive that cannot tell: said by the path's own check, naming its key)
        if archives.is_archive(written):  # (its data file, as a night reads it)
            file = archives.extracted(file, member)
        from opportunity_assets.sources.formats import database_tables  # (DuckDB: loaded only here, as a night would)

        tables = database_tables(file)
        if tables is not None:
            shown = file.name if file.parent.name != Path(written).name else f"{Path(written).name} ({file.name})"
            raise CriteriaError(f"criteria file {path}: key `{within}.table`: missing; expected the table or view of "
                                f"{shown} to read, one of {tables}")


def _data_files(folder: Path) -> list[str]:
    """The names of the files in `folder` of a format a source reads, sorted."""
    return sorted(p.name for p in folder.iterdir() if p.is_file() and format_named_by(p) is not None)


def _likely_file(missing: Path, written: str | None) -> str:
    """`; did you mean 'txhousing.csv'?` for a data file beside the missing one whose name it likely misspells
    (trial 101: `path: txhousng.csv` was only "expected an existing file"), written as the pack wrote its path;
    else nothing."""
    if written is None or not missing.parent.is_dir():
        return ""
    close = difflib.get_close_matches(missing.name, _data_files(missing.parent), n=1, cutoff=0.8)
    return f"; did you mean {str(Path(written).with_name(close[0]))!r}?" if close else ""


_NUMBER = "a number written plainly (50000, 0.25: no thousands separator, unit or % sign)"
_WHOLE = "a whole number written plainly (45: no unit, the key's name says it)"
_FRACTION = "a whole number, without a fraction (periods, days and rows are counted whole)"
"""Trial 23: `window: [0, 4.5]` was told "a whole number written plainly (45: ...)", read as 45 offered for 4.5."""
_DATE = "a valid date, written YYYY-MM-DD (2002-06-30)"
_PLAIN = {
    "float_parsing": _NUMBER, "float_type": _NUMBER, "int_parsing": _WHOLE, "int_type": _WHOLE,
    "int_from_float": _FRACTION, "date_parsing": _DATE, "date_from_datetime_parsing": _DATE, "date_type": _DATE,
    "date_from_datetime_inexact": _DATE, "string_type": "one name or text (not a list, a number or a mapping)",
    "bool_parsing": "true or false", "bool_type": "true or false", "list_type": "a list, such as [a, b]",
    "dict_type": "a mapping, such as {{key: value}}", "model_type": "a mapping of its own keys, such as {{key: value}}",
    "greater_than_equal": "a number of at least {ge}",
    "greater_than": "a number above {gt}", "less_than_equal": "a number of at most {le}",
    "less_than": "a number below {lt}", "tuple_type": "a pair in brackets, such as [0, 2]",
    "string_too_short": "a column's name, never empty",
}
"""Pydantic's messages by error type, in the pack's words (its own text, "unable to parse string as a number",
"input is too short", says what failed inside pydantic, not what the key takes)."""


def _list_length(kind: str, ctx: dict[str, Any]) -> str:
    """What a list's length should be, in words: "a list of at least one item (it has none)"."""
    bound, actual = int(ctx.get("min_length" if kind == "too_short" else "max_length", 0)), ctx.get("actual_length")
    items = "one item" if bound == 1 else f"{bound} items"
    return f"a list of {'at least' if kind == 'too_short' else 'at most'} {items} (it has {actual or 'none'})"


def _pattern_words(pattern: str, value: str) -> str:
    """What a name key's pattern asks, in words, with the value written so where it can be."""
    if pattern == _NAME:
        written = re.sub(r"[^a-z0-9_]+", "_", value.lower()).strip("_")
        example = f" (e.g. {written!r}: DuckDB and PostgreSQL read a name written without quotes in lower case)" \
            if re.fullmatch(_NAME, written) else ""
        return f"a name of lower-case letters, digits and `_`, starting with a letter{example}"
    if pattern == TABLE_NAME:
        return ("a table's or view's name as the database lists it, `sales` or `analytics.sales` (its schema before "
                "the dot), without double quotes")
    if pattern.startswith("^[A-Z_]"):
        return "an environment variable's name, in capitals, digits and `_` (OPP_PG_URL)"
    return f"text matching {pattern}"


def _url_written_as_variable(value: str, message: str) -> tuple[str, str]:
    """`url_env`'s value as a message may show it, and what the key takes: a URL (or a `password=` setting) written
    there in place of a variable's name, its password as `***`, and where the URL goes (trial 106: `url_env:
    postgresql://user:secret@host/db` was echoed whole, the secret on the terminal and in every log)."""
    if (masked := masked_url(value)) is None or not re.search(r"://|@|=", value):
        return value, message
    return masked, (f"{message}: the variable holds the URL, never the pack (`url_env: OPP_PG_URL`, and `export "
                    "OPP_PG_URL='postgresql://user:password@host:port/database'` where the command runs)")


_UNION_MEMBERS = ("str", "list[str]")
"""The tags pydantic puts after a key whose value may take either form (`entity_id: name` or `[name, name]`)."""
_UNION_FORMS = {"period_format": "one pattern or a list of patterns, each text (such as ['%d.%m.%Y', '%Y-%m-%d'])"}
"""The forms of such a key, in words, where they are not columns (trial 24: `period_format: ['%Y-%m-%d', 5]` was
told "one column name or a list of column names" and then again under `source.period_format.list[str].1`)."""
_COLUMN_FORMS = "one column name or a list of column names"


def _one_per_union(errors: list[Any]) -> list[Any]:
    """One error for a key whose value fits none of its forms (pydantic gives one per form, each under a key holding
    the form's tag, `source.entity_id.list[str]`, or an item of it, `source.period_format.list[str].1`): the key, the
    value as written, and the forms it takes."""
    out: list[Any] = []
    seen: set[tuple[Any, ...]] = set()
    for error in errors:
        loc = tuple(error["loc"])
        tag = next((i for i, part in enumerate(loc) if part in _UNION_MEMBERS), None)
        if tag is None or error["type"] in ("missing", "extra_forbidden"):
            out.append(error)
            continue
        key = loc[:tag]
        if key in seen:
            continue
        seen.add(key)
        whole = next(e["input"] for e in errors if tuple(e["loc"]) in ((*key, "str"), loc))
        out.append({**error, "loc": key, "input": whole, "type": "union_forms",
                    "msg": _UNION_FORMS.get(str(key[-1]), _COLUMN_FORMS)})
    return out


def _one_per_mapping(errors: list[Any]) -> list[str]:
    """The errors described, a mapping's unknown keys and its missing ones said in one line (trial 37: an identity
    written `{name, left, right, tolerance}` was three lines, "`ratio`: missing", "`left`: unknown key (did you mean
    `effect`?)", "`right`: unknown key", for one cause: keys of another form than the mapping's). An unknown key
    close to a missing one is a misspelling, said as such by its own line's "did you mean". Several keys a mapping
    lacks are one line too."""
    def parent(error: Any) -> tuple[Any, ...]:
        return tuple(error["loc"][:-1])

    keys: dict[tuple[Any, ...], dict[str, list[str]]] = {}
    for error in errors:
        if error["type"] in ("missing", "extra_forbidden") and not isinstance(error["loc"][-1], int):
            keys.setdefault(parent(error), {}).setdefault(error["type"], []).append(str(error["loc"][-1]))
    mixed = {loc for loc, found in keys.items() if len(found) == 2 and loc and _keys_at(loc)
             and not any(difflib.get_close_matches(k, found["missing"], n=1) for k in found["extra_forbidden"])}
    lacking = {loc for loc, found in keys.items() if set(found) == {"missing"} and len(found["missing"]) > 1
               and loc and _keys_at(loc)}
    out, said = [], set()
    for error in errors:
        loc = parent(error)
        if loc in lacking and error["type"] == "missing":
            if loc not in said:  # (trial 38: `models.analyzer: {model: x}` was a line per key it lacked)
                said.add(loc)
                within = ".".join(str(part) for part in loc)
                out.append(f"key `{within}`: missing {', '.join(f'`{k}`' for k in keys[loc]['missing'])}; expected "
                           f"the keys of `{within}`: " + ", ".join(f"`{k}`" for k in _keys_at(loc) or ()))
            continue
        if loc not in mixed or error["type"] not in ("missing", "extra_forbidden"):
            out.append(_describe(error))
            continue
        if loc in said:
            continue
        said.add(loc)
        unknown, missing = keys[loc]["extra_forbidden"], keys[loc]["missing"]
        within = ".".join(str(part) for part in loc)
        out.append(f"key `{within}`: got the unknown key(s) {', '.join(f'`{k}`' for k in unknown)} and not "
                   f"{', '.join(f'`{k}`' for k in missing)}; expected the keys of `{within}`: "
                   + ", ".join(f"`{k}`" for k in _keys_at(loc) or ()))
    return out


def _window_beyond(parsed: expressions.Expression, kept: int) -> str | None:
    """What an identity's window function reaching past the `kept` periods of history asks instead: such a ratio
    has no value in any period, so the identity is never judged, and nothing said so (trial 57: `avg(DriversKilled,
    500)` over the 72 periods kept). None where every window fits."""
    for node in ast.walk(parsed.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and isinstance(node.args[1], ast.Constant):
            n = int(node.args[1].value)  # type: ignore[arg-type]  # parse_series admits only a whole n
            reach = n + 1 if node.func.id == "lag" else n
            if reach > kept:
                return (f"windows within the {kept} periods of history kept for a candidate: `{ast.unparse(node)}` "
                        f"reaches {reach}, so the ratio has no value in any period and is never judged (raise "
                        f"`integrity.history_periods`, at most {MAX_HISTORY}, or shorten the window)")
    return None


_WRITTEN_OFF = (False, None, "none", "off", "disabled")
"""What a pack writes to turn a data rule off (YAML reads an unquoted `off` or `no` as false)."""


def _rule_written_off(error: Any, key: str) -> str | None:
    """A data rule, or its `effect`, written off (`spike: off`, `stale: {effect: none}`): no rule is turned off, and
    the line says which effect keeps its findings from moving any verdict (trial 57: `spike: off` was told "got
    False; expected a mapping of its own keys", the way to quiet it said nowhere). None for any other error."""
    loc = tuple(str(part) for part in error["loc"])
    whole = len(loc) == 2 and error["type"] == "model_type"
    effect = len(loc) >= 3 and loc[-1] == "effect"
    shown = error.get("input")
    if loc[:1] != ("integrity",) or not (whole or effect) or isinstance(shown, dict) or shown not in _WRITTEN_OFF:
        return None
    yaml_false = " (YAML reads an unquoted off or no as false)" if shown is False else ""
    return (f"key `{key}`: got {shown!r}{yaml_false}; expected 'note', 'doubt' or 'reject' for its effect: no data "
            f"check is turned off, and `effect: note` reports its findings without moving any verdict")


def _describe(error: Any) -> str:
    key = ".".join(str(part) for part in error["loc"])
    if (off := _rule_written_off(error, key)) is not None:
        return off
    message = str(error["msg"]).removeprefix("Value error, ")
    ctx_error = (error.get("ctx") or {}).get("error")
    if isinstance(ctx_error, _KeyProblem):
        return str(ctx_error)
    if isinstance(ctx_error, _Within):
        return str(_KeyProblem(f"{key}.{ctx_error.key}" if key else ctx_error.key, ctx_error.value,
                               ctx_error.expected))
    if error["type"] == "missing" and isinstance(error["loc"][-1], int) and isinstance(error["input"], list):
        # an item of a pair (`window: [0]`), not a key: the pair's key, as written
        pair = ".".join(str(part) for part in error["loc"][:-1])
        return f"key `{pair}`: got {error['input']!r}; expected a pair in brackets, such as [0, 2]"
    if error["type"] == "missing":
        return f"key `{key}`: missing; expected a value"
    if error["type"] == "too_long" and (error.get("ctx") or {}).get("field_type") == "Tuple":
        return f"key `{key}`: got {error['input']!r}; expected a pair in brackets, such as [0, 2]"
    if error["type"] == "invalid_key" or (error["type"] == "extra_forbidden" and str(error["loc"][-1]).isdigit()):
        # (trial 44: "key `hard_filters.0.0`: got 0; expected Keys should be strings", of `value: 1,000`)
        within = ".".join(str(part) for part in error["loc"][:-1])
        return (f"key `{within or '(top level)'}`: got a key {str(error['loc'][-1])!r}, a number, where each key is "
                "a name; expected names as keys: in a `{...}` mapping a comma ends a value, so `value: 1,000` is "
                "read as `value: 1` and a key `000` (write 1000)")
    if error["type"] == "extra_forbidden":
        name, section = str(error["loc"][-1]), _keys_at(tuple(error["loc"][:-1]))
        within = ".".join(str(part) for part in error["loc"][:-1])
        if (home := _home_of(name, tuple(error["loc"][:-1]))) is not None:
            return (f"key `{key}`: unknown key {f'in `{within}`' if within else 'at the top level'}; expected it "
                    + (f"under `{home}`, `{home}.{name}`" if home else f"at the top level, `{name}`, beside `source`")
                    + " (the key of another section, misplaced)")
        # a name close to one of its own section's keys; only else to any key (never the name refused itself)
        close = difflib.get_close_matches(name, [k for k in section or _known_keys() if k != name], n=1) \
            or _holding_words(name, section or [])
        hint = f" (did you mean `{close[0]}`?)" if close else _nested_hint(name, tuple(error["loc"][:-1]))
        expected = f"only the keys of `{within}`: " + ", ".join(f"`{k}`" for k in section) \
            if section and within and len(section) <= _LISTED_KEYS else "only the documented keys"
        return f"key `{key}`: unknown key{hint}; expected {expected}"
    plain = _PLAIN.get(error["type"])  # a template over the error's context (pydantic's own text is no template)
    message = plain.format(**(error.get("ctx") or {})) if plain else message.replace("Input should be ", "")
    if error["type"] in ("too_short", "too_long"):  # (trial 74: "at least 1 item(s), not 0" read as pydantic's)
        message = _list_length(error["type"], error.get("ctx") or {})
    if error["type"] == "model_type" and (own := _keys_at(tuple(error["loc"]))) and len(own) <= _LISTED_KEYS:
        # its keys by name (trial 33: `omissions: [sales_3m]` was told "{key: value}", and which keys, never)
        message = "a mapping of its own keys, {" + ", ".join(f"{k}: ..." for k in own) + "}"
    shown = error.get("input")
    if error["type"] == "string_pattern_mismatch":
        message = _pattern_words(str((error.get("ctx") or {}).get("pattern", "")), str(shown))
        if key.rsplit(".", 1)[-1] == "url_env" and isinstance(shown, str):
            shown, message = _url_written_as_variable(shown, message)
    if "expected" in message:  # a validator that already says what it expected
        return f"key `{key or '(top level)'}`: {message}"
    if isinstance(shown, dict) and error["type"] == "list_type":  # one item written without its list
        return (f"key `{key or '(top level)'}`: got a mapping, {_mapping_text(shown)}; expected {message}: one item "
                f"is a list of one, the mapping in brackets ([{_mapping_text(shown)}]) or on a line of its own "
                "after `- `")
    shown_text = _mapping_text(shown) if isinstance(shown, dict) else shown.isoformat() if isinstance(shown, date) \
        else repr(shown)  # (a date as the pack writes it: trial 33 saw "got datetime.date(2030, 1, 1)")
    if error["type"] == "literal_error" and isinstance(shown, str):
        message += _choice_meant(shown, str((error.get("ctx") or {}).get("expected", "")))
    if error["type"] in _NUMBER_TYPES:
        message += _quoted_number(shown)
    return f"key `{key or '(top level)'}`: got {shown_text}; expected {message}"


_NUMBER_TYPES = ("float_type", "float_parsing", "int_type", "int_parsing")
"""Pydantic's error types of a key that takes a number."""


def _quoted_number(shown: Any) -> str:
    """What to do when a number's key got text that is a plain number, quoted (`value: "40"`): take the quotes off
    (trial 107: it was told "a number written plainly (50000, 0.25: no thousands separator, unit or % sign)", which
    "40" is); else nothing."""
    if not isinstance(shown, str) or not re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", shown):
        return ""
    return f": the quotes make {shown!r} text, no number; write {shown.strip()} without them"


def _choice_meant(written: str, expected: str) -> str:
    """` (did you mean '>='?)` for a choice written otherwise (`=>` turned round, `Events` in another case, `evnts`
    a letter off) among a literal's quoted choices, else nothing (trial 64: `op: '=>'` got the list alone)."""
    choices = re.findall(r"'([^']*)'", expected)
    close = [c for c in choices if c in (written[::-1], written.strip()) or c.lower() == written.strip().lower()] \
        or difflib.get_close_matches(written, choices, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _mapping_text(mapping: dict[Any, Any]) -> str:
    """A mapping as YAML's flow style writes it, `{column: grade, in: ['A']}`, cut short past 80 characters (trial
    28: a `where` written as one condition without its list was shown `got {...}`)."""
    text = "{" + ", ".join(f"{k}: {v!r}" for k, v in mapping.items()) + "}"
    return text if len(text) <= 80 else text[:79] + "…}"


_LISTED_KEYS = 12
"""The most keys an unknown key's message lists as its section's (a longer section, `source`, is not listed)."""


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pack models an annotation holds directly (`X`, `X | None`), not inside a list or mapping."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if getattr(annotation, "__origin__", None) in (list, dict, tuple):
        return []
    return [m for arg in getattr(annotation, "__args__", ()) for m in _models_in(arg)]


def _items_of(annotation: Any) -> Any:
    """The type of an item of a list or a mapping an annotation holds (`list[X]`, `dict[str, X] | None`), or None."""
    if getattr(annotation, "__origin__", None) in (list, dict):
        return annotation.__args__[-1]
    found = [item for arg in getattr(annotation, "__args__", ()) if (item := _items_of(arg)) is not None]
    return found[0] if found else None


def _keys_at(loc: tuple[Any, ...]) -> list[str] | None:
    """The keys the pack section at `loc` takes (`('omissions', 0)`: `name`, `description`, `requires`), in their
    order, or None where the path is not one of the pack's models (a mapping of free names, a union's tag)."""
    annotation: Any = CriteriaPack
    for part in loc:
        model = next((m for m in _models_in(annotation) if isinstance(part, str) and part in m.model_fields), None)
        annotation = model.model_fields[part].annotation if model is not None else _items_of(annotation)
        if annotation is None:
            return None
    keys = [f.alias or k for m in _models_in(annotation) for k, f in m.model_fields.items() if k != "pack_path"]
    return list(dict.fromkeys(keys)) or None  # as a pack writes each (`in`, the alias of the code's `in_`)


def _holding_words(name: str, keys: list[str]) -> list[str]:
    """The one key among `keys` whose words hold the refused name's words in a row: `lag_days` is the last two words
    of `publication_lag_days`, too short beside it for a close match (trial 40: no "did you mean")."""
    found = [key for key in keys if key != name and f"_{name}_" in f"_{key}_"]
    return found if len(found) == 1 else []


def _nested_hint(name: str, loc: tuple[Any, ...]) -> str:
    """The keys one level down in the section at `loc` that a refused key may have meant: close to it, or ending in
    its last word (trial 44: `integrity: {min_mads: 3}` was "unknown key; expected only the documented keys",
    `integrity.level_shift.threshold_mads` never named)."""
    last = name.rsplit("_", 1)[-1]
    sections = [sub for sub in _keys_at(loc) or [] if _keys_at((*loc, sub, 0)) is None]  # (not a list's items)
    found = [f"{sub}.{key}" for sub in sections for key in _keys_at((*loc, sub)) or []
             if key.rsplit("_", 1)[-1] == last or difflib.get_close_matches(name, [key], n=1)]
    within = ".".join(str(part) for part in loc)
    return f" (did you mean {', '.join(f'`{within}.{k}`' for k in found[:3])}?)" if found else ""


def _home_of(name: str, loc: tuple[Any, ...]) -> str | None:
    """The section a key refused at `loc` belongs to, where it is a key of exactly one other section of the pack's
    first two levels: '' for the top level (`next_action` under `formula`), `source` (`published_column` at the top
    level). Trial 38: such a key was told "unknown key; expected only the documented keys", and its home's "missing"
    besides, two lines and no word of where it goes."""
    if len(loc) > 1:  # deeper (`source.join.0.grain`), a key is refused there by design, and said so
        return None
    homes = [".".join(section) for section, keys in _sections().items() if name in keys and section != loc]
    return homes[0] if len(homes) == 1 else None


@functools.cache
def _sections() -> dict[tuple[str, ...], tuple[str, ...]]:
    """The keys of the top level and of each of its sections that is one mapping (`source`, `formula`, `caps`...)."""
    top = tuple(_keys_at(()) or ())
    return {(): top, **{(name,): tuple(keys) for name in top if (keys := _keys_at((name,))) is not None}}


def _without_moved(lines: list[str], errors: list[Any]) -> list[str]:
    """The lines but those that say again, at its home, a key said to be misplaced (`_home_of`): its home's
    "missing", or a section's check that it is absent (`source.aggregates`: "got nothing")."""
    moved = {f"{home}.{name}" if home else name for error in errors if error["type"] == "extra_forbidden"
             and (home := _home_of(name := str(error["loc"][-1]), tuple(error["loc"][:-1]))) is not None}
    return [line for line in lines if not any(line.startswith(f"key `{key}`: ") for key in moved)] or lines


@functools.cache
def _known_keys() -> list[str]:
    """Every key a pack may hold, at any depth (for a "did you mean")."""
    seen: set[str] = set()

    def walk(model: Any) -> None:
        for name, field in model.model_fields.items():
            written = field.alias or name  # as a pack writes it (`in`, not the code's `in_`)
            if written in seen:
                continue
            seen.add(written)
            for arg in [field.annotation, *getattr(field.annotation, "__args__", ())]:
                for inner in [arg, *getattr(arg, "__args__", ())]:
                    if isinstance(inner, type) and issubclass(inner, BaseModel):
                        walk(inner)
    walk(CriteriaPack)
    return sorted(seen - {"pack_path"})
