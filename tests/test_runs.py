"""The record of what ran (reporter/runs.py): one file per run, whole or none, no secret, one checked reader."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from reporter.clock import run_clock
from reporter.errors import InputError
from reporter.runs import ModelUse, RunRecord, read_runs, start_run

T0 = datetime(2026, 7, 7, 12, 0, 0, tzinfo=timezone.utc)
T1 = datetime(2026, 7, 7, 12, 3, 5, tzinfo=timezone.utc)


def ticking(*moments):
    it = iter(moments)
    return lambda: next(it)


def test_a_record_holds_what_ran_and_reads_back(tmp_path):
    state = tmp_path / "state"
    pool = tmp_path / "pool.parquet"
    pool.write_bytes(b"rows")
    run = start_run(state, ["route", "--pool", "pool.parquet"], ticking(T0, T1))
    path = run.write("route", "done", inputs=[run.ref("pool", pool)], counts={"rows": 3},
                     settings={"seed": 0}, cost_usd=0.0)
    assert path.parent == state / "runs" / "2026"
    assert path.name.startswith("20260707T120000Z-route-") and path.suffix == ".json"
    [record] = read_runs(state)
    assert record == RunRecord("route", ("reporter", "route", "--pool", "pool.parquet"), record.tool_version,
                               "2026-07-07T12:00:00Z", "2026-07-07T12:03:05Z", "done", record.inputs,
                               settings={"seed": 0}, counts={"rows": 3})
    assert record.inputs[0].path == "pool.parquet"  # relative to the workspace
    assert record.inputs[0].sha256 == hashlib.sha256(b"rows").hexdigest()
    assert path.read_text() == json.dumps(json.loads(path.read_text()), sort_keys=True, indent=2,
                                          ensure_ascii=False) + "\n"


def test_two_runs_alike_never_overwrite_one_another(tmp_path):
    for _ in range(2):
        start_run(tmp_path / "state", ["fetch"], lambda: T0).write("fetch", "done")
    files = sorted((tmp_path / "state" / "runs" / "2026").iterdir())
    assert len(files) == 2 and files[0].name.endswith("-2.json")  # "-" sorts before "."
    assert len(read_runs(tmp_path / "state")) == 2


def test_source_date_epoch_fixes_the_clock():
    clock = run_clock({"SOURCE_DATE_EPOCH": "1783339200"})
    assert clock() == clock() == datetime(2026, 7, 6, 12, 0, tzinfo=timezone.utc)
    with pytest.raises(InputError, match="SOURCE_DATE_EPOCH"):
        run_clock({"SOURCE_DATE_EPOCH": "soon"})


def test_a_hostile_path_or_model_name_is_stored_whatever_its_bytes(tmp_path):
    state = tmp_path / "state"
    odd = tmp_path / os.fsdecode(b"p\xff\xfe\n<b>.parquet")
    odd.write_bytes(b"x")
    model = "gpt\u202e\u0000\ud800 <script>"
    run = start_run(state, ["route", os.fsdecode(b"--pool=\xff")], lambda: T0)
    run.write("route", "done", inputs=[run.ref("pool", odd)],
              models=[ModelUse("cheap", "a\u2028", model, "127.0.0.1:9", "p" * 64, "g" * 64)])
    [record] = read_runs(state)
    assert record.inputs[0].path == "p\\xff\\xfe\n<b>.parquet"
    assert record.command[-1] == "--pool=\\xff"
    assert record.models[0].model == "gpt\u202e\u0000\ufffd <script>"
    assert record.models[0].voter == "a\u2028"


def test_a_record_never_holds_a_secret(tmp_path):
    key = "sk-secret/+=Ä"
    run = start_run(tmp_path / "state", ["mail", f"--password={key}"], lambda: T0, [key, None])
    path = run.write("mail", "done", settings={"note": f"Bearer {key}", key: 1},
                     counts={"sent": 1})
    text = path.read_text()
    for form in (key, json.dumps(key)[1:-1], "sk-secret"):
        assert form not in text
    assert "[secret]" in text


@pytest.mark.parametrize("change, field", [
    (lambda d: d.pop("kind"), "`kind`"),
    (lambda d: d.update(kind="dance"), "`kind`"),
    (lambda d: d.update(status="half"), "`status`"),
    (lambda d: d.update(schema_version=2), "`schema_version`"),
    (lambda d: d.update(counts={"rows": "3"}), "`counts`"),
    (lambda d: d.update(cost_usd=-1), "`cost_usd`"),
    (lambda d: d.update(inputs=[{"role": "pool"}]), "`inputs`"),
    (lambda d: d.update(models=[{"voter": 1}]), "`models`"),
    (lambda d: d.update(command=["reporter", 3]), "`command`"),
])
def test_the_reader_refuses_a_bad_record_naming_the_file_and_the_field(tmp_path, change, field):
    state = tmp_path / "state"
    path = start_run(state, ["fetch"], lambda: T0).write("fetch", "done", counts={"rows": 1})
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        read_runs(state)
    assert str(path) in str(caught.value) and field in str(caught.value)


def test_the_reader_refuses_a_file_that_is_not_json_or_too_large(tmp_path):
    folder = tmp_path / "state" / "runs" / "2026"
    folder.mkdir(parents=True)
    bad = folder / "x.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match=str(bad)):
        read_runs(tmp_path / "state")
    bad.write_bytes(b" " * (4 * 1024 * 1024 + 1))
    with pytest.raises(InputError, match="more than"):
        read_runs(tmp_path / "state")


def test_no_records_is_an_empty_list(tmp_path):
    assert read_runs(tmp_path / "state") == []


KILLED_AT_LINK = """
import os, signal, sys
from datetime import datetime, timezone
import reporter.files as files
def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
files.os.link = die
from reporter.runs import start_run
start_run(sys.argv[1], ["fetch"], lambda: datetime(2026, 7, 7, tzinfo=timezone.utc)).write("fetch", "done")
"""


def test_a_run_killed_while_writing_leaves_no_record_and_its_temporary_is_swept(tmp_path):
    state = tmp_path / "state"
    done = subprocess.run([sys.executable, "-c", KILLED_AT_LINK, str(state)], cwd=Path(__file__).parent.parent)
    assert done.returncode == -9
    folder = state / "runs" / "2026"
    [left] = os.listdir(folder)
    assert left.startswith(".tmp-")  # the killed run's own temporary, locked until it died
    assert read_runs(state) == []
    start_run(state, ["fetch"], lambda: T0).write("fetch", "done")
    assert [p for p in os.listdir(folder) if p.startswith(".tmp-")] == []
    assert len(read_runs(state)) == 1
