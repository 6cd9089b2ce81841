"""Charts as data: SVG geometry computed here, drawn by one template macro.

No chart is drawn with string formatting: a `Chart` is a list of rectangles
and text labels with plain numbers, and `reporter/templates/html/_macros/charts.html`
turns it into inline SVG (autoescaped like everything else). Every number a
chart shows is a `Label` with a `key`; the table beside the chart carries the
same key on the cell holding the same number, which is how the tests prove
the two agree.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from ..plurals import count

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
class Arrow:
    """A connector of a flow diagram: a line and its head."""

    line: str
    """The line's points (`x1,y1 x2,y2`)."""
    head: str
    """The head's triangle (three points)."""


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
    arrows: tuple[Arrow, ...] = ()
    """Connectors between boxes (flow diagrams only)."""
    css: str = "chart"
    """Class of the figure: `chart`, or `chart flow` for a flow diagram (kept legible at phone width)."""
    narrow: Chart | None = None
    """The same chart laid out for a phone (a flow diagram stacked in one column, no sideways scroll), shown
    instead of this one on a narrow screen; None: this one serves every width."""


def fmt(n: int) -> str:
    """Thousands separators: the one number format of charts and tables."""
    return f"{n:,}"


def short(text: str, limit: int = LABEL_CHARS) -> str:
    """Shorten a label to fit the label column (the full text goes in a tooltip)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


@dataclass(frozen=True)
class FlowLine:
    """A line inside a flow box: a part of its works (a source, a pile, a rule) and their number."""

    label: str
    """What the part is."""
    count: int
    """Works."""
    key: str
    """data-key of the number in the table beside the diagram."""
    indent: bool = False
    """A part of the line above it (a rule under its pile)."""


@dataclass(frozen=True)
class FlowNote:
    """A statement about some of a box's works, written in the box below its lines: a certificate of a stratum."""

    text: str
    """What it says (`Certificate of discard: 18,375 works; 400 sampled, ...`), wrapped to the box, never cut."""
    standing: str
    """What it comes to, in words (`meets the target: ...`): the colour only repeats it."""
    tone: str
    """Class of the standing's text: `ok` (meets), `bad` (misses) or `neutral` (no target to meet)."""


@dataclass(frozen=True)
class FlowBox:
    """A box of a flow diagram: its title, its works and the lines that split them."""

    title: str
    """What the box holds, in plain words."""
    count: int
    """Works."""
    key: str
    """data-key of the number."""
    lines: tuple[FlowLine, ...] = ()
    """Its parts."""
    notes: tuple[FlowNote, ...] = ()
    """What is known of some of its works beyond their number (certificates), below its lines."""


@dataclass(frozen=True)
class FlowStep:
    """One step of a flow: a box of works (left), what left the flow from it and what waits in it (right).

    The next step's box holds this box's works less its `side` and its
    `waiting`: read top to bottom, every box on the right is taken from the
    box beside it, never from the one below.
    """

    main: FlowBox
    """The works at this step."""
    side: FlowBox | None = None
    """What left the flow from this box (discarded), or None."""
    waiting: FlowBox | None = None
    """Works of this box that wait (pending, set aside, not decided yet; they may still go on): drawn apart, never
    as having left."""


FLOW_WIDTH, FLOW_MAIN, FLOW_SIDE_X, FLOW_SIDE = 760, 380, 422, 336
FLOW_LINE, FLOW_GAP = 18, 34
NARROW_WIDTH, NARROW_TRUNK, NARROW_INDENT = 360, 10, 22
"""The phone's layout: one column 360 units wide (a 390 px screen less the page's margins shows it at about its
size); the arrows run down a trunk at x = 10, and what left or waits hangs off it, indented."""
TITLE_PX, LINE_PX, DIGIT_PX = 7.6, 7.0, 8.2
"""The advance of a character of a box title (13px bold) and of a line (13px), and of a digit or comma of a
bold number, at their widest in Chromium's DejaVu Sans, rounded up: a shortened label never runs into its
number ("discard-onl…3,782" did at an average advance)."""
NOTE_PX, NOTE_PAD = 8.0, 30
"""The advance a note's line is wrapped for (13px, bold in its standing: measured at about 7.7 px a character
in Chromium's DejaVu Sans, rounded up, since a note is never shortened and must fit whole), and the room it
leaves at the box's edges."""


def flow_chart(chart_id: str, table_id: str, title: str, steps: list[FlowStep]) -> Chart:
    """A flow diagram in the manner of PRISMA 2020: boxes down the left, what left the flow on the right.

    Every count is text in its box, never a length, so 29 works read as
    clearly as 27,356. Arrows join each box to the next and to what left.
    """
    bars, labels, arrows = [], [], []
    y = 4.0
    for i, step in enumerate(steps):
        main_h = _flow_box(bars, labels, step.main, 0, y, FLOW_MAIN, "box", wrap=True)
        right = y
        for box, css in ((step.side, "box-out"), (step.waiting, "box-wait")):
            if box is None:
                continue
            if right == y:
                arrows.append(_arrow(FLOW_MAIN, y + 16, FLOW_SIDE_X, y + 16))
            right += _flow_box(bars, labels, box, FLOW_SIDE_X, right, FLOW_SIDE, css, wrap=True) + 8
        height = max(main_h, right - y - 8)
        if i + 1 < len(steps):
            arrows.append(_arrow(FLOW_MAIN / 2, y + main_h, FLOW_MAIN / 2, y + height + FLOW_GAP))
        y += height + FLOW_GAP
    legend = _flow_legend(steps)
    return Chart(chart_id, title, "The same numbers are in a table on this page.", table_id, FLOW_WIDTH,
                 int(y - FLOW_GAP + 6), tuple(bars), tuple(labels), legend, tuple(arrows), "chart flow",
                 _narrow_flow(chart_id, table_id, title, steps))


def _narrow_flow(chart_id: str, table_id: str, title: str, steps: list[FlowStep]) -> Chart:
    """The flow stacked for a phone: each box full width, what left it or waits in it below it, indented, off the
    trunk the arrows run down; every label shortened to its box as in the wide layout."""
    bars: list[Bar] = []
    labels: list[Label] = []
    arrows: list[Arrow] = []
    y = 4.0
    x, w = NARROW_TRUNK + NARROW_INDENT / 2, NARROW_WIDTH - NARROW_TRUNK - NARROW_INDENT / 2 - 1
    for i, step in enumerate(steps):
        bottom = y + _flow_box(bars, labels, step.main, 1, y, NARROW_WIDTH - 2, "box", wrap=True)
        below = bottom + 8
        for box, css in ((step.side, "box-out"), (step.waiting, "box-wait")):
            if box is None:
                continue
            h = _flow_box(bars, labels, box, x, below, w, css, wrap=True)
            arrows.append(_branch(NARROW_TRUNK, bottom, x, below + 16))
            below += h + 8
        if i + 1 < len(steps):
            arrows.append(_arrow(NARROW_TRUNK, bottom, NARROW_TRUNK, below - 8 + FLOW_GAP))
        y = below - 8 + FLOW_GAP
    return Chart(f"{chart_id}-narrow", title, "The same numbers are in a table on this page.", table_id,
                 NARROW_WIDTH, int(y - FLOW_GAP + 6), tuple(bars), tuple(labels), (), tuple(arrows), "chart flow")


def _flow_legend(steps: list[FlowStep]) -> tuple[Legend, ...]:
    legend = (Legend("box", "works at that step"),
              Legend("box-out", "works that left the flow at that step (discarded)"))
    if any(step.waiting is not None for step in steps):
        legend += (Legend("box-wait", "works that wait at that step (pending, set aside, not decided yet): they "
                                      "have not left the flow"),)
    return legend


def _flow_box(bars: list[Bar], labels: list[Label], box: FlowBox, x: float, y: float, w: float,
              css: str, wrap: bool = False) -> float:
    """Draw one box (its rectangle and text) at (x, y); return its height. A label too long for its room is
    shortened (the whole in a tooltip), or with `wrap` (the phone's layout, which has no hover) continued on
    the next line, its number on the first."""
    rows: list[tuple[str, float, str, str]] = []  # (text, indent, class, full text when shortened)
    numbers: list[tuple[int, str, str, str]] = []  # (row, number, class, key)
    for label, indent, css_text, n, css_n, key in (
            (box.title, 8, "head", box.count, "total", box.key),
            *((line.label, 26 if line.indent else 14, "lbl", line.count, "num", line.key) for line in box.lines)):
        limit = int((w - indent - 16 - DIGIT_PX * len(fmt(n))) / (TITLE_PX if css_text == "head" else LINE_PX))
        numbers.append((len(rows), fmt(n), css_n, key))
        if wrap and len(label) > limit:
            parts = textwrap.wrap(label, limit, break_on_hyphens=False) or [label]
            rows += [(part, indent + 6 * (k > 0), css_text, "") for k, part in enumerate(parts)]
        else:
            rows.append((short(label, limit), indent, css_text, _full(label, limit)))
    notes = _note_lines(box.notes, int((w - NOTE_PAD) / NOTE_PX))
    h = 10 + FLOW_LINE * (len(rows) + len(notes)) + 4
    bars.append(Bar(x, y, w, h, css, f"{box.title}: {count(box.count, 'work')}"))
    for j, (text, indent, css_text, full) in enumerate(rows):
        labels.append(Label(x + indent, y + 22 + FLOW_LINE * j, text, "start", css_text, full=full))
    for j, number, css_n, key in numbers:
        labels.append(Label(x + w - 8, y + 22 + FLOW_LINE * j, number, "end", css_n, key=key))
    for j, (text, tone) in enumerate(notes, len(rows)):
        labels.append(Label(x + 14, y + 22 + FLOW_LINE * j, text, "start", tone))
    return h


def _note_lines(notes: tuple[FlowNote, ...], width: int) -> list[tuple[str, str]]:
    """Each note's text and standing as lines of at most `width` characters, each with its class."""
    lines = []
    for note in notes:
        lines += [(text, "lbl") for text in textwrap.wrap(note.text, width, break_on_hyphens=False)]
        lines += [(text, note.tone) for text in textwrap.wrap(note.standing, width, break_on_hyphens=False)]
    return lines


def _branch(x1: float, y1: float, x2: float, y2: float) -> Arrow:
    """An arrow down the trunk from (x1, y1), then right to (x2, y2), its head at the end."""
    end = x2 - 7
    return Arrow(f"{x1},{y1} {x1},{y2} {end},{y2}", f"{end},{y2 - 5} {end},{y2 + 5} {x2},{y2}")


def _arrow(x1: float, y1: float, x2: float, y2: float) -> Arrow:
    """A straight arrow from (x1, y1) to (x2, y2), horizontal or vertical, its head at the end."""
    if x1 == x2:  # down
        end = y2 - 7
        head = f"{x2 - 5},{end} {x2 + 5},{end} {x2},{y2}"
        return Arrow(f"{x1},{y1} {x2},{end}", head)
    end = x2 - 7
    return Arrow(f"{x1},{y1} {end},{y2}", f"{end},{y2 - 5} {end},{y2 + 5} {x2},{y2}")
