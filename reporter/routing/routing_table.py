"""routing.parquet: its schema and its one reader (docs/release-format.md).

A release's routing table holds one row per pool row, in pool order, with
the columns of ROUTING_SCHEMA. Routing writes it (release.py, the engine's
batches); every other stage reads it only through `read_routing`: screening's
scope and export, certify's strata and the site's release diff. A table can
hold millions of rows, so a reader names the columns it needs and gets them
as one pyarrow Table (nothing else is read; no Python object per row), the
string columns it names in `dictionary` dictionary-encoded (a pile name is
then a small integer code). Stages that filter with polars wrap the Table
(`polars.from_arrow`, which does not copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import InputError
from .folder import ROUTING_FILE

EVIDENCE_TYPE = pa.struct([("field", pa.string()), ("start", pa.int32()),
                           ("end", pa.int32()), ("text", pa.string())])
"""One span of evidence: the field (`title`, `abstract`), its character offsets and the text between them."""
ROUTING_SCHEMA = pa.schema([
    ("work_id", pa.string()), ("pile", pa.string()), ("pending_reason", pa.string()),
    ("winner", pa.string()), ("matched", pa.list_(pa.string())),
    ("shadow_matched", pa.list_(pa.string())), ("evidence", EVIDENCE_TYPE), ("title_only", pa.bool_()),
    ("evidence_all", pa.list_(EVIDENCE_TYPE)),
])
"""routing.parquet's columns:

- `work_id` (string): the pool row's scheme-prefixed id;
- `pile` (string): the pile the row is routed to (the pending pile for a row no rule routed);
- `pending_reason` (string, null unless pending): `unrouted`, `no_text`, ...;
- `winner` (string, null when no rule won): the rule that decided the row;
- `matched`, `shadow_matched` (lists of rule ids): every live and shadow rule that matched;
- `evidence` (EVIDENCE_TYPE, null without one): the winner's best span;
- `title_only` (bool): the row was routed (and is screened) on its title alone;
- `evidence_all` (list of EVIDENCE_TYPE; engine routing.5 on): one span per text condition of the winner that
  matched, in the rule's order; it is last so that no earlier column moves.
"""


def routing_file(release_dir: Path) -> Path:
    """Where a release folder keeps its routing table (for routing's own readers: diagnose, labels)."""
    return Path(release_dir) / ROUTING_FILE


def holds_routing(folder: Path) -> bool:
    """Whether a folder holds a routing table (what makes a path a release folder for `--release`)."""
    return routing_file(folder).is_file()


def read_routing(release_dir: Path, columns: Sequence[str], *, dictionary: Sequence[str] = ()) -> pa.Table:
    """The named columns of a release's routing table, in pool order, as one pyarrow Table (ROUTING_SCHEMA's
    types; the `dictionary` columns dictionary-encoded). A missing or unreadable table, or a column it lacks, is
    an InputError naming the file."""
    path = routing_file(release_dir)
    unknown = [c for c in (*columns, *dictionary) if c not in ROUTING_SCHEMA.names]
    if unknown:
        raise ValueError(f"routing.parquet has no column {unknown[0]!r}")  # a caller's mistake, not the file's
    try:
        return pq.read_table(path, columns=list(columns), read_dictionary=list(dictionary) or None)
    except FileNotFoundError:
        raise InputError(f"{path}: missing; a release folder written by `reporter route` or `reporter build` "
                         f"holds it: restore the folder, or route again") from None
    except (OSError, pa.ArrowException, ValueError, KeyError) as exc:  # pyarrow raises several kinds for a bad file
        raise InputError(f"{path}: cannot read the columns {list(columns)} of the routing table ({exc})") from None
