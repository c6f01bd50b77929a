"""The criteria pack as a resource: which pack a deployment (or one CLI run) uses."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import dagster as dg
from pydantic import Field

from opportunity_assets.criteria import CriteriaPack, load_criteria
from opportunity_assets.defaults import DEFAULT_PACK


class CriteriaResource(dg.ConfigurableResource):
    path: str = Field(default=str(DEFAULT_PACK), description="Criteria pack YAML file.")

    def load(self) -> CriteriaPack:
        """Validated pack; raises CriteriaError naming the key, the value and what was expected.
        Loaded once per file version in a process (every asset of a run asks for it). `os.path.realpath`, not
        `Path.resolve`: a pack path of links leading back to themselves is told "not found" by the load, where
        `resolve` raised Python's "Symlink loop" (trial 142)."""
        path = Path(self.path)
        stat = path.stat() if path.is_file() else None
        return _load(os.path.realpath(path), stat.st_mtime_ns if stat else 0, stat.st_size if stat else 0)


@lru_cache(maxsize=16)
def _load(path: str, mtime_ns: int, size: int) -> CriteriaPack:
    return load_criteria(path)
