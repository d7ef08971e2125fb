"""Small multiples of line charts written as SVG text: the training report's figure.

Standard library only, a few milliseconds per figure: the report is drawn at the end of every run, and importing
and running a plotting library there cost about a second per run (bench/results.md). Browsers, editors and GitHub
show SVG, and it stays sharp at any zoom. A band is cut at its series' `limits` (the metric's possible range, decided
by `textrl.report.metric_range`), and the y axis spans the cut band, so neither shows values the metric cannot take.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
          "#17becf")  # fmt: skip
"""One colour per run, in order (the tab10 palette)."""

WIDTH, HEIGHT = 470, 300  # one panel
LEFT, RIGHT, TOP, BOTTOM = 64, 14, 30, 42  # the plot area's margins inside a panel
FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif'"  # once, on the root element


@dataclass
class Series:
    """One run's line on one panel: points in step order, and an optional ± band (same steps or a subset)."""

    label: str
    color: str
    points: list[tuple[float, float]]
    band: dict[float, float] = field(default_factory=dict)
    limits: tuple[float, float] = (-math.inf, math.inf)
    """The values the metric can take: the band is cut there (a share's mean + std can pass 1)."""

    def banded(self) -> list[tuple[float, float, float, float]]:
        """(x, y, band low, band high) at each step with a band, the band cut at `limits`."""
        low, high = self.limits
        return [
            (x, y, max(y - d, low), min(y + d, high)) for x, y in self.points if (d := self.band.get(x)) is not None
        ]


@dataclass
class Chart:
    title: str
    x_label: str
    y_label: str
    series: list[Series]


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About `count` round tick values covering [low, high] (steps of 1, 2, 2.5 or 5 times a power of ten)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0]
    if high <= low:
        pad = abs(low) * 0.05 or 0.5
        low, high = low - pad, high + pad
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value < high + step * 0.5:
        ticks.append(round(value, 12))
        value += step
    return ticks


def label(value: float) -> str:
    """A tick label: short, without float noise (0.30000000000000004 is 0.3; 1e-05 stays short)."""
    if value == 0:
        return "0"
    if abs(value) >= 1e5 or abs(value) < 1e-3:
        return f"{value:.2g}".replace("e-0", "e-").replace("e+0", "e")
    return f"{value:.4g}"


def _panel(chart: Chart, x0: float, y0: float, integer_x: bool) -> list[str]:
    out = [f"<g transform='translate({x0:.0f},{y0:.0f})'>"]
    left, top, width, height = LEFT, TOP, WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    xs = [x for s in chart.series for x, _ in s.points]
    ys = [y for s in chart.series for _, y in s.points]
    ys += [bound for s in chart.series for _, _, low, high in s.banded() for bound in (low, high)]
    x_ticks = nice_ticks(min(xs), max(xs)) if xs else [0.0, 1.0]
    if integer_x:
        x_ticks = sorted({float(round(t)) for t in x_ticks}) or [0.0]
    y_ticks = nice_ticks(min(ys), max(ys)) if ys else [0.0, 1.0]
    x_low, x_high = min([x_ticks[0], *xs]), max([x_ticks[-1], *xs])
    y_low, y_high = min([y_ticks[0], *ys]), max([y_ticks[-1], *ys])
    x_span, y_span = (x_high - x_low) or 1.0, (y_high - y_low) or 1.0

    def px(x: float) -> float:
        return left + (x - x_low) / x_span * width

    def py(y: float) -> float:
        return top + height - (y - y_low) / y_span * height

    # about 52 characters fit the panel at 14 px; a longer title (a long reward name) shrinks rather than spill over
    title_size = round(max(9.0, min(14.0, 14.0 * 52 / max(len(chart.title), 1))), 1)
    out.append(f"<text x='{left + width / 2:.1f}' y='18' text-anchor='middle' font-size='{title_size:g}'>"
               f"{escape(chart.title)}</text>")  # fmt: skip
    out.append(f"<rect x='{left}' y='{top}' width='{width}' height='{height}' fill='white' stroke='#444'/>")
    for t in y_ticks:
        if y_low <= t <= y_high:
            y = py(t)
            out.append(f"<line x1='{left}' x2='{left + width}' y1='{y:.1f}' y2='{y:.1f}' stroke='#ddd'/>")
            out.append(f"<text x='{left - 5}' y='{y + 4:.1f}' text-anchor='end' font-size='11'>"
                       f"{label(t)}</text>")  # fmt: skip
    for t in x_ticks:
        if x_low <= t <= x_high:
            x = px(t)
            out.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{top}' y2='{top + height}' stroke='#ddd'/>")
            out.append(f"<text x='{x:.1f}' y='{top + height + 15}' text-anchor='middle' font-size='11'>"
                       f"{label(t)}</text>")  # fmt: skip
    out.append(f"<text x='{left + width / 2:.1f}' y='{HEIGHT - 6}' text-anchor='middle' font-size='12'>"
               f"{escape(chart.x_label)}</text>")  # fmt: skip
    out.append(f"<text transform='translate(13,{top + height / 2:.1f}) rotate(-90)' text-anchor='middle' "
               f"font-size='11'>{escape(chart.y_label)}</text>")  # fmt: skip
    for s in chart.series:
        banded = s.banded()
        if banded:
            upper = " ".join(f"{px(x):.1f},{py(high):.1f}" for x, _, _, high in banded)
            lower = " ".join(f"{px(x):.1f},{py(low):.1f}" for x, _, low, _ in reversed(banded))
            out.append(f"<polygon points='{upper} {lower}' fill='{s.color}' fill-opacity='0.18' stroke='none'/>")
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points)
        out.append(f"<polyline points='{line}' fill='none' stroke='{s.color}' stroke-width='1.8'>"
                   f"<title>{escape(s.label)}</title></polyline>")  # fmt: skip
        if len(s.points) <= 50:
            out += [f"<circle cx='{px(x):.1f}' cy='{py(y):.1f}' r='2.6' fill='{s.color}'/>" for x, y in s.points]
    out.append("</g>")
    return out


def figure(charts: Sequence[Chart], title: str, legend: Sequence[tuple[str, str]] = (), columns: int = 3) -> str:
    """The SVG document: `charts` on a grid of up to `columns` columns, a title above, and a legend (label,
    colour) below when given."""
    columns = max(1, min(columns, len(charts)))
    rows = -(-len(charts) // columns)
    head, foot = 40, 34 if legend else 8
    width, height = columns * WIDTH, head + rows * HEIGHT + foot
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' viewBox='0 0 {width} {height}' "
        f"{FONT}>",
        f"<rect width='{width}' height='{height}' fill='white'/>",
        f"<text x='{width / 2:.0f}' y='27' text-anchor='middle' font-size='17'>{escape(title)}</text>",
    ]
    for i, chart in enumerate(charts):
        out += _panel(chart, (i % columns) * WIDTH, head + (i // columns) * HEIGHT, integer_x=True)
    if legend:
        x = width / 2 - 80 * len(legend)
        y = head + rows * HEIGHT + 18
        for name, color in legend:
            out.append(f"<line x1='{x:.0f}' x2='{x + 22:.0f}' y1='{y}' y2='{y}' stroke='{color}' stroke-width='3'/>")
            out.append(f"<text x='{x + 28:.0f}' y='{y + 4}' font-size='12'>{escape(name)}</text>")
            x += 160
    out.append("</svg>")
    return "\n".join(out) + "\n"
