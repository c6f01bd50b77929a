"""Text from the source, made safe for each reader: control and bidi-override characters stripped, whitespace
collapsed (a newline in a name must not split a bullet), and escaped for the channel it is written into.

Source text (entity names) is data, never markup: `<script>`, `**Bold**` or `[click](http://…)` in a name must
reach a reader as those characters, not as a script, bold type or a link.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

MAX_NAME = 200
"""Longest entity id or name the source accepts; a longer one quarantines its row (sources/snapshot.py)."""
_SPACE = re.compile(r"\s+")
_MARKDOWN = re.compile(r"([\\`*_\[\]~])")
"""What Markdown reads as markup inside a line: emphasis, code, links and images (`[`), strike; a name is never at
a line's start (it follows `- **`), so `#`, `-`, `+` and `>` need no escape there."""
_ENTITY_START = re.compile(r"&(?=#[0-9]+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9]*;)")
"""A `&` that Markdown reads as the start of an HTML entity (a name or a number, then `;`)."""
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
"""A `<` that Markdown reads as the start of an HTML tag, a comment or an autolink."""
_SLACK_FORMAT = re.compile(r"(?<![A-Za-z0-9])([*_~`])|([*_~`])(?![A-Za-z0-9])")
"""A formatting character that could open or close formatting: one not between two letters or digits (Slack does
not format `inventory_3m`)."""


def clean(text: str) -> str:
    """The text with control characters (Cc), format characters such as bidi overrides and zero-width marks (Cf)
    removed and every run of whitespace made one space."""
    if text.isascii() and text.isprintable():  # no control, format or whitespace character but the space
        return _SPACE.sub(" ", text).strip()
    kept = "".join(" " if ch in "\t\n\r\v\f" else ch for ch in text
                   if ch in "\t\n\r\v\f" or unicodedata.category(ch) not in ("Cc", "Cf"))
    return _SPACE.sub(" ", kept).strip()


def markdown(text: str) -> str:
    """For Markdown (the brief): every character Markdown could read as markup inside a line backslash-escaped;
    a `&` that would start an entity (`&copy;`, `&#60;`) and a `<` that would open a tag or an autolink as HTML
    entities, so none survives a Markdown-to-HTML renderer. Any other `&` and `<` is text to Markdown and stays as
    written: "S&P 500" and "AT&T" read so in the terminal's brief, not "S&amp;P 500"."""
    return _MARKDOWN.sub(r"\\\1", _TAG_START.sub("&lt;", _ENTITY_START.sub("&amp;", clean(text))))


def plain(text: str) -> str:
    """Text `markdown` escaped, as written again: for a line shown as plain text (`opportunity check`)."""
    return _ESCAPED.sub(r"\1", text).replace("&lt;", "<").replace("&amp;", "&")


_ESCAPED = re.compile(r"\\([\\`*_\[\]~])")


def slack(text: str) -> str:
    """For Slack mrkdwn: `& < >` as Slack's entities, and each formatting character `* _ ~ `` ` that could open or
    close formatting followed by a zero-width space (Slack has no backslash escape)."""
    escaped = clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SLACK_FORMAT.sub(lambda m: (m.group(1) or m.group(2)) + "\u200b", escaped)


def masked_url(text: str) -> str | None:
    """A database URL (or a text meant as one) as a message may show it: what a password can be (after `user:` up
    to the last `@`, a `password=` value) as `***`; None when nothing in it can be told apart from a password (no
    `@`, no `=`: a bare secret pasted into the variable is never echoed)."""
    shown = re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)", r"\1***", text, flags=re.IGNORECASE)
    scheme, separator, rest = shown.partition("://") if "://" in shown else ("", "", shown)
    if "@" in rest:
        userinfo, _, after = rest.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        rest = f"{user}{':***' if colon else ''}@{after}"
    elif "=" not in shown:
        return None
    shown = scheme + separator + rest
    return shown[:120] + ("..." if len(shown) > 120 else "")


MAX_QUOTED = 200
"""Longest value a message quotes whole (`clip_quoted`)."""
_QUOTED = re.compile(r"""(?<![A-Za-z0-9])('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")(?![A-Za-z0-9])""")
"""A value a message quotes as Python writes it (`'x'`, `"it's"`): a quote no letter or digit touches outside."""


def clip_quoted(message: str, limit: int = MAX_QUOTED) -> str:
    """The message with each value it quotes longer than `limit` characters cut to its start, its length said: a
    pack key given 5,000 characters (a file pasted where a column name goes) was quoted whole, twice, in a 10,000-
    character line. A message's own words are never cut."""
    def clip(match: re.Match[str]) -> str:
        quoted = match.group(1)
        if len(quoted) - 2 <= limit:
            return quoted
        return f"{quoted[:61]}...{quoted[0]} ({len(quoted) - 2:,} characters)"
    return _QUOTED.sub(clip, message) if len(message) > limit else message


def first_of(items: Sequence[str], shown: int, *, total: int | None = None, joiner: str = ", ") -> str:
    """The first `shown` of `items` joined by `joiner`, and how many more there are: "a, b, c and 4 more". `total`:
    how many the items are the first of, when more exist than were listed."""
    more = (len(items) if total is None else total) - min(shown, len(items))
    return joiner.join(items[:shown]) + (f" and {more} more" if more > 0 else "")
