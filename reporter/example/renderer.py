"""The example generator's text renderer: word banks and templates (words.py) drawn in bulk, per row group.

No row is formatted in Python: numpy draws template and word indices, and
Arrow kernels (`take`, `binary_join_element_wise`) assemble the strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .words import BANKS, FIELDS, SENTENCES, TITLES


_SLOT = re.compile(r"\{(@?\w+)\}")
# Slots drawn once per row, so a work's title and abstract share a topic and a cited study;
# a trailing digit ({outcome2}, {Surname2}) draws a fresh value from the same bank.
FIXED_SLOTS = ("construct", "outcome", "population", "method", "field_topic", "surname", "surname2", "year", "d")


@dataclass(frozen=True)
class _Bank:
    values: pa.Array
    offsets: np.ndarray  # per field
    sizes: np.ndarray    # per field


def _compile_bank(bank: list[str] | dict[str, list[str]], capital: bool) -> _Bank:
    per_field = [bank] * len(FIELDS) if isinstance(bank, list) else [bank[f] for f in FIELDS]
    if capital:
        per_field = [[v[:1].upper() + v[1:] for v in vs] for vs in per_field]
    if isinstance(bank, list):
        return _Bank(pa.array(per_field[0], pa.string()), np.zeros(len(FIELDS), np.int64),
                     np.full(len(FIELDS), len(per_field[0]), np.int64))
    sizes = np.array([len(vs) for vs in per_field], np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return _Bank(pa.array([v for vs in per_field for v in vs], pa.string()), offsets, sizes)


def _parse(template: str) -> list[tuple[str, str]]:
    parts, pos = [], 0
    for m in _SLOT.finditer(template):
        if m.start() > pos:
            parts.append(("lit", template[pos:m.start()]))
        name = m.group(1)
        parts.append(("set", name[1:]) if name.startswith("@") else ("bank", name))
        pos = m.end()
    if pos < len(template):
        parts.append(("lit", template[pos:]))
    return parts


class Renderer:
    """Renders template sets for many rows at once with Arrow kernels."""

    def __init__(self) -> None:
        self.banks: dict[str, _Bank] = {}
        for name, bank in BANKS.items():
            self.banks[name] = _compile_bank(bank, capital=False)
            self.banks[name[:1].upper() + name[1:]] = _compile_bank(bank, capital=True)
        self.sets: dict[str, tuple[list[list[tuple[str, str]]], np.ndarray]] = {}
        for name, items in {**TITLES, **SENTENCES}.items():
            templates = [it if isinstance(it, tuple) else (it, 1) for it in items]
            weights = np.array([w for _, w in templates], float)
            self.sets[name] = ([_parse(t) for t, _ in templates], weights / weights.sum())

    def fixed(self, rng: np.random.Generator, fields: np.ndarray) -> dict[str, np.ndarray]:
        """Per-row choices that stay the same in a work's title and abstract (its topic, its cited study)."""
        return {name: (rng.random(len(fields)) * self.banks[name.rstrip("0123456789")].sizes[fields]
                       ).astype(np.int64) for name in FIXED_SLOTS}

    def draw(self, rng: np.random.Generator, name: str, fields: np.ndarray,
             fixed: dict[str, np.ndarray] | None = None, rows: np.ndarray | None = None) -> pa.Array:
        """One value of bank `name` per row, from each row's field (the row's fixed choice for a topic slot)."""
        bank = self.banks[name.rstrip("0123456789")]
        key = name[:1].lower() + name[1:]
        if fixed is not None and key in fixed:
            pick = fixed[key][rows]
        else:
            pick = (rng.random(len(fields)) * bank.sizes[fields]).astype(np.int64)
        return bank.values.take(pa.array(bank.offsets[fields] + pick))

    def render(self, rng: np.random.Generator, name: str, fields: np.ndarray,
               fixed: dict[str, np.ndarray] | None = None, rows: np.ndarray | None = None) -> pa.Array:
        """One rendering of template set `name` per row (rows: the rows' positions in `fixed`)."""
        templates, weights = self.sets[name]
        n = len(fields)
        if rows is None:
            rows = np.arange(n)
        choice = rng.choice(len(templates), size=n, p=weights) if len(templates) > 1 else np.zeros(n, np.int64)
        pieces, order = [], []
        for t, parts in enumerate(templates):
            sel = np.flatnonzero(choice == t)
            if sel.size:
                pieces.append(self._template(rng, parts, fields[sel], fixed, rows[sel]))
                order.append(sel)
        if not pieces:
            return pa.array([], pa.string())
        out = pa.concat_arrays(pieces)
        inverse = np.empty(n, np.int64)
        inverse[np.concatenate(order)] = np.arange(n)
        return out.take(pa.array(inverse))

    def _template(self, rng: np.random.Generator, parts: list[tuple[str, str]], fields: np.ndarray,
                  fixed: dict[str, np.ndarray] | None, rows: np.ndarray) -> pa.Array:
        args = []
        for kind, value in parts:
            if kind == "lit":
                args.append(pa.scalar(value, pa.string()))
            elif kind == "bank":
                args.append(self.draw(rng, value, fields, fixed, rows))
            else:
                args.append(self.render(rng, value, fields, fixed, rows))
        if all(isinstance(a, pa.Scalar) for a in args):
            return pa.array(["".join(a.as_py() for a in args)] * len(fields), pa.string())
        return pc.binary_join_element_wise(*args, "")


_RENDERER: Renderer | None = None


def renderer() -> Renderer:
    global _RENDERER  # compiled once per process: banks and templates are constants
    if _RENDERER is None:
        _RENDERER = Renderer()
    return _RENDERER
