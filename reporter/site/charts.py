"""Charts as data: SVG geometry computed here, drawn by one template macro.

No chart is drawn with string formatting: a `Chart` is a list of rectangles
and text labels with plain numbers, and `reporter/templates/html/_macros/charts.html`
turns it into inline SVG (autoescaped like everything else). Every number a
chart shows is a `Label` with a `key`; the table beside the chart carries the
same key on the cell holding the same number, which is how the tests prove
the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass

WIDTH = 680
LABEL_CHARS = 34


@dataclass(frozen=True)
class Bar:
    """One filled rectangle."""

    x: float
    """Left edge in SVG user units."""
    y: float
    """Top edge."""
    w: float
    """Width (0 draws nothing but keeps the tooltip)."""
    h: float
    """Height."""
    css: str
    """Class naming the series (its colour comes from the stylesheet)."""
    tip: str
    """Tooltip text (an SVG <title>), e.g. `screen: 1,234 works`."""


@dataclass(frozen=True)
class Label:
    """One text label; `key` is set on labels that show a number from the table."""

    x: float
    """Anchor point x."""
    y: float
    """Baseline y."""
    text: str
    """The text shown."""
    anchor: str = "start"
    """SVG text-anchor: start, middle or end."""
    css: str = "lbl"
    """Class: lbl (names), num (numbers), head (column heads), note (removed rows)."""
    key: str = ""
    """For numbers: the data-key of the table cell showing the same number."""
    full: str = ""
    """The untruncated text when `text` was shortened (an SVG <title>)."""


@dataclass(frozen=True)
class Legend:
    """One legend entry."""

    css: str
    """The series class."""
    text: str
    """What the series means."""


@dataclass(frozen=True)
class Chart:
    """An inline SVG chart with a title, a description and text labels."""

    id: str
    """Element id; the title and description ids derive from it."""
    title: str
    """What the chart shows (SVG <title>, read by screen readers)."""
    desc: str
    """One sentence naming the table that holds the same numbers (SVG <desc>)."""
    table_id: str
    """The id of the table beside the chart with the same numbers."""
    width: int
    """viewBox width."""
    height: int
    """viewBox height."""
    bars: tuple[Bar, ...]
    """Rectangles."""
    labels: tuple[Label, ...]
    """Text."""
    legend: tuple[Legend, ...] = ()
    """Series legend shown above the chart (empty when one series)."""


def fmt(n: int) -> str:
    """Thousands separators: the one number format of charts and tables."""
    return f"{n:,}"


def short(text: str, limit: int = LABEL_CHARS) -> str:
    """Shorten a label to fit the label column (the full text goes in a tooltip)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class FunnelStep:
    """One step of a funnel: works still in, and what removed the others."""

    key: str
    """Table key of the step's count."""
    label: str
    """What the step is."""
    count: int
    """Works after this step."""
    removed: tuple[tuple[str, str, int], ...] = ()
    """(key, what removed them, works) for each cause of removal at this step."""


def funnel_chart(chart_id: str, table_id: str, title: str, steps: list[FunnelStep]) -> Chart:
    """A funnel: one bar per step, the removed rows named under each step."""
    top = max([s.count for s in steps] + [1])
    x0, span, row, sub = 310, 290, 30, 20
    bars, labels = [], []
    y = 8
    for step in steps:
        w = round(span * step.count / top, 2)
        bars.append(Bar(x0, y, w, 20, "s-main", f"{step.label}: {fmt(step.count)} works"))
        labels.append(Label(x0 - 8, y + 15, short(step.label, 44), "end", "lbl", full=_full(step.label, 44)))
        labels.append(Label(x0 + w + 6, y + 15, fmt(step.count), "start", "num", key=step.key))
        y += row
        for key, what, n in step.removed:
            w = round(span * n / top, 2)
            bars.append(Bar(x0, y, w, 12, "s-removed", f"removed, {what}: {fmt(n)} works"))
            labels.append(Label(x0 - 8, y + 11, short(f"− {what}", 46), "end", "note",
                                full=_full(f"− {what}", 46)))
            labels.append(Label(x0 + w + 6, y + 11, fmt(n), "start", "num", key=key))
            y += sub
    legend = (Legend("s-main", "works after the step"), Legend("s-removed", "works removed at the step"))
    return Chart(chart_id, title, "The same numbers are in a table on this page.",
                 table_id, WIDTH, y + 4, tuple(bars), tuple(labels), legend)


@dataclass(frozen=True)
class Stack:
    """One row of a stacked bar chart."""

    label: str
    """Row name (a rule id)."""
    key: str
    """Key prefix of the row's numbers in the table (`<key>-<series>`)."""
    parts: tuple[int, ...]
    """One value per series, in series order."""


def stacked_chart(chart_id: str, table_id: str, title: str, series: tuple[tuple[str, str], ...],
                  rows: list[Stack]) -> Chart:
    """Stacked horizontal bars with one number column per series."""
    top = max([sum(r.parts) for r in rows] + [1])
    bar_w, col_w = 330, 105
    x_cols = [bar_w + 20 + col_w * (i + 1) for i in range(len(series))]
    width = max(WIDTH, x_cols[-1] + 4) if x_cols else WIDTH
    labels = [Label(x, 14, name, "end", "head") for x, (_css, name) in zip(x_cols, series)]
    bars = []
    y = 24
    for row in rows:
        labels.append(Label(0, y + 13, short(row.label, 48), "start", "lbl", full=_full(row.label, 48)))
        x = 0.0
        for (css, name), value, col in zip(series, row.parts, x_cols):
            w = round(bar_w * value / top, 2)
            bars.append(Bar(round(x, 2), y + 18, w, 12, css, f"{row.label}, {name}: {fmt(value)}"))
            x += w
            labels.append(Label(col, y + 29, fmt(value), "end", "num", key=f"{row.key}-{name}"))
        y += 40
    legend = tuple(Legend(css, name) for css, name in series)
    return Chart(chart_id, title, "The same numbers are in a table on this page.",
                 table_id, width, y + 2, tuple(bars), tuple(labels), legend)


def _full(text: str, limit: int) -> str:
    return text if len(text) > limit else ""


def paired_chart(chart_id: str, table_id: str, title: str, series: tuple[tuple[str, str], tuple[str, str]],
                 rows: list[Stack]) -> Chart:
    """Two bars per row (before and after), each with its number at its end."""
    top = max([max(r.parts) for r in rows if r.parts] + [1])
    bar_w = 420
    bars, labels = [], []
    y = 4
    for row in rows:
        labels.append(Label(0, y + 13, short(row.label, 60), "start", "lbl", full=_full(row.label, 60)))
        y += 18
        for (css, name), value in zip(series, row.parts):
            w = round(bar_w * value / top, 2)
            bars.append(Bar(0, y, w, 12, css, f"{row.label}, {name}: {fmt(value)}"))
            labels.append(Label(w + 6, y + 11, fmt(value), "start", "num", key=f"{row.key}-{name}"))
            y += 15
        y += 8
    legend = tuple(Legend(css, name) for css, name in series)
    return Chart(chart_id, title, "The same numbers are in a table on this page.",
                 table_id, WIDTH, y, tuple(bars), tuple(labels), legend)
