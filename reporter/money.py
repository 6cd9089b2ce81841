"""Money as the tool shows it: the one formatter of US dollars (the screen's dry run, its status page, a cap)."""

from __future__ import annotations


def dollars(value: float, *, tenths: bool = False) -> str:
    """$1,234.57 (cents; below a cent, four decimals, so a cheap plan does not read as free).

    `tenths`: to a tenth of a cent where the amount has one ($1.005, $0.0010), as a cap is shown: a cap of
    $0.001 must not read as $0.00."""
    if 0 < value < 0.01:
        return f"${value:.4f}"
    if tenths:
        text = f"{value:,.3f}"
        return f"${text[:-1] if text.endswith('0') else text}"
    return f"${value:,.2f}"
