"""Turn OpenAlex works into graph events: papers, citation edges and references_checked rows.

A work whose `referenced_works` list is present had its references read: it
becomes a read paper, one edge per referenced work and a references_checked
row with status ok and n_refs = the count (an empty list is a checked zero).
A work without the field gets a paper row only (not read, no check row).
Referenced works that are not in the batch become edge endpoints named
`openalex:W…` (stubs); a referenced work that is in the batch is named by
its own lom_id.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import InputError
from ..files import write_text
from ..hashing import canonical_json
from .keys import normalize_key


def openalex_events(works: Iterable[Mapping[str, Any]], checked_ts: str,
                    source: str = "openalex") -> list[dict[str, Any]]:
    """Graph events for OpenAlex works (later duplicates of a work win), in a fixed order."""
    by_id: dict[str, Mapping[str, Any]] = {}
    for index, work in enumerate(works, start=1):
        if not isinstance(work, Mapping) or not isinstance(work.get("id"), str) or not work["id"].strip():
            raise InputError(f"work #{index}: an OpenAlex work needs an 'id' string")
        by_id.pop(normalize_key("openalex", work["id"]), None)
        by_id[normalize_key("openalex", work["id"])] = work
    lom_of: dict[str, str] = {}
    papers, edges, checks = [], set(), []
    for openalex, work in by_id.items():
        ids = work.get("ids") if isinstance(work.get("ids"), Mapping) else {}
        raw_doi = work.get("doi") or ids.get("doi")
        doi = normalize_key("doi", raw_doi) if isinstance(raw_doi, str) else None
        lom_of[openalex] = f"doi:{doi}" if doi else f"openalex:{openalex}"
    for openalex, work in by_id.items():
        lom_id = lom_of[openalex]
        refs = work.get("referenced_works")
        read = isinstance(refs, list)
        title = work.get("title") or work.get("display_name")
        papers.append({"lom_id": lom_id, "doi": lom_id[4:] if lom_id.startswith("doi:") else None,
                       "arxiv": None, "openalex": openalex, "s2_paper_id": None,
                       "title": title if isinstance(title, str) else None, "read": read})
        if not read:
            continue
        targets = {normalize_key("openalex", r) for r in refs if isinstance(r, str) and r.strip()}
        for target in targets:
            edges.add((lom_id, lom_of.get(target, f"openalex:{target}")))
        checks.append({"lom_id": lom_id, "source": source, "checked_ts": checked_ts,
                       "n_refs": len(targets), "status": "ok"})
    events = [{"op": "upsert", "table": "paper", "row": p} for p in sorted(papers, key=lambda r: r["lom_id"])]
    events += [{"op": "upsert", "table": "citation_edge", "row": {"src": s, "dst": d}} for s, d in sorted(edges)]
    events += [{"op": "upsert", "table": "references_checked", "row": c}
               for c in sorted(checks, key=lambda r: r["lom_id"])]
    return events


def read_openalex_works(path: Path) -> list[dict[str, Any]]:
    """OpenAlex works from a JSON file (a work, a list, or an API page with `results`) or JSONL(.gz)."""
    path = Path(path)
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise InputError(f"{path}: works file not found") from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InputError(f"{path}: cannot read the works file: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and "\n{" not in text.strip()):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{path}: not valid JSON ({exc})") from None
        if isinstance(data, dict):
            data = data["results"] if isinstance(data.get("results"), list) else [data]
        return list(data)
    works = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                works.append(json.loads(line))
            except ValueError as exc:
                raise InputError(f"{path}: line {number}: not valid JSON ({exc})") from None
    return works


def write_events(path: Path, events: Iterable[Mapping[str, Any]], append: bool = False) -> int:
    """Write (or append) events as canonical JSONL; a new file is written whole. Returns the count."""
    path = Path(path)
    lines = [canonical_json(e) + "\n" for e in events]
    path.parent.mkdir(parents=True, exist_ok=True)
    if append:
        if path.exists() and path.stat().st_size:
            with open(path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    lines.insert(0, "\n")  # never glue an event onto an unterminated last line
        with open(path, "a", encoding="utf-8") as f:
            f.writelines(lines)
        return len(lines)
    write_text(path, "".join(lines))
    return len(lines)
