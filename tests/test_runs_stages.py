"""`reporter mail`, `reporter certify` and `reporter fetch` each write one run record of what they changed."""

from __future__ import annotations

from support.fake_sources import cli_main, fake_server  # noqa: F401 (fixture)
from test_certify_sheets import label, run as certify, ws  # noqa: F401 (fixture)
from test_fetch_command import WEEK, _ws
from test_mail_send import PASSWORD, PASSWORD_ENV, Mailbox, _login, mail, site, smtp_server, workspace  # noqa: F401

from reporter.runs import read_runs


def test_a_send_writes_one_record_and_never_the_password(site, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv(PASSWORD_ENV, PASSWORD)
    box = Mailbox()
    with smtp_server(box, auth_required=True, auth_require_tls=False, authenticator=_login) as port:
        root = workspace(tmp_path, site, port, username="bot", password_env=PASSWORD_ENV)
        assert mail(root, "--week", "2026-W20", "--send") == 0
        assert mail(root, "--week", "2026-W20", "--send") == 0  # sends nothing: no record
        assert mail(root, "--week", "2026-W20") == 0  # the dry run: no record
    [record] = read_runs(root / "state")
    assert record.kind == "mail" and record.counts == {"sent": 1, "recipients": 2, "resend": 0}
    assert [o.role for o in record.outputs] == ["sent record"] and record.outputs[0].path == "state/mail-sent.json"
    assert record.inputs[0].role == "message" and record.settings["password_env"] == PASSWORD_ENV
    for path in (root / "state" / "runs").rglob("*"):
        assert not path.is_file() or PASSWORD.encode() not in path.read_bytes()


def test_a_certificate_writes_one_record(ws, tmp_path, capsys):  # noqa: F811
    sheet = tmp_path / "s.csv"
    certify(capsys, ws, "--pile", "discard", "--n", 20, "--out", sheet)
    assert read_runs(ws / "state") == []  # drawing a sample writes a sheet, not the workspace's state
    label(sheet, lambda i, r: "Include" if i == 4 else "exclude")
    code, _, _ = certify(capsys, ws, "--sheet", sheet, "--json")
    assert code == 0
    [record] = read_runs(ws / "state")
    assert record.kind == "certify" and record.counts["drawn"] == 20 and record.counts["labelled"] == 20
    assert record.inputs[0].role == "sheet" and record.outputs[0].path.startswith("state/certify/")
    assert record.settings["stratum"] == "discard"


def test_a_fetched_window_writes_one_record(tmp_path, fake, capsys):
    root = _ws(tmp_path, fake)
    assert cli_main(["fetch", "--workspace", str(root), *WEEK]) == 0
    assert cli_main(["fetch", "--workspace", str(root), *WEEK, "--dry-run"]) == 0
    [record] = read_runs(root / "state")
    assert record.kind == "fetch" and record.counts["records"] == 14 and record.counts["arxiv.records"] == 4
    assert record.outputs[0].path == "papers/2026-W20.jsonl" and len(record.outputs[0].sha256) == 64
    assert record.settings["since"] == "2026-05-11" and record.command[:2] == ("reporter", "fetch")


def _digest_workspace(tmp_path):
    """The example's digest-only workspace (two real arXiv weeks of cs.GT, examples/digest/), copied."""
    import shutil
    from pathlib import Path

    example = Path(__file__).resolve().parent.parent / "examples" / "digest"
    root = tmp_path / "ws"
    root.mkdir()
    for name in ("papers", "watchlist.txt", "criteria.md"):
        (shutil.copytree if (example / name).is_dir() else shutil.copy)(example / name, root / name)
    (root / "reporter.toml").write_text('[site]\npath = "site"\n[digest]\npapers = "papers"\nwatchlist = '
                                        '"watchlist.txt"\ncriteria = "criteria.md"\narchive = "digests"\n')
    return root


def test_each_published_digest_week_writes_one_record_and_an_unchanged_one_none(tmp_path, capsys):
    """Issue 31, item 6: `reporter digest` and `reporter build` publish a week through one function, which writes
    the week's record: its inputs as decisions.json names them, decisions.json written, the decisions counted."""
    import json

    from reporter import cli

    root = _digest_workspace(tmp_path)
    assert cli.main(["digest", "--workspace", str(root), "--week", "2026-W25"]) == 0
    [w25] = read_runs(root / "state")
    doc = json.loads((root / "digests" / "2026-W25" / "decisions.json").read_text())
    decided = [d["decision"] for d in doc["decisions"]]
    assert w25.kind == "digest" and w25.status == "done" and w25.settings["week"] == "2026-W25"
    assert w25.counts == {"papers": len(decided), "keep": decided.count("KEEP"), "review": decided.count("REVIEW"),
                          "drop": decided.count("DROP"), "listed_again": 0}
    assert {i.role: i.sha256 for i in w25.inputs} == {role: ref["sha256"] for role, ref in doc["inputs"].items()
                                                     if role != "prior"}
    assert [(o.role, o.path) for o in w25.outputs] == [("decisions", "digests/2026-W25/decisions.json")]
    assert w25.command[:2] == ("reporter", "digest")
    assert cli.main(["digest", "--workspace", str(root), "--week", "2026-W25"]) == 0  # unchanged: no record
    assert len(read_runs(root / "state")) == 1
    assert cli.main(["build", "--workspace", str(root)]) == 0  # publishes W26 (its prior: W25)
    records = read_runs(root / "state")
    [w26] = [r for r in records if r.settings.get("week") == "2026-W26"]
    assert len(records) == 2 and w26.command[:2] == ("reporter", "build")
    w25_sha = next(o.sha256 for o in w25.outputs)
    assert ("prior", "2026-W25/decisions.json", w25_sha) in {(i.role, i.path, i.sha256) for i in w26.inputs}
    capsys.readouterr()
