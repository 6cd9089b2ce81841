"""Routing on a real Dask cluster (distributed.LocalCluster, worker processes) writes a local run's bytes.

The client cuts a 1,500-row generated pool (row groups of 250 rows, pieces
of 500) and two worker processes read their pieces' row groups from the file
and route them; the release must equal a run in this process, byte for
byte. Also through the CLI with `[route] dask` in reporter.toml.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytest.importorskip("distributed", reason="the dask extra (dask, distributed) is not installed")

from distributed import LocalCluster  # noqa: E402

from support.routing import TODAY

from reporter.cli import main  # noqa: E402
from reporter.errors import InputError  # noqa: E402
from reporter.routing import pieces  # noqa: E402
from reporter.routing.release import RELEASE_FILES, route_release  # noqa: E402

SPECS = Path(__file__).resolve().parents[1] / "specs"
ROWS = 1_500


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> Path:
    from reporter.example import generate_pool
    root = tmp_path_factory.mktemp("dask")
    generate_pool(root / "generated.parquet", ROWS, 11, progress=False)
    path = root / "pool.parquet"
    pq.write_table(pq.read_table(root / "generated.parquet"), path, row_group_size=250)
    return path


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as c:
        yield c


def _files(result) -> dict[str, bytes]:
    return {name: (result.release_dir / name).read_bytes() for name in RELEASE_FILES}


def test_a_dask_cluster_routes_the_same_bytes_as_one_process(pool, cluster, tmp_path, monkeypatch):
    local = _files(route_release(pool, SPECS, tmp_path / "local", workers=1, progress=False, as_of=TODAY))
    monkeypatch.setattr(pieces, "PIECE_ROWS", 500)
    remote = route_release(pool, SPECS, tmp_path / "dask", progress=False, batch_rows=200,
                           dask=cluster.scheduler_address, as_of=TODAY)
    assert _files(remote) == local
    assert remote.rows == ROWS


def test_route_dask_from_reporter_toml(pool, cluster, tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reporter.toml").write_text(
        f'pool = "{pool}"\nspecs = "{SPECS}"\nreleases = "releases"\nsite = "site"\n\n'
        f'[route]\ndask = "{cluster.scheduler_address}"\n', encoding="utf-8")
    assert main(["route", "--workspace", str(ws), "--json"]) == 0
    first = capsys.readouterr().out
    local = route_release(pool, SPECS, tmp_path / "local", workers=1, progress=False, as_of=TODAY)
    assert f'"release_id": "{local.release_id}"' in first
    release = ws / "releases" / local.release_id
    assert {n: (release / n).read_bytes() for n in RELEASE_FILES} == _files(local)


def test_a_pool_that_is_not_parquet_is_refused_for_dask(tmp_path, cluster):
    jsonl = tmp_path / "pool.jsonl"
    jsonl.write_text('{"work_id": "doi:1", "source": "x", "title": "t", "abstract": "a", "type": "article"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="convert the pool to Parquet"):
        route_release(jsonl, SPECS, tmp_path / "out", progress=False, dask=cluster.scheduler_address, as_of=TODAY)


def test_a_relative_pool_path_is_resolved_so_the_workers_read_their_pieces(pool, cluster, tmp_path, monkeypatch):
    """Issue 34, item 6: with a relative pool path the workers (in folders of their own) could not open it, and the
    client quietly read every piece and shipped its rows (about 40 MB a piece). Now every piece names the file by
    its absolute path and is read by a worker; the bytes are a local run's."""
    from reporter.routing import cluster as cluster_module
    local = _files(route_release(pool, SPECS, tmp_path / "local", workers=1, progress=False, as_of=TODAY))
    monkeypatch.setattr(pieces, "PIECE_ROWS", 500)
    planned = []

    def spy(*args, **kwargs):
        for piece in pieces.plan_pieces(*args, **kwargs):
            planned.append(piece)
            yield piece

    monkeypatch.setattr(cluster_module, "plan_pieces", spy)
    monkeypatch.chdir(pool.parent)
    remote = route_release(Path(pool.name), SPECS, tmp_path / "dask", progress=False, batch_rows=200,
                           dask=cluster.scheduler_address, as_of=TODAY)
    assert _files(remote) == local
    assert planned and all(p.batch is None and p.file == str(pool.resolve()) for p in planned)


def test_a_pool_file_the_workers_cannot_open_is_refused_before_anything_is_sent(pool, cluster, tmp_path,
                                                                                  monkeypatch):
    from reporter.routing import cluster as cluster_module
    # the workers' own check, sent to them by value: a file they cannot open (as on a machine without the mount)
    monkeypatch.setattr(cluster_module, "_can_read", lambda files: [f for f in files if "pool.parquet" not in f])
    scattered = []
    monkeypatch.setattr(cluster_module, "plan_pieces", lambda *a, **k: scattered.append(a) or iter(()))
    with pytest.raises(InputError, match=r"--dask .*pool\.parquet: 2 of 2 Dask workers cannot open it at this path "
                                         r".*Nothing was sent"):
        route_release(pool, SPECS, tmp_path / "out", progress=False, dask=cluster.scheduler_address, as_of=TODAY)
    assert scattered == [], "no piece was planned or sent"


def test_row_groups_straddling_two_pieces_are_encoded_on_the_cluster_and_joined_as_one_writer(
        pool, cluster, tmp_path, monkeypatch):
    # Row groups of 128 rows against pieces of 500: most groups straddle two pieces; the client puts each
    # together and a Dask worker encodes it, the client only the last, short group (issue 35, item 2).
    from reporter.routing import parquet_parts, release
    monkeypatch.setattr(release, "ROW_GROUP_ROWS", 128)
    local = _files(route_release(pool, SPECS, tmp_path / "local", workers=1, progress=False, as_of=TODAY))
    here = []
    real = parquet_parts.encode_groups
    monkeypatch.setattr(parquet_parts, "encode_groups", lambda table, rows: here.append(len(table)) or real(table, rows))
    monkeypatch.setattr(pieces, "PIECE_ROWS", 500)
    remote = route_release(pool, SPECS, tmp_path / "dask", progress=False, batch_rows=200,
                           dask=cluster.scheduler_address, as_of=TODAY)
    assert _files(remote) == local
    assert here == [ROWS % 128]
    assert pq.read_metadata(remote.release_dir / "routing.parquet").num_row_groups == ROWS // 128 + 1
