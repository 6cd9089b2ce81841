"""A digest paper's own text as every view of a week shows it: its authors line and its abstract's snippet.

One definition for the week page, its Markdown twin, the feed entry and the
e-mail edition, so "the first three authors and et al." and "the start of the
abstract" read the same wherever a subscriber meets the paper. Each value is
plain data; each view escapes it its own way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

AUTHORS_SHOWN = 3
"""Authors named before "et al."."""
AUTHOR_CHARS = 60
"""An author's name is shortened to this many characters (a record can hold a whole collaboration in one)."""
SNIPPET_CHARS = 280
"""The start of an abstract shown before the reader asks for the rest."""


def authors_line(authors: Sequence[str]) -> str:
    """The first AUTHORS_SHOWN authors, then "et al." when there are more ("" without any)."""
    names = [cut(flat(a), AUTHOR_CHARS) for a in authors[:AUTHORS_SHOWN]]
    return ", ".join(names) + (" et al." if len(authors) > AUTHORS_SHOWN else "")


def snippet(abstract: str | None) -> str:
    """The start of an abstract, white space made single, cut at a word with an ellipsis ("" without one)."""
    return cut(flat(abstract or ""), SNIPPET_CHARS)


def flat(text: str) -> str:
    """Data as one line: every run of white space (line breaks too) one space."""
    return " ".join(text.split())


def cut(text: str, most: int) -> str:
    """`text` at most `most` characters: cut at the last space of the second half, an ellipsis where it was cut."""
    if len(text) <= most:
        return text
    head = text[: most - 1]
    space = head.rfind(" ")
    if space >= most // 2:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"


_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
    "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ",
    "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "infty": "∞", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "neq": "≠",
    "ne": "≠", "approx": "≈", "sim": "∼", "times": "×", "cdot": "·", "pm": "±", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "Rightarrow": "⇒", "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆", "cup": "∪",
    "cap": "∩", "sum": "∑", "prod": "∏", "int": "∫", "partial": "∂", "nabla": "∇", "forall": "∀", "exists": "∃",
    "ell": "ℓ", "log": "log", "sqrt": "√", "ldots": "…", "dots": "…", "cdots": "⋯", "star": "⋆", "circ": "∘",
}
"""LaTeX commands a title's math holds, as the characters they stand for."""
_SUPER = str.maketrans("0123456789+-=()in", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿ")
_SUB = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")
_MATH = re.compile(r"\$(?!\s)([^$]{1,200}?)(?<![\s\\])\$")
"""`$...$`: an inline formula, not a lone or escaped dollar (`\\$5`), nor `$ 5 and $ 6` (white space inside)."""
_SCRIPT = re.compile(r"([\^_])(?:\{([^{}]*)\}|(\\?[A-Za-z0-9]))")
_WRAPPER = re.compile(r"\\(?:mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|mathfrak|text|textbf|textit|"
                      r"textrm|operatorname|boldsymbol|emph)\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def plain_math(title: str) -> str:
    """A title with its inline LaTeX (`$O(n^2)$`, `$\\mathcal{O}(\\log n)$`) as the text it stands for (`O(n²)`,
    `O(log n)`): arXiv titles are written in TeX, and a page or an e-mail shows `$...$` raw. Only what lies between
    two dollars is read; a command it does not know keeps its name without the backslash, and a title without
    math is returned as it is."""
    return _MATH.sub(lambda m: _formula(m.group(1)), title) if "$" in title else title


def _formula(tex: str) -> str:
    for _ in range(3):  # nested wrappers: \mathbf{\mathcal{X}}
        tex = _WRAPPER.sub(r"\1", tex)
    tex = _FRAC.sub(r"\1/\2", tex)
    tex = _COMMAND.sub(lambda m: _SYMBOLS.get(m.group(1), m.group(1)), tex)

    def script(m: re.Match) -> str:
        """A super- or subscript as its Unicode characters when each has one, else `^(...)` / `_(...)`."""
        body = m.group(2) if m.group(2) is not None else m.group(3)
        moved = body.translate(_SUPER if m.group(1) == "^" else _SUB)
        if body and all(c != o for c, o in zip(moved, body)):
            return moved
        return m.group(1) + (body if len(body) == 1 else f"({body})")
    tex = _SCRIPT.sub(script, tex)
    return " ".join(tex.replace("{", "").replace("}", "").replace("\\,", " ").replace("~", " ").split())


__all__ = ["AUTHORS_SHOWN", "SNIPPET_CHARS", "authors_line", "cut", "flat", "plain_math", "snippet"]
