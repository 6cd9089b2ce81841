"""Routing in worker processes: the release's bytes are the same for every worker count, batch size and cut.

A 2,000-row generated pool (non-ASCII text, whitespace runs, every pile) is
written with 250-row row groups, so that it falls into several pieces; the
pieces are cut smaller still, or shipped from the caller instead of read by
the workers, by lowering the piece limits. Every variant must give the same
four release files, byte for byte, as one process routing 16,384-row batches (the default).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support.routing import TODAY

from reporter.routing import pieces
from reporter.routing.release import RELEASE_FILES, route_release

SPECS = Path(__file__).resolve().parents[1] / "specs"
ROWS = 2_000


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Path:
    from reporter.example import generate_pool
    root = tmp_path_factory.mktemp("workers")
    generated = generate_pool(root / "generated.parquet", ROWS, 7, progress=False) or root / "generated.parquet"
    table = pq.read_table(generated)
    path = root / "pool.parquet"
    pq.write_table(table, path, row_group_size=250)
    return path


def _release(pool: Path, out: Path, **kw) -> dict[str, bytes]:
    result = route_release(pool, SPECS, out, progress=False, **kw, as_of=TODAY)
    return {name: (result.release_dir / name).read_bytes() for name in RELEASE_FILES}


@pytest.fixture(scope="module")
def reference(pool, tmp_path_factory) -> dict[str, bytes]:
    return _release(pool, tmp_path_factory.mktemp("ref"), workers=1)


@pytest.mark.parametrize("workers,batch_rows,piece_rows,max_group_rows", [
    (2, 16_384, 65_536, 262_144),   # the defaults: one piece of 8 row groups per worker
    (2, 97, 300, 262_144),          # many pieces, odd batches
    (3, 1_000, 1, 262_144),         # one piece per row group, three workers
    (2, 333, 65_536, 100),          # row groups too large to share out: the caller reads and ships them
])
def test_every_worker_count_batch_size_and_cut_gives_the_same_bytes(pool, reference, tmp_path, monkeypatch,
                                                                   workers, batch_rows, piece_rows,
                                                                   max_group_rows):
    monkeypatch.setattr(pieces, "PIECE_ROWS", piece_rows)
    monkeypatch.setattr(pieces, "MAX_GROUP_ROWS", max_group_rows)
    got = _release(pool, tmp_path, workers=workers, batch_rows=batch_rows)
    assert got == reference
    stats = json.loads(got["rule_stats.json"])
    assert stats["rows"] == ROWS and sum(stats["piles"].values()) == ROWS


def test_a_batch_builds_no_sample_payload_for_a_row_that_can_no_longer_be_sampled(pool, reference, tmp_path,
                                                                                   monkeypatch):
    """A row whose key is above the k-th smallest key its group already holds in the piece gets no payload
    (`samples.sample_bounds`): fewer payloads are built, and the release is the same to the byte."""
    from reporter.routing import samples
    built = []
    payloads = samples._payloads

    def counted(plan, batch, fields, table, evidence, rows):
        built.append(len(rows))
        return payloads(plan, batch, fields, table, evidence, rows)

    monkeypatch.setattr(samples, "_payloads", counted)
    bounded = _release(pool, tmp_path / "bounded", workers=1, batch_rows=97)
    with_bounds = sum(built)
    built.clear()
    monkeypatch.setattr(pieces, "sample_bounds", lambda *_: {})
    unbounded = _release(pool, tmp_path / "unbounded", workers=1, batch_rows=97)
    assert bounded == unbounded == reference
    assert 0 < with_bounds < sum(built) / 2


def test_workers_inherit_normalisation_tables_the_caller_built_before_forking(pool, tmp_path, monkeypatch):
    """The caller routes no row itself: the table is there only because it was built for the workers."""
    from reporter.routing import normalise
    monkeypatch.setattr(normalise, "_COMPOSE_SECOND", None)  # as a fresh process starts: no table, no cache
    monkeypatch.setattr(normalise, "_FLAGS", {})
    _release(pool, tmp_path, workers=2)
    assert normalise._COMPOSE_SECOND is not None


def test_the_pool_is_cut_into_the_pieces_the_limits_ask_for(pool, monkeypatch):
    from reporter.pool.reader import open_table
    source = open_table(pool)
    cols = ["work_id", "source", "title", "abstract"]
    got = [(p.rows, p.row_groups, p.batch is None) for p in pieces.plan_pieces(source, cols, 500)]
    assert got == [(ROWS, tuple(range(8)), True)]
    monkeypatch.setattr(pieces, "PIECE_ROWS", 600)
    got = [(p.rows, p.row_groups) for p in pieces.plan_pieces(source, cols, 500)]
    assert got == [(750, (0, 1, 2)), (750, (3, 4, 5)), (500, (6, 7))]
    monkeypatch.setattr(pieces, "MAX_GROUP_ROWS", 200)
    got = [(p.rows, p.file, p.batch is not None) for p in pieces.plan_pieces(source, cols, 700)]
    assert got == [(700, None, True), (700, None, True), (600, None, True)]


def test_a_jsonl_pool_with_an_overlay_and_bad_utf8_routes_the_same_in_workers(pool, tmp_path):
    rows = pq.read_table(pool).slice(0, 600).to_pylist()
    jsonl = tmp_path / "pool.jsonl"
    rows[3]["abstract"] = "Invalid UTF-8 here: BAD."
    lines = [json.dumps({k: r[k] for k in ("work_id", "source", "title", "abstract", "type")}) for r in rows]
    jsonl.write_bytes(("\n".join(lines) + "\n").encode("utf-8").replace(b"BAD", b"\xff"))
    blank = [r["work_id"] for r in rows if not (r["abstract"] or "").strip()][:5]
    overlay = tmp_path / "overlay.parquet"
    pq.write_table(pa.table({"work_id": blank + ["nobody:1"],
                             "abstract": ["A replication study of priming."] * len(blank) + ["x"]}), overlay)
    one = _release(jsonl, tmp_path / "one", workers=1, overlay=overlay, batch_rows=128)
    two = _release(jsonl, tmp_path / "two", workers=2, overlay=overlay, batch_rows=100)
    assert one == two
    stats = json.loads(one["rule_stats.json"])
    assert stats["pool"]["utf8_replaced"] == 1
    assert stats["overlay"] == {"rows": len(blank) + 1, "abstracts_filled": len(blank), "titles_filled": 0,
                                "unknown_ids": 1}


def _strings_as_written(values: list[bytes]) -> pa.Array:
    """A string array holding the given bytes unchecked, as a writer that never validates leaves them."""
    import numpy as np
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum([len(v) for v in values], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets.tobytes()),
                                                            pa.py_buffer(b"".join(values))])


def test_a_parquet_pool_with_bad_utf8_in_its_text_is_replaced_and_counted_in_every_worker(pool, tmp_path):
    """Invalid UTF-8 in a Parquet string column: a stray byte, a surrogate, an overlong form, and a
    character split between two rows (valid bytes together, invalid in each row) are each replaced and
    counted once, whichever process reads them, in mostly-ASCII text and in CJK text alike; valid
    non-ASCII text is left as it is."""
    table = pq.read_table(pool).slice(0, 600)
    titles = [(t or "").encode() for t in table.column("title").to_pylist()]
    abstracts = [(a or "").encode() for a in table.column("abstract").to_pylist()]
    titles[5] = b"A replication \xff study"
    abstracts[7] = b"surrogate \xed\xa0\x80 here"
    abstracts[8] = b"overlong \xc0\xaf slash"
    abstracts[100], abstracts[101] = b"split caf\xc3", b"\xa9 across rows"
    abstracts[102] = "valid café, naïve, 𝔘".encode()
    for i in range(300, 400):  # text mostly not ASCII: Arrow checks it, one bad value among it
        abstracts[i] = "研究表明这种方法有效".encode() * 10
    abstracts[333] = b"\xe7\xa0" + abstracts[333]
    bad = table.set_column(table.schema.get_field_index("title"), "title", _strings_as_written(titles))
    bad = bad.set_column(bad.schema.get_field_index("abstract"), "abstract", _strings_as_written(abstracts))
    path = tmp_path / "bad.parquet"
    pq.write_table(bad, path, row_group_size=100)
    one = _release(path, tmp_path / "one", workers=1, batch_rows=64)
    two = _release(path, tmp_path / "two", workers=2, batch_rows=50)
    assert one == two
    assert json.loads(one["rule_stats.json"])["pool"]["utf8_replaced"] == 6


def test_ids_whose_hashes_meet_are_compared_as_ids(pool, reference, tmp_path, monkeypatch):
    """Every hash made equal: the ids themselves are read back, found distinct, and the release stands."""
    import numpy as np
    of = pieces.IdTally.of.__func__
    monkeypatch.setattr(pieces.IdTally, "of", classmethod(lambda cls, ids, h: of(cls, ids, np.zeros_like(h))))
    assert _release(pool, tmp_path, workers=2) == reference


def test_a_duplicate_in_another_piece_is_named_and_nothing_is_published(pool, tmp_path, monkeypatch):
    from reporter.errors import InputError
    table = pq.read_table(pool)
    ids = table.column("work_id").to_pylist()
    ids[-1] = ids[0]  # the first and the last row: pieces apart, and routed by different workers
    dup = tmp_path / "dup.parquet"
    pq.write_table(table.set_column(0, "work_id", pa.array(ids, pa.string())), dup, row_group_size=250)
    monkeypatch.setattr(pieces, "PIECE_ROWS", 500)
    out = tmp_path / "releases"
    with pytest.raises(InputError, match=rf"1 duplicate work_id value\(s\), e.g. {ids[0]}; work_id must be unique"):
        route_release(dup, SPECS, out, progress=False, workers=2, as_of=TODAY)
    assert list(out.iterdir()) == []  # the temporary release folder is gone, nothing was published


def test_route_dask_in_reporter_toml_must_be_an_address(tmp_path):
    from reporter.config import load_workspace
    from reporter.errors import InputError
    toml = 'pool = "p.parquet"\nspecs = "specs"\nreleases = "r"\nsite = "s"\n\n[route]\n'
    (tmp_path / "reporter.toml").write_text(toml + 'dask = "tcp://10.0.0.5:8786"\n')
    assert load_workspace(tmp_path).route.dask == "tcp://10.0.0.5:8786"
    (tmp_path / "reporter.toml").write_text(toml + "dask = 8786\n")
    with pytest.raises(InputError, match=r"\[route\]: key 'dask' must be a string"):
        load_workspace(tmp_path)
    (tmp_path / "reporter.toml").write_text(toml + 'dsak = "tcp://x:1"\n')
    with pytest.raises(InputError, match=r"\[route\]: unknown key 'dsak'; allowed: dask"):
        load_workspace(tmp_path)


def test_workers_must_be_one_or_more(tmp_path, capsys):
    from reporter.cli import main
    assert main(["route", "--pool", str(tmp_path / "p.parquet"), "--specs", str(SPECS), "--workers", "0"]) == 2
    assert "--workers must be 1 or more, not 0" in capsys.readouterr().err



_MALLINFO = """
import ctypes, sys
from reporter.routing.workers import keep_freed_memory
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype, libc.malloc.restype = Info, ctypes.c_void_p
if sys.argv[1] == "keep":
    assert keep_freed_memory()
mapped_before = libc.mallinfo2().hblkhd
block = libc.malloc(24 << 20)
mapped = libc.mallinfo2().hblkhd - mapped_before
libc.free(ctypes.c_void_p(block))
print(mapped >> 20, libc.mallinfo2().fordblks >> 20)
"""


def _glibc_mallinfo2() -> bool:
    import ctypes
    try:
        return hasattr(ctypes.CDLL("libc.so.6"), "mallinfo2")
    except OSError:
        return False


@pytest.mark.skipif(not _glibc_mallinfo2(), reason="glibc (2.33 or later) is what is tuned and inspected")
def test_the_route_command_keeps_a_batch_sized_block_it_frees():
    """A 24 MiB block: by default mapped and given back when freed; after keep_freed_memory, kept for reuse."""
    import subprocess
    import sys

    def run(mode: str) -> tuple[int, int]:
        out = subprocess.run([sys.executable, "-c", _MALLINFO, mode], capture_output=True, text=True, check=True)
        mapped, free = out.stdout.split()
        return int(mapped), int(free)

    mapped, free = run("default")
    assert mapped == 24 and free < 24
    mapped, free = run("keep")
    assert mapped == 0 and free >= 24


_HUGE_PAGES = """
import ctypes, os, sys
from reporter.routing.workers import no_huge_pages
def thp() -> str:
    with open("/proc/self/status") as f:
        return next(line.split()[1] for line in f if line.startswith("THP_enabled:"))
ctypes.CDLL(None).prctl(41, 0, 0, 0, 0)  # as a fresh process tree: a test that routed in-process turned them off
before = thp()
assert no_huge_pages()
r, w = os.pipe()
if os.fork() == 0:
    os.write(w, thp().encode())
    os._exit(0)
os.wait()
print(before, thp(), os.read(r, 8).decode())
"""


def _thp_status() -> bool:
    try:
        with open("/proc/self/status") as f:
            return any(line.startswith("THP_enabled:") for line in f)
    except OSError:
        return False


@pytest.mark.skipif(not _thp_status(), reason="Linux 5.0 or later shows whether a process may get huge pages")
def test_the_route_command_turns_off_huge_pages_for_itself_and_its_workers():
    """Set in a fresh process: it and a worker it forks then get no transparent huge pages."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", _HUGE_PAGES], capture_output=True, text=True, check=True)
    before, after, worker = out.stdout.split()
    if before != "1":
        pytest.skip("huge pages are already off for this process tree")
    assert (after, worker) == ("0", "0")


_ENVIRONMENT = """
import os, sys
if sys.argv[2] == "arrow-loaded":
    import pyarrow
elif sys.argv[2] == "numpy-loaded":
    import numpy
from reporter.cli import main
try:
    main([sys.argv[1], "--help"])
except SystemExit:
    pass
print(os.environ.get(sys.argv[3], "unset"))
"""


@pytest.mark.parametrize("name, command, preset, loaded, expected", [
    ("MIMALLOC_PURGE_DELAY", "route", None, "fresh", "-1"), ("MIMALLOC_PURGE_DELAY", "route", "5", "fresh", "5"),
    ("MIMALLOC_PURGE_DELAY", "digest", None, "fresh", "unset"),
    ("MIMALLOC_PURGE_DELAY", "route", None, "arrow-loaded", "unset"),
    ("OPENBLAS_NUM_THREADS", "route", None, "fresh", "1"), ("OPENBLAS_NUM_THREADS", "route", "4", "fresh", "4"),
    ("OPENBLAS_NUM_THREADS", "digest", None, "fresh", "unset"),
    ("OPENBLAS_NUM_THREADS", "route", None, "numpy-loaded", "unset")])
def test_the_route_command_sets_its_allocator_and_blas_settings_before_the_libraries_load(name, command, preset,
                                                                                       loaded, expected):
    """mimalloc reads MIMALLOC_PURGE_DELAY once, when Arrow loads, and OpenBLAS its thread count when
    numpy loads: the route command sets both first.

    Only for `reporter route`, only while neither library is loaded yet (a
    caller that imported one keeps its environment as it is), and a value
    the user set wins.
    """
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != name}
    if preset is not None:
        env[name] = preset
    out = subprocess.run([sys.executable, "-c", _ENVIRONMENT, command, loaded, name], capture_output=True,
                         text=True, check=True, env=env)
    assert out.stdout.split()[-1] == expected
