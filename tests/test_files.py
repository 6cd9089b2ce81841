"""The one file layer: modes, atomicity, the index and its lock."""

import json
import multiprocessing
import os
import stat

import pytest

from reporter import files
from reporter.errors import InputError


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_written_files_and_folders_have_explicit_modes(tmp_path):
    old = os.umask(0o022)
    try:
        files.write_text(tmp_path / "a" / "b.txt", "x")
        tmp = files.make_temp_dir(tmp_path, "release")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a" / "b.txt") == 0o644  # mkstemp alone would give 0600
    assert _mode(tmp) == 0o755  # mkdtemp alone would give 0700
    assert tmp.name.startswith(files.TEMP_PREFIX)


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "doc.json"
    files.write_json(target, {"b": 1, "a": [1, 2]})
    assert target.read_text() == '{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}\n'
    with pytest.raises(RuntimeError):
        with files.atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert json.loads(target.read_text()) == {"a": [1, 2], "b": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json"]


def test_read_index_refuses_what_is_not_a_list_of_unique_ids(tmp_path):
    assert files.read_index(tmp_path) == []
    for text, message in [("{", "not valid UTF-8 JSON"), ('{"a": 1}', "list of release id strings"),
                          ('["a", 1]', "list of release id strings"), ('["a", "a"]', "twice")]:
        (tmp_path / "index.json").write_text(text)
        with pytest.raises(InputError, match=message):
            files.read_index(tmp_path)


def _append_many(folder, start):
    for i in range(start, start + 25):
        files.append_index(folder, f"r{i:03d}")


def test_concurrent_appends_lose_no_release(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(tmp_path, k * 25)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert sorted(files.read_index(tmp_path)) == [f"r{i:03d}" for i in range(100)]
    files.append_index(tmp_path, "r000")  # once only
    assert len(files.read_index(tmp_path)) == 100
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(files.TEMP_PREFIX)]
