"""A labelled sheet made a certificate: the sample re-drawn and compared, the labels counted, the bound computed.

Only the seeded sample counts. The sheet's release, stratum, seed and n
are read off the sheet, the sample is drawn again from the release as it
is now, and the sheet's ids must be exactly that sample: a stray id (a
hand-picked row, a row of another sheet, a sheet whose release was
changed, or a stratum that has changed since: the screen discarded more)
is refused naming the first, before anything is written.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from pathlib import Path

from ..errors import InputError
from ..hashing import sha256_json
from ..plurals import count
from ..routing.artifacts import read_manifest
from ..routing.published import find_release
from ..hashing import sha256_file
from .bound import as_fraction, joint_confidence, max_relevant, recall_lower_bound
from .registry import read_draws, used
from .results import MAX_COUNT, Certificate, recall_bound, state_dir
from .sample import bottom_k
from .sheet import RELEVANT, Sheet
from .strata import StratumWorks, discarding_parts, parse_stratum, stratum_works
from .config import CertifyWorkspace

def sheet_works(ws: CertifyWorkspace, sheet: Sheet) -> tuple[Path, StratumWorks]:
    """The release folder and the stratum's works now, for the release and stratum a sheet names."""
    release_dir = find_release(ws.releases, sheet.release, flag=f"{sheet.path}: release")
    if read_manifest(release_dir).release_id != sheet.release:
        raise InputError(f"{sheet.path}: release {sheet.release!r} is not a release id as `reporter certify --out` "
                         f"writes it (64 hex); the sheet was edited")
    where = f"{sheet.path}: row {sheet.rows[0].row}"
    return release_dir, stratum_works(ws, release_dir, parse_stratum(sheet.stratum, where))


def check_sample(sheet: Sheet, works: StratumWorks, sample: tuple[str, ...]) -> None:
    """Refuse a sheet whose ids are not exactly the seeded sample: name the first stray id, else the first missing."""
    wanted = set(sample)
    what = (f"the sample of {works.stratum.name} in release {works.release_id[:12]} (seed {sheet.seed}, "
            f"n {sheet.n}: {len(sample):,} of its {count(len(works.work_ids), 'work')})")
    for row in sheet.rows:
        if row.work_id not in wanted:
            raise InputError(f"{sheet.path}: row {row.row}: work {row.work_id!r} is not in {what}. Only the seeded "
                             f"sample makes a certificate: this row was added or changed by hand, comes from another "
                             f"sheet, or the stratum changed since the sheet was drawn; draw the sheet again "
                             f"(reporter certify --pile ... --from {sheet.path.name} carries the labels over)")
    listed = {row.work_id for row in sheet.rows}
    missing = [w for w in sample if w not in listed]
    if missing:
        raise InputError(f"{sheet.path}: lacks work {missing[0]!r} of {what}, and {len(missing) - 1:,} more; a sheet "
                         f"keeps every row it was drawn with (leave a row's label empty instead of deleting it)")


def confidence_of(confidence: float | str | Fraction, flag: str = "--confidence") -> Fraction:
    """A confidence as the bound is computed at: the float a certificate records, read back exactly (so a
    recomputation from the certificate gives the same bound); above 0 and below 1, else an InputError."""
    try:
        conf = as_fraction(float(as_fraction(confidence)))
    except (ValueError, ZeroDivisionError, OverflowError, TypeError):
        conf = Fraction(0)
    if not 0 < conf < 1:
        raise InputError(f"{flag} {confidence}: must be above 0 and below 1 (e.g. 0.95)")
    return conf


def certify(ws: CertifyWorkspace, sheet: Sheet, confidence: float | str | Fraction, *, found: int | None = None,
            labeller: str | None = None, now: str = "") -> Certificate:
    """The certificate of a labelled sheet (nothing written; its id and `supersedes` are set when it is written):
    the sample checked against the seed registry and the stratum, the labels counted, the bound, what relevant
    means and who said so, and the recall bound when the number found is known (`found`: `--found N`, else the
    workspace's labels of the admitted works)."""
    conf = confidence_of(confidence)
    if found is not None and not 0 <= found <= MAX_COUNT:
        raise InputError(f"--found {found}: the relevant works found must be a whole number from 0 to {MAX_COUNT}")
    release_dir, works = sheet_works(ws, sheet)
    cert = measure(ws, sheet, works, conf, release_dir)
    drawn = used(read_draws(state_dir(ws.root), works.release_id), works.stratum.name, sheet.seed, sheet.n)
    if drawn is None:
        raise InputError(f"{sheet.path}: no sheet of {works.stratum.name} with seed {sheet.seed} and n {sheet.n} was "
                         f"drawn in this workspace (state/certify/samples/{works.release_id[:12]}....json records "
                         f"every draw); draw it with reporter certify --pile ... --out (--from {sheet.path.name} "
                         f"carries the labels over)")
    draw, number, drawn_count = drawn
    admitted = admitted_relevant(ws, release_dir)
    parts = discarding_parts(ws, release_dir)
    names = [p.stratum.name for p in parts]
    speaks_for_all = cert.strata == names or (cert.kind == "joint")
    base, source = (found, "--found") if found is not None else (admitted, "labels") if admitted is not None else (
        None, None)
    total = None if base is None else base + cert.k_relevant
    low = recall_lower_bound(total, cert.k_relevant, cert.max_relevant) if total is not None and speaks_for_all \
        else None
    criteria = criteria_file(ws)
    return replace(
        cert, admitted_relevant=admitted, recall_low=recall_bound(admitted, cert.max_relevant), found=total,
        found_from=source, recall_lower_bound=None if low is None else float(low),
        min_recall=ws.certify.min_recall,
        joint_confidence=cert.confidence if speaks_for_all else float(joint_confidence([conf] * max(len(names), 1))),
        labeller=labeller, criteria=None if criteria is None else criteria_shown(ws, criteria),
        criteria_sha256=None if criteria is None else sha256_file(criteria), drawn_by=draw.drawn_by,
        drawn_at=draw.drawn_at, reseed=draw.reseed, samples_drawn=drawn_count, sample_number=number,
        certified_at=now)


def criteria_shown(ws: CertifyWorkspace, path: Path) -> str:
    """The criteria as a certificate records them: relative to the workspace when inside it, else the file's name
    (its sha256 says which file it was; a path outside the workspace would differ from one checkout to another)."""
    full = Path(path).resolve()
    root = Path(ws.root).resolve()
    return full.relative_to(root).as_posix() if full.is_relative_to(root) else full.name


def criteria_file(ws: CertifyWorkspace) -> Path | None:
    """What relevant means: the screen's criteria document when one is configured, else the labels file."""
    screen = getattr(ws, "screen", None)
    if screen is not None and screen.criteria is not None:
        return Path(screen.criteria)
    return None if ws.labels is None else Path(ws.labels)


def measure(ws: CertifyWorkspace, sheet: Sheet, works: StratumWorks, conf: Fraction,
            release_dir: Path) -> Certificate:
    """What a sheet says of the stratum's works now (`works`, of the release and stratum the sheet names): the
    sample checked, the labels counted, the bound, the works to rescue; what is not the sheet's (who, when,
    found, the recall bound) left empty."""
    sample = bottom_k(works.work_ids, sheet.seed, sheet.n)
    check_sample(sheet, works, sample)
    labels = sheet.labels()
    order = {w: i for i, w in enumerate(sample)}
    labelled = sorted(order[w] for w in labels)
    n_labelled, k = len(labels), sum(label in RELEVANT for label in labels.values())
    big_n = len(works.work_ids)
    most = max_relevant(big_n, n_labelled, k, conf)
    stratum = works.stratum
    rescued = [row.work_id for row in sheet.rows if row.label in RELEVANT]
    return Certificate(
        release=works.release_id, stratum=stratum.name, kind=stratum.kind, pile=stratum.pile, rule=stratum.rule,
        tier=stratum.tier, generation=works.generation, N=big_n, seed=sheet.seed, n=sheet.n, n_drawn=len(sample),
        n_labelled=n_labelled, k_relevant=k, includes=sum(v == "include" for v in labels.values()),
        unsure=sum(v == "unsure" for v in labels.values()), confidence=float(conf), max_relevant=most,
        max_missed_fraction=most / big_n, partial=n_labelled < len(sample),
        labelled_prefix=labelled == list(range(n_labelled)), admitted_relevant=None, recall_low=None,
        stratum_sha256=stratum_digest(works), sheet=shown_path(ws, sheet.path), sheet_sha256=sheet.sha256,
        strata=list(works.parts) if stratum.kind == "joint" else [stratum.name], found=None, found_from=None,
        recall_lower_bound=None, min_recall=None, joint_confidence=float(conf), rescued=rescued,
        rescued_rules=winners(release_dir, rescued), labeller=None, criteria=None, criteria_sha256=None,
        drawn_by=None, drawn_at=None, reseed=None, samples_drawn=1, sample_number=1, certified_at="",
        supersedes=None, id="")


def winners(release_dir: Path, work_ids: list[str]) -> list[str]:
    """The rule that routed each work (empty when none did), in the order given."""
    if not work_ids:
        return []
    from ..routing.routing_table import read_routing
    table = read_routing(release_dir, ["work_id", "winner"])
    wanted = set(work_ids)
    won = {w: r for w, r in zip(table["work_id"].to_pylist(), table["winner"].to_pylist()) if w in wanted}
    return [won.get(w) or "" for w in work_ids]


def stratum_digest(works: StratumWorks) -> str:
    """sha256 of the stratum's sorted work ids (canonical JSON)."""
    return sha256_json(sorted(works.work_ids))


def admitted_relevant(ws: CertifyWorkspace, release_dir: Path) -> int | None:
    """Labelled includes among the works the expensive screen admitted in the current generation (what
    `reporter export` hands on); None without a labels file, screening, or any verdict."""
    if ws.labels is None or ws.screen is None or not ws.screen.expensive:
        return None
    from ..routing.labels import load_labels
    from ..screening.export import admitted_works
    from ..panel.readonly import open_readonly
    from ..screening.config import WHERE
    with open_readonly(ws.screen.database, WHERE) as store:
        if store is None:
            return None
        admitted = admitted_works(ws, release_dir, store=store)["work_id"].to_list()
    if not admitted:
        return None
    labels = load_labels(ws.labels)
    includes = set(labels.filter(labels["label"] == "include")["work_id"].to_list())
    return sum(w in includes for w in admitted)


def shown_path(ws: CertifyWorkspace, path: Path) -> str:
    """A path as a certificate records it: relative to the workspace when inside it."""
    full = Path(path).resolve()
    root = Path(ws.root).resolve()
    return full.relative_to(root).as_posix() if full.is_relative_to(root) else str(full)
