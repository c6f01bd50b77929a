"""The criteria pack as a resource: which pack a deployment (or one CLI run) uses."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import Field

from opportunity_assets.criteria import CriteriaPack, load_criteria

DEFAULT_PACK = Path(__file__).resolve().parent.parent / "data" / "criteria" / "texas_housing.yaml"


class CriteriaResource(dg.ConfigurableResource):
    path: str = Field(default=str(DEFAULT_PACK), description="Criteria pack YAML file.")

    def load(self) -> CriteriaPack:
        """Validated pack; raises CriteriaError naming the key, the value and what was expected."""
        return load_criteria(self.path)
