"""The morning report as HTML (a Jinja2 template beside this file) and as PDF (WeasyPrint). Pure: a `Report`
in, text or bytes out; `step.py` reads the night's records from the store into a `Report`.

The brief is the stored brief, its Markdown rendered as HTML with raw HTML off: the names in it are already escaped
for Markdown (`text.markdown`), and every other text goes through the template's autoescape.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup

from opportunity_assets.brief.routing import ARCHIVE_TAGS, BRIEF_SECTIONS
from opportunity_assets.history import Change
from opportunity_assets.reasons import ERROR, CandidateRow
from opportunity_assets.records import Summary
from opportunity_assets.report import svg
from opportunity_assets.report.svg import HistoryPoint

TEMPLATES = Path(__file__).resolve().parent / "templates"
FORMATS = {".pdf": "pdf", ".html": "html", ".htm": "html"}
"""The report's format, by the path's extension."""
BRAND = "Opportunity scanner"


class ReportError(ValueError):
    """The report cannot be written: a path with another extension, a place that cannot be written, or no
    WeasyPrint libraries on this machine. The message is one line."""


@dataclass(frozen=True)
class History:
    """An act-on candidate's stored analyses across nights, up to the report's night."""

    candidate_id: str
    name: str
    points: Sequence[HistoryPoint]


@dataclass(frozen=True)
class Report:
    """Everything the report shows, read from the store."""

    domain: str
    as_of: date
    description: str
    brief_markdown: str
    """The stored brief, as written (its own first line, the title, is left to the report's header)."""
    summary: Summary
    """The brief's stored run summary."""
    thresholds: Mapping[str, float]
    rows: Sequence[CandidateRow]
    """Every scanned candidate's fate (`reasons.candidate_rows`)."""
    histories: Sequence[History]
    rendered_at: datetime
    model_checks: str = ""
    last_night: date | None = None
    """The latest earlier night with a brief (`history.since_last_night`)."""
    last_night_within_days: int = 45
    """How far back it was looked for (`history.last_night_within`)."""
    changes: Sequence[Change] = field(default_factory=tuple)
    """Since last night: new, still strong, dropped and why."""

    @property
    def archived(self) -> list[CandidateRow]:
        return [r for r in self.rows if r.tag in ARCHIVE_TAGS]

    @property
    def left_out(self) -> list[CandidateRow]:
        """Candidates the scan did not send on (a failed filter, the cap) or that have no verdict (an error); on a
        wide night the first `MAX_LEFT_OUT`: errors, then those the cap cut, then by id (`left_out_more` counts
        the others)."""
        rows = [r for r in self.rows if not r.went_on or r.tag == ERROR]
        if len(rows) <= MAX_LEFT_OUT:
            return rows
        return sorted(rows, key=lambda r: (r.tag != ERROR, not r.capped, r.candidate_id))[:MAX_LEFT_OUT]

    @property
    def left_out_more(self) -> int:
        """Candidates left out that `left_out` does not list (the archive lists every one)."""
        return max(0, sum(1 for r in self.rows if not r.went_on or r.tag == ERROR) - MAX_LEFT_OUT)


MAX_LEFT_OUT = 200
"""Rows of the report's "not analyzed tonight" table: a night of ten thousand entities would print two hundred
pages of them; the line under the table says how many more there are and where they are."""


def report_format(path: str | Path) -> str:
    """`pdf` or `html` by the extension; anything else is a `ReportError`."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ReportError(f"report {path}: the extension must be .pdf or .html (got {suffix or 'none'})")
    return FORMATS[suffix]


def check_target(path: str | Path) -> str:
    """The report's format, once the path is known to be writable: its nearest existing folder is a folder this
    process may write in. One `ReportError` line otherwise, before any night is run for it."""
    kind = report_format(path)
    target = Path(path).resolve()
    folder = target.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK) or target.is_dir():
        reason = "is a folder" if target.is_dir() else f"{folder} is not a folder this process can write in"
        raise ReportError(f"cannot write the report to {path}: {reason}")
    return kind


def _brief_body(markdown: str) -> Markup:
    lines = markdown.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    html = MarkdownIt("commonmark", {"html": False}).render("\n".join(lines))
    return Markup(html.replace("<h2>", "<h3>").replace("</h2>", "</h3>"))  # markdown-it escaped the text


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render_html(report: Report) -> str:
    by_section: dict[str, list[float]] = {section: [] for section in svg.SECTION_COLORS}
    for row in report.rows:
        section = row.tag if row.tag in BRIEF_SECTIONS else "archived" if row.tag in ARCHIVE_TAGS else None
        if section is not None and row.score is not None:
            by_section[section].append(row.score)
    unscored = sum(1 for r in report.rows if r.went_on and r.verdict == "INSUFFICIENT_DATA")
    template = _environment().get_template("report.html.j2")
    return template.render(
        brand=BRAND, report=report, brief=_brief_body(report.brief_markdown),
        css=Markup((TEMPLATES / "report.css").read_text()),  # our own file, not data
        histogram=Markup(svg.score_histogram(by_section, report.thresholds)),  # svg.py escapes its labels
        histories=[(h, Markup(svg.score_history(h.points, report.thresholds)))
                   for h in report.histories],
        unscored=unscored)


def render_pdf(html: str) -> bytes:
    """The HTML as PDF; one line when WeasyPrint's system libraries (pango) are missing."""
    try:
        import weasyprint
    except OSError as exc:  # the wheel loads pango and friends with ctypes at import
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ReportError(f"PDF needs pango (Debian: libpango-1.0-0 libpangoft2-1.0-0): {first}") from None
    return weasyprint.HTML(string=html, base_url=str(TEMPLATES)).write_pdf()


def write_report(report: Report, path: str | Path) -> Path:
    """The report at `path`, PDF or HTML by its extension; its folder is made when missing."""
    target = Path(path)
    kind = report_format(target)
    html = render_html(report)
    content = render_pdf(html) if kind == "pdf" else html.encode()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_bytes(content)
        partial.replace(target)  # a reader (the email channel) never sees half a file
    except OSError as exc:
        raise ReportError(f"cannot write the report to {target}: {exc.strerror or exc}") from None
    return target
