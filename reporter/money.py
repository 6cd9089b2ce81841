"""Money as the tool shows it: the one formatter of US dollars (the screen's dry run, its status page)."""

from __future__ import annotations


def dollars(value: float) -> str:
    """$1,234.57 (cents; below a cent, four decimals, so a cheap plan does not read as free)."""
    if 0 < value < 0.01:
        return f"${value:.4f}"
    return f"${value:,.2f}"
