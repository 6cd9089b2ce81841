"""`reporter route` and `reporter diagnose`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

from ..errors import InputError
from . import find_workspace
from ..routing.folder import RELEASE_FILES


def register(sub: argparse._SubParsersAction) -> None:
    """Add the routing commands."""
    p = sub.add_parser(
        "route", help="route the pool into piles and write a release folder",
        description="Score every work of the pool against every rule of the rule book, put each in "
                    f"exactly one pile, and write releases/<release_id>/ ({', '.join(RELEASE_FILES)}).",
        epilog="Examples:\n  reporter route --workspace .\n"
               "  reporter route --workspace . --label 2026-W27\n"
               "  reporter route --pool data/pool.parquet --specs specs --out releases --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _inputs(p)
    p.add_argument("--out", type=Path, help="the releases folder (default: the workspace's, else ./releases)")
    p.add_argument("--seed", type=int, default=None, help="seed of the samples the release shows (default 0)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes routing batches (default: one per core; 1: route in this process)")
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="route on the workers of this Dask scheduler (tcp://host:8786) instead of local processes; "
                        "default: [route] dask in reporter.toml; --dask '' routes here (docs/scale.md)")
    p.add_argument("--label", default=None,
                   help="name the release (one line, at most 100 characters, e.g. 2026-W27; default: `label` in "
                        "reporter.toml). Recorded in published.json when the release is first published, never "
                        "changed after; not a release input, so it never changes the id")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run_route)

    d = sub.add_parser(
        "diagnose", help="sample a pile or a rule's wins, matches or domain misses; measure precision",
        description="Seeded, reproducible samples with the matched span in context, and each rule's "
                    "precision (Wilson 95% interval) from a labels file (work_id,label).",
        epilog="Examples (in the example workspace, after `reporter build`):\n"
               "  reporter diagnose --pile discard --n 10\n"
               "  reporter diagnose --rule osf-materials --of domain-misses\n"
               "  reporter diagnose --labels data/labels.csv --json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _inputs(d)
    d.add_argument("--release", type=Path, help="a release folder (default: the newest in the releases folder)")
    d.add_argument("--releases", type=Path, help="the releases folder (default: the workspace's)")
    target = d.add_mutually_exclusive_group()
    target.add_argument("--pile", help="sample this pile")
    target.add_argument("--rule", help="sample this rule's rows (see --of)")
    d.add_argument("--of", default="wins", choices=["wins", "matches", "domain-misses"],
                   help="with --rule: which rows (default wins)")
    d.add_argument("--n", type=int, default=20, help="sample size (default 20)")
    d.add_argument("--seed", type=int, default=0, help="sample seed (default 0)")
    d.add_argument("--json", action="store_true", help="print JSON")
    d.set_defaults(func=run_diagnose)


def _inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workspace", type=Path, help="a folder with reporter.toml (default: . when it has one)")
    p.add_argument("--pool", type=Path, help="the pool: Parquet file or folder, JSONL or CSV")
    p.add_argument("--specs", type=Path, help="the rule book folder (rules/*.json, piles.json)")
    p.add_argument("--overlay", type=Path, help="optional overlay of work_id, abstract[, title]")
    p.add_argument("--labels", type=Path, help="optional labels file work_id,label (include/exclude)")


def resolve_inputs(args) -> dict:
    """Merge explicit flags over the workspace file (flags win)."""
    ws = None
    found = find_workspace(args.workspace, inputs_given=args.pool is not None)
    if found is not None:
        # The workspace imports every stage's settings: only a route that reads one pays for them.
        from ..config import load_workspace
        ws = load_workspace(found)
    pick = lambda flag, key: flag if flag is not None else (getattr(ws, key) if ws else None)  # noqa: E731
    values = {
        "pool": pick(args.pool, "pool"), "specs": pick(args.specs, "specs"),
        "overlay": pick(args.overlay, "overlay"), "labels": pick(args.labels, "labels"),
        "releases": pick(getattr(args, "out", None) or getattr(args, "releases", None), "releases"),
        "seed": ws.sample_seed if ws else 0, "workspace": ws,
    }
    if (values["pool"] is None or values["specs"] is None) and ws is not None:
        ws.routing("routing")  # a digest-only workspace: the one message naming the keys to add
    if values["pool"] is None or values["specs"] is None:
        from ..config import START_HINT
        raise InputError(f"name the pool and the rule book: --pool PATH --specs DIR, or --workspace DIR with a "
                         f"reporter.toml (none here); {START_HINT}")
    if values["releases"] is None:
        values["releases"] = Path("releases")
    return values


def run_route(args) -> int:
    """Route and report."""
    from ..clock import build_date
    from ..routing.published import check_release_name
    from ..routing.release import route_release
    from ..routing.specs import load_rulebook
    from ..routing.textscan import scan_engine
    release_name = check_release_name(args.label, "--label")  # checked before anything is read or written
    v = resolve_inputs(args)
    ws = v["workspace"]
    if ws is not None and ws.example is not None and v["pool"] == ws.pool and not ws.pool.exists():
        raise InputError(f"{ws.pool}: the pool does not exist yet; [example] in {ws.file} makes it (invented works, "
                         f"and their labels) at the first `reporter build`: run that, or point `pool` at your data")
    if release_name is None and ws is not None:
        release_name = ws.release_name
    as_of = build_date(os.environ)  # SOURCE_DATE_EPOCH when set, as `reporter build` dates its run
    engine = scan_engine(os.environ)  # REPORTER_SCAN_ENGINE, checked before anything is read
    seed = args.seed if args.seed is not None else v["seed"]
    labels = None
    if v["labels"] is not None:
        from ..routing.labels import label_stats_for, load_labels, write_label_stats  # polars, only when asked for
        labels = load_labels(v["labels"])  # checked before routing writes
    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be 1 or more, not {args.workers}")
    route = v["workspace"].route if v["workspace"] is not None else None
    dask = args.dask if args.dask is not None else (route.dask if route is not None else None)
    dask = dask or None  # --dask "" routes here whatever reporter.toml says
    from ..runs import start_command_run, state_of
    from ..routing.release import write_route_run
    # the record goes to the workspace's state folder; without one, to the releases folder's neighbour
    run = start_command_run(args, state_of(ws.root if ws is not None else Path(v["releases"]).parent), os.environ)
    from ..routing.workers import keep_freed_memory, no_huge_pages
    keep_freed_memory()
    no_huge_pages()
    result = route_release(v["pool"], v["specs"], v["releases"], overlay=v["overlay"],
                           sample_seed=seed, workers=args.workers, progress=not args.json or sys.stderr.isatty(),
                           dask=dask, release_name=release_name, as_of=as_of, engine=engine)
    if labels is not None:
        found = label_stats_for(result.release_dir, labels, load_rulebook(v["specs"]))
        write_label_stats(result.release_dir, found)
    write_route_run(run, result, pool=v["pool"], specs=v["specs"], overlay=v["overlay"], labels=v["labels"],
                    settings={"sample_seed": seed, "workers": args.workers, "dask": dask, "label": release_name,
                              "scan_engine": engine, "as_of": as_of.isoformat()})
    _warn_no_text(result.release_dir)
    if args.json:
        print(json.dumps({"release_id": result.release_id, "release_dir": str(result.release_dir),
                          "piles": result.piles, "pending": result.pending, "rows": result.rows,
                          "created": result.created, "published": result.published}, sort_keys=True))
        return 0
    state = "new release" if result.created else "unchanged: an identical release exists"
    print(f"release {result.release_id}  ({state})")
    shown = result.published or {}
    if shown:
        print(f"  label {shown.get('label') or '(none)'}, first written {shown.get('first_written')}")
    if not result.created and release_name is not None and shown.get("label") != release_name:
        print(f"  note: label {release_name!r} not applied: a published release keeps its published.json "
              f"(docs/release-format.md)", file=sys.stderr)
    print(f"  {result.rows:,} works -> {result.release_dir}")
    for pile, n in result.piles.items():
        extra = ""
        if pile == "pending":
            extra = "  (" + ", ".join(f"{k} {c:,}" for k, c in result.pending.items()) + ")"
        print(f"  {pile:<14} {n:>12,}{extra}")
    return 0


def _warn_no_text(release_dir: Path) -> None:
    """On stderr: how many works of screening piles wait as pending/no_text, and what to set (none: nothing)."""
    from ..routing.stats import no_text_note
    note = no_text_note(release_dir)
    if note:
        print(note, file=sys.stderr)


def run_diagnose(args) -> int:
    """Sample and measure."""
    from ..routing.diagnose import sample, select_rows
    from ..routing.index import read_index
    from ..routing.routing_table import routing_file
    from ..routing.labels import label_stats, load_labels
    from ..routing.specs import load_rulebook
    import polars as pl
    if args.n < 1:
        raise InputError(f"--n {args.n}: the sample size must be 1 or more")
    v = resolve_inputs(args)
    release = args.release
    if release is None:
        ids = read_index(v["releases"])
        if not ids:
            raise InputError(f"{v['releases']}: no releases yet; run `reporter route` first")
        release = Path(v["releases"]) / ids[-1]
    routing = routing_file(release)
    if not routing.exists():
        raise InputError(f"{release}: not a release folder (no {routing.name})")
    book = load_rulebook(v["specs"])
    out: dict = {"release": Path(release).name}
    if args.pile or args.rule:
        rows = select_rows(routing, book, pile=args.pile, rule=args.rule, kind=args.of,
                           pool=v["pool"], overlay=v["overlay"])
        picked = sample(routing, rows, args.n, args.seed, v["pool"], v["overlay"])
        out["selection"] = {"pile": args.pile, "rule": args.rule, "of": None if args.pile else args.of,
                            "rows": int(len(rows)), "n": len(picked), "seed": args.seed}
        out["samples"] = [asdict(s) for s in picked]
    if v["labels"] is not None:
        out["labels"] = label_stats(pl.scan_parquet(routing), load_labels(v["labels"]), book)
    if args.json:
        print(json.dumps(out, sort_keys=True, ensure_ascii=False))
        return 0
    _print_diagnosis(out)
    return 0


def _print_diagnosis(out: dict) -> None:
    sel = out.get("selection")
    if sel:
        what = f"pile {sel['pile']}" if sel["pile"] else f"rule {sel['rule']} ({sel['of']})"
        print(f"{what}: {sel['rows']:,} rows; seeded sample of {sel['n']} (seed {sel['seed']})")
        for s in out["samples"]:
            print(f"\n- {s['work_id']}  [{s['pile']}{'/' + s['pending_reason'] if s['pending_reason'] else ''}]"
                  f"  winner: {s['winner'] or '-'}")
            print(f"  title: {s['title']}")
            for c in s["contexts"]:  # one per condition that matched, the evidence's first
                print(f"  {c['field']}: ...{c['before']}[[{c['match']}]]{c['after']}...")
    labels = out.get("labels")
    if labels:
        print(f"\nlabels: {labels['labels']:,} given, {labels['labels_in_pool']:,} in the pool, "
              f"{labels['includes_in_pool']:,} includes")
        print(f"{'rule':<36} {'won lab.':>8} {'correct':>8} {'precision':>9}  95% Wilson   inc.matched inc.lost")
        for r in labels["rules"]:
            prec = "-" if r["precision"] is None else f"{r['precision']:.3f}"
            ci = "" if r["precision"] is None else f"[{r['wilson_low']:.3f}, {r['wilson_high']:.3f}]"
            flag = "  LOSES INCLUDES" if r["flagged"] else ""
            print(f"{r['id']:<36} {r['won_labelled']:>8} {r['won_correct']:>8} {prec:>9}  {ci:<16}"
                  f" {r['includes_matched']:>6} {r['includes_to_discard']:>8}{flag}")
        lost = labels["lost_includes"]
        if lost["count"]:
            print(f"\nlabelled includes in discard: {lost['count']}")
            for w in lost["works"]:
                print(f"  {w['work_id']}  (rule {w['rule']})")
