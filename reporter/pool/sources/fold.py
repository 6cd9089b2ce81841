"""One paper seen several times (versions, or listed twice) folded into one record."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from ..record import Record

# --- one paper seen several times: fold into one record -------------------------------------------

def version_key(version: str | None) -> tuple[int, int, str]:
    """A version's number as a sort key, compared as a number of any length (no int(): Python refuses to
    convert more than 4,300 digits); a version without digits sorts first."""
    digits = "".join(str(unicodedata.decimal(c)) for c in re.findall(r"\d", version or ""))
    if not digits:
        return (0, 0, "")
    number = digits.lstrip("0") or "0"
    return (1, len(number), number)


def fold_same_id(records: Iterable[Record]) -> list[tuple[Record, tuple[Record, ...]]]:
    """Records sharing an id folded into one, in the order ids first appear: (folded, its members).

    The newest member (highest version number, then latest `published`, then
    last read) gives the text, authors, venue, type, version and categories; `published`
    is the earliest member's (when the paper first appeared); `doi` is the
    newest member's that has one; related ids are the union.
    """
    groups: dict[str, list[tuple[int, Record]]] = {}
    for index, record in enumerate(records):
        groups.setdefault(record.id, []).append((index, record))
    out = []
    for members in groups.values():
        if len(members) == 1:
            out.append((members[0][1], (members[0][1],)))
            continue
        ordered = [r for _, r in sorted(members, key=lambda m: (version_key(m[1].version),
                                                                 m[1].published or "", m[0]))]
        newest = ordered[-1]
        dates = [r.published for r in ordered if r.published]
        doi = next((r.doi for r in reversed(ordered) if r.doi), None)
        related = dict.fromkeys(i for r in ordered for i in r.related_ids if i != newest.id)
        folded = Record(id=newest.id, title=newest.title, abstract=newest.abstract, source=newest.source, doi=doi,
                        published=min(dates) if dates else None, type=newest.type, authors=newest.authors,
                        venue=newest.venue, related_ids=tuple(related), version=newest.version,
                        categories=newest.categories, where=newest.where)
        out.append((folded, tuple(r for _, r in members)))
    return out


def folded_records(records: Iterable[Record]) -> list[Record]:
    return [folded for folded, _ in fold_same_id(records)]
