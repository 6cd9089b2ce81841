"""Two small workspaces through `reporter.build.build()` (the real orchestrator), byte-compared with golden copies,
`manifest.json` included (issue 31, item 7).

`routed`: the site fixture's pool, rule book and labels, with a [digest] whose criteria judge has recorded its
answers (run against the fake OpenAI server in the test, before the build) and a certificate (drawn, labelled and
certified between a first build and a second). `digest-only`: the made-up digest weeks with no routing side. The
golden copies live in tests/golden/built/ and are rewritten only by
`pytest tests/test_site_golden_build.py --regen-golden`.

Masked before comparing, as tests/test_site_golden.py masks them: the release ids and the normalisation digest,
the certified sheets' sha256 (they name the release), the pyarrow and Unicode versions, the vendored stylesheet
and script, and the judge's generation (it hashes the fake server's URL, whose port the system picks) with the
sha256 of the judged week's decisions.json, which records it (and the feed entry's id, made from that sha256). Every
file's sha256 and size in `manifest.json` is first checked against the file itself, then, for a file whose text
was masked, replaced by the sha256 and size of the masked text; everything else of the manifest is compared
byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from conftest import SITE_WORKSPACE, certify_fixture
from support.fake_openai import FakeOpenAI
from support.judge import KEY, KEY_ENV, judgement, judge_workspace
from test_site_golden import CSP, STATIC, VERSION_LINE, _masks

from reporter.build import build
from reporter.config import load_workspace
from reporter.digest.judge.prompt import judge_setup
from reporter.digest.judge.run import run_judge
from reporter.site.feed import entry_id

GOLDEN = Path(__file__).parent / "golden" / "built"
MADE_UP = Path(__file__).parent / "fixtures" / "digest" / "made-up"
JUDGED_WEEK = "2026-W20"
AS_OF = date(2026, 5, 25)  # the Monday after 2026-W21: both made-up weeks and the judged week have ended
ROUTED = ('pool = "pool_v2.jsonl"\nspecs = "specs_v2"\nlabels = "labels.csv"\nreleases = "releases"\n'
          'site = "site"\nlabel = "2026-W21"\n[certify]\nmax_missed_fraction = 0.1\n')


def routed_workspace(root: Path) -> tuple[Path, list[tuple[str, str]]]:
    """The routed workspace, judged and certified and built twice; with the masks its site needs."""
    with FakeOpenAI(default=judgement("in_scope", reason="It studies LLM judges.")) as server:
        made = judge_workspace(root, server.base_url, {JUDGED_WEEK: 3})
        server.titles = made["titles"]
        toml = (root / "reporter.toml").read_text(encoding="utf-8")
        digest = toml[toml.index("[digest]"):]
        (root / "reporter.toml").write_text(ROUTED + digest, encoding="utf-8")
        shutil.copy(SITE_WORKSPACE / "pool_v2.jsonl", root)
        shutil.copy(SITE_WORKSPACE / "labels.csv", root)
        shutil.copytree(SITE_WORKSPACE / "specs_v2", root / "specs_v2")
        ws = load_workspace(root)
        report = run_judge(ws.digest, [JUDGED_WEEK], environ={KEY_ENV: KEY}, progress=False)
        assert report.tiers[0].votes == 6 and server.total == 6
    first = build(ws, as_of=AS_OF, environ={}, progress=False)
    assert first.digest == (JUDGED_WEEK,) and first.release_id is not None
    certify_fixture(root)  # the certificate, drawn from the release the first build published
    again = build(load_workspace(root), as_of=AS_OF, environ={}, progress=False)
    assert again.release_id == first.release_id and not again.created
    generation = judge_setup(ws.digest.judge, ws.digest.criteria).generation.id
    # the judged week's decisions.json records the generation, so its sha256 (on the week's page) follows it
    decided = hashlib.sha256((root / "digests" / JUDGED_WEEK / "decisions.json").read_bytes()).hexdigest()
    return root / "site", _masks(root / "releases", [again.release_id]) + [
        (generation, "JUDGE-GENERATION"), (generation[:14], "JUDGE-GEN"),
        (decided, "JUDGED-DECISIONS-SHA256"), (decided[:12], "JUDGED-DECISIONS"),
        (entry_id(JUDGED_WEEK, decided), "urn:uuid:JUDGED-WEEK-ENTRY")]


def digest_only_workspace(root: Path) -> Path:
    """The made-up digest weeks (2026-W19 and W20) as a digest-only workspace, built once."""
    root.mkdir()
    for name in ("watchlist.txt", "criteria.md"):
        shutil.copy(MADE_UP / name, root / name)
    shutil.copytree(MADE_UP / "papers", root / "papers")
    (root / "reporter.toml").write_text('site = "site"\n[digest]\npapers = "papers"\nwatchlist = "watchlist.txt"\n'
                                        'criteria = "criteria.md"\narchive = "digests"\n', encoding="utf-8")
    report = build(load_workspace(root), as_of=AS_OF, environ={}, progress=False)
    assert report.release_id is None and report.digest == ("2026-W19", "2026-W20")
    return root / "site"


def masked(site: Path, subs: list[tuple[str, str]]) -> dict[str, str]:
    """Each file of the site with the machine's values masked, by its masked path; manifest.json as described."""
    out: dict[str, str] = {}
    changed: dict[str, str] = {}
    for path in sorted(site.rglob("*")):
        rel = path.relative_to(site).as_posix()
        if not path.is_file() or rel == "manifest.json":
            continue
        raw = path.read_text(encoding="utf-8")
        text, name = raw, rel
        for old, new in subs:
            text, name = text.replace(old, new), name.replace(old, new)
        text = CSP.sub("sha256-(vendored)", STATIC.sub(r"\1(vendored)\2", VERSION_LINE.sub(r"\1X.Y.Z", text)))
        out[name] = text
        if text != raw:
            changed[rel] = text
    manifest = json.loads((site / "manifest.json").read_text(encoding="utf-8"))
    files = {}
    for rel, entry in manifest["files"].items():
        data = (site / rel).read_bytes()
        assert (entry["sha256"], entry["bytes"]) == (hashlib.sha256(data).hexdigest(), len(data)), (
            f"manifest.json's entry for {rel} is not the file's")
        if rel in changed:
            data = changed[rel].encode("utf-8")
            entry = {**entry, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        name = rel
        for old, new in subs:
            name = name.replace(old, new)
        files[name] = entry
    out["manifest.json"] = json.dumps({**manifest, "files": files}, indent=2, sort_keys=True) + "\n"
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, dict[str, str]]:
    root = tmp_path_factory.mktemp("build_golden")
    site, subs = routed_workspace(root / "routed")
    return {"routed": masked(site, subs), "digest-only": masked(digest_only_workspace(root / "digest-only"), [])}


def golden_pages() -> dict[str, dict[str, str]]:
    """The golden copies, as `built` gives them."""
    return {name: {p.relative_to(GOLDEN / name).as_posix(): p.read_text(encoding="utf-8")
                   for p in sorted((GOLDEN / name).rglob("*")) if p.is_file()} for name in ("routed", "digest-only")}


def test_the_built_sites_match_the_golden_copies(built, request):
    routed = built["routed"]
    assert {f"digest/{JUDGED_WEEK}.html", "manifest.json"} <= set(routed)
    assert 'id="judge"' in routed[f"digest/{JUDGED_WEEK}.html"], "the routed site has a judge week"
    assert any('id="certificates-table"' in text for text in routed.values()), "the routed site has a certificate"
    assert not any(p.startswith("releases/") for p in built["digest-only"]), "the digest-only site routes nothing"
    if request.config.getoption("--regen-golden"):
        shutil.rmtree(GOLDEN, ignore_errors=True)
        for name, pages in built.items():
            for rel, text in pages.items():
                (GOLDEN / name / rel).parent.mkdir(parents=True, exist_ok=True)
                (GOLDEN / name / rel).write_text(text, encoding="utf-8")
        pytest.skip(f"rewrote {sum(map(len, built.values()))} golden files in {GOLDEN}")
    if not GOLDEN.exists():
        pytest.fail(f"{GOLDEN} is missing; run pytest tests/test_site_golden_build.py --regen-golden")
    want = golden_pages()
    for name in ("routed", "digest-only"):
        assert sorted(built[name]) == sorted(want[name]), f"the set of {name} files differs from the golden copy"
        for rel in sorted(want[name]):
            assert built[name][rel] == want[name][rel], (
                f"{name}/{rel} differs from tests/golden/built (regenerate with --regen-golden if intended)")
