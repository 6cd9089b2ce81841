"""Topics (issue 33, item 6), as far as they are built: `[digest.topics.NAME]` tables, each topic decided into
its own archive by `reporter digest --topic NAME`, its title on its pages, in its feed and its e-mail Subject,
and `reporter feedback --topic NAME` marking its papers in its own record. A workspace without topics is as it
was (tests/test_site_golden_build.py: its built site, byte for byte)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from support.digest import digest_workspace
from support.site import parse_html

from reporter.build import render_site
from reporter.cli import main
from reporter.config import load_workspace
from reporter.digest.records import paper_key
from reporter.errors import InputError

PAPERS = [("doi:10.5555/a", "Gaussian splatting for scenes", "We evaluate Gaussian splatting."),
          ("doi:10.5555/b", "LLM agents for software engineering", "Coding agents fix bugs with LLM agents."),
          ("doi:10.5555/c", "Soil carbon surveys", "Soil samples from farms."),
          ("doi:10.5555/d", "LLM agents edit Gaussian splatting scenes", "LLM agents drive Gaussian splatting.")]
TOML = ('semantic = false\n'
        '[digest.topics.agents]\ntitle = "LLM agents <for> SE"\nwatchlist = "agents-w.txt"\ncriteria = "agents-c.md"\n'
        'max_kept = 3\nrecipients = ["dev@example.org"]\n')


def _workspace(root: Path, toml: str = TOML) -> Path:
    return digest_workspace(root, {"2026-W25": PAPERS}, "Gaussian splatting\n",
                            "## In scope\n- Splatting: `Gaussian splatting`\n", toml,
                            {"agents-w.txt": "LLM agents\n",
                             "agents-c.md": "## In scope\n- Agents: `LLM agents`, `coding agent*`\n"})


def _kept(archive: Path) -> list[str]:
    doc = json.loads((archive / "2026-W25" / "decisions.json").read_text())
    return [d["id"] for d in doc["decisions"] if d["decision"] == "KEEP"]


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = _workspace(tmp_path_factory.mktemp("topics") / "ws")
    assert main(["digest", "--workspace", str(root), "--week", "2026-W25"]) == 0
    assert main(["digest", "--workspace", str(root), "--topic", "agents", "--week", "2026-W25"]) == 0
    return root




def test_each_topic_is_decided_into_its_own_archive(ws):
    assert sorted(_kept(ws / "digests")) == ["doi:10.5555/a", "doi:10.5555/d"]
    assert sorted(_kept(ws / "digests/topics/agents")) == ["doi:10.5555/b", "doi:10.5555/d"]
    doc = json.loads((ws / "digests/topics/agents/2026-W25/decisions.json").read_text())
    assert doc["settings"]["topic"] == {"name": "agents", "title": "LLM agents <for> SE"}
    assert doc["settings"]["max_kept"] == 3 and doc["settings"]["watchlist"] == "agents-w.txt"
    default = json.loads((ws / "digests/2026-W25/decisions.json").read_text())
    assert "topic" not in default["settings"], "the [digest] table's own digest is as it always was"
    assert sorted(p.name for p in (ws / "digests").iterdir()) == ["2026-W25", "topics"]


def test_the_topic_s_title_is_on_its_page_feed_and_e_mail(ws):
    render_site(None, ws / "site-agents", digests_dir=ws / "digests/topics/agents", progress=False)
    site = ws / "site-agents" / "digest"
    tree = parse_html((site / "2026-W25.html").read_text(encoding="utf-8"))
    assert tree.find("h1").text() == "Weekly digest 2026-W25: LLM agents <for> SE"
    assert "<for>" not in (site / "2026-W25.html").read_text(encoding="utf-8"), "escaped"
    feed = ET.fromstring((site / "feed.xml").read_bytes())
    ns = {"a": "http://www.w3.org/2005/Atom"}
    assert feed.find("a:title", ns).text == "Weekly digest: LLM agents <for> SE"
    assert feed.find("a:entry/a:title", ns).text == "Weekly digest 2026-W25: LLM agents <for> SE, 2 kept"
    eml = (site / "2026-W25.eml").read_text(encoding="utf-8")
    assert "Subject: Weekly digest 2026-W25: LLM agents <for> SE, 2 papers kept\n" in eml.replace("\r\n", "\n")
    render_site(None, ws / "site-default", digests_dir=ws / "digests", progress=False)
    page = parse_html((ws / "site-default/digest/2026-W25.html").read_text(encoding="utf-8"))
    assert page.find("h1").text() == "Weekly digest 2026-W25"


def test_feedback_per_topic(ws, capsys):
    key = paper_key("doi:10.5555/b")
    assert main(["feedback", "--workspace", str(ws), "--topic", "agents", "--wanted", key, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["topic"] == "agents" and out["quality"]["keep_wanted"] == 1
    marks = json.loads((ws / "state/topics/agents/feedback.json").read_text())["marks"]
    assert [(m["id"], m["mark"]) for m in marks] == [("doi:10.5555/b", "wanted")]
    assert not (ws / "state/feedback.json").exists(), "the default topic's record is its own"
    assert main(["feedback", "--workspace", str(ws), "--not-wanted", key]) == 0  # the same paper, the other digest
    assert [m["mark"] for m in json.loads((ws / "state/feedback.json").read_text())["marks"]] == ["not-wanted"]
    assert len(json.loads((ws / "state/topics/agents/feedback.json").read_text())["marks"]) == 1
    assert main(["feedback", "--workspace", str(ws), "--topic", "nope", "--wanted", key]) == 2
    assert "--topic 'nope': no such topic; this workspace has default, agents" in capsys.readouterr().err


@pytest.mark.parametrize("table, message", [
    ('[digest.topics.Bad]\ntitle = "x"\nwatchlist = "w.txt"\ncriteria = "c.md"\n', "topic name 'Bad' must be"),
    ('[digest.topics.default]\ntitle = "x"\nwatchlist = "w.txt"\ncriteria = "c.md"\n', "and not 'default'"),
    ('[digest.topics.x]\nwatchlist = "w.txt"\ncriteria = "c.md"\n', "[digest.topics.x]: key 'title'"),
    ('[digest.topics.x]\ntitle = "x"\nwatchlist = "w.txt"\ncriteria = "c.md"\narchive = "digests"\n',
     "must not be the [digest] table's archive"),
    ('[digest.topics.x]\ntitle = "x"\nwatchlist = "w.txt"\ncriteria = "c.md"\nrecipients = ["nobody"]\n',
     "[digest.topics.x]: key 'recipients' holds 'nobody'"),
    ('[digest.topics.x]\ntitle = "x"\nwatchlist = "w.txt"\ncriteria = "c.md"\ncolour = 1\n', "unknown key 'colour'"),
])
def test_a_bad_topic_is_refused_naming_it(tmp_path, table, message):
    base = TOML.split("[digest.topics.agents]")[0]
    root = _workspace(tmp_path / "ws", base + table)
    with pytest.raises(InputError) as err:
        load_workspace(root)
    assert message in str(err.value)


def test_the_workspace_lists_its_topics(tmp_path):
    ws = load_workspace(_workspace(tmp_path / "ws"))
    assert ws.digest.topic_names() == ("default", "agents")
    agents = ws.digest.topic("agents")
    assert (agents.name, agents.title, agents.max_kept, agents.archive) == (
        "agents", "LLM agents <for> SE", 3, (tmp_path / "ws/digests/topics/agents").resolve())
    assert ws.digest.topics[0].recipients == ("dev@example.org",)
    assert ws.digest.topic("default") is ws.digest


def test_a_build_decides_publishes_and_renders_every_topic(tmp_path):
    from datetime import date

    from reporter.build import build

    root = _workspace(tmp_path / "ws")
    report = build(load_workspace(root), progress=False, as_of=date(2026, 7, 1))
    assert report.digest == ("2026-W25",) and report.topic_weeks == ("agents 2026-W25",)
    # Decided together, each week names the other topic that kept a paper too, whichever was decided first.
    default = json.loads((root / "digests/2026-W25/decisions.json").read_text())
    agents = json.loads((root / "digests/topics/agents/2026-W25/decisions.json").read_text())
    named = [{"name": "agents", "title": "LLM agents <for> SE"}]
    assert default["also_in"] == [{"id": "doi:10.5555/b", "topics": named}, {"id": "doi:10.5555/d", "topics": named}]
    named = [{"name": "default", "title": "Weekly digest"}]
    assert agents["also_in"] == [{"id": "doi:10.5555/a", "topics": named}, {"id": "doi:10.5555/d", "topics": named}]
    site = root / "site"
    page = parse_html((site / "digest/topics/agents/2026-W25.html").read_text(encoding="utf-8"))
    assert page.find("h1").text() == "Weekly digest 2026-W25: LLM agents <for> SE"
    crumbs = [a.attrs["href"] for a in page.find_all("a") if a.text() in ("Home", "Weekly digests")]
    assert crumbs[:2] == ["../../../index.html", "index.html"]
    index = parse_html((site / "digest/topics/agents/index.html").read_text(encoding="utf-8"))
    assert index.find("h1").text() == "Weekly digests: LLM agents <for> SE"
    feed = ET.fromstring((site / "digest/topics/agents/feed.xml").read_bytes())
    assert feed.find("{http://www.w3.org/2005/Atom}title").text == "Weekly digest: LLM agents <for> SE"
    main_feed = ET.fromstring((site / "digest/feed.xml").read_bytes())
    ids = [f.find("{http://www.w3.org/2005/Atom}id").text for f in (feed, main_feed)]
    assert ids[0] != ids[1], "two topics of the same papers have two feeds"
    eml = (site / "digest/topics/agents/2026-W25.eml").read_text(encoding="utf-8").replace("\r\n", "\n")
    assert "Subject: Weekly digest 2026-W25: LLM agents <for> SE, 2 papers kept\n" in eml
    entry = page.find("li", id=next(li.attrs["id"] for li in page.find_all("li")
                                    if li.attrs.get("id", "").startswith("p-doi-10.5555-d")))
    also = [(a.text(), a.attrs["href"]) for a in entry.find_all("a") if a.attrs["href"].startswith("../../")]
    assert also == [("Weekly digest", f"../../2026-W25.html#{entry.attrs['id']}")]
    twin = (site / "digest/topics/agents/2026-W25.md").read_text(encoding="utf-8")
    assert "  - Also in: [Weekly digest](../../2026-W25.md)\n" in twin
    back = parse_html((site / "digest/2026-W25.html").read_text(encoding="utf-8"))
    assert f'href="topics/agents/2026-W25.html#{entry.attrs["id"]}"' in (site / "digest/2026-W25.html").read_text(
        encoding="utf-8") and back.find("dt") is not None
    home = parse_html((site / "index.html").read_text(encoding="utf-8"))
    topics = home.find("p", id="digest-topics")
    assert [(a.text(), a.attrs["href"]) for a in topics.find_all("a")] == [
        ("LLM agents <for> SE", "digest/topics/agents/index.html")]
    assert "[LLM agents \\<for\\> SE](digest/topics/agents/index.md)" in (site / "index.md").read_text(encoding="utf-8")
    assert parse_html((site / "digest/2026-W25.html").read_text(encoding="utf-8")).find("h1").text() == \
        "Weekly digest 2026-W25"
    again = build(load_workspace(root), progress=False, as_of=date(2026, 7, 1))
    assert again.digest == () and again.topic_weeks == (), "published once"


def test_mail_sends_a_topic_s_edition_to_its_recipients(tmp_path, capsys):
    import email
    import socket
    from datetime import date
    from email.policy import default as default_policy

    from aiosmtpd.controller import Controller

    from reporter.build import build

    class Box:
        def __init__(self):
            self.got = []

        async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
            self.got.append((tuple(envelope.rcpt_tos), envelope.content))
            return "250 OK"

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mail = (f'[mail]\nsmtp_host = "127.0.0.1"\nsmtp_port = {port}\nstarttls = false\n'
            f'from = "Digest <digest@example.org>"\nto = ["all@example.org"]\n')
    root = _workspace(tmp_path / "ws", TOML)
    toml = (root / "reporter.toml").read_text().replace('site = "site"\n',
                                                        '[site]\npath = "site"\nbase_url = "https://example.org/d"\n')
    (root / "reporter.toml").write_text(toml.replace("[digest]\n", mail + "[digest]\n", 1))
    build(load_workspace(root), progress=False, as_of=date(2026, 7, 1))
    box = Box()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        ws = ["--workspace", str(root), "--week", "2026-W25", "--send"]
        assert main(["mail", *ws, "--topic", "agents"]) == 0
        assert main(["mail", *ws]) == 0, "the default topic's week is another message, not sent yet"
        assert main(["mail", *ws, "--topic", "agents"]) == 0  # sent already: nothing goes out
    finally:
        controller.stop()
    assert [to for to, _ in box.got] == [("dev@example.org",), ("all@example.org",)]
    subjects = [email.message_from_bytes(c, policy=default_policy)["Subject"] for _, c in box.got]
    assert subjects == ["Weekly digest 2026-W25: LLM agents <for> SE, 2 papers kept",
                        "Weekly digest 2026-W25: 2 papers kept"]
    sent = json.loads((root / "state/mail-sent.json").read_text())["sent"]
    assert [s["eml"] for s in sent] == ["digest/topics/agents/2026-W25.eml", "digest/2026-W25.eml"]
    assert "2026-W25: already sent" in capsys.readouterr().out


def test_a_topic_s_keeps_are_checked_against_the_graph_in_a_build(tmp_path):
    import shutil
    from datetime import date

    from reporter.build import build

    root = _workspace(tmp_path / "ws")
    shutil.copy(Path(__file__).resolve().parents[1] / "examples/novelty/events.jsonl", root / "events.jsonl")
    (root / "reporter.toml").write_text('graph = "events.jsonl"\n' + (root / "reporter.toml").read_text())
    build(load_workspace(root), progress=False, as_of=date(2026, 7, 1))
    for archive in ("digests", "digests/topics/agents"):
        rows = [json.loads(x) for x in (root / archive / "2026-W25/novelty.jsonl").read_text().splitlines()]
        assert sorted(r["id"] for r in rows) == sorted(_kept(root / archive)), archive


def test_the_build_command_names_the_topics_weeks(tmp_path, capsys, monkeypatch):
    root = _workspace(tmp_path / "ws")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1782734400")  # 2026-06-29: 2026-W25 has ended
    assert main(["build", "--workspace", str(root)]) == 0
    out = capsys.readouterr().out
    assert "digest: decided and published 2026-W25\n" in out
    assert "digest topics: decided and published agents 2026-W25\n" in out


def test_render_with_the_workspace_shows_the_topics_it_published(ws):
    assert main(["render", "--workspace", str(ws), "--out", str(ws / "rendered")]) == 0
    page = parse_html((ws / "rendered/digest/topics/agents/2026-W25.html").read_text(encoding="utf-8"))
    assert page.find("h1").text() == "Weekly digest 2026-W25: LLM agents <for> SE"
    assert not (ws / "digests/topics/agents/2026-W26").exists(), "a render decides nothing"
