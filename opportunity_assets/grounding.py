"""Every number a text writes exists in the store: a brief, a model's prose or a pack's own template is held, number
by number and date by date, against the numbers stored for it (as written: rounding, %, $, commas; no date after the
night). Code checks what a model writes; a number none explains is named, never passed."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date
from typing import Any

_DATE = re.compile(r"\b\d{4}-(?:\d{2}(?:-\d{2})?|Q[1-4]|W\d{2})\b")
"""A date or a period label of any grain but the year: 2015-07-03, 2015-07, 2015-Q3, 2015-W27."""


def _starts(token: str) -> date:
    """The first day a `_DATE` token names."""
    year, rest = int(token[:4]), token[5:]
    if rest.startswith("Q"):
        return date(year, (int(rest[1]) - 1) * 3 + 1, 1)
    if rest.startswith("W"):
        return date.fromisocalendar(year, min(int(rest[1:]), 52) or 1, 1)
    return date.fromisoformat(token if len(token) == 10 else token + "-01")
_NUMBER = re.compile(r"(?<![\w.])[-+−]?\$?\d[\d,]*(?:\.\d+)?(?:e[-+]\d+)?%?")
"""A number as the brief writes it: signs, `$`, separators, decimals, `%`, and a huge one's exponent (`1.7e+308`,
`formatting.significant`)."""
_STANDING_ALONE = r"(?<![\w.,$+\-−/]){}(?![\w%]|[.,:\-/]\d)"
"""A name where it stands alone: the name `4` masks **4**, never the 4 of a score 47.9 or of a date 2014-10."""


def numeric_leaves(value: Any) -> Iterable[float]:
    """Every number (not numbers inside strings) in a nested record."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from numeric_leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from numeric_leaves(item)


def written_numbers(text: str) -> list[float]:
    """The numbers a stored text writes, as `unsupported_numbers` reads a brief's (a percent as its fraction, dates
    left out): a brief that quotes code's stored words (what would resolve a doubt: "it matches A, B, C and 13
    more's") quotes their numbers too."""
    numbers = []
    for token in _NUMBER.findall(_DATE.sub(" ", text)):
        shown = float(token.replace("$", "").replace(",", "").replace("−", "-").rstrip("%"))
        numbers.append(shown / 100 if token.endswith("%") else shown)
    return numbers


def _as_written(value: float, written: str) -> float:
    """`value` rounded as `written` is: to its decimals, or to its mantissa's figures in exponent notation."""
    mantissa, _, exponent = written.partition("e")
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if exponent:
        return float(f"{value:.{decimals}e}") if value == value else value
    return round(value, decimals)


def unsupported_numbers(markdown: str, stored: Iterable[float], as_of: date,
                        names: Iterable[str] = ()) -> list[str]:
    """Numbers written in the brief that no stored number explains (as written: rounding, %, $, commas).

    Dates must not lie after as_of. `names` (the night's candidate names and ids, stored as text) are not
    numbers: "District 9" is a name. Markdown structure (`##`, list markers) carries no digits.
    """
    values = list(stored)
    problems = []
    for name in sorted({n for n in names if n in markdown}, key=len, reverse=True):  # a wide night has 10k
        if any(ch.isdigit() for ch in name):
            markdown = re.sub(_STANDING_ALONE.format(re.escape(name)), " ", markdown)
    for token in _DATE.findall(markdown):
        try:
            after = _starts(token) > as_of
        except ValueError:  # not a real date (2015-13): a number the store does not hold
            after = True
        if after:
            problems.append(token)
    text = _DATE.sub(" ", markdown)
    for token in _NUMBER.findall(text):
        cleaned = token.replace("$", "").replace(",", "").replace("−", "-").rstrip("%")
        shown = float(cleaned)
        percent = token.endswith("%")
        candidates = [v * 100 for v in values] if percent else values
        if not any(_as_written(v, cleaned) == shown for v in candidates):
            problems.append(token)
    return problems
