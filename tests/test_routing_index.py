"""The releases folder's index (reporter/routing/index.py): read, appended under the folder's lock, never guessed."""

import multiprocessing

import pytest

from reporter.errors import InputError
from reporter.files import TEMP_PREFIX
from reporter.routing.index import append_index, read_index, start_index


def test_read_index_refuses_what_is_not_a_list_of_unique_ids(tmp_path):
    assert read_index(tmp_path) == []
    for text, message in [("{", "not valid UTF-8 JSON"), ('{"a": 1}', "list of release id strings"),
                          ('["a", 1]', "list of release id strings"), ('["a", "a"]', "twice")]:
        (tmp_path / "index.json").write_text(text)
        with pytest.raises(InputError, match=message):
            read_index(tmp_path)


def _append_many(folder, start):
    for i in range(start, start + 25):
        append_index(folder, f"r{i:03d}")


def test_concurrent_appends_lose_no_release(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(tmp_path, k * 25)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert sorted(read_index(tmp_path)) == [f"r{i:03d}" for i in range(100)]
    append_index(tmp_path, "r000")  # once only
    assert len(read_index(tmp_path)) == 100
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(TEMP_PREFIX)]


def test_a_missing_index_beside_release_folders_is_refused(tmp_path):
    start_index(tmp_path)
    assert read_index(tmp_path) == [] and (tmp_path / "index.json").read_text() == "[]\n"
    (tmp_path / ("a" * 64)).mkdir()
    (tmp_path / ("a" * 64) / "release.json").write_text("{}")
    (tmp_path / ".tmp-release-x").mkdir()  # a staged release is not a release
    (tmp_path / ".tmp-release-x" / "release.json").write_text("{}")
    append_index(tmp_path, "a" * 64)
    (tmp_path / "index.json").unlink()
    for call in (read_index, start_index, lambda f: append_index(f, "b" * 64)):
        with pytest.raises(InputError, match=r"index.json: missing, but .* holds 1 release folder\(s\)") as caught:
            call(tmp_path)
        assert "a" * 64 in str(caught.value) and "oldest first" in str(caught.value)
    assert not (tmp_path / "index.json").exists()
