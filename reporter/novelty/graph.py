"""The ingested graph: an append-only JSONL of upsert events, folded into indexes.

Later events win for the same key. The file is read whole or not at all: a
malformed line stops the load with its line number. The folded graph is kept
in memory, keyed by the file's content digest, so it is rebuilt exactly when
the JSONL changes; nothing is written beside it.
"""

from __future__ import annotations

import gc
import json
from collections import OrderedDict
from dataclasses import dataclass
from json.scanner import make_scanner
from pathlib import Path
from types import MappingProxyType
from typing import Iterable, Mapping

from ..errors import InputError
from ..hashing import sha256_bytes
from ..ids import SCHEMES, normalize_key, normalize_lom_id
from .rows import Claim, IngestError, Paper, ReferencesChecked

TABLES = ("paper", "citation_edge", "claim", "references_checked", "ingest_error")
CHECK_STATUSES = ("ok", "failed")
PAPER_KEY_FIELDS = (("doi", "doi"), ("arxiv", "arxiv"), ("openalex", "openalex"), ("s2", "s2_paper_id"))
CACHE_SIZE = 4


@dataclass(frozen=True, repr=False)
class Graph:
    """The folded graph with the indexes the verdict reads; do not mutate its mappings."""

    source: str
    """The JSONL path it was read from."""
    sha256: str
    """Hex sha256 of the JSONL's bytes: the graph's identity."""
    n_events: int
    """Event lines read."""
    papers: Mapping[str, Paper]
    """Paper rows by lom_id."""
    out_edges: Mapping[str, frozenset[str]]
    """Citation edges, src -> the dst it cites (canonical ids)."""
    n_edges: int
    """Distinct canonical citation edges."""
    claims: Mapping[str, Claim]
    """Claim rows by claim_id."""
    references_checked: Mapping[str, ReferencesChecked]
    """The latest references_checked row per node."""
    ingest_errors: tuple[IngestError, ...]
    """Stored ingest errors, sorted."""
    aliases: Mapping[str, str]
    """`scheme:value` of every paper's lom_id and keys -> that paper's lom_id."""
    key_schemes: frozenset[str]
    """The schemes some paper can be matched on (a lookup for another scheme cannot matter)."""
    claims_by_statement: Mapping[str, tuple[Claim, ...]]
    """Claims by normalised statement (collapsed, stripped, lower-cased)."""
    claim_bearing: frozenset[str]
    """Nodes some claim is about."""
    coverage_gap: tuple[str, ...]
    """Read or claim-bearing nodes that are not covered, sorted (see `coverage_gap_of`)."""

    def __repr__(self) -> str:
        return f"Graph({self.source!r}, sha256={self.sha256[:12]!r}, {self.counts()})"

    def canonical(self, lom_id: str) -> str:
        """The paper lom_id an id names (through the paper's keys), else the id itself."""
        return self.aliases.get(lom_id, lom_id)

    def is_read(self, lom_id: str) -> bool:
        """True when the node has a paper row saying `read: true`."""
        paper = self.papers.get(lom_id)
        return paper is not None and paper.read

    def counts(self) -> dict[str, int]:
        """Rows per table after folding (for summaries and the benchmark)."""
        return {"papers": len(self.papers), "read": sum(p.read for p in self.papers.values()),
                "citation_edges": self.n_edges, "claims": len(self.claims),
                "references_checked": len(self.references_checked),
                "ingest_errors": len(self.ingest_errors), "coverage_gap": len(self.coverage_gap)}


def normalize_statement(statement: str) -> str:
    """A statement with whitespace collapsed, stripped and lower-cased (rule 1 for claims)."""
    return " ".join(statement.split()).lower()


class _Malformed(Exception):
    pass


def _str(row: dict, name: str, required: bool = True) -> str | None:
    value = row.get(name)
    if not required and (value is None or (isinstance(value, str) and not value.strip())):
        return None  # an optional field left blank is absent
    if not isinstance(value, str) or not value.strip():
        want = "a non-empty string" if required else "a non-empty string or null"
        raise _Malformed(f"field {name!r} must be {want}, got {value!r}")
    return value


def _int(row: dict, name: str, required: bool) -> int | None:
    value = row.get(name)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        want = "a non-negative integer" if required else "a non-negative integer or null"
        raise _Malformed(f"field {name!r} must be {want}, got {value!r}")
    return value


class _Fold:
    """Later-wins state while the events are read; `seq` orders rows that canonicalise together."""

    def __init__(self) -> None:
        self.papers: dict[str, Paper] = {}
        self.edges: dict[str, set[str]] = {}  # src -> dst as written; normalised once per id in _build
        self.claims: dict[str, tuple[str, str]] = {}
        self.checked: dict[str, tuple[int, str, str, int | None, str]] = {}
        self.errors: dict[tuple[str, str, str | None], int | None] = {}
        self._norm: dict[str, str] = {}

    def lom(self, value: str) -> str:
        out = self._norm.get(value)
        if out is None:
            out = self._norm[value] = normalize_lom_id(value)
        return out

    def add(self, seq: int, table: str, row: dict) -> None:
        if table == "citation_edge":
            src, dst = row.get("src"), row.get("dst")
            if not isinstance(src, str) or not isinstance(dst, str) or not src.strip() or not dst.strip():
                raise _Malformed(f"fields 'src' and 'dst' must be non-empty strings, got {src!r}, {dst!r}")
            cited = self.edges.get(src)
            if cited is None:
                cited = self.edges[src] = set()
            cited.add(dst)
        elif table == "paper":
            lom_id = self.lom(_str(row, "lom_id"))
            keys = {}
            for scheme, name in PAPER_KEY_FIELDS:
                value = normalize_key(scheme, _str(row, name, required=False))
                if value:
                    keys[scheme] = value
            title = row.get("title")
            if title is not None and not isinstance(title, str):
                raise _Malformed(f"field 'title' must be a string or null, got {title!r}")
            read = row.get("read", False)
            if not isinstance(read, bool):
                raise _Malformed(f"field 'read' must be true or false, got {read!r}")
            self.papers[lom_id] = Paper(lom_id=lom_id, keys=MappingProxyType(keys), title=title, read=read)
        elif table == "claim":
            claim_id = _str(row, "claim_id")
            about = self.lom(_str(row, "about_lom_id"))
            self.claims[claim_id] = (about, _str(row, "statement"))
        elif table == "references_checked":
            lom_id = self.lom(_str(row, "lom_id"))
            status = row.get("status")
            if status not in CHECK_STATUSES:
                raise _Malformed(f"field 'status' must be one of {', '.join(CHECK_STATUSES)}, got {status!r}")
            n_refs = _int(row, "n_refs", required=status == "ok")
            self.checked[lom_id] = (seq, _str(row, "source"), _str(row, "checked_ts"), n_refs, status)
        elif table == "ingest_error":
            lom_id = self.lom(_str(row, "lom_id"))
            http_status = _int(row, "http_status", required=False)
            key = (lom_id, _str(row, "scheme"), _str(row, "lookup", required=False))
            self.errors.pop(key, None)
            self.errors[key] = http_status
        else:
            raise _Malformed(f"unknown table {table!r}; allowed: {', '.join(TABLES)}")


def parse_events(lines: Iterable[str], source: str = "<events>", sha256: str = "") -> Graph:
    """Fold JSONL event lines into a Graph; a malformed line raises InputError naming it.

    Most lines of a real graph are citation edges: each is decoded with the C scanner alone (json's `decode`
    adds two regex calls a line) and folded inline; any other line takes the general path, and one the scanner
    does not read whole is decoded again there, which names what is wrong. The cyclic garbage collector
    pauses meanwhile: the fold keeps ~50k containers, none in a cycle, which it would walk over and over
    (0.1-0.2 s of a 0.9 s load of the SYNERGY graph; issue 35, item 5).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parse(lines, source, sha256)
    finally:
        if collecting:
            gc.enable()


def _parse(lines: Iterable[str], source: str, sha256: str) -> Graph:
    fold = _Fold()
    n_events = 0
    decode = json.JSONDecoder().decode
    scan = make_scanner(json.JSONDecoder())
    edges = fold.edges
    for number, line in enumerate(lines, start=1):
        try:
            event, end = scan(line, 0)
        except (StopIteration, ValueError, RecursionError):
            end = -1
        if end == len(line) and type(event) is dict and event.get("table") == "citation_edge" \
                and event.get("op") == "upsert" and type(row := event.get("row")) is dict:
            src, dst = row.get("src"), row.get("dst")
            if type(src) is str and type(dst) is str and src.strip() and dst.strip():
                cited = edges.get(src)
                if cited is None:
                    cited = edges[src] = set()
                cited.add(dst)
                n_events += 1
                continue
        if end != len(line):
            if not line or line.isspace():
                continue
            try:
                event = decode(line)
            except ValueError as exc:
                raise InputError(f"{source}: line {number}: not valid JSON ({exc})") from None
            except RecursionError:
                raise InputError(f"{source}: line {number}: JSON nested too deeply to read (Python's parser "
                                 "stops at about 1,000 levels); an event is an object holding a flat row") from None
        try:
            if not isinstance(event, dict):
                raise _Malformed("an event must be a JSON object")
            if event.get("op") != "upsert":
                raise _Malformed(f"field 'op' must be 'upsert', got {event.get('op')!r}")
            row = event.get("row")
            if not isinstance(row, dict):
                raise _Malformed("field 'row' must be an object")
            fold.add(number, event.get("table"), row)
        except _Malformed as exc:
            raise InputError(f"{source}: line {number}: {exc}") from None
        n_events += 1
    return _build(fold, source, sha256, n_events)


def _build(fold: _Fold, source: str, sha256: str, n_events: int) -> Graph:
    papers = dict(sorted(fold.papers.items()))
    aliases: dict[str, str] = {lom_id: lom_id for lom_id in papers}
    for lom_id, paper in papers.items():  # sorted: on a shared key the smallest lom_id wins
        for scheme, value in paper.keys.items():
            aliases.setdefault(f"{scheme}:{value}", lom_id)
    canon = aliases.get

    # Each id as written is normalised and canonicalised once (a dict of 166k ids for 249k SYNERGY edges);
    # each src's cited set is then mapped in C (`map`), not edge by edge in Python.
    ids = list(set(fold.edges).union(*fold.edges.values()))
    normal = list(map(normalize_lom_id, ids))
    as_canonical = dict(zip(ids, map(canon, normal, normal)))
    out: dict[str, set[str]] = {}
    for src, cited in fold.edges.items():
        s = as_canonical[src]
        dsts = set(map(as_canonical.__getitem__, cited))
        dsts.discard(s)
        if dsts:
            if s in out:
                out[s] |= dsts
            else:
                out[s] = dsts
    out_edges = {src: frozenset(dsts) for src, dsts in sorted(out.items())}

    claims = {cid: Claim(cid, canon(about, about), statement)
              for cid, (about, statement) in sorted(fold.claims.items())}
    by_statement: dict[str, list[Claim]] = {}
    for claim in claims.values():
        by_statement.setdefault(normalize_statement(claim.statement), []).append(claim)

    checked: dict[str, tuple] = {}
    for lom_id, row in fold.checked.items():
        c = canon(lom_id, lom_id)
        if c not in checked or checked[c][0] < row[0]:
            checked[c] = row
    references_checked = {lom: ReferencesChecked(lom, r[1], r[2], r[3], r[4]) for lom, r in sorted(checked.items())}

    errors = sorted({IngestError(canon(lom, lom), scheme, status, lookup)
                     for (lom, scheme, lookup), status in fold.errors.items()},
                    key=lambda e: (e.lom_id, e.scheme, e.lookup or "", -1 if e.http_status is None else e.http_status))
    key_schemes = frozenset(a.partition(":")[0] for a in aliases) & set(SCHEMES)
    claim_bearing = frozenset(c.about_lom_id for c in claims.values())
    gap = coverage_gap_of(papers, claim_bearing, references_checked, out_edges)
    return Graph(
        source=source, sha256=sha256, n_events=n_events,
        papers=MappingProxyType(papers), out_edges=MappingProxyType(out_edges),
        n_edges=sum(len(d) for d in out_edges.values()), claims=MappingProxyType(claims),
        references_checked=MappingProxyType(references_checked), ingest_errors=tuple(errors),
        aliases=MappingProxyType(aliases), key_schemes=key_schemes,
        claims_by_statement=MappingProxyType({k: tuple(sorted(v, key=lambda c: (c.about_lom_id, c.claim_id)))
                                              for k, v in sorted(by_statement.items())}),
        claim_bearing=claim_bearing, coverage_gap=gap)


def coverage_gap_of(papers: Mapping[str, Paper], claim_bearing: frozenset[str],
                    references_checked: Mapping[str, ReferencesChecked],
                    out_edges: Mapping[str, frozenset[str]]) -> tuple[str, ...]:
    """Read or claim-bearing nodes that are not covered, sorted.

    Covered means recorded, never inferred from degree: the node has a
    references_checked row with status ok (n_refs = 0 included), or a node
    with such a row cites it.
    """
    checked_ok = {lom for lom, row in references_checked.items() if row.status == "ok"}
    covered = set(checked_ok)
    for src in checked_ok:
        covered.update(out_edges.get(src, ()))
    needs = {lom for lom, p in papers.items() if p.read} | claim_bearing
    return tuple(sorted(needs - covered))


_CACHE: OrderedDict[tuple[str, str], Graph] = OrderedDict()


def read_graph(path: Path) -> Graph:
    """Read and fold one JSONL events file (no cache)."""
    data = _read_bytes(path)
    return parse_events(_lines(data, path), str(path), sha256_bytes(data))


def load_graph(path: Path) -> Graph:
    """The graph of a JSONL events file, from the in-memory cache when its bytes are unchanged."""
    data = _read_bytes(path)
    digest = sha256_bytes(data)
    key = (str(Path(path).resolve()), digest)
    graph = _CACHE.get(key)
    if graph is None:
        graph = parse_events(_lines(data, path), str(path), digest)
        _CACHE[key] = graph
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return graph


def _lines(data: bytes, path: Path) -> list[str]:
    try:
        return data.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}: line {line}: not UTF-8 text") from None


def _read_bytes(path: Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: graph events file not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the graph events file: {exc.strerror or exc}") from None


__all__ = ["Claim", "Graph", "IngestError", "Paper", "ReferencesChecked", "TABLES",
           "coverage_gap_of", "load_graph", "normalize_statement", "parse_events", "read_graph"]
