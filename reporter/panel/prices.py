"""The default price table (prices.json, shipped with the package) and the cost of one reply.

Nothing is fetched at run time: a price is what the table says, with the date it
was last checked against the provider's own page (or `unchecked`), so a page
can say how much to trust a cost. A voter's own `price_in_per_mtok` /
`price_out_per_mtok` always win over the table.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources

PRICES_FILE = "prices.json"
UNCHECKED = "unchecked"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Price:
    """One model's list price."""

    in_per_mtok: float
    """US dollars per million input (prompt) tokens."""
    out_per_mtok: float
    """US dollars per million output (completion) tokens."""
    checked: str
    """ISO date the price was last compared with the provider's pricing page, or `unchecked`."""
    source: str = ""
    """Where the numbers came from (shown beside an unchecked price)."""


def parse_prices(data: object) -> dict[str, Price]:
    """The `prices` mapping of a prices.json document; ValueError on a malformed entry (a packaging bug)."""
    if not isinstance(data, dict) or not isinstance(data.get("prices"), dict):
        raise ValueError(f"{PRICES_FILE}: expected an object with a 'prices' object")
    table: dict[str, Price] = {}
    for model, entry in data["prices"].items():
        if not isinstance(entry, dict):
            raise ValueError(f"{PRICES_FILE}: {model!r} must be an object")
        rates = (entry.get("in_per_mtok"), entry.get("out_per_mtok"))
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 for v in rates):
            raise ValueError(f"{PRICES_FILE}: {model!r} needs non-negative in_per_mtok and out_per_mtok")
        checked = entry.get("checked")
        if not isinstance(checked, str) or not (checked == UNCHECKED or _DATE.fullmatch(checked)):
            raise ValueError(f"{PRICES_FILE}: {model!r}: checked must be an ISO date or {UNCHECKED!r}")
        price = Price(float(rates[0]), float(rates[1]), checked, str(entry.get("source", "")))
        table[model] = price
    return table


@functools.cache
def price_table() -> dict[str, Price]:
    """The shipped table, read once from the package (model name -> Price)."""
    text = resources.files(__package__).joinpath(PRICES_FILE).read_text(encoding="utf-8")
    return parse_prices(json.loads(text))


def default_price(model: str) -> Price | None:
    """The shipped price of `model` (its exact name as sent to the API), or None when it is not listed."""
    return price_table().get(model)


def cost_usd(price_in_per_mtok: float, price_out_per_mtok: float,
             input_tokens: int | None, output_tokens: int | None) -> float:
    """Dollars for one reply's tokens (a missing count costs nothing: it was never measured)."""
    return ((input_tokens or 0) * price_in_per_mtok + (output_tokens or 0) * price_out_per_mtok) / 1_000_000
