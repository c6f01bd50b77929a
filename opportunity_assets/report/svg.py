"""The report's two plots, drawn as SVG by code (no plotting library): tonight's score distribution and one
candidate's score across nights. Scores are 0-100; the pack's thresholds are drawn as dashed lines.

Every label is escaped: a name is data, never markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from html import escape

from opportunity_assets.formatting import format_score

FONT = "DejaVu Sans, sans-serif"
INK, MUTED, GRID = "#1f2933", "#7b8794", "#e4e7eb"
SECTION_COLORS = {"act_on_these": "#1f7a4d", "needs_your_judgment": "#d69e2e", "archived": "#9aa5b1"}
SECTION_LABELS = {"act_on_these": "act on these", "needs_your_judgment": "needs your judgment",
                  "archived": "archived"}
VERDICT_COLORS = {"STRONG": "#1f7a4d", "MARGINAL": "#d69e2e", "SKIP": "#9aa5b1", "INSUFFICIENT_DATA": "#c53030"}


def _text(x: float, y: float, text: str, *, size: float = 10, anchor: str = "start", fill: str = INK,
          weight: str = "normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-family="{FONT}" font-size="{size}" text-anchor="{anchor}" '
            f'fill="{fill}" font-weight="{weight}">{escape(text)}</text>')


def _line(x1: float, y1: float, x2: float, y2: float, *, stroke: str = GRID, width: float = 1,
          dash: str | None = None) -> str:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
            f'stroke-width="{width}"{dashed}/>')


def _svg(width: int, height: int, body: Sequence[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
            f"<title>{escape(title)}</title>" + "".join(body) + "</svg>")


def score_histogram(scores: Mapping[str, Sequence[float]], thresholds: Mapping[str, float], *,
                    bin_width: int = 10, width: int = 640, height: int = 230) -> str:
    """Tonight's analyzed candidates by score, in bins of `bin_width` points, stacked by where they went
    (`act_on_these`, `needs_your_judgment`, `archived`); the thresholds as dashed lines."""
    bins = 100 // bin_width
    counts = {section: [0] * bins for section in SECTION_COLORS}
    for section, values in scores.items():
        for value in values:
            counts[section][min(int(value // bin_width), bins - 1)] += 1
    totals = [sum(counts[s][i] for s in counts) for i in range(bins)]
    top = max(totals, default=0) + 1  # headroom for the tallest bar's count
    step = max(1, -(-top // 5))  # at most ~5 gridlines
    top = step * -(-top // step)
    left, right, upper, lower = 40, 16, 44, 30
    plot_w, plot_h = width - left - right, height - upper - lower

    def x(score: float) -> float:
        return left + plot_w * score / 100

    def y(count: float) -> float:
        return upper + plot_h * (1 - count / top)

    body = [f'<rect width="{width}" height="{height}" fill="white"/>']
    for tick in range(0, top + 1, step):
        body += [_line(left, y(tick), left + plot_w, y(tick)), _text(left - 6, y(tick) + 3.5, str(tick), size=9,
                                                                    anchor="end", fill=MUTED)]
    for name, value in sorted(thresholds.items(), key=lambda kv: kv[1]):
        body += [_line(x(value), upper - 12, x(value), upper + plot_h, stroke=INK, dash="4 3"),
                 _text(x(value), upper - 15, f"{name} {format_score(value)}", size=9, anchor="middle", fill=INK)]
    labels = []
    for i in range(bins):
        base = 0
        for section, color in SECTION_COLORS.items():
            n = counts[section][i]
            if n:
                body.append(f'<rect x="{x(i * bin_width) + 2:.1f}" y="{y(base + n):.1f}" '
                            f'width="{plot_w * bin_width / 100 - 4:.1f}" height="{y(base) - y(base + n):.1f}" '
                            f'fill="{color}"/>')
                base += n
        if totals[i]:  # on a white patch, over a threshold line that crosses the bin
            cx, cy, label = x((i + 0.5) * bin_width), y(totals[i]) - 4, str(totals[i])
            labels += [f'<rect x="{cx - 3.5 * len(label) - 2:.1f}" y="{cy - 9:.1f}" width="{7 * len(label) + 4}" '
                       f'height="11" fill="white"/>', _text(cx, cy, label, size=9, anchor="middle")]
    body += labels
    for tick in range(0, 101, 2 * bin_width):
        body.append(_text(x(tick), upper + plot_h + 14, str(tick), size=9, anchor="middle", fill=MUTED))
    body.append(_text(left + plot_w, height - 4, "score", size=9, anchor="end", fill=MUTED))
    body.append(_line(left, upper + plot_h, left + plot_w, upper + plot_h, stroke=MUTED))
    legend_x = left
    for section, color in SECTION_COLORS.items():
        label = f"{SECTION_LABELS[section]} ({len(scores.get(section, ()))})"
        body += [f'<rect x="{legend_x}" y="4" width="10" height="10" fill="{color}"/>',
                 _text(legend_x + 14, 13, label, size=10)]
        legend_x += 14 + 7 * len(label) + 18
    return _svg(width, height, body, "Score distribution of tonight's analyzed candidates")


@dataclass(frozen=True)
class HistoryPoint:
    """One night's stored analysis of a candidate."""

    as_of: date
    verdict: str
    score: float | None
    """None for INSUFFICIENT_DATA."""


def score_history(points: Sequence[HistoryPoint], thresholds: Mapping[str, float], *, width: int = 240,
                  height: int = 120) -> str:
    """One candidate's score on each stored night, oldest first: a line through the scored nights, each point
    coloured by its verdict (an INSUFFICIENT_DATA night is a red mark on the axis); the latest night labelled."""
    left, right, upper, lower = 30, 14, 10, 22
    plot_w, plot_h = width - left - right, height - upper - lower
    nights = sorted({p.as_of for p in points})
    first, last = (nights[0], nights[-1]) if nights else (None, None)
    span = (last - first).days if first and last and last > first else 1

    def x(day: date) -> float:
        if first is None or last == first:
            return left + plot_w / 2
        return left + plot_w * (day - first).days / span

    def y(score: float) -> float:
        return upper + plot_h * (1 - score / 100)

    body = [f'<rect width="{width}" height="{height}" fill="white"/>']
    for tick in (0, 50, 100):
        body += [_line(left, y(tick), left + plot_w, y(tick)),
                 _text(left - 5, y(tick) + 3.5, str(tick), size=8, anchor="end", fill=MUTED)]
    for name, value in thresholds.items():
        body.append(_line(left, y(value), left + plot_w, y(value), stroke=VERDICT_COLORS.get(name.upper(), MUTED),
                          dash="3 3"))
    scored = sorted((p for p in points if p.score is not None), key=lambda p: p.as_of)
    if len(scored) > 1:
        path = " ".join(f"{x(p.as_of):.1f},{y(p.score or 0.0):.1f}" for p in scored)
        body.append(f'<polyline points="{path}" fill="none" stroke="{INK}" stroke-width="1.4"/>')
    for p in sorted(points, key=lambda p: p.as_of):
        color = VERDICT_COLORS.get(p.verdict, MUTED)
        if p.score is None:
            body.append(f'<rect x="{x(p.as_of) - 3:.1f}" y="{y(0) - 3:.1f}" width="6" height="6" fill="{color}"/>')
        else:
            body.append(f'<circle cx="{x(p.as_of):.1f}" cy="{y(p.score):.1f}" r="2.8" fill="{color}"/>')
    if scored:
        latest = scored[-1]
        point, size = y(latest.score or 0.0), 9
        # above its point, or below it where above would cross the top edge (trial 119: a 100.0 cut in half)
        label_y = point - 6 if point - 6 - size >= 0 else point + 6 + size
        body.append(_text(min(x(latest.as_of), left + plot_w) - 4, label_y,
                          format_score(latest.score or 0.0, tuple(thresholds.values())), size=size, anchor="end",
                          weight="bold"))
    if first and last:
        body.append(_text(left, height - 6, first.isoformat(), size=8, fill=MUTED))
        if last != first:
            body.append(_text(left + plot_w, height - 6, last.isoformat(), size=8, anchor="end", fill=MUTED))
    return _svg(width, height, body, "Score across nights")
