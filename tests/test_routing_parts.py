"""routing.parquet encoded in parts by whoever routes each piece and joined without re-encoding (issue 35, item 2).

The joined file must be, byte for byte, what one `pq.ParquetWriter` writes
for the whole routing table in row groups of the same size (with the empty
row group such a writer leaves after a table whose length is a multiple of
the group size); and a release routed by workers that encode their own row
groups must be the same bytes as one routed by this process alone.
"""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support.routing import TODAY

from reporter.routing import pieces, release
from reporter.routing.parquet_parts import PartsWriter, RoutingWriter, encode_groups
from reporter.routing.release import RELEASE_FILES, route_release
from reporter.routing.routing_table import ROUTING_SCHEMA

SPECS = Path(__file__).resolve().parents[1] / "specs"


def _rows(n: int, seed: int) -> pa.Table:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        matched = [f"rule-{rng.randint(0, 40)}" for _ in range(rng.randint(0, 4))]
        span = None if rng.random() < 0.3 else {"field": "abstract", "start": rng.randint(0, 9), "end": 20,
                                                  "text": "é<&>\"" * rng.randint(0, 3)}
        out.append({"work_id": f"doi:10.1/{i}", "pile": rng.choice(["screen", "hold", "pending"]),
                    "pending_reason": None if rng.random() < 0.8 else "unrouted",
                    "winner": matched[0] if matched else None, "matched": matched,
                    "shadow_matched": matched[1:], "evidence": span, "title_only": rng.random() < 0.1,
                    "evidence_all": [span, span] if span else []})
    return pa.Table.from_pylist(out, ROUTING_SCHEMA)


def _one_writer(table: pa.Table, path: Path, group_rows: int) -> bytes:
    """How routing.parquet was written before: one writer, whole groups, and the rest (maybe none) last."""
    with pq.ParquetWriter(path, ROUTING_SCHEMA, compression="zstd") as writer:
        cut = len(table) // group_rows * group_rows
        if cut:
            writer.write_table(table.slice(0, cut).combine_chunks(), row_group_size=group_rows)
        writer.write_table(table.slice(cut).combine_chunks(), row_group_size=group_rows)
    return path.read_bytes()


@pytest.mark.parametrize("rows,group_rows,cuts", [
    (1000, 64, [1000]),
    (1000, 64, [64, 128, 640]),         # parts at group boundaries
    (1000, 64, [30, 200, 201, 999]),    # pieces straddling groups: heads and tails joined here
    (1024, 64, [512]),                  # a multiple of the group size: the empty last group stays
    (0, 64, []),                        # an empty table: one empty group
    (130, 200, [70]),                   # groups larger than every piece
])
def test_joined_parts_are_the_bytes_of_one_writer(tmp_path, rows, group_rows, cuts):
    table = _rows(rows, rows + group_rows)
    want = _one_writer(table, tmp_path / "one.parquet", group_rows)
    writer = RoutingWriter(tmp_path / "joined.parquet", group_rows)
    bounds = [0, *cuts, rows] if rows else []
    for start, end in zip(bounds, bounds[1:]):
        head, part, tail = pieces._encode_inside(table.slice(start, end - start), start, group_rows)
        writer.add(head, part, tail)
    writer.close()
    assert (tmp_path / "joined.parquet").read_bytes() == want
    assert pq.read_table(tmp_path / "joined.parquet").equals(table)


def test_only_empty_pieces_give_the_file_of_a_writer_that_wrote_nothing(tmp_path):
    pq.ParquetWriter(tmp_path / "one.parquet", ROUTING_SCHEMA, compression="zstd").close()
    writer = RoutingWriter(tmp_path / "joined.parquet", 64)
    empty = ROUTING_SCHEMA.empty_table()
    writer.add(empty, None, empty)   # a pool file whose one row group holds no row
    writer.close()
    assert (tmp_path / "joined.parquet").read_bytes() == (tmp_path / "one.parquet").read_bytes()
    assert pq.read_metadata(tmp_path / "joined.parquet").num_row_groups == 0


def test_a_piece_encodes_the_groups_wholly_inside_it_and_ships_the_rest_as_rows():
    table = _rows(300, 3)
    head, part, tail = pieces._encode_inside(table, 90, 100)   # rows 90..389: groups 100..199, 200..299, 300..389
    assert (len(head), len(tail)) == (10, 90)
    assert pq.ParquetFile(pa.BufferReader(part)).metadata.num_row_groups == 2
    head, part, tail = pieces._encode_inside(table.slice(0, 50), 120, 100)   # inside one group: rows only
    assert (len(head), part, len(tail)) == (50, None, 0)


def test_a_footer_that_cannot_be_written_back_as_it_was_is_refused(tmp_path):
    part = bytearray(encode_groups(_rows(10, 1), 64))
    size = int.from_bytes(part[-8:-4], "little")
    footer = part[-8 - size:-8]
    assert footer[0] == 0x15   # FileMetaData.version, i32, field id as a delta of 1
    # The same field with its id written out in full: valid Thrift, but not as this encoder writes it.
    longer = bytes([0x05, 0x02]) + footer[1:]
    bad = bytes(part[:-8 - size]) + longer + len(longer).to_bytes(4, "little") + b"PAR1"
    with pytest.raises(ValueError, match="re-encode"):
        PartsWriter(tmp_path / "x.parquet").add(bad)


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Path:
    from reporter.example import generate_pool
    root = tmp_path_factory.mktemp("parts")
    generated = generate_pool(root / "generated.parquet", 2_000, 11, progress=False) or root / "generated.parquet"
    path = root / "pool.parquet"
    pq.write_table(pq.read_table(generated), path, row_group_size=250)
    return path


@pytest.mark.parametrize("group_rows,piece_rows", [(250, 1), (100, 300), (500, 1), (128, 600)])
def test_workers_encoding_their_own_groups_give_the_bytes_of_one_process(pool, tmp_path, monkeypatch,
                                                                         group_rows, piece_rows):
    monkeypatch.setattr(release, "ROW_GROUP_ROWS", group_rows)
    monkeypatch.setattr(pieces, "PIECE_ROWS", piece_rows)
    one = route_release(pool, SPECS, tmp_path / "one", progress=False, workers=1, as_of=TODAY).release_dir
    two = route_release(pool, SPECS, tmp_path / "two", progress=False, workers=2, batch_rows=97,
                        as_of=TODAY).release_dir
    for name in RELEASE_FILES:
        assert (two / name).read_bytes() == (one / name).read_bytes(), name
    table = pq.read_table(one / "routing.parquet")
    assert (one / "routing.parquet").read_bytes() == _one_writer(table, tmp_path / "ref.parquet", group_rows)
    groups = pq.read_metadata(one / "routing.parquet").num_row_groups
    assert groups == 2_000 // group_rows + 1   # whole groups, then the rest (an empty group after 2,000 / 250, 500)


def test_with_workers_the_caller_encodes_only_the_last_row_group(pool, tmp_path, monkeypatch):
    # 2,000 rows in row groups of 128: the pieces (250 rows each) hold one whole group at most, so most groups
    # straddle two pieces; workers encode those too, and the caller only the last, short one.
    from reporter.routing import parquet_parts
    here = []
    real = parquet_parts.encode_groups
    monkeypatch.setattr(parquet_parts, "encode_groups", lambda table, rows: here.append(len(table)) or real(table, rows))
    monkeypatch.setattr(release, "ROW_GROUP_ROWS", 128)
    monkeypatch.setattr(pieces, "PIECE_ROWS", 1)
    two = route_release(pool, SPECS, tmp_path / "two", progress=False, workers=2, as_of=TODAY).release_dir
    assert here == [2_000 % 128]
    here.clear()
    one = route_release(pool, SPECS, tmp_path / "one", progress=False, workers=1, as_of=TODAY).release_dir
    # one process: the 7 groups holding a piece's end (250, 500, ... 1,750) are encoded here, and the last
    assert here == [128] * 7 + [80]
    assert (two / "routing.parquet").read_bytes() == (one / "routing.parquet").read_bytes()


def test_a_worker_failing_to_encode_a_row_group_fails_the_route_and_leaves_no_release(pool, tmp_path, monkeypatch):
    from reporter.routing import workers

    def boom(table, rows):
        raise RuntimeError("encoding failed")

    monkeypatch.setattr(workers, "encode_groups", boom)   # the straddling groups' encoder, in the forked workers
    monkeypatch.setattr(release, "ROW_GROUP_ROWS", 128)
    monkeypatch.setattr(pieces, "PIECE_ROWS", 1)
    out = tmp_path / "releases"
    with pytest.raises(RuntimeError, match="encoding failed"):
        route_release(pool, SPECS, out, progress=False, workers=2, as_of=TODAY)
    assert not out.exists() or not any(out.iterdir())   # no release, no temporary folder
