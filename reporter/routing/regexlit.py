"""The regexes routing compiles, and the literals a regex's every match must contain.

Routing compiles a regex leaf as written (the match, `pc.match_substring_regex`),
wrapped as `span_pattern` (the evidence: `pc.extract_regex_span` gives where its
first match starts and how long it is, in one search; a pyarrow without it takes
`pc.find_substring_regex` and `pc.extract_regex`), and as one branch of
`any_pattern`, the one pass that finds the rows where any regex without a
literal can match. `regex_error` compiles exactly those, so the rule book's
check at load and routing can never disagree about a pattern.

`required_literals` is a tiny reader of the RE2 syntax rule books use:
literal runs, `\\Q...\\E` quotes, groups, alternation, quantifiers, classes
and escapes. It is conservative: where it is unsure (a construct it does not
know, a non-ASCII letter whose case folding lower-casing may not mirror,
`seen_as`) it finds no literal there, and the regex runs on every row it must.
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from .normalise import normalise_text
from .regexchars import non_ascii_atom, wide_char, wide_class, wide_name

_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"
_REPEAT = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
MAX_SET = 4
"""The most characters a class may hold to be read as alternatives (`[<=]`: '<' or '=')."""
MAX_ALTERNATIVES = 16
"""The most strings one required-literal set may hold (a run through classes multiplies them)."""
RARE = frozenset("=<>$#@{}[]|\\^~*&+_")
"""Characters rare in prose: a literal holding one (`p <`, `=`) selects few rows however short it is."""


def span_pattern(pattern: str, case_sensitive: bool) -> str:
    """The regex wrapped so that RE2 reports its first match as the group `m`.

    The regex's own capturing groups become non-capturing (named ones too,
    so they cannot clash with `m`), and a `\\Q` quote left open at the end is
    closed, so the wrapper's `)` stays a parenthesis. Searched unanchored, the
    match RE2 reports is the leftmost one, as `match_substring_regex` finds.
    """
    flags = "" if case_sensitive else "(?i)"
    return f"{flags}(?s)(?P<m>{_uncapture(pattern)})"


def any_pattern(regexes: list[tuple[str, bool]]) -> str:
    """One regex that matches wherever any of the given (pattern, case_sensitive) regexes matches."""
    return "|".join(f"(?{'' if case else 'i'}:{_uncapture(p)})" for p, case in regexes)


def regex_error(pattern: str, case_sensitive: bool) -> str | None:
    """Why RE2 refuses the regex or a wrapping of it routing compiles, or None."""
    probe = pa.array(["x"], pa.string())
    try:
        pc.match_substring_regex(probe, pattern, ignore_case=not case_sensitive)
        pc.extract_regex(probe, span_pattern(pattern, case_sensitive))
        pc.find_substring_regex(probe, span_pattern(pattern, case_sensitive))
        if hasattr(pc, "extract_regex_span"):
            pc.extract_regex_span(probe, span_pattern(pattern, case_sensitive))
        pc.match_substring_regex(probe, any_pattern([(pattern, case_sensitive)]))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        return str(exc)
    return None


def _uncapture(pattern: str) -> str:
    """The regex with every capturing group made non-capturing and an open `\\Q` closed."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("\\Q", i):
            end = pattern.find("\\E", i + 2)
            if end < 0:  # quoted to the end of the pattern
                out.append(pattern[i:] + "\\E")
                break
            out.append(pattern[i:end + 2])
            i = end + 2
        elif ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        elif ch == "[":
            end = _class_end(pattern, i)
            out.append(pattern[i:end])
            i = end
        elif ch == "(" and not pattern.startswith("(?", i):
            out.append("(?:")
            i += 1
        elif pattern.startswith("(?P<", i) or (pattern.startswith("(?<", i) and pattern[i + 3:i + 4] not in ("=", "!")):
            close = pattern.find(">", i)
            if close < 0:
                out.append(pattern[i:])
                break
            out.append("(?:")
            i = close + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _class_end(p: str, i: int) -> int:
    """The index just past the character class that opens at p[i] == '['."""
    j = i + 1
    if p[j:j + 1] == "^":
        j += 1
    if p[j:j + 1] == "]":  # a leading ] is a literal
        j += 1
    while j < len(p):
        ch = p[j]
        if ch == "\\":
            j += 2
        elif p.startswith("[:", j):
            close = p.find(":]", j + 2)
            j = close + 2 if close >= 0 else j + 1
        elif ch == "]":
            return j + 1
        else:
            j += 1
    return len(p)


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
        last = -1  # where the last item that matched something is (a repeated one is followed by a marker)
        while self.peek() not in ("", "|", ")"):
            atom = self.atom()
            lo, more = self.quantifier()
            if atom[0] == "flag":  # matches nothing: RE2 applies a quantifier after it to the item before
                if last >= 0 and lo == 0:
                    items[last] = ("opt",)  # `(x)+\Q\E?` is `((x)+)?`: x is no longer required
                elif last >= 0 and more:
                    items.append(("other",))
                continue
            last = len(items)
            # `x?` is x or nothing, next to its neighbours either way; `x*` may repeat (no payload).
            items.append(atom if lo >= 1 else ("opt", atom) if not more else ("opt",))
            if lo >= 1 and more:
                # The item may repeat: what follows it is next to its last copy, not its first.
                items.append(("other",))
        return ("seq", items)

    def quantifier(self) -> tuple[int, bool]:
        """(fewest copies, 0 or 1; whether more than one copy may match) of the quantifier at the cursor."""
        ch, lo, more = self.peek(), 1, False
        if ch in ("?", "*"):
            self.i += 1
            lo, more = 0, ch == "*"
        elif ch == "+":
            self.i += 1
            more = True
        elif ch == "{":
            rep = _REPEAT.match(self.p, self.i)
            if rep is None:  # not a repetition: RE2 reads the brace as a literal
                return 1, False
            self.i = rep.end()
            lo = min(int(rep.group(1)), 1)
            top = rep.group(1) if rep.group(2) is None else rep.group(3)
            more = not top or int(top) > 1
        else:
            return 1, False
        if self.peek() == "?":  # lazy
            self.i += 1
        return lo, more

    def atom(self):
        ch = self.peek()
        self.i += 1
        if ch == "(":
            if self.peek() == "?":
                close = self.p.find(")", self.i)
                colon = self.p.find(":", self.i)
                if self.p.startswith("?P<", self.i) or self.p.startswith("?<", self.i):
                    self.i = self.p.find(">", self.i) + 1
                    if self.i == 0:
                        raise ValueError("unclosed group name")
                elif 0 <= colon < close or close < 0:
                    self.i = colon + 1
                else:  # a flag group such as (?i)
                    self.i = close + 1
                    return ("flag",)
            inner = self.alt()
            if self.peek() == ")":
                self.i += 1
            return ("group", inner)
        if ch == "[":
            end = _class_end(self.p, self.i - 1)
            chars = _class_chars(self.p[self.i:end - 1]) if end <= len(self.p) and self.p[end - 1] == "]" else None
            body = self.p[self.i:end - 1] if end <= len(self.p) and self.p[end - 1] == "]" else None
            self.i = end
            if chars:
                return ("set", chars)
            return ("other", "wide") if body is not None and wide_class(body) else ("other",)
        if ch == "\\":
            return self.escape()
        if ch in ".^$":
            return ("other",)
        if not ch.isascii():
            return non_ascii_atom(ch)
        return ("lit", ch)

    def escape(self):
        esc = self.peek()
        self.i += 1
        if esc == "Q":  # \Q...\E: every character up to \E (or the end) is a literal
            end = self.p.find("\\E", self.i)
            end = len(self.p) if end < 0 else end
            body, self.i = self.p[self.i:end], min(end + 2, len(self.p))
            if not body:  # an empty quote, like a flag group, matches nothing
                return ("flag",)
            # A quantifier after the quote repeats only its last character: keep the rest.
            last = ("lit", body[-1]) if body[-1].isascii() else non_ascii_atom(body[-1])
            lits = [("lit", c) if c.isascii() else non_ascii_atom(c) for c in body[:-1]]
            lo, _ = self.quantifier()
            return ("group", ("alt", [("seq", lits + [last if lo >= 1 else ("opt",)])]))
        if esc in ("p", "P"):
            start = self.i
            if self.peek() == "{":
                close = self.p.find("}", self.i)
                self.i = len(self.p) if close < 0 else close + 1
            else:
                self.i += 1  # a one-letter class name: \pL, \PN
            return ("other", "wide") if esc == "p" and wide_name(self.p[start:self.i]) else ("other",)
        if esc == "x":
            if self.peek() == "{":
                close = self.p.find("}", self.i)
                self.i = len(self.p) if close < 0 else close + 1
            else:
                for _ in range(2):
                    if self.peek() and self.peek() in _HEX:
                        self.i += 1
            return ("other",)
        if esc in _OCTAL:
            for _ in range(2):
                if self.peek() and self.peek() in _OCTAL:
                    self.i += 1
            return ("other",)
        if esc and esc.isascii() and not esc.isalnum():
            return ("lit", esc)
        return ("other",)


def _class_chars(body: str) -> frozenset[str] | None:
    """The characters of a class body (between `[` and `]`) when it is a few plain ASCII characters, else None."""
    if not body or body[0] == "^":
        return None
    chars, i = set(), 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            esc = body[i + 1: i + 2]
            if not esc or not esc.isascii() or esc.isalnum():
                return None  # \d, \w, \x41, \pL ...: a class of its own
            ch, i = esc, i + 2
        elif ch == "[" or not ch.isascii() or ch.isspace() or (ch == "-" and 0 < i < len(body) - 1):
            return None  # POSIX classes, non-ASCII letters (case folding), whitespace, ranges
        else:
            i += 1
        chars.add(ch.lower())
    return frozenset(chars) if len(chars) <= MAX_SET else None


def _strength(option: set[str]) -> int:
    """How few rows a set of required literals is expected to select: its weakest literal's length,
    each rare character counting three."""
    return min(len(x.strip()) + 2 * sum(c in RARE for c in x) for x in option)


def _strings(node) -> set[str] | None:
    """Every string a node can match, when it is made of literals, small classes and groups of them
    (at most MAX_ALTERNATIVES strings), else None."""
    kind = node[0]
    if kind == "lit":
        return {node[1]}
    if kind == "set":
        return set(node[1])
    if kind == "group":
        return _strings(node[1])
    if kind == "opt":  # `x?`: each string of x, or none (`colou?r`: color, colour)
        sub = _strings(node[1]) if len(node) > 1 else None
        return None if sub is None else sub | {""}
    if kind == "alt":
        out: set[str] = set()
        for branch in node[1]:
            sub = _strings(branch)
            if sub is None or len(out | sub) > MAX_ALTERNATIVES:
                return None
            out |= sub
        return out
    if kind == "seq":
        run = {""}
        for item in node[1]:
            sub = _strings(item)
            if sub is None or len(run) * len(sub) > MAX_ALTERNATIVES:
                return None
            run = {r + x for r in run for x in sub}
        return run
    return None


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
        options, run = [], {""}
        for item in node[1] + [("other",)]:
            sub = _strings(item)
            if sub and len(run) * len(sub) <= MAX_ALTERNATIVES:
                run = {r + x for r in run for x in sub}
                continue
            if run != {""}:
                options.append(run)
            run = {""}
            if item[0] == "group":
                req = _requirement(item[1])
                if req:
                    options.append(req)
        return max(options, key=_strength, default=None)
    return None


def _needs_wide(node) -> bool:
    """Whether every match of a node holds a non-ASCII character."""
    kind = node[0]
    if kind == "lit":
        return wide_char(node[1])  # ſ is a literal too, and matches s
    if kind == "other":
        return len(node) > 1 and node[1] == "wide"
    if kind == "group":
        return _needs_wide(node[1])
    if kind == "alt":
        return all(_needs_wide(b) for b in node[1])
    if kind == "seq":
        return any(_needs_wide(item) for item in node[1])
    return False


def needs_non_ascii(pattern: str) -> bool:
    """Whether every match of the regex holds a non-ASCII character (a script class such as
    `[\\p{Cyrillic}\\p{Han}]`), so that it need not run on plain-ASCII rows. False where unsure."""
    reader = _Re(pattern)
    try:
        node = reader.alt()
    except (ValueError, IndexError):
        return False
    return reader.i == len(pattern) and _needs_wide(node)


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """Lower-cased literals one of which every match of the regex contains, or None.

    The regex then runs only on rows where the literal pass saw one of them.
    Each literal keeps a leading or trailing space (the text has single
    spaces), and must have at least 3 characters besides them or hold one
    rare in prose (`p <`, `=`), or there is no requirement.
    A pattern the reader does not follow to its end has no requirement.
    """
    reader = _Re(pattern)
    try:
        req = _requirement(reader.alt())
    except (ValueError, IndexError):
        return None
    if reader.i < len(pattern) or not req:
        return None
    out = set()
    for lit in req:
        core = normalise_text(lit)
        if len(core) < 3 and not any(c in RARE for c in lit):
            return None
        if not core:
            return None
        out.add((" " if lit[:1].isspace() else "") + core + (" " if lit[-1:].isspace() else ""))
    # A literal holding another of the set selects no row the other does not (` = -` and ` = `).
    return tuple(sorted(x for x in out if not any(y != x and y in x for y in out)))
