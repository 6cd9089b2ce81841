"""Progress for long work: a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts units of work toward an optional total and reports to stderr.

    On a terminal it redraws one line; elsewhere (CI, pipes, logs) it prints a
    plain line at most every `every_seconds`, and always at the end.
    """

    def __init__(self, label: str, total: int | None = None, unit: str = "rows",
                 stream: TextIO | None = None, every_seconds: float = 5.0, enabled: bool = True):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = 0.2 if self.tty else every_seconds
        self.enabled = enabled
        self.done = 0
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = -1

    def advance(self, n: int) -> None:
        """Record n more units done."""
        self.done += n
        now = time.monotonic()
        if self.enabled and now - self.last >= self.every:
            self.last = now
            self._emit(final=False)

    def close(self) -> None:
        """Print the final line (unless a plain line already said the same)."""
        if self.enabled and (self.tty or self.shown != self.done):
            self._emit(final=True)

    def _emit(self, final: bool) -> None:
        self.shown = self.done
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = self.done / elapsed
        if self.total:
            frac = min(self.done / self.total, 1.0)
            if self.tty:
                width = 30
                fill = int(frac * width)
                bar = "#" * fill + "-" * (width - fill)
                text = f"\r{self.label} [{bar}] {self.done:,}/{self.total:,} {self.unit} ({rate:,.0f}/s)"
            else:
                text = f"{self.label}: {self.done:,}/{self.total:,} {self.unit} ({frac:.0%}, {rate:,.0f}/s)\n"
        else:
            head = "\r" if self.tty else ""
            tail = "" if self.tty else "\n"
            text = f"{head}{self.label}: {self.done:,} {self.unit} ({rate:,.0f}/s){tail}"
        if final and self.tty:
            text += f" in {elapsed:.1f}s\n"
        self.stream.write(text)
        self.stream.flush()
