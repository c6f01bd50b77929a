"""The nights a deployment offers: from the first night its data supports (or the pack's `nights.start`) to the
latest night that has ended, the same partitions on every nightly asset and job."""

from __future__ import annotations

import calendar
import csv
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest

from opportunity_assets.criteria import CriteriaError, load_criteria
from opportunity_assets.definitions import build_definitions
from opportunity_assets.partitions import first_night
from tests.conftest import PACK, ROOT, write_pack

TEXAS = ROOT / "data" / "txhousing.csv"
NIGHTLY_ASSETS = ("candidates", "brief", "archive", "notifications", "outcomes")
NIGHTLY_JOBS = ("scan_night", "brief_night", "notify_night", "finish_night", "outcomes_night")


def test_the_first_night_is_the_packs_then_the_datas_then_only_the_latest() -> None:
    latest, span = date(2024, 5, 1), (date(2000, 3, 1), date(2024, 4, 1))
    assert first_night(date(2003, 1, 31), span, latest) == date(2003, 1, 31)
    assert first_night(date(2003, 1, 31), None, latest) == date(2003, 1, 31)  # the pack's key needs no data
    assert first_night(None, span, latest) == date(2000, 3, 1)
    assert first_night(None, None, latest) == latest  # nothing readable: only the latest night
    assert first_night(None, (date(2024, 6, 1), date(2024, 6, 1)), latest) == latest  # first row still to come
    # trial 19: rows from year 20 (an ice core) are history; a partition a day from then is no key Dagster writes
    assert first_night(None, (date(21, 12, 31), date(2001, 12, 31)), latest) == date(1800, 1, 1)


def _first_published(csv_path: Path, lag_days: int) -> date:
    """The source's first publication date, read here from the file itself: its first month's last day + the lag."""
    with csv_path.open(newline="") as handle:
        year, month = min((int(r["year"]), int(r["month"])) for r in csv.DictReader(handle))
    return date(year, month, calendar.monthrange(year, month)[1]) + timedelta(days=lag_days)


def _nights(defs: dg.Definitions) -> dg.DailyPartitionsDefinition:
    """The definitions' nights, checked to be one and the same on every nightly asset and job."""
    graph = defs.resolve_asset_graph()
    found = {graph.get(dg.AssetKey(name)).partitions_def for name in NIGHTLY_ASSETS}
    found |= {defs.resolve_job_def(name).partitions_def for name in NIGHTLY_JOBS}
    [nights] = found
    assert isinstance(nights, dg.DailyPartitionsDefinition)
    return nights


def test_the_partitions_start_at_the_datas_first_night_and_end_with_the_latest_that_has_ended(
        tmp_path: Path) -> None:
    lag = load_criteria(PACK).source.publication_lag_days
    keys = _nights(build_definitions(store_path=str(tmp_path / "r.duckdb"))).get_partition_keys()
    assert keys[0] == _first_published(TEXAS, lag).isoformat() == "2000-03-01"
    assert keys[-1] == (datetime.now(UTC).date() - timedelta(days=1)).isoformat()

    later = tmp_path / "from_2005.csv"  # the same data from 2005 on: the nights start with it
    with TEXAS.open(newline="") as source, later.open("w", newline="") as target:
        reader = csv.DictReader(source)
        writer = csv.DictWriter(target, fieldnames=reader.fieldnames or [])
        writer.writeheader()
        writer.writerows(r for r in reader if int(r["year"]) >= 2005)
    defs = build_definitions(criteria_path=str(write_pack(tmp_path, later)), store_path=str(tmp_path / "r.duckdb"))
    assert _nights(defs).get_first_partition_key() == _first_published(later, lag).isoformat() == "2005-03-02"


def test_a_pack_key_overrides_the_first_night_without_changing_the_criteria(tmp_path: Path) -> None:
    pack = write_pack(tmp_path, TEXAS, nights={"start": "2003-01-31"})
    defs = build_definitions(criteria_path=str(pack), store_path=str(tmp_path / "r.duckdb"))
    assert _nights(defs).get_first_partition_key() == "2003-01-31"
    (tmp_path / "plain").mkdir()
    assert load_criteria(pack).fingerprint == load_criteria(write_pack(tmp_path / "plain", TEXAS)).fingerprint


@pytest.mark.parametrize(("nights", "says"), [
    ({"start": "2999-01-01"}, r"key `nights\.start`: got .*2999-01-01.*; expected a night that has ended"),
    ({"start": "1751-03-31"}, r"key `nights\.start`: got .*1751-03-31.*; expected a night on or after 1800-01-01"),
    ({"start": "last year"}, r"key `nights\.start`: got 'last year'; expected a valid date"),
    ({"begin": "2003-01-31"}, r"key `nights`: got the unknown key\(s\) `begin` and not `start`; expected the keys of "
                              r"`nights`: `start`"),
])
def test_a_bad_nights_key_is_refused_at_load_naming_it(tmp_path: Path, nights: dict[str, str], says: str) -> None:
    with pytest.raises(CriteriaError, match=says):
        load_criteria(write_pack(tmp_path, TEXAS, nights=nights))


@pytest.mark.parametrize("content", ["city,year,month,sales,volume,median,listings,inventory,date\n", ""])
def test_a_source_with_no_dated_row_or_none_readable_offers_only_the_latest_night(tmp_path: Path,
                                                                                  content: str) -> None:
    """A header and no row (nothing dated), or an empty file (unreadable: `opportunity check` says why)."""
    from opportunity_assets.definitions import nights_of

    empty = tmp_path / "empty.csv"
    empty.write_text(content)
    nights = nights_of(load_criteria(write_pack(tmp_path, empty)), today=date(2024, 5, 2))
    assert nights.get_partition_keys(current_time=datetime(2024, 5, 2, 12, tzinfo=UTC)) == ["2024-05-01"]
