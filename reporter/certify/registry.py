"""The seed registry: every sheet drawn of a release's strata, who asked, when, with which seed and size.

One seed per stratum. The default seed is derived from the release id and
the stratum's name (`default_seed`), so nobody chooses it (and a stratum
drawn before is drawn with its seed again: `seed_for`); a sheet drawn
with another seed than the stratum's first needs `--reseed REASON` (a new
derived seed, or `--seed S`), and the reason is kept and shown. Every draw is recorded in
`state/certify/samples/<release id>.json` (rewritten whole, atomically, by
the one file layer), so a certificate can say how many samples of its
stratum were drawn and which one it uses: drawing with many seeds and
keeping the kindest shows on the page.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import InputError
from ..files import parse_json, read_capped, write_json
from ..hashing import sha256_text
from .results import CERTIFY_DIR, MAX_COUNT, MAX_SEED

REGISTRY_DIR = "samples"
"""The registries' folder in the certificates' folder (no release id is `samples`: ids are 64 hex)."""
MAX_REGISTRY_BYTES = 64 * 1024 * 1024
"""The most the registry may hold (a draw is about 300 bytes)."""


@dataclass(frozen=True)
class Draw:
    """One sheet drawn."""

    stratum: str
    """The stratum's name."""
    seed: int
    """Its seed."""
    n: int
    """The size asked for."""
    drawn_by: str
    """Who asked (the user running the command)."""
    drawn_at: str
    """When (UTC, ISO 8601)."""
    seed_from: str
    """`derived` (from the release and stratum) or `--seed`."""
    reseed: str | None
    """Why a second seed was drawn (`--reseed REASON`), else None."""
    out: str
    """The sheet written."""


def default_seed(release_id: str, stratum: str) -> int:
    """The stratum's seed when none is given: the first 64 bits of sha256("certify\\0<release>\\0<stratum>")."""
    return int(sha256_text(f"certify\0{release_id}\0{stratum}")[:16], 16)


def seed_for(draws: tuple[Draw, ...], release_id: str, stratum: str, reseed: str | None) -> int:
    """The seed of a draw that names none: the stratum's seed when it was drawn before (the first draw's), else
    the one derived from the release and stratum; with `--reseed`, a new one derived from them and how many
    seeds the stratum has had (`default_seed` of `<stratum>\0reseed <m>`), so nobody chooses that one either."""
    seeds = list(dict.fromkeys(d.seed for d in of_stratum(draws, stratum)))
    if reseed is not None:
        seed = default_seed(release_id, f"{stratum}\0reseed {len(seeds)}")
        return seed if seed not in seeds else default_seed(release_id, f"{stratum}\0reseed {len(seeds)}+")
    return seeds[0] if seeds else default_seed(release_id, stratum)


def registry_path(state_dir: Path, release_id: str) -> Path:
    """state/certify/samples/<release>.json."""
    return Path(state_dir) / CERTIFY_DIR / REGISTRY_DIR / f"{release_id}.json"


def read_draws(state_dir: Path, release_id: str) -> tuple[Draw, ...]:
    """Every sheet drawn of the release's strata, in the order drawn; none when none was."""
    path = registry_path(state_dir, release_id)
    try:
        data = read_capped(path, MAX_REGISTRY_BYTES, "seed registry")
    except FileNotFoundError:
        return ()
    doc = parse_json(data, str(path))
    draws = doc.get("draws") if isinstance(doc, dict) else None
    if not isinstance(draws, list):
        raise InputError(f"{path}: not a seed registry (a list `draws`); it is written by reporter certify --out")
    found = []
    for i, row in enumerate(draws):
        try:
            draw = Draw(**row)
            ok = (isinstance(draw.seed, int) and 0 <= draw.seed <= MAX_SEED and isinstance(draw.n, int)
                  and 1 <= draw.n <= MAX_COUNT and draw.seed_from in ("derived", "--seed")
                  and all(isinstance(v, str) for v in (draw.stratum, draw.drawn_by, draw.drawn_at, draw.out))
                  and (draw.reseed is None or isinstance(draw.reseed, str)))
        except TypeError:
            ok = False
        if not ok:
            raise InputError(f"{path}: draw {i + 1} is not a draw (stratum, seed, n, drawn_by, drawn_at, seed_from, "
                             f"reseed, out); the registry is written by reporter certify --out, never by hand")
        found.append(draw)
    return tuple(found)


def of_stratum(draws: tuple[Draw, ...], stratum: str) -> tuple[Draw, ...]:
    """The draws of one stratum, in the order drawn."""
    return tuple(d for d in draws if d.stratum == stratum)


def check_seed(draws: tuple[Draw, ...], stratum: str, seed: int, reseed: str | None) -> None:
    """Refuse a seed other than the stratum's first without `--reseed REASON` (and `--reseed` with its seed)."""
    earlier = of_stratum(draws, stratum)
    seeds = {d.seed for d in earlier}
    if reseed is not None and not reseed.strip():
        raise InputError("--reseed: give the reason a second seed is drawn (it is shown on the certificate)")
    if earlier and seed not in seeds and reseed is None:
        first = earlier[0]
        raise InputError(f"--seed {seed}: stratum {stratum} was drawn with seed {first.seed} (by {first.drawn_by}, "
                         f"{first.drawn_at}); one seed per stratum: draw that seed again (any n), or give --reseed "
                         f"REASON, which the certificate and its page show beside the {len(earlier)} earlier "
                         f"draw(s)")
    if reseed is not None and seed in seeds:
        raise InputError(f"--reseed: stratum {stratum} was already drawn with seed {seed}; --reseed is for a new "
                         f"seed (give --seed S)")


def record_draw(state_dir: Path, release_id: str, draw: Draw) -> None:
    """Add a draw to the registry (the file rewritten whole, atomically)."""
    draws = read_draws(state_dir, release_id)
    write_json(registry_path(state_dir, release_id),
               {"schema_version": 1, "draws": [asdict(d) for d in (*draws, draw)]})


def used(draws: tuple[Draw, ...], stratum: str, seed: int, n: int) -> tuple[Draw, int, int] | None:
    """The first draw of the stratum with this seed and n, its number (1 first) among the stratum's draws, and
    how many there were; None when no such sheet was drawn."""
    mine = of_stratum(draws, stratum)
    at = next((i for i, d in enumerate(mine) if d.seed == seed and d.n == n), None)
    if at is None:
        return None
    reseed = next((d.reseed for d in mine if d.seed == seed and d.reseed is not None), None)
    return (mine[at] if mine[at].reseed is not None or reseed is None else
            Draw(**{**asdict(mine[at]), "reseed": reseed})), at + 1, len(mine)
