"""Property-based fuzzing of what a user feeds the scanner: the pack loader, the source reader, the brief renderer.

Each property is tried on a fixed, derandomized set of generated cases (the counts below are quoted by the README's
"Reliability" section, and tests/test_reliability.py holds the two to each other):
- the pack loader, on the Texas pack with 1-4 keys deleted, retyped, set to odd values or added, and on raw text:
  it loads, or it raises `CriteriaError` naming a key (or the file), in one line, never another exception;
- the source reader, on generated sources of three markets whose cells, keys and periods are corrupted at random
  (bad numbers, negatives, infinities, blanks, bad or future periods, missing or over-long ids, duplicated keys,
  hostile names, shuffled rows): each published row is either read (its bad cells gaps, each named in the
  quarantine) or quarantined whole with its reason, exactly as an independent oracle says; nothing after as_of is
  read; the scan takes any snapshot;
- the brief renderer, on the whole deterministic night over such sources: under the word limit, every routed
  candidate to act on or judge listed by its escaped name or counted in the store, no control or bidi character,
  one line per item, every number one the records hold.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import random
import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from opportunity_assets.analyses.logic import analyze
from opportunity_assets.brief.render import NightRecords, count_words, render_brief
from opportunity_assets.brief.routing import route
from opportunity_assets.candidates.logic import scan
from opportunity_assets.criteria import CriteriaError, load_criteria
from opportunity_assets.grounding import numeric_leaves, unsupported_numbers
from opportunity_assets.records import Destination
from opportunity_assets.sources.reading import SourceError
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.text import MAX_NAME, markdown
from opportunity_assets.verifications.logic import verify
from tests.conftest import PACK, write_pack

PACK_CASES = 300
"""Mutated packs tried by `test_a_mutated_pack_loads_or_names_the_key`."""
PACK_TEXT_CASES = 100
"""Raw texts tried by `test_any_text_as_a_pack_is_a_criteria_error`."""
SOURCE_CASES = 60
"""Corrupted sources tried by `test_every_published_row_is_read_or_quarantined_as_the_oracle_says`."""
BRIEF_CASES = 40
"""Whole deterministic nights rendered by `test_the_brief_of_any_night_is_short_safe_and_complete`."""

def _fuzz(cases: int) -> settings:
    """`cases` generated examples, the same on every run (derandomized: a red test is red again)."""
    return settings(max_examples=cases, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# ---- the pack loader ----------------------------------------------------------------------------------------------

EVENTS_PACK = PACK.parent / "nyc_routes.yaml"
"""The events pack (aggregates, `where` conditions, a week grain): keys the Texas panel does not have."""
BASES = {PACK: yaml.safe_load(PACK.read_text()), EVENTS_PACK: yaml.safe_load(EVENTS_PACK.read_text())}


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key and list item of the pack, as a path."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


PACK_PATHS = {base: [p for p in _paths(raw) if p[:2] != ("source", "path")] for base, raw in BASES.items()}
ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-10**12, 10**12), st.sampled_from([0, -1, 1, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["", "sales", "sales_12m", ">=", "avg", "note", "reject", "[0, 2]", "lag(sales, 12)",
                     "sales_12m >= ", "__import__('os')", "1/0", "x" * 500]),
    st.lists(st.integers(-5, 50), max_size=4), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


@st.composite
def mutated_packs(draw: st.DrawFn) -> tuple[Path, dict[str, Any]]:
    """A bundled pack (the Texas panel or the NYC events) with 1-4 keys deleted, retyped or added."""
    base = draw(st.sampled_from(list(BASES)))
    raw = yaml.safe_load(base.read_text())
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(PACK_PATHS[base]))
        node = raw
        try:
            for part in path[:-1]:
                node = node[part]
            node[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed or retyped a parent
        action = draw(st.sampled_from(["delete", "replace", "replace", "add"]))
        if action == "delete":
            del node[path[-1]]
        elif action == "replace":
            node[path[-1]] = draw(ODD_VALUES)
        elif isinstance(node[path[-1]], dict):
            node[path[-1]][draw(st.sampled_from(["extra", "colour", "windw"]))] = draw(ODD_VALUES)
    return base, raw


def _assert_named(exc: CriteriaError, pack: Path) -> None:
    message = str(exc)
    assert message.startswith(f"criteria file {pack}: "), message
    assert "\n" not in message and "Traceback" not in message, message
    rest = message.removeprefix(f"criteria file {pack}: ")
    assert "key `" in rest or rest.startswith(("not valid YAML", "not UTF-8", "got ", "not found")), message


@_fuzz(PACK_CASES)
@given(mutated=mutated_packs())
def test_a_mutated_pack_loads_or_names_the_key(tmp_path: Path, mutated: tuple[Path, dict[str, Any]]) -> None:
    base, raw = mutated
    raw.setdefault("source", {})
    if isinstance(raw["source"], dict):
        raw["source"]["path"] = str((base.parent / BASES[base]["source"]["path"]).resolve())
    pack = tmp_path / "pack.yaml"
    pack.write_text(yaml.safe_dump(raw, sort_keys=False))
    try:
        loaded = load_criteria(pack)
    except CriteriaError as exc:
        _assert_named(exc, pack)
    else:
        assert loaded.fingerprint  # a pack that loads is whole enough to be fingerprinted and run


@_fuzz(PACK_TEXT_CASES)
@given(text=st.one_of(st.text(max_size=200), st.sampled_from([
    "", "---", "[]", "- 1\n- 2", "domain: x", "{", "a: [", "\x00\x01", "domain: !!python/object:os.system x",
    "&a [*a]", "? - : x"]), st.binary(max_size=120).map(lambda b: b.decode("latin-1"))))
def test_any_text_as_a_pack_is_a_criteria_error(tmp_path: Path, text: str) -> None:
    pack = tmp_path / "pack.yaml"
    pack.write_text(text, encoding="utf-8", errors="surrogatepass")
    with pytest.raises(CriteriaError) as caught:
        load_criteria(pack)
    _assert_named(caught.value, pack)


# ---- the source reader --------------------------------------------------------------------------------------------

AS_OF = date(2012, 3, 31)  # 2012-02 is published (30-day lag); later rows exist but are not yet visible
TODAY = date(2013, 1, 15)
COLUMNS = ("sales", "volume", "median", "listings", "inventory")
GOOD = {"sales": 900.0, "volume": 150e6, "median": 160000.0, "listings": 4000.0, "inventory": 5.0}
BAD_CELLS = {"abc": "not a number", "1,234": "not a number", "12..5": "not a number", "-5": "negative",
             "-0.5": "negative", "inf": "not finite", "-inf": "not finite", "nan": "not finite", "": None, "NA": None,
             "  ": None}
"""Cell text → the quarantine's word for it (None: a plain gap, nothing to quarantine)."""
HOSTILE_NAMES = ["<script>alert(1)</script>", "**Bold** [click](http://evil.example)", "line\nbreak",
                 "tab\there", "\u202eevil\u202c", "zero\u200bwidth", "Ünïcödé 東京", "a,b;\"c\"", "`code`", "x" * 150]


@dataclass(frozen=True)
class Row:
    entity: str
    year: str
    month: str
    cells: dict[str, str]

    def period(self) -> date | None:
        try:
            y, m = int(self.year.strip()), int(self.month.strip())
        except ValueError:
            return None
        return date(y, m, 1) if 1800 <= y <= 2999 and 1 <= m <= 12 else None


def _published(period: date) -> date:
    nxt = date(period.year + period.month // 12, period.month % 12 + 1, 1)
    return date.fromordinal(nxt.toordinal() - 1 + 30)


@st.composite
def corrupted_sources(draw: st.DrawFn) -> list[Row]:
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    names = ["Alpha", "Bravo", draw(st.sampled_from(HOSTILE_NAMES))]
    rows = [Row(name, str(y), str(m), {c: f"{GOOD[c] * (1 + 0.05 * rng.random()):.2f}" for c in COLUMNS})
            for name in names for y in range(2009, 2013) for m in range(1, 13) if (y, m) <= (2012, 6)]
    rate = draw(st.sampled_from([0.02, 0.1, 0.3]))
    out = []
    for row in rows:
        if rng.random() < rate:
            kind = rng.choice(["cell", "cell", "cell", "period", "future", "entity", "long", "duplicate"])
            if kind == "cell":
                cells = dict(row.cells)
                for c in rng.sample(COLUMNS, rng.randint(1, 3)):
                    cells[c] = rng.choice(sorted(BAD_CELLS))
                row = Row(row.entity, row.year, row.month, cells)
            elif kind == "period":
                row = Row(row.entity, rng.choice(["", "x", "20l1", row.year]), rng.choice(["", "0", "13", "x"]),
                          row.cells)
            elif kind == "future":
                row = Row(row.entity, "2999", "1", row.cells)
            elif kind == "entity":
                row = Row(rng.choice(["", "  "]), row.year, row.month, row.cells)
            elif kind == "long":
                row = Row("y" * (MAX_NAME + 1), row.year, row.month, row.cells)
            else:
                out.append(row)
        out.append(row)
    rng.shuffle(out)
    return out


def _write(path: Path, rows: list[Row]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["city", "year", "month", *COLUMNS, "date"])
        for r in rows:
            writer.writerow([r.entity, r.year, r.month, *(r.cells[c] for c in COLUMNS), ""])


def _lines(rows: list[Row]) -> list[int]:
    """The physical line each record starts on, as `_write` lays them out."""
    out, line = [], 2
    for r in rows:
        out.append(line)
        line += 1 + r.entity.count("\n")
    return out


def _oracle(rows: list[Row]) -> tuple[dict[int, str], dict[int, set[str]], set[int]]:
    """Independently of the reader: (row-level refusals by source row → reason's start, bad cells by source row,
    rows that must be read), by source row: the physical line a record starts on (the header is line 1; a quoted
    newline in a name makes its record two lines)."""
    keys: dict[tuple[str, date], int] = {}
    for r in rows:
        if (p := r.period()) is not None and r.entity.strip():
            keys[(r.entity.strip(), p)] = keys.get((r.entity.strip(), p), 0) + 1
    refused, bad_cells, read = {}, {}, set()
    for i, r in zip(_lines(rows), rows, strict=True):
        period, entity = r.period(), r.entity.strip()
        if period is not None and period <= TODAY and _published(period) > AS_OF:
            continue  # not yet published on as_of: neither read nor refused, whatever else is wrong with it
        if not entity:
            refused[i] = "missing entity id"
        elif len(entity) > MAX_NAME:
            refused[i] = "entity id or name too long"
        elif period is None:
            refused[i] = "period unparseable"
        elif period > TODAY:
            refused[i] = "period after today"
        elif keys[(entity, period)] > 1:
            refused[i] = "duplicated key"
        else:
            read.add(i)
            problems = {c for c in COLUMNS if BAD_CELLS.get(r.cells[c].strip() if r.cells[c].strip() else "",
                                                            "ok") not in (None, "ok")}
            if problems:
                bad_cells[i] = problems
    return refused, bad_cells, read


@_fuzz(SOURCE_CASES)
@given(rows=corrupted_sources())
def test_every_published_row_is_read_or_quarantined_as_the_oracle_says(tmp_path: Path, rows: list[Row]) -> None:
    source = tmp_path / "source.csv"
    _write(source, rows)
    pack = load_criteria(write_pack(tmp_path, source))
    snapshot = read_snapshot(pack, AS_OF, today=TODAY)
    refused, bad_cells, read = _oracle(rows)

    history_rows = set(snapshot.history["source_row"].to_list())
    quarantine = {row["source_row"]: row["reason"] for row in snapshot.quarantined.iter_rows(named=True)}
    assert all(reason for reason in quarantine.values())  # every refusal says why
    assert {i: quarantine.get(i, "")[:len(start)] for i, start in refused.items()} == refused
    # read rows: each in the history (all are within its reach here); a bad cell a gap, named in the quarantine
    assert history_rows == read
    for i, columns in bad_cells.items():
        assert i in quarantine and "the row is kept" in quarantine[i]
        for c in columns:
            assert f"column {c}: " in quarantine[i]
    assert set(quarantine) == set(refused) | set(bad_cells)  # nothing refused that should be read
    by_row = {r["source_row"]: r for r in snapshot.history.iter_rows(named=True)}
    for i in read:
        row = dict(zip(_lines(rows), rows, strict=True))[i]
        for c in COLUMNS:
            text = row.cells[c].strip()
            value = by_row[i][c]
            if text in BAD_CELLS:
                assert value is None, (i, c, text, value)
            else:
                assert value == pytest.approx(float(text)), (i, c, text, value)
    # point in time: nothing published after as_of
    assert all(p is not None and _published(p) <= AS_OF for p in snapshot.history["period"].to_list())
    # the scan takes any snapshot
    scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history, snapshot.quarantined)


def test_an_unreadable_source_is_one_line(tmp_path: Path) -> None:
    """Whole-file problems (no file, no header, missing columns) are one `SourceError` line; row damage is
    quarantined above."""
    source = tmp_path / "source.csv"
    pack = load_criteria(write_pack(tmp_path, PACK.parent.parent / "txhousing.csv"))
    for content in ("", "city,year\nAlpha,2011\n", "\ufeff"):
        source.write_text(content)
        moved = pack.model_copy(update={"pack_path": tmp_path / "pack.yaml",
                                        "source": pack.source.model_copy(update={"path": str(source)})})
        with pytest.raises(SourceError) as caught:
            read_snapshot(moved, AS_OF, today=TODAY)
        assert "\n" not in str(caught.value) and str(source) in str(caught.value)


# ---- the brief renderer ---------------------------------------------------------------------------------------------

_UNSAFE = re.compile(r"[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069\u200b-\u200f]")


@_fuzz(BRIEF_CASES)
@given(rows=corrupted_sources(), markets=st.integers(3, 40), seed=st.integers(0, 2**16))
def test_the_brief_of_any_night_is_short_safe_and_complete(tmp_path: Path, rows: list[Row], markets: int,
                                                          seed: int) -> None:
    # more markets, with demand rising and supply tightening at their own pace: many STRONG, long sections that
    # must be cut to the limit and counted
    rng = random.Random(seed)

    names = [f"{rng.choice(HOSTILE_NAMES)} #{k}" for k in range(markets)]

    def trended(row: Row, k: int) -> Row:
        p = row.period()
        months = (p.year - 2009) * 12 + p.month if p else 0
        pace = 0.002 + 0.004 * (k % 5)
        scale = {"sales": (1 + pace) ** months * (1 + k), "inventory": (1 - pace) ** months}
        cells = {c: f"{float(v) * scale.get(c, 1.0):.2f}" if re.fullmatch(r"\d+(\.\d+)?", v) else v
                 for c, v in row.cells.items()}
        return Row(names[k], row.year, row.month, cells)

    extra = [trended(r, k) for k in range(markets) for r in rows if r.entity == "Alpha"]
    source = tmp_path / "source.csv"
    _write(source, rows + extra)
    pack = load_criteria(write_pack(tmp_path, source, **{"caps.max_candidates": 60, "caps.min_candidates": 1}))
    snapshot = read_snapshot(pack, AS_OF, today=TODAY)
    found, report = scan(pack, AS_OF, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    going = [c for c in found if c.went_on]
    analyses = [analyze(pack, c) for c in going]
    verifications = [verify(pack, c, a) for c, a in zip(going, analyses, strict=True)]
    routes = [route(a, v) for a, v in zip(analyses, verifications, strict=True)]
    night = NightRecords(as_of=AS_OF, candidates=found, analyses=analyses, verifications=verifications,
                         routes=routes, errors=[], scan_report=dataclasses.asdict(report))
    brief, summary = render_brief(pack, night, "off (deterministic mode)")
    text = brief.markdown

    assert brief.words == count_words(text) < 400
    assert not _UNSAFE.search(text), "a control or bidi character reached the brief"
    names = {c.id: c.name for c in found}
    for section in ("act_on_these", "needs_your_judgment"):
        ids = [r.candidate_id for r in routes if r.destination == Destination.BRIEF and r.section_or_tag == section]
        body = text.split({"act_on_these": "## Act on these", "needs_your_judgment": "## Needs your judgment"}
                          [section])[1].split("\n## ")[0]
        items = [line for line in body.splitlines() if line.startswith("- **")]
        listed = [i for i in ids if f"- **{markdown(names[i])}**" in body]
        assert len(items) == len(listed) <= len(ids)  # one line per item, each a routed candidate by its name
        if len(listed) < len(ids):
            assert f"of the {len(ids)} in the store: `opportunity archive --section {section}`" in body
    stored = list(numeric_leaves([night.scan_report, summary.model_dump(), *(a.model_dump() for a in analyses),
                                  *(v.model_dump() for v in verifications), *(c.metrics for c in found),
                                  {"thresholds": [pack.thresholds.strong, pack.thresholds.marginal]}]))
    assert unsupported_numbers(text, stored, AS_OF, names=[n for c in found for n in (c.name, markdown(c.name),
                                                                                      c.id)]) == [], text
    assert all(not math.isnan(v) for v in stored if isinstance(v, float))
    assert all(unicodedata.category(ch) not in ("Cc", "Cf") or ch == "\n" for ch in text)
    event("some STRONG" if any(a.verdict.value == "STRONG" for a in analyses) else "no STRONG")
    event("cut to the limit" if len(text.splitlines()) and "in the store: `opportunity archive" in text
          else "whole")
