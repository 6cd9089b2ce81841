"""Numbers in words: one helper for a count and its noun, used by pages and messages alike.

"1 rules changed" was printed where a count met a fixed plural; every count
that stands before a noun goes through `count`.
"""

from __future__ import annotations


def count(n: int, noun: str, nouns: str | None = None) -> str:
    """`n` with thousands separators and its noun in the right number: "1 rule", "2 rules", "1,000 works".

    `nouns` is the plural when it is not `noun` + "s" ("1 candidate", "3 analyses").
    """
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"
