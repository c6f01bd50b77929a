"""Partitions (DESIGN §3): nights are daily partitions, from the first night the pack's data supports to the
latest that has ended; per-candidate work is one dynamic partition per scanned candidate, key
`"<as_of>|<candidate_id>"`, registered by the scanner.

A night's keys are kept as one contiguous block in the dynamic partition list, so that one run (a
partition range) covers exactly that night's candidates, also after a re-scan changed them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import dagster as dg

from opportunity_assets.periods import FIRST_NIGHT

CANDIDATE_PARTITIONS = "night_candidates"

candidate_partitions = dg.DynamicPartitionsDefinition(name=CANDIDATE_PARTITIONS)


def first_night(override: date | None, span: tuple[date, date] | None, latest: date) -> date:
    """The first night of the partitions: the pack's `nights.start` if it has one, else the first publication date of
    the source's rows (`span`: the first and latest, None when no dated row could be read). Without either, the
    partitions hold only `latest`, the latest night that has ended, until the data can be read. The data's first
    night is never before `periods.FIRST_NIGHT` (1800-01-01): rows before it are the early nights' history."""
    if override is not None:
        return override
    return max(min(span[0], latest), FIRST_NIGHT) if span is not None else latest


def nightly_partitions(start: date) -> dg.DailyPartitionsDefinition:
    """One partition per UTC day from `start` to the latest that has ended (yesterday)."""
    return dg.DailyPartitionsDefinition(start_date=start.isoformat())


def candidate_key(as_of: date, candidate_id: str) -> str:
    return f"{as_of.isoformat()}|{candidate_id}"


def split_candidate_key(key: str) -> tuple[date, str]:
    as_of, sep, candidate_id = key.partition("|")
    if not sep or not candidate_id:
        raise ValueError(f"partition key {key!r} is not '<as_of>|<candidate_id>'")
    return date.fromisoformat(as_of), candidate_id


def keys_of_night(registered: Sequence[str], as_of: date) -> list[str]:
    """The night's keys among the registered candidate partitions, in their registered order."""
    prefix = f"{as_of.isoformat()}|"
    return [k for k in registered if k.startswith(prefix)]


def night_keys(instance: dg.DagsterInstance, as_of: date) -> list[str]:
    return keys_of_night(instance.get_dynamic_partitions(CANDIDATE_PARTITIONS), as_of)


def register_night(instance: dg.DagsterInstance, as_of: date, keys: Sequence[str]) -> None:
    """Make the night's registered keys exactly `keys`, in order and contiguous. No-op when already so."""
    existing = instance.get_dynamic_partitions(CANDIDATE_PARTITIONS)
    prefix = f"{as_of.isoformat()}|"
    positions = [i for i, k in enumerate(existing) if k.startswith(prefix)]
    current = [existing[i] for i in positions]
    contiguous = not positions or positions[-1] - positions[0] == len(positions) - 1
    if current == list(keys) and contiguous:
        return
    for key in current:
        instance.delete_dynamic_partition(CANDIDATE_PARTITIONS, key)
    if keys:
        instance.add_dynamic_partitions(CANDIDATE_PARTITIONS, list(keys))


def night_range_tags(keys: Sequence[str]) -> dict[str, str]:
    """Run tags that target one night's contiguous block of candidate partitions in a single run."""
    return {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}
