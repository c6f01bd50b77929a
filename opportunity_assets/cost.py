"""Worst-case model cost of a night, before it runs: candidates × calls × max tokens × price × (1 + retries)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from opportunity_assets.criteria import CriteriaPack

DEFAULT_PRICES = Path(__file__).resolve().parent.parent / "data" / "prices.yaml"
_PER_CANDIDATE_ROLES = ("analyzer", "verifier")
_PER_NIGHT_ROLES = ("brief",)


class ModelPrice(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    input: float = Field(ge=0)
    """USD per million input tokens."""
    output: float = Field(ge=0)
    """USD per million output tokens."""


class Prices(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    batch_discount: float = Field(ge=0, le=1)
    cache_read_share: float = Field(ge=0, le=1)
    cache_write_share: float = Field(ge=1)
    models: dict[str, ModelPrice]

    def usd(self, model: str, input_tokens: int, output_tokens: int, cache_write: int = 0,
            cache_read: int = 0) -> float:
        """What tokens of `model` cost at list price (the caller checks that the model has a price)."""
        p = self.models[model]
        return (input_tokens * p.input + cache_write * p.input * self.cache_write_share
                + cache_read * p.input * self.cache_read_share + output_tokens * p.output) / 1_000_000


def load_prices(path: str | Path = DEFAULT_PRICES) -> Prices:
    return Prices.model_validate(yaml.safe_load(Path(path).read_text()))


@dataclass(frozen=True)
class RoleCost:
    role: str
    model: str
    calls: int
    """Calls before retries."""
    usd: float
    """Worst case for the role, retries included."""


@dataclass(frozen=True)
class CostEstimate:
    candidates: int
    retries: int
    roles: list[RoleCost]
    model_checks_on: bool

    @property
    def worst_case_usd(self) -> float:
        return sum(r.usd for r in self.roles)

    @property
    def tonight_usd(self) -> float:
        """What the night can cost as it will run: nothing without model checks."""
        return self.worst_case_usd if self.model_checks_on else 0.0

    def candidates_within(self, ceiling_usd: float) -> int:
        """The most candidates whose worst case stays within the ceiling (per-night calls included)."""
        per_night = sum(r.usd for r in self.roles if r.role in _PER_NIGHT_ROLES)
        per_candidate = sum(r.usd for r in self.roles if r.role in _PER_CANDIDATE_ROLES) / max(self.candidates, 1)
        if per_candidate == 0:
            return self.candidates
        return max(0, min(self.candidates, int((ceiling_usd - per_night) // per_candidate)))

    @property
    def max_calls(self) -> int:
        return sum(r.calls for r in self.roles) * (1 + self.retries)


def worst_case(pack: CriteriaPack, prices: Prices, candidates: int, *, model_checks_on: bool) -> CostEstimate:
    """Every call at its maximum input and output tokens, every call retried `caps.retries` times."""
    candidates = min(candidates, pack.caps.max_candidates)
    roles = []
    for role in (*_PER_CANDIDATE_ROLES, *_PER_NIGHT_ROLES):
        spec = getattr(pack.models, role)
        if spec.model not in prices.models:
            raise ValueError(f"no price for model {spec.model!r} (role {role}) in the prices file; "
                             f"known: {sorted(prices.models)}")
        calls = candidates if role in _PER_CANDIDATE_ROLES else (1 if candidates else 0)
        per_call = prices.usd(spec.model, spec.max_input_tokens, spec.max_output_tokens)
        roles.append(RoleCost(role=role, model=spec.model, calls=calls,
                              usd=calls * per_call * (1 + pack.caps.retries)))
    return CostEstimate(candidates=candidates, retries=pack.caps.retries, roles=roles,
                        model_checks_on=model_checks_on)


def describe(estimate: CostEstimate, ceiling_usd: float) -> str:
    lines = [f"Worst-case model cost for {estimate.candidates} candidates, retries {estimate.retries}:"]
    for r in estimate.roles:
        lines.append(f"  {r.role:<9} {r.model:<20} {r.calls:3d} calls x (1 + {estimate.retries}) -> ${r.usd:.4f}")
    within = estimate.worst_case_usd <= ceiling_usd
    verdict = "within it" if within else \
        f"over it: with model checks on, the night caps at {estimate.candidates_within(ceiling_usd)} candidates"
    lines.append(f"  worst case with model checks on: ${estimate.worst_case_usd:.4f} "
                 f"(ceiling ${ceiling_usd:.2f}, {verdict})")
    state = "on" if estimate.model_checks_on else "off (deterministic mode)"
    lines.append(f"  tonight, model checks {state}: ${estimate.tonight_usd:.4f}")
    return "\n".join(lines)
