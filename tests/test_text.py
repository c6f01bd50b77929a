"""Source text reaches readers as text: stripped of control and bidi characters, escaped per channel, capped."""

from __future__ import annotations

from datetime import date

from opportunity_assets.candidates.logic import scan
from opportunity_assets.sources.snapshot import read_snapshot
from opportunity_assets.text import MAX_NAME, clean, clip_quoted, markdown, slack
from tests.conftest import month_rows

HOSTILE = "<script>alert(1)</script> **Bold** [click](http://evil.example)\nsecond line\u202e\u0007"


def test_clean_strips_control_and_bidi_and_collapses_whitespace() -> None:
    assert clean(HOSTILE) == "<script>alert(1)</script> **Bold** [click](http://evil.example) second line"
    assert clean("a\u200b\u2066b\tc\r\n d") == "ab c d"


def test_markdown_leaves_no_markup() -> None:
    out = markdown(HOSTILE)
    assert "<script>" not in out and "&lt;script" in out
    assert "**Bold**" not in out and r"\*\*Bold\*\*" in out
    assert "[click](" not in out and r"\[click\](" in out
    assert "\n" not in out


def test_slack_escapes_entities_and_breaks_formatting() -> None:
    out = slack(HOSTILE)
    assert "<" not in out and "&lt;script&gt;" in out
    assert "**" not in out and "*\u200b*\u200bBold" in out


def test_a_hostile_name_is_cleaned_and_an_endless_one_quarantined(synthetic) -> None:  # type: ignore[no-untyped-def]
    rows = month_rows(HOSTILE) + month_rows("L" * (MAX_NAME + 1)) + month_rows("Fine")
    pack = synthetic(rows, **{"caps.min_candidates": 0})
    as_of = date(2015, 1, 30)
    snapshot = read_snapshot(pack, as_of)
    found, report = scan(pack, as_of, snapshot.anchor_period, snapshot.metrics, snapshot.history,
                         snapshot.quarantined)
    names = sorted(c.name for c in found)
    assert names == sorted(["Fine", clean(HOSTILE)])
    assert all("\n" not in c.name and len(c.id) <= MAX_NAME for c in found)
    too_long = [q for q in snapshot.quarantined.to_dicts() if "too long" in q["reason"]]
    assert len(too_long) == 36 and f"{MAX_NAME + 1} characters, at most {MAX_NAME}" in too_long[0]["reason"]
    assert report.quarantined_entities[0]["why"] == "entity id or name too long"


def test_the_quarantine_summary_cuts_and_escapes_names() -> None:
    from opportunity_assets.candidates.quarantine import summary_line

    line = summary_line([{"entity": "L" * 5000, "rows": 1, "why": "entity id or name too long"},
                         {"entity": "**x**\n", "rows": 1, "why": "sales not a number"}], 2)
    assert len(line) < 200 and "L" * 41 not in line and "…" in line and r"\*\*x\*\*" in line


def test_markdown_keeps_an_ampersand_that_starts_no_entity() -> None:
    """Real names hold `&` and `<` ("S&P 500", "AT&T", "Bosnia & Herzegovina", "< 5 years"): the terminal's brief
    showed "S&amp;P 500". Only what a renderer would read as an entity or a tag is escaped."""
    assert markdown("S&P 500") == "S&P 500" and markdown("AT&T and B&B") == "AT&T and B&B"
    assert markdown("Tom &amp; Jerry &#60; &#x3C;") == "Tom &amp;amp; Jerry &amp;#60; &amp;#x3C;"
    assert markdown("< 5 years <b>x</b> <!-- c --> <http://e.x>") == \
        "< 5 years &lt;b>x&lt;/b> &lt;!-- c --> &lt;http://e.x>"


def test_clip_quoted_cuts_a_long_quoted_value_and_no_word_of_the_message() -> None:
    long = "y" * 300
    message = f"key `a`: got '{long}'; the entity's rows: expected one of ['b', \"it's\"]"
    assert clip_quoted(message) == (f"key `a`: got '{'y' * 60}...' (300 characters); the entity's rows: expected one "
                                    "of ['b', \"it's\"]")
    assert clip_quoted(f"the market's {long} rows, 'a'") == f"the market's {long} rows, 'a'"
    assert clip_quoted(f"key `a`: got {long!r}", limit=400) == f"key `a`: got {long!r}"


def test_first_of_lists_the_first_few_and_counts_the_rest() -> None:
    from opportunity_assets.text import first_of

    assert first_of(["a", "b", "c", "d", "e"], 3) == "a, b, c and 2 more"
    assert first_of(["a", "b"], 3) == "a, b"
    assert first_of(["a", "b"], 2, total=7, joiner=" and ") == "a and b and 5 more"
