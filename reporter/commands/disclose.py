"""`reporter disclose`: draft a release's methods disclosure (PRISMA-trAIce, RAISE) from its run records.

It reads, never writes, the records of what ran: the run records (state/runs/), the release folder, the
screen's state database and raw replies (read-only), the certificates and the reader feedback; it writes
disclosure.md, disclosure.html and disclosure.json into --out (default: state/disclosure/<release id>/), or
prints the JSON (--json). docs/disclosure.md says where each item comes from.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from . import database_passwords

DEFAULT_OUT = Path("state") / "disclosure"
"""Where the disclosure goes without --out: state/disclosure/<release id>/ in the workspace."""


EPILOG = """\
examples (in the example workspace, the repository, after `reporter build`):
  reporter disclose
  reporter disclose --out disclosure --json

The first writes the newest release's disclosure into
state/disclosure/<release id>/ (disclosure.md, disclosure.html,
disclosure.json); the second into ./disclosure, printing the JSON.
--release 2026-W27 names another release. docs/disclosure.md says where
each item comes from.
"""


def register(sub: Any) -> None:
    """Add `disclose`."""
    p = sub.add_parser(
        "disclose", help="draft a release's methods disclosure (PRISMA-trAIce, RAISE) from the run records",
        description="Draft the methods disclosure of a release from what ran (the run records, the release, the "
                    "screen's answers, the certificates, the reader feedback): one section per PRISMA-trAIce item "
                    "(M2..M9, R1, R2, D1), every sentence with the records it comes from, every item the records "
                    "cannot fill marked as the author's. Markdown, HTML and JSON.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", type=Path, default=Path("."), metavar="DIR",
                   help="a folder with reporter.toml (default .)")
    p.add_argument("--release", metavar="ID",
                   help="a release: its folder, id, a unique prefix of 6 or more characters, or its label "
                        "(default: the newest)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="write disclosure.md, .html and .json here (default: state/disclosure/<release id>/)")
    p.add_argument("--json", action="store_true", help="print the disclosure as JSON (and write the files)")
    p.set_defaults(func=run_disclose)


def run_disclose(args: argparse.Namespace) -> int:
    from ..disclose.render import write
    doc, root, release_id = disclosure(args.workspace, args.release)
    out = args.out if args.out is not None else root / DEFAULT_OUT / release_id
    paths = write(doc, out, root)
    if args.json:
        print(json.dumps(doc, sort_keys=True, ensure_ascii=False))
    else:
        counts = {s: sum(i["status"] == s for i in doc["items"]) for s in ("filled", "partial", "author")}
        print(f"release {release_id[:12]}: {counts['filled']} items filled, {counts['partial']} partly, "
              f"{counts['author']} the author's; wrote {', '.join(str(p) for p in paths)}")
    return 0


def disclosure(workspace: Path, release: str | None) -> tuple[dict[str, Any], Path, str]:
    """The disclosure of a workspace's release as JSON values, with the workspace's root and the release id."""
    from ..config import load_workspace  # every stage's settings: a run's, not `--help`'s
    from ..routing.published import find_release
    ws = database_passwords(load_workspace(workspace), os.environ)
    ws.routing("reporter disclose")
    release_dir = find_release(ws.releases, release)
    return draft_of(ws, release_dir), ws.root, release_dir.name


def draft_of(ws: Any, release_dir: Path) -> dict[str, Any]:
    """The disclosure of a loaded workspace's release (its folder) as JSON values: what `reporter disclose`
    writes, and what `reporter export` keeps with a hand-off."""
    from ..certify.results import certificate_path, load_certificates
    from ..digest.archive import archived_weeks
    from ..digest.feedback import FEEDBACK_FILE, measure, read_marks
    from ..disclose.evidence import Evidence, observed_models, rel, release_runs
    from ..disclose.results import draft
    from ..routing.artifacts import MANIFEST_FILE, load_release
    from ..runs import state_of
    from ..screening.report import workspace_labels, workspace_report
    root, state = ws.root, state_of(ws.root)
    rid = release_dir.name
    runs = release_runs(state, root, rid)
    screen = workspace_report(ws, release_dir, workspace_labels(ws)) if ws.screen is not None else None
    generations = {m.generation for _, r in runs if r.kind == "screen" for m in r.models}
    scopes = {t.tier: frozenset(t.scope.work_ids) for t in screen.tiers} if screen is not None else None
    observed = observed_models(ws.screen.raw_dir if ws.screen is not None else None, root, sorted(generations),
                               scopes)
    certificates = tuple((rel(certificate_path(state, rid, c.stratum), root), c)
                         for c in load_certificates(state, rid))
    feedback, feedback_source = None, ""
    marks = read_marks(state) if (state / FEEDBACK_FILE).exists() and ws.digest is not None else []
    if marks:
        feedback, feedback_source = measure(archived_weeks(ws.digest.archive), marks), rel(state / FEEDBACK_FILE, root)
    labels = getattr(ws, "labels", None)
    ev = Evidence(root=root, release=load_release(release_dir.parent, rid, release_dir),
                  release_source=rel(release_dir / MANIFEST_FILE, root), runs=runs, screen=screen,
                  screen_settings=ws.screen, observed=observed, certificates=certificates, feedback=feedback,
                  feedback_source=feedback_source, labels_source=rel(labels, root) if labels is not None else "")
    return draft(ev)
