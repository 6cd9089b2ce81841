"""Literals a regex's every match must contain, so the regex runs only where one occurs.

A tiny reader of the RE2 syntax rule books use: literal runs, groups,
alternation, quantifiers, classes and escapes. It is conservative: where it
is unsure it finds no literal, and the regex runs on every row it must.
"""

from __future__ import annotations

from .normalise import normalise_text


class _Re:
    """A tiny reader of RE2 syntax, enough to find literals every match must contain."""

    def __init__(self, pattern: str):
        self.p, self.i = pattern, 0

    def peek(self) -> str:
        return self.p[self.i] if self.i < len(self.p) else ""

    def alt(self):
        branches = [self.seq()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.seq())
        return ("alt", branches)

    def seq(self):
        items = []
        while self.peek() not in ("", "|", ")"):
            atom = self.atom()
            lo = self.quantifier()
            items.append(atom if lo >= 1 else ("opt",))
        return ("seq", items)

    def quantifier(self) -> int:
        ch, lo = self.peek(), 1
        if ch in ("?", "*"):
            self.i += 1
            lo = 0
        elif ch == "+":
            self.i += 1
        elif ch == "{":
            close = self.p.find("}", self.i)
            if close < 0:
                self.i += 1
                return 1
            body = self.p[self.i + 1:close].split(",")[0].strip()
            lo = int(body) if body.isdigit() else 0
            self.i = close + 1
            lo = min(lo, 1)
        else:
            return 1
        if self.peek() == "?":  # lazy
            self.i += 1
        return lo

    def atom(self):
        ch = self.peek()
        self.i += 1
        if ch == "(":
            if self.peek() == "?":
                close = self.p.find(")", self.i)
                colon = self.p.find(":", self.i)
                if self.p.startswith("?P<", self.i) or self.p.startswith("?<", self.i):
                    self.i = self.p.find(">", self.i) + 1
                elif 0 <= colon < close or close < 0:
                    self.i = colon + 1
                else:  # a flag group such as (?i)
                    self.i = close + 1
                    return ("other",)
            inner = self.alt()
            if self.peek() == ")":
                self.i += 1
            return ("group", inner)
        if ch == "[":
            j = self.i + (1 if self.peek() == "^" else 0)
            j += 1 if self.p[j:j + 1] == "]" else 0
            close = self.p.find("]", j)
            self.i = len(self.p) if close < 0 else close + 1
            return ("other",)
        if ch == "\\":
            esc = self.peek()
            self.i += 1
            if esc in ("p", "P") and self.peek() == "{":
                self.i = self.p.find("}", self.i) + 1
                return ("other",)
            if esc and not esc.isalnum():
                return ("lit", esc)
            return ("other",)
        if ch in ".^$":
            return ("other",)
        return ("lit", ch)


def _requirement(node) -> set[str] | None:
    """A set of strings one of which every match contains, or None."""
    kind = node[0]
    if kind == "alt":
        sets = [_requirement(b) for b in node[1]]
        if any(s is None for s in sets):
            return None
        return set().union(*sets)
    if kind == "group":
        return _requirement(node[1])
    if kind == "seq":
        options, run = [], []
        for item in node[1] + [("other",)]:
            if item[0] == "lit":
                run.append(item[1])
                continue
            if run:
                options.append({"".join(run)})
                run = []
            if item[0] == "group":
                req = _requirement(item[1])
                if req:
                    options.append(req)
        return max(options, key=lambda o: min(len(x.strip()) for x in o), default=None)
    return None


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """Lower-cased literals one of which every match of the regex contains, or None.

    The regex then runs only on rows where the literal pass saw one of them.
    Each literal keeps a leading or trailing space (the text has single
    spaces), and must have at least 3 characters, or there is no requirement.
    """
    try:
        req = _requirement(_Re(pattern).alt())
    except (ValueError, IndexError):
        return None
    if not req:
        return None
    out = set()
    for lit in req:
        core = normalise_text(lit)
        if len(core) < 3:
            return None
        out.add((" " if lit[:1].isspace() else "") + core + (" " if lit[-1:].isspace() else ""))
    return tuple(sorted(out))


def required_literal(pattern: str) -> str | None:
    """The single required literal of a regex, when there is exactly one."""
    lits = required_literals(pattern)
    return lits[0] if lits and len(lits) == 1 else None
