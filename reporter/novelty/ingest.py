"""Turn OpenAlex works into graph events: papers, citation edges and references_checked rows.

A work whose `referenced_works` list is present had its references read: it
becomes a read paper, one edge per referenced work and a references_checked
row with status ok and n_refs = the count (an empty list is a checked zero).
A work without the field (or with null) gets a paper row only (not read, no
check row). Referenced works that are not in the batch become edge endpoints
named `openalex:W…` (stubs); a referenced work that is in the batch is named
by its own lom_id.

A malformed work is an error naming the file and the work (its position and
id), never a coverage fact: `referenced_works` that is not a list, an entry
that is not an OpenAlex work id (`W` and digits, bare or as a URL), or a
mistyped id, DOI or title. Nothing is written then.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import InputError
from ..files import write_text
from ..hashing import canonical_json
from ..ids import normalize_key

_WORK_ID = re.compile(r"W\d+")


def _work_id(value: Any) -> str | None:
    """The normalised OpenAlex work id (`W123`) a value names, or None when it names none."""
    if not isinstance(value, str) or not value.strip():
        return None
    out = normalize_key("openalex", value)
    return out if out and _WORK_ID.fullmatch(out) else None


def _checked_work(work: Any, where: str) -> tuple[str, str | None, str | None, list[str] | None]:
    """(OpenAlex id, DOI, title, referenced work ids or None when unread) of one work; InputError when malformed."""
    if not isinstance(work, Mapping):
        raise InputError(f"{where}: an OpenAlex work must be a JSON object, got {type(work).__name__}")
    openalex = _work_id(work.get("id"))
    if openalex is None:
        raise InputError(f"{where}: 'id' must be an OpenAlex work id (W and digits, or its "
                         f"https://openalex.org/ URL), got {work.get('id')!r}")
    where = f"{where} ({openalex})"
    ids = work.get("ids")
    if ids is not None and not isinstance(ids, Mapping):
        raise InputError(f"{where}: 'ids' must be an object or null, got {type(ids).__name__}")
    fields = {"doi": work.get("doi"), "ids.doi": (ids or {}).get("doi"),
              "title": work.get("title"), "display_name": work.get("display_name")}
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where}: {name!r} must be a string or null, got {value!r}")
    raw_doi = fields["doi"] or fields["ids.doi"]
    doi = normalize_key("doi", raw_doi) if raw_doi else None
    title = fields["title"] or fields["display_name"]
    refs = work.get("referenced_works")
    if refs is None:
        return openalex, doi, title, None
    if not isinstance(refs, list):
        raise InputError(f"{where}: 'referenced_works' must be a list of OpenAlex work ids (or absent when the "
                         f"references were not read), got {type(refs).__name__} {refs!r:.60}")
    targets = []
    for k, ref in enumerate(refs):
        target = _work_id(ref)
        if target is None:
            raise InputError(f"{where}: referenced_works[{k}] must be an OpenAlex work id "
                             f"(W and digits, or its URL), got {ref!r:.60}")
        targets.append(target)
    return openalex, doi, title, targets


def openalex_events(works: Iterable[Any], checked_ts: str, source: str = "openalex",
                    origin: str = "works") -> list[dict[str, Any]]:
    """Graph events for OpenAlex works (later duplicates of a work win), in a fixed order.

    `origin` names where the works came from (the file) in the error for a
    malformed work, which also gives the work's position (#1 is the first)
    and id.
    """
    by_id: dict[str, tuple[str | None, str | None, list[str] | None]] = {}
    for index, work in enumerate(works, start=1):
        openalex, doi, title, refs = _checked_work(work, f"{origin}: work #{index}")
        by_id.pop(openalex, None)
        by_id[openalex] = (doi, title, refs)
    lom_of = {openalex: f"doi:{doi}" if doi else f"openalex:{openalex}" for openalex, (doi, _, _) in by_id.items()}
    papers, edges, checks = [], set(), []
    for openalex, (_, title, refs) in by_id.items():
        lom_id = lom_of[openalex]
        read = refs is not None
        papers.append({"lom_id": lom_id, "doi": lom_id[4:] if lom_id.startswith("doi:") else None,
                       "arxiv": None, "openalex": openalex, "s2_paper_id": None,
                       "title": title, "read": read})
        if not read:
            continue
        targets = set(refs)
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
    """OpenAlex works from a JSON file (a work, a list, or an API page with `results`) or JSONL(.gz).

    A UTF-8 byte order mark is skipped; JSON nested deeper than Python's
    parser goes (about 1,000 levels) is an error naming the file (and line).
    """
    path = Path(path)
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8-sig") as f:
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
        except RecursionError:
            raise InputError(f"{path}: JSON nested too deeply to read; an OpenAlex work is a few levels deep") from None
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
            except RecursionError:
                raise InputError(f"{path}: line {number}: JSON nested too deeply to read; "
                                 "an OpenAlex work is a few levels deep") from None
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
