"""A route run: pool + overlay + rule book in, a complete release folder out.

Cuts the pool into pieces (pieces.py) that worker processes, this process
alone, or the workers of a Dask cluster route in record batches; writes
routing.parquet in pool order, sums the counts, and only then names the
release by the digest of its six inputs. Everything is written to a temporary folder that is
renamed into place at the end: a release folder is complete or absent.
"""

from __future__ import annotations

import datetime as dt
import heapq
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import __version__
from ..errors import InputError, InternalError
from ..files import make_temp_dir, remove_tree, resource_error, write_json
from ..hashing import sha256_file, sha256_json, sha256_text
from ..locks import locked, remove_debris
from ..pool.overlay import Overlay, load_overlay
from ..pool.reader import REQUIRED_POOL_COLUMNS, open_table, require_columns
from ..progress import Progress
from ..runs import RunStart
from .artifacts import published_stats
from .index import MANIFEST_FILE, append_index, read_index, start_index
from .normalise import SETTINGS, settings_digest
from .parquet_parts import RoutingWriter
from .pieces import RULE_SAMPLE_K, SAMPLE_K, IdTally, Setup, plan_pieces
from .plan import compile_plan
from .published import PUBLISHED_FILE, check_release_name, read_published
from .samples import CONTEXT_CHARS
from .specs import check_columns, load_rulebook
from .stats import add_counts, build_rule_stats, compile_empty_totals, count_sources
from .workers import default_workers, run_local

# Bump whenever routing semantics or a release file's bytes change: it is part of every release id.
# 2: samples.json records its context window (`context_chars`).
# 3: the id covers every byte of the release (rule key order, the sample seed); release.json
#    records the sha256 of every other release file.
# 4: the regex prefilter no longer takes a repeated character for part of a literal (`ab+c` required
#    "abc" and missed "abbc"), so a book with such a regex may route differently under the same inputs;
#    rule_stats.json counts the works per source (`sources`).
# 5: routing.parquet keeps a span per text condition of the winner (`evidence_all`), and samples.json
#    a context window per span (`contexts`).
ROUTING_ALGORITHM_VERSION = 5
ENGINE_VERSION = f"{__version__}+routing.{ROUTING_ALGORITHM_VERSION}"
BATCH_ROWS = 16_384
"""Rows a routing process reads and routes at once. Reading a batch peaks at about three times its text
(the Parquet reader's buffers), which is most of a worker's memory: 16,384 rows hold a worker to about
two thirds of what 32,768 did, for the same CPU on the real pool and up to 9 % more on hit-dense generated
rows (docs/scale.md, "Memory per worker")."""
ROW_GROUP_ROWS = 65_536  # routing.parquet row groups: fixed, so the bytes never depend on batching
RELEASE_FILES = ("release.json", "routing.parquet", "rule_stats.json", "samples.json")


@dataclass(frozen=True)
class RouteResult:
    """What a route run produced."""

    release_id: str
    """sha256 of the six input digests."""
    release_dir: Path
    """releases/<release_id>/"""
    piles: dict[str, int]
    """Rows per pile, pending included."""
    pending: dict[str, int]
    """Rows per pending reason."""
    created: bool
    """False when an identical release already existed."""
    rows: int
    """Pool rows routed."""
    published: dict | None = None
    """published.json as it stands after the run (the existing one when the release existed), or None."""


@dataclass(frozen=True)
class StagedRelease:
    """A routed release, complete in a temporary folder beside the releases, not yet published.

    `reporter build` stages first, builds every page from the staged folder,
    and publishes only once the site writer's checks have passed; a refused
    build then discards it and the releases folder is as it was.
    """

    release_id: str
    """sha256 of the six input digests."""
    folder: Path
    """The temporary folder holding every release file."""
    out: Path
    """The releases folder it will be published into."""
    piles: dict[str, int]
    """Rows per pile, pending included."""
    pending: dict[str, int]
    """Rows per pending reason."""
    rows: int
    """Pool rows routed."""
    release_name: str | None = None
    """The name to publish it under (checked by `check_release_name`), or None."""
    first_written: str = ""
    """The ISO date to record as first written when this run publishes it (the run's `as_of`)."""
    routed: bool = True
    """False: the release was already published under this id (its inputs' digests), so nothing was routed;
    `folder` is the published folder, which `.publish()` leaves as it is and `.discard()` never removes."""

    def publish(self) -> RouteResult:
        """Rename the folder into place (or check an existing one is identical) and list it in index.json.

        All under the releases folder's lock, so runs publishing at once take
        turns: the second of two runs with the same id finds the first's folder
        and checks it is identical. index.json exists before the first rename,
        so a run killed between the rename and the index leaves a release the
        next run lists, never release folders without an index.

        published.json goes into the folder just before the rename, so it
        arrives with the release; a release that already exists keeps the one
        it has (or has none): it is never rewritten, because the archived
        release page shows it.
        """
        final = self.out / self.release_id
        with locked(self.out):
            start_index(self.out)
            if not self.routed:
                append_index(self.out, self.release_id)
                return RouteResult(self.release_id, final, self.piles, self.pending, False, self.rows,
                                   read_published(final))
            if not final.exists():
                write_json(self.folder / PUBLISHED_FILE, self.published_doc())
            created = _publish(self.folder, final)
            append_index(self.out, self.release_id)
            published = read_published(final)
        return RouteResult(self.release_id, final, self.piles, self.pending, created, self.rows, published)

    def published_doc(self) -> dict:
        """published.json as this run would write it for a release first published now."""
        return {"label": self.release_name, "first_written": self.first_written}

    def discard(self) -> None:
        """Remove the temporary folder (nothing happens once it was published, or when it was published before)."""
        if self.routed:
            remove_tree(self.folder)


def route_release(pool: Path, specs: Path, out: Path, *, overlay: Path | None = None,
                  sample_seed: int = 0, workers: int | None = None,
                  progress: bool = True, batch_rows: int = BATCH_ROWS, dask: str | None = None,
                  release_name: str | None = None, as_of: dt.date,
                  engine: str | None = None) -> RouteResult:
    """Route a pool with a rule book into out/<release_id>/ and list it in out/index.json.

    `workers`: processes routing batches (None: one per core; 1: this process
    alone). `dask`: the address of a Dask scheduler whose workers route the
    pool's pieces instead (docs/scale.md). The release's bytes are the same
    whichever routes it, and whichever `engine` scans the literals (one of
    textscan.ENGINES, the command's choice; None: each process's default).
    `release_name` (`--label`) and `as_of` (the date the caller runs on, read at its edge:
    reporter.clock.build_date) go into published.json when this run is the
    first to publish the release.
    """
    staged = stage_release(pool, specs, out, overlay=overlay, sample_seed=sample_seed, workers=workers,
                           progress=progress, batch_rows=batch_rows, dask=dask, release_name=release_name,
                           as_of=as_of, engine=engine)
    try:
        return staged.publish()
    finally:
        staged.discard()


def stage_release(pool: Path, specs: Path, out: Path, *, overlay: Path | None = None,
                  sample_seed: int = 0, workers: int | None = None,
                  progress: bool = True, batch_rows: int = BATCH_ROWS, dask: str | None = None,
                  release_name: str | None = None, as_of: dt.date,
                  engine: str | None = None) -> StagedRelease:
    """Route a pool with a rule book into a temporary folder inside out; publish it with `.publish()`.

    `release_name` is checked before anything is routed or written; it and `as_of`
    (the caller's date: nothing here reads the clock) are what `.publish()` records in published.json.
    """
    release_name = check_release_name(release_name, "label")
    first_written = as_of.isoformat()
    book = load_rulebook(Path(specs))
    # A Dask worker opens the pool's files at the client's path, from a folder of its own: so an absolute one.
    source = open_table(Path(pool).resolve() if dask else Path(pool), "pool")
    require_columns(source, REQUIRED_POOL_COLUMNS, "pool")
    check_columns(book, set(source.schema.names), str(pool))
    ov = load_overlay(Path(overlay)) if overlay else None
    plan = compile_plan(book, source.schema, engine)

    out = Path(out)
    read_index(out)  # a missing index.json beside release folders is refused before any routing
    remove_debris(out)  # temporary folders and files of runs that were killed

    # The id follows from the inputs' digests alone, so it is known before routing: a release already
    # published under it is not routed again (its files checked against the digests its release.json records).
    inputs = {
        "pool": source.digest(),
        "overlay": ov.digest if ov else "none",
        "specs": book.specs_digest(),
        # Piles and policy: the sample seed is publication policy (samples.json follows it).
        "piles": sha256_json({"piles": book.piles_digest(), "sample_seed": sample_seed}),
        "normalisation": settings_digest(),
        "engine": sha256_text(ENGINE_VERSION),
    }
    release_id = sha256_json(inputs)
    published = published_stats(out / release_id, inputs)
    if published is not None:
        return StagedRelease(release_id, out / release_id, out, dict(published.piles), dict(published.pending),
                             published.rows, release_name, first_written, routed=False)

    tmp = make_temp_dir(out, "release")
    try:
        setup = Setup(book, source.schema, ov, sample_seed, batch_rows,
                      sha256_json([book.specs_digest(), book.piles_digest(), str(source.schema),
                                   ov.digest if ov else None]), engine, ROW_GROUP_ROWS)
        totals, samples, ids = _route_all(plan, source, setup, tmp / "routing.parquet", workers, progress, dask)
        _check_ids(ids, tmp / "routing.parquet", source.path)
        stats = build_rule_stats(plan, totals, release_id, ov, source.replaced, count_sources(source))
        write_json(tmp / "rule_stats.json", stats)
        write_json(tmp / "samples.json", _finish_samples(samples, sample_seed))
        # release.json last, with the digest of every other file: a reader can tell a tampered release.
        manifest = {"schema_version": 1, "release_id": release_id, "inputs": inputs,
                    "engine_version": ENGINE_VERSION, "normalisation": SETTINGS,
                    "rows": int(totals["rows"][0]), "generated_pool": source.generated_note(),
                    "files": {name: sha256_file(tmp / name) for name in RELEASE_FILES if name != "release.json"}}
        write_json(tmp / "release.json", manifest)
    except BaseException as exc:
        remove_tree(tmp)
        cause = resource_error(exc) if isinstance(exc, OSError) else None
        if cause is not None:
            raise InputError(f"{out}: could not write the release: {cause}. Nothing was published: the "
                             f"releases folder is as it was before this run") from None
        raise
    return StagedRelease(release_id, tmp, out, stats["piles"], stats["pending"], stats["rows"], release_name,
                         first_written)


def _route_all(plan, source, setup: Setup, path: Path, workers: int | None, show: bool, dask: str | None):
    """Route every piece, writing routing.parquet in pool order; returns (summed counts, sample heaps,
    work_id chunks). The overlay's and the source's counts take in what each piece reports."""
    bar = Progress("route", total=source.num_rows, enabled=show)
    totals = compile_empty_totals(plan)
    heaps: dict[str, list] = {}
    ids: list[IdTally] = []
    ov = setup.overlay
    writer = RoutingWriter(path, setup.group_rows)
    written = False
    results = None
    try:
        if dask is not None:
            from .cluster import run_dask
            results = run_dask(dask, setup, source, list(plan.columns), writer.use)
        else:
            results = run_local(setup, plan_pieces(source, list(plan.columns), setup.batch_rows),
                                default_workers() if workers is None else workers, writer.use)
        for res in results:
            writer.add(res.head, res.part, res.tail)
            add_counts(totals, res.counts)
            for group, items in res.samples.items():
                heap = heaps.setdefault(group, [])
                for item in items:
                    _keep_smallest(heap, item, SAMPLE_K if group.startswith("pile:") else RULE_SAMPLE_K)
            ids.append(res.ids)
            source.replaced += res.replaced
            if ov is not None:
                ov.seen[res.overlay_seen] = True
                ov.abstracts_filled += res.abstracts_filled
                ov.titles_filled += res.titles_filled
            bar.advance(res.rows)
        writer.close()
        written = True
    finally:
        if not written:
            writer.abort()
        if results is not None:  # its workers end here, not in whichever thread the collector finds it
            results.close()
        bar.close()
    return totals, heaps, ids


def _keep_smallest(heap: list, item: tuple, k: int) -> None:
    """Keep the k items with the smallest (key, work_id) in a max-heap."""
    key = (-item[0], _Desc(item[1]))
    if len(heap) < k:
        heapq.heappush(heap, (key, item[3]))
    elif key > heap[0][0]:
        heapq.heapreplace(heap, (key, item[3]))


class _Desc(str):
    """A string that sorts in reverse, for max-heaps of (key, work_id)."""

    def __lt__(self, other):
        return str.__gt__(self, other)

    def __gt__(self, other):
        return str.__lt__(self, other)


def _finish_samples(heaps: dict[str, list], seed: int) -> dict:
    """samples.json: per pile and per rule, the kept works ordered by work_id."""
    out: dict = {"seed": seed, "k": SAMPLE_K, "rule_k": RULE_SAMPLE_K, "context_chars": CONTEXT_CHARS,
                 "piles": {}, "rules": {}}
    for group in sorted(heaps):
        works = sorted((payload for _, payload in heaps[group]), key=lambda w: w["work_id"])
        kind, name = group.split(":", 1)
        if kind == "pile":
            out["piles"][name] = works
        else:
            slot = out["rules"].setdefault(name, {"wins": [], "domain_misses": []})
            slot["wins" if kind == "wins" else "domain_misses"] = works
    return out


def _check_ids(tallies: list[IdTally], routing: Path, path: Path) -> None:
    """Fail on a null, duplicate or unprefixed work_id, naming the first few.

    Duplicates are looked for among the ids' 64-bit hashes, sorted: only
    when two hashes meet (the same id twice, or a one-in-a-few-billion
    collision) are the ids themselves read back from the routing rows just
    written, in pool order, to name the duplicates or clear the collision.
    """
    nulls = sum(t.nulls for t in tallies)
    if nulls:
        raise InputError(f"{path}: {nulls:,} row(s) have no work_id; every work needs a unique, "
                         "scheme-prefixed id (e.g. doi:10.1101/..., osf:abc12)")
    hashes = np.sort(np.concatenate([t.hashes for t in tallies])) if tallies else np.zeros(0, np.uint64)
    if len(hashes) > 1 and bool((hashes[1:] == hashes[:-1]).any()):
        import polars as pl
        ids = pl.read_parquet(routing, columns=["work_id"])["work_id"]
        dup = ids.filter(ids.is_duplicated()).unique(maintain_order=True)
        if len(dup):
            first = ", ".join(dup.head(5).to_list())
            raise InputError(f"{path}: {len(dup):,} duplicate work_id value(s), e.g. {first}; "
                             "work_id must be unique")
    unprefixed = sum(t.unprefixed for t in tallies)
    if unprefixed:
        examples = [x for t in tallies for x in t.examples][:3]
        raise InputError(f"{path}: {unprefixed:,} work_id value(s) lack a scheme prefix, e.g. "
                         f"{', '.join(repr(x) for x in examples)}; write e.g. doi:10.1101/..., "
                         "osf:abc12, openalex:W123")


def _publish(tmp: Path, final: Path) -> bool:
    """Rename the finished folder into place; an existing release must be byte-identical."""
    if final.exists():
        for name in RELEASE_FILES:
            if not (final / name).exists() or (final / name).read_bytes() != (tmp / name).read_bytes():
                raise InternalError(
                    f"{final}: a release with this id exists but its {name} differs from this run's; "
                    "releases are immutable and routing is deterministic, so the folder was edited "
                    "or the engine changed without a version bump. Move the folder aside to rebuild it.")
        return False
    os.replace(tmp, final)
    return True


def write_route_run(run: RunStart, result: RouteResult, *, pool: Path, specs: Path, overlay: Path | None,
                    labels: Path | None, settings: dict) -> Path:
    """The route's run record (reporter/runs.py): the six inputs with the digests release.json gives them (the
    pool is not read twice), the labels file, the release folder, its rows per pile."""
    from .artifacts import read_manifest
    digests = read_manifest(result.release_dir).inputs
    inputs = [run.named("pool", pool, digests["pool"]), run.named("specs", specs, digests["specs"])]
    if overlay is not None:
        inputs.append(run.named("overlay", overlay, digests["overlay"]))
    if labels is not None:
        inputs.append(run.ref("labels", labels))
    outputs = [run.ref("release.json", result.release_dir / MANIFEST_FILE)]
    counts = {"rows": result.rows, "created": int(result.created),
              **{f"pile.{pile}": n for pile, n in result.piles.items()},
              **{f"pending.{reason}": n for reason, n in result.pending.items()}}
    return run.write("route", "done", inputs=inputs, outputs=outputs, counts=counts,
                     settings={**settings, "release_id": result.release_id, "engine_version": ENGINE_VERSION})
