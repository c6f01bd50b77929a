"""The point-in-time source resource: a pack's source as it was known on a date (`opportunity_assets/sources/`
reads and shapes it, `snapshot.py` runs the night's query)."""

from __future__ import annotations

from datetime import date

import dagster as dg

from opportunity_assets.check.pack import check_pack
from opportunity_assets.criteria import CriteriaPack
from opportunity_assets.sources.snapshot import SourceSnapshot, read_snapshot


class PointInTimeSource(dg.ConfigurableResource):
    """Reads a pack's source as it was known on a date. Stateless: one short DuckDB connection per read."""

    def read(self, pack: CriteriaPack, as_of: date) -> SourceSnapshot:
        return read_snapshot(pack, as_of)

    def problems(self, pack: CriteriaPack, as_of: date) -> list[str]:
        """What `opportunity check` finds wrong with the pack on this night, one line each naming the key: the
        night's own read and scan are the check's (both are kept for the process)."""
        return check_pack(pack, as_of, with_facts=False).problems
