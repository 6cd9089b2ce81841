"""The disclosure kept at a hand-off (issue 36): `reporter export` keeps the release's methods disclosure, names it
in the provenance sidecar, and the site publishes each one kept as an archived page linked from the status page.

Against a real HTTP server (the fake OpenAI server), a real SQLite state database and the real site writer: the
kept disclosure is the one `reporter disclose` drafts at that moment, its id is the sha256 of its JSON, it is never
rewritten (a second export of the same records keeps the first), a later change of the records keeps a second one
beside it while the first page stays byte for byte, and a kept file changed afterwards is refused, nothing
written."""

from __future__ import annotations

import hashlib
import json

import pytest
from test_disclose import HOSTILE, disclose, screened

from reporter.cli import main
from reporter.hashing import canonical_json


def export(root, out, monkeypatch, epoch: str) -> dict:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    assert main(["export", "--workspace", str(root), "--out", str(out)]) == 0
    return json.loads((out.parent / (out.name + ".provenance.json")).read_text(encoding="utf-8"))


def render(root) -> None:
    assert main(["render", "--releases", str(root / "releases"), "--out", str(root / "site"),
                 "--workspace", str(root)]) == 0


def kept_files(root, rid):
    return sorted((root / "state" / "disclosure" / rid / "handoffs").glob("*.json"))


def test_the_export_keeps_the_disclosure_it_names_and_never_rewrites_it(tmp_path, monkeypatch, capsys):
    w = screened(tmp_path, monkeypatch, capsys, cheap=2, screen=3, other=2)
    root, rid = w["root"], w["release_dir"].name
    now = disclose(root, capsys)  # what the records say at the export
    prov = export(root, root / "handoff.csv", monkeypatch, "1783339200")
    [kept] = kept_files(root, rid)
    sid = hashlib.sha256(canonical_json(now).encode("utf-8")).hexdigest()
    assert prov["disclosure"] == {"id": sid, "file": f"state/disclosure/{rid}/handoffs/{sid}.json",
                                  "page": f"releases/{rid}/disclosure/{sid}.html"}
    data = json.loads(kept.read_text(encoding="utf-8"))
    assert kept.name == f"{sid}.json" and data["disclosure"] == now
    assert data["taken_at"] == "2026-07-06T12:00:00+00:00"
    assert data["handoff"] == {"file": "handoff.csv", "rows": prov["rows"], "sha256": prov["sha256"]}
    first = kept.read_bytes()
    # The same records again, a day later, to another file: the disclosure kept first stays as it was.
    prov2 = export(root, root / "again.csv", monkeypatch, "1783425600")
    assert prov2["disclosure"] == prov["disclosure"]
    assert kept_files(root, rid) == [kept] and kept.read_bytes() == first


def test_each_kept_disclosure_is_an_archived_page_linked_from_the_status_page(tmp_path, monkeypatch, capsys):
    w = screened(tmp_path, monkeypatch, capsys, cheap=2, screen=3, other=2)
    root, rid = w["root"], w["release_dir"].name
    render(root)
    status = (root / "site" / "releases" / rid / "status.html").read_text(encoding="utf-8")
    assert "No hand-off of this release has been exported yet" in status
    assert main(["render", "--releases", str(root / "releases"), "--out", str(tmp_path / "bare")]) == 0
    bare = (tmp_path / "bare" / "releases" / rid / "status.html").read_text(encoding="utf-8")
    assert "Rendered without a workspace: the methods disclosures kept" in bare
    prov = export(root, root / "handoff.csv", monkeypatch, "1783339200")
    render(root)
    page_path = root / "site" / prov["disclosure"]["page"]
    page = page_path.read_text(encoding="utf-8")
    doc = json.loads(kept_files(root, rid)[0].read_text(encoding="utf-8"))["disclosure"]
    # Every item's heading and status, and every flow box's count, as the JSON says them.
    for item in doc["items"]:
        assert f'<section id="{item["id"]}"' in page
    for box in doc["flow"]:
        assert f'<td class="n">{box["count"]:,}</td>' in page
    assert "handoff.csv" in page and prov["sha256"] in page
    manifest = json.loads((root / "site" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["files"][prov["disclosure"]["page"]]["archived"] is True
    status = (root / "site" / "releases" / rid / "status.html").read_text(encoding="utf-8")
    sid = prov["disclosure"]["id"]
    assert f'href="disclosure/{sid}.html"' in status and f"disclosure <code class=\"id\">{sid[:12]}" in status
    twin = page_path.with_suffix(".md").read_text(encoding="utf-8")
    assert "## M2. Tool, version and provider" in twin and "| step | decided by | works | detail |" in twin
    before = page_path.read_bytes()
    # A new record of the release (a certificate) changes the disclosure: the next hand-off keeps a second one;
    # the first page is not rewritten.
    sheet = root / "state" / "sheet.csv"
    assert main(["certify", "--workspace", str(root), "--pile", "discard", "--n", "2", "--out", str(sheet)]) == 0
    lines = sheet.read_text(encoding="utf-8").splitlines()
    head = lines[0].split(",")
    at = head.index("label")
    sheet.write_text("\n".join([lines[0]] + [",".join(c if i != at else "exclude" for i, c in enumerate(
        line.split(","))) for line in lines[1:]]) + "\n", encoding="utf-8")
    assert main(["certify", "--workspace", str(root), "--sheet", str(sheet), "--labeller", HOSTILE]) == 0
    prov2 = export(root, root / "handoff.csv", monkeypatch, "1783425600")
    assert prov2["disclosure"]["id"] != sid and len(kept_files(root, rid)) == 2
    render(root)
    assert page_path.read_bytes() == before
    second = (root / "site" / prov2["disclosure"]["page"]).read_text(encoding="utf-8")
    assert "<script>alert" not in second and "&lt;script&gt;alert(1)&lt;/script&gt;" in second
    status = (root / "site" / "releases" / rid / "status.html").read_text(encoding="utf-8")
    assert status.index(sid[:12]) < status.index(prov2["disclosure"]["id"][:12])  # oldest first


@pytest.mark.parametrize("tamper", ["content", "type"])
def test_a_kept_disclosure_changed_afterwards_is_refused_and_nothing_is_written(tmp_path, monkeypatch, capsys,
                                                                               tamper):
    w = screened(tmp_path, monkeypatch, capsys, cheap=2, screen=3, other=2)
    root, rid = w["root"], w["release_dir"].name
    export(root, root / "handoff.csv", monkeypatch, "1783339200")
    [kept] = kept_files(root, rid)
    data = json.loads(kept.read_text(encoding="utf-8"))
    if tamper == "content":
        data["disclosure"]["items"][0]["text"] = "a sentence nobody recorded"
    else:  # the content hash kept right, a field of the wrong type: refused before any template sees it
        data["disclosure"]["flow"][0]["count"] = "many"
        sid = hashlib.sha256(canonical_json(data["disclosure"]).encode("utf-8")).hexdigest()
        data["id"] = sid
        kept = kept.rename(kept.with_name(f"{sid}.json"))
    kept.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    assert main(["render", "--releases", str(root / "releases"), "--out", str(root / "site"),
                 "--workspace", str(root)]) == 2
    err = capsys.readouterr().err
    assert str(kept) in err
    assert ("changed after it was kept" if tamper == "content" else "flow[0].count must be a whole number") in err
    assert not (root / "site").exists()


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_the_kept_disclosure_reads_in_chromium_without_a_sideways_scroll(tmp_path, monkeypatch, capsys, width):
    from test_site_browser import ARGS, CHROMIUM
    if not CHROMIUM.exists():
        pytest.skip("no Chromium at /usr/bin/chromium")
    playwright = pytest.importorskip("playwright.sync_api")
    w = screened(tmp_path, monkeypatch, capsys, cheap=2, screen=3, other=2)
    root = w["root"]
    prov = export(root, root / "handoff.csv", monkeypatch, "1783339200")
    render(root)
    url = (root / "site" / prov["disclosure"]["page"]).resolve().as_uri()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(url, wait_until="load")
            for item in ("M2", "M3", "M4", "M5", "M6", "M7", "M8", "M9", "R1", "R2", "D1"):
                assert page.locator(f"#{item}-h").is_visible(), item
            page.locator("details.prompt summary").first.click()  # the prompt, opened, wraps too
            assert page.locator("details.prompt pre").first.is_visible()
            rows = page.locator("#disclosure-flow tbody tr").count()
            assert rows == len(json.loads((root / prov["disclosure"]["file"]).read_text())["disclosure"]["flow"])
            sideways = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert sideways <= 1, f"the page scrolls sideways by {sideways}px at {width}px"
        finally:
            browser.close()
