"""Cross-source merge before scoring: one paper read from several sources becomes one record (digest.md).

In this order:

1. **same id**: records with one id (repeated listings, versions) fold into
   one, the newest version's text kept (reporter.pool.sources.fold.fold_same_id).
2. **doi** / **related_ids**: records that share a key merge, transitively
   (a union-find). A record's keys are its id, its `doi` (as `doi:…`) and its
   `related_ids`. Two records that both have the key as their own DOI merge
   for reason "doi"; any other shared key (a preprint's journal DOI, a PMID
   an OpenAlex work lists) is reason "related_ids".
3. **title+author**: records whose normalized titles have a Levenshtein
   normalized similarity >= 0.9 and whose first authors share a surname
   (first_author_surname). Records are blocked by that surname and compared
   within a block with rapidfuzz's cdist, so a week of 10,000 papers costs
   the sum of the squared block sizes, not 10,000², in time; in memory a
   block is compared a few rows at a time (COMPARE_CELLS scores at once).

The member with the earliest `published` survives (ties, and records without
a date, which sort last: the smallest id), keeps its own text and gains every
other member's id, DOI and related ids in `related_ids`. Each merged record
gives one `Merge`: which survivor it went into, why, and through which member.
The output is the same for the same input: records are compared in id order.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from ..pool.record import Record
from ..pool.sources.fold import fold_same_id

REASONS = ("same id", "doi", "related_ids", "title+author")
"""Why records were merged, in the order the steps run."""
TITLE_SIMILARITY = 0.9
"""The least normalized title similarity (Levenshtein) that merges two records with a shared first-author surname."""
COMPARE_CELLS = 1 << 20
"""Title scores held at once in a surname block (float32: 4 MiB; their candidate pairs at most 1 Mi), so memory
does not grow with the square of the block."""
SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
"""Name suffixes that are never a surname ("Martin Luther King Jr." is King)."""
_INITIALS = re.compile(r"(?:[A-Z]\.?){1,3}|(?:[A-Z]\.-?)+")


class _Drop(dict):
    """str.translate table, filled as characters are met: punctuation (P*) and symbols (S*) map to None."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.category(chr(code)).startswith(("P", "S")) else code
        self[code] = kept
        return kept


_DROP_PUNCTUATION = _Drop()


@dataclass(frozen=True)
class Merge:
    """One record folded into another, and why."""

    survivor: str
    """The id of the record that survives (and is scored)."""
    merged_ids: tuple[str, ...]
    """The id(s) folded into it by this step (for "same id", the survivor's own id, read again)."""
    reason: str
    """One of REASONS: "same id", "doi", "related_ids" or "title+author"."""
    similarity: float | None = None
    """For "title+author": the normalized title similarity (4 decimals); None otherwise."""
    via: str = ""
    """The member the merged record matched: the survivor, or a member merged into it before (transitivity)."""
    where: tuple[str, ...] = ()
    """Where the merged record(s) were read (`FILE: line N`, `FILE: record N`)."""


def normalize_title(title: str) -> str:
    """A title for comparison (the Axis 3 metric): lower-cased, punctuation and symbols dropped, spaces collapsed."""
    text = unicodedata.normalize("NFKC", title).casefold().translate(_DROP_PUNCTUATION)
    return " ".join(text.split())


def surname(name: str) -> str | None:
    """The comparison key of an author name's surname, or None for an empty name.

    "Lovelace, Ada" (a comma: the surname comes first) and "Ada Lovelace" (no
    comma: the surname is last) both give "lovelace". Without a comma, a last
    word of one to three capitals ("Lovelace A", "Smith JA.") is initials, and
    the surname is the first word; suffixes (Jr, Sr, II-IV) are skipped. Of a
    several-word surname the last word counts ("van Beethoven, Ludwig" and
    "Ludwig van Beethoven" are both "beethoven"). The key is lower-cased,
    accents dropped, letters and digits only ("García-López" is "garcialopez").
    """
    text = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))
    head, comma, _ = text.partition(",")
    words = head.split()
    while len(words) > 1 and re.sub(r"\W", "", words[-1]).lower() in SUFFIXES:
        words.pop()
    if not words:
        return None
    if comma:
        word = words[-1]
    elif len(words) > 1 and _INITIALS.fullmatch(words[-1]):
        word = words[0]
    else:
        word = words[-1]
    key = "".join(ch for ch in word.casefold() if ch.isalnum())
    return key or None


def first_author_surname(record: Record) -> str | None:
    """surname() of the record's first author, or None when it lists none."""
    return surname(record.authors[0]) if record.authors else None


def merge_records(records: Iterable[Record]) -> tuple[list[Record], list[Merge]]:
    """Merge records of one paper (module docstring): (the surviving records in input order, what was merged)."""
    merges: list[Merge] = []
    folded: list[Record] = []
    for record, members in fold_same_id(records):
        folded.append(record)
        if len(members) > 1:
            read_again = [m.where for m in members]
            read_again.remove(record.where)  # the copy whose text was kept
            merges.append(Merge(record.id, (record.id,), "same id", None, record.id, tuple(read_again)))
    order = sorted(range(len(folded)), key=lambda i: folded[i].id)
    ranked = [folded[i] for i in order]  # compared in id order, so the result never follows the input order
    forest = _Forest(len(ranked))
    _merge_on_keys(ranked, forest)
    _merge_on_titles(ranked, forest)
    survivors: dict[int, Record] = {}
    for root, members in forest.groups().items():
        survivor, group_merges = _survive(ranked, members, forest)
        survivors[root] = survivor
        merges.extend(group_merges)
    position = {record.id: n for n, record in enumerate(folded)}
    out = sorted(survivors.values(), key=lambda r: position[r.id])
    merges.sort(key=lambda m: (m.survivor, REASONS.index(m.reason), m.merged_ids))
    return out, merges


class _Forest:
    """Union-find over record positions that remembers the edge of every union (reason, similarity)."""

    def __init__(self, n: int):
        self.parent = list(range(n))
        self.edges: dict[int, list[tuple[int, str, float | None]]] = {}

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int, reason: str, similarity: float | None = None) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:  # already one group (or a == b): no edge, so each group's edges form a tree
            return
        self.parent[max(ra, rb)] = min(ra, rb)
        self.edges.setdefault(a, []).append((b, reason, similarity))
        self.edges.setdefault(b, []).append((a, reason, similarity))

    def groups(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            out.setdefault(self.find(i), []).append(i)
        return out


def _own_dois(record: Record) -> set[str]:
    own = {f"doi:{record.doi}"} if record.doi else set()
    return own | ({record.id} if record.id.startswith("doi:") else set())


def _merge_on_keys(ranked: Sequence[Record], forest: _Forest) -> None:
    """Step 2: a shared own DOI first ("doi"), then any other shared id ("related_ids"), transitively."""
    owns = [_own_dois(r) for r in ranked]
    for reason, keys_of in (("doi", lambda i: owns[i]),
                            ("related_ids", lambda i: {ranked[i].id, *ranked[i].related_ids, *owns[i]})):
        owner: dict[str, int] = {}
        for i in range(len(ranked)):
            for key in sorted(keys_of(i)):
                forest.union(owner.setdefault(key, i), i, reason)


def _merge_on_titles(ranked: Sequence[Record], forest: _Forest) -> None:
    """Step 3: normalized titles at least TITLE_SIMILARITY alike, within blocks of one first-author surname."""
    blocks: dict[str, list[int]] = {}
    titles = [normalize_title(r.title) for r in ranked]
    for i, record in enumerate(ranked):
        key = first_author_surname(record)
        if key and titles[i]:
            blocks.setdefault(key, []).append(i)
    for key in sorted(blocks):
        block = blocks[key]
        if len(block) < 2:
            continue
        texts = [titles[i] for i in block]
        # cdist finds the candidates fast; each is then checked exactly (10 * distance <= longest length),
        # so a pair at exactly 0.9 is never lost to floating point. A few rows at a time, each against
        # the titles from its own on: memory stays at COMPARE_CELLS scores whatever the block's size, and
        # the pairs come in the order of the whole upper triangle (row, then column), so the unions are
        # the same as comparing the block at once.
        # A pair already in one group is skipped (its union would add nothing): groups only grow, so a pair
        # whose roots agree when a chunk starts agrees for good (10,000 equal titles: 50 million pairs).
        rows = max(1, COMPARE_CELLS // len(texts))
        for lo in range(0, len(texts), rows):
            scores = cdist(texts[lo:lo + rows], texts[lo:], scorer=Levenshtein.normalized_similarity,
                           score_cutoff=TITLE_SIMILARITY - 0.01, dtype=np.float32)
            dx, dy = np.nonzero(scores)
            x_all, y_all = dx + lo, dy + lo
            roots = np.array([forest.find(i) for i in block])
            keep = (y_all > x_all) & (roots[x_all] != roots[y_all])
            for x, y in zip(x_all[keep].tolist(), y_all[keep].tolist()):
                if forest.find(block[x]) == forest.find(block[y]):
                    continue
                a, b = texts[x], texts[y]
                longest = max(len(a), len(b))
                distance = Levenshtein.distance(a, b)
                if 10 * distance <= longest:
                    forest.union(block[x], block[y], "title+author", round(1 - distance / longest, 4))


def _survive(ranked: Sequence[Record], members: list[int], forest: _Forest) -> tuple[Record, list[Merge]]:
    """The group's survivor (earliest published, then smallest id) with every other id, and one Merge per member."""
    if len(members) == 1:
        return ranked[members[0]], []
    first = min(members, key=lambda i: (ranked[i].published is None, ranked[i].published or "", ranked[i].id))
    survivor = ranked[first]
    merges, seen, queue = [], {first}, [first]
    while queue:  # breadth first from the survivor along the edges that joined the group
        at = queue.pop(0)
        for other, reason, similarity in sorted(forest.edges.get(at, []), key=lambda e: ranked[e[0]].id):
            if other not in seen:
                seen.add(other)
                queue.append(other)
                merges.append(Merge(survivor.id, (ranked[other].id,), reason, similarity, ranked[at].id,
                                    (ranked[other].where,)))
    own = _own_dois(survivor)
    related = dict.fromkeys(survivor.related_ids)
    for i in sorted(members, key=lambda i: ranked[i].id):
        if i != first:
            other = ranked[i]
            related.update(dict.fromkeys((other.id, *sorted(_own_dois(other)), *other.related_ids)))
    kept = tuple(k for k in related if k != survivor.id and k not in own)
    return replace(survivor, related_ids=kept), merges
