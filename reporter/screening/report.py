"""What the status page shows of the screen: counts, votes, gate outcomes, agreement, spend, calibration.

The compute layer of the screening section (no template here): every
number is read from the state database (read-only; a missing database means
nothing is screened yet) and the release's scope, within each tier's current
generation. Calibration compares each voter and each gate with the
workspace's labels (include/exclude): recall (labelled includes not
discarded) and work saved (labelled works discarded), each with its 95%
Wilson interval, and every labelled include a gate discarded
(`calibration.py`).

The site's one door to screening: `gather_screening` reads what a
workspace's screen says of one release (`ReleaseScreen`), and the report
types the status page lays out (with the dry run's `TierPlan`) are here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..panel.prompt import EXAMPLE_WORK, messages_for
from ..panel.readonly import open_readonly
from ..panel.store_connect import is_postgres, redact_url
from ..routing.labels import load_labels
from .answer import ANSWERS, INVALID_CAUSES, TIER_OUTCOMES
from .calibration import INVALID, Calibration, tier_calibration, vote_answer
from .config import TIERS, WHERE, ScreenWorkspace
from .plan import HOW_TO_CONFIGURE, TierPlan, generations, plan_screen, scopes, tier_voters
from .prompt import load_prompt
from .scope import TierScope, pile_works, screen_piles, tier_scope
from .status import screen_status

@dataclass(frozen=True)
class VoterTally:
    """One voter's recorded replies on the tier's scope in the current generation."""

    voter: str
    """The voter's name."""
    model: str
    """Its model."""
    answers: tuple[tuple[str, int], ...]
    """(answer, votes) for include, exclude, cannot_be_determined, then `invalid`."""
    invalid: tuple[tuple[str, int], ...]
    """(cause, invalid votes) for every cause in INVALID_CAUSES order."""
    failures: tuple[tuple[str, int], ...]
    """(cause, provider failures after retries), most first: no vote was recorded for them."""
    input_tokens: int
    """Prompt tokens the provider reported for its recorded replies."""
    output_tokens: int
    """Completion tokens reported."""
    cost_usd: float
    """What its recorded replies cost."""

    @property
    def votes(self) -> int:
        """Replies recorded, valid or not."""
        return sum(n for _answer, n in self.answers)


@dataclass(frozen=True)
class Agreement:
    """How the tier's two voters agree on the works both answered."""

    voters: tuple[str, str]
    """The two voters, in configured order (rows, then columns of `table`)."""
    both: int
    """Works both voters answered (valid or invalid)."""
    table: tuple[tuple[str, tuple[int, ...]], ...]
    """(first voter's answer, counts per second voter's answer), over the answers then `invalid`."""
    valid: int
    """Works both answered validly: the works kappa is computed on."""
    observed: float | None
    """Share of those where the answers agree (None without such works)."""
    kappa: float | None
    """Cohen's kappa over the three answers (None without works, or when chance agreement is 1)."""


@dataclass(frozen=True)
class TierStatus:
    """What one tier has done for the release, in its current generation."""

    tier: str
    """`cheap` or `expensive`."""
    configured: bool
    """True when [screen] configures the tier's two voters."""
    generation: str | None
    """The current generation (None without voters)."""
    scope: TierScope
    """The works it screens now, and how they came."""
    claimable: int
    """Works in scope without a verdict that no live runner holds."""
    claimed: int
    """Works held by a live runner now."""
    screened: int
    """Works in scope with a verdict in the generation."""
    outcomes: tuple[tuple[str, int], ...]
    """(outcome, works): admit/discard/incomplete, or discard/proceed/incomplete for the cheap tier."""
    voters: tuple[VoterTally, ...]
    """Per configured voter."""
    agreement: Agreement | None
    """Between the two voters (None when the tier is not configured)."""
    failures: int
    """Provider failures recorded on works in scope (not votes; the work was asked again)."""
    calibration: Calibration | None
    """Against the labels, or None without labels or voters."""


@dataclass(frozen=True)
class ScreenFunnel:
    """The funnel continued past routing, through the cheap tier and the screen to the hand-off."""

    paying: int
    """Works the release routes to a paying (screen) pile."""
    cheap: int
    """Of those, in a cheap pile."""
    cheap_configured: bool
    """False: the cheap piles' works go straight to the screen."""
    cheap_discarded: int
    """Discarded by the cheap tier (current cheap generation)."""
    cheap_proceeded: int
    """Passed on by it."""
    cheap_undecided: int
    """Not decided by it yet."""
    screen: int
    """Works in the screen's scope now (its own piles plus those passed on)."""
    admitted: int
    """Admitted by the screen (current generation)."""
    discarded: int
    """Discarded by it."""
    incomplete: int
    """In its scope without a verdict."""
    hand_off: int
    """Works `reporter export` hands on: the release's paying-pile works admitted in the current generation."""


@dataclass(frozen=True)
class ScreenReport:
    """The screening section of one release's status page."""

    release_id: str
    """The release."""
    database: str
    """The state database as shown (a path relative to the workspace, or a URL without its password)."""
    database_exists: bool
    """False when the database does not exist yet: nothing has been screened."""
    tiers: tuple[TierStatus, ...]
    """Cheap, then expensive."""
    plan: tuple[TierPlan, ...]
    """The dry run of each tier (what `reporter screen` would send now)."""
    prompt_hash: str
    """The prompt's hash."""
    fragments: tuple[tuple[str, str], ...]
    """Every fragment of the prompt, (name, template text), in assembly order."""
    example: tuple[tuple[str, str], ...]
    """An assembled prompt, (role, text) per message, for the example work of every generation's definition."""
    funnel: ScreenFunnel
    """The funnel through the tiers to the hand-off."""
    labels: bool
    """True when the workspace has labels (calibration shown)."""
    in_flight: tuple[Any, ...] = ()
    """The runs (`store_rows.RunRow`) with requests sent and never answered: killed in flight, or running now."""
    status: Any = None
    """Where the screen stands across runners (`status.ScreenStatus`, what `reporter screen --status` shows):
    leases by runner, host and time, spend against the budget."""


@dataclass(frozen=True)
class ReleaseScreen:
    """What a workspace's screen says of one release, read-only: its report, or why there is none."""

    configured: bool
    """False when the workspace has no [screen] table."""
    release_id: str
    """The release reported on ("" without one)."""
    report: ScreenReport | None
    """The report (None when not configured, without a release, or with a `problem`)."""
    problem: str | None = None
    """Why the report is not shown: a bad [screen] input, when not `strict` (a render)."""


def gather_screening(ws: ScreenWorkspace, release_id: str | None, release_dir: Path | None, labels: Any = None, *,
                     strict: bool = True, lengths_file: Any = None) -> ReleaseScreen:
    """What the status pages show of a workspace's screen: the report of one release, read-only.

    The state database is opened read-only and never created; a missing one
    means nothing is screened yet (the dry run still shows). A build is
    `strict`: a bad [screen] input refuses it like any other input. A render
    (not strict) shows the problem on the status page instead: the release it
    renders may be older than the workspace's pool. `lengths_file`: where the
    dry run's prompt lengths are kept between builds (`lengths.KeptLengths`,
    written by the build once it has published).
    """
    if ws.screen is None or release_id is None or release_dir is None:
        return ReleaseScreen(ws.screen is not None, release_id or "", None)
    try:
        return ReleaseScreen(True, release_id, workspace_report(ws, release_dir, labels,
                                                                       lengths_file=lengths_file))
    except InputError as exc:
        if strict:
            raise
        return ReleaseScreen(True, release_id, None, str(exc))


def workspace_labels(ws: ScreenWorkspace) -> Any:
    """The workspace's labels (a work_id,label frame), or None when it names no labels file or it is absent."""
    if ws.labels is None or not ws.labels.exists():
        return None
    return load_labels(ws.labels)


def screen_report(ws: ScreenWorkspace, release_dir: Path, *, store: Any, labels: Any,
                  lengths_file: Any = None) -> ScreenReport:
    """The screening section of `release_dir` from the (read-only) store; `labels` a work_id,label frame or None."""
    release_dir = Path(release_dir)
    prompt = load_prompt(ws.screen)
    gens = generations(ws, prompt)
    voters = tier_voters(ws)
    known = _labels(labels)
    scope = scopes(ws, release_dir, gens, store)
    tiers = tuple(_tier(ws, tier, scope[tier], gens[tier], voters[tier], store, known, release_dir)
                  for tier in TIERS)
    plan = plan_screen(ws, release_dir, store=store, lengths_file=lengths_file)  # with None it finds the database absent again: opens nothing
    title, abstract = EXAMPLE_WORK
    example = tuple((m["role"], m["content"]) for m in messages_for(prompt, title, abstract, False))
    return ScreenReport(
        release_id=scope["cheap"].release_id, database=_database_label(ws), database_exists=store is not None,
        tiers=tiers, plan=plan, prompt_hash=prompt.hash, fragments=prompt.fragments, example=example,
        funnel=_funnel(ws, release_dir, tiers, gens, store), labels=known is not None,
        in_flight=tuple(r for r in store.runs() if r.in_flight) if store is not None else (),
        status=screen_status(ws, release_dir, store=store) if store is not None else None)


def workspace_report(ws: ScreenWorkspace, release_dir: Path, labels: Any = None, *,
                     lengths_file: Any = None) -> ScreenReport | None:
    """The report of a workspace's release, the store opened read-only (never created); None without [screen]."""
    if ws.screen is None:
        return None
    with open_readonly(ws.screen.database, WHERE) as store:
        return screen_report(ws, release_dir, store=store, labels=labels, lengths_file=lengths_file)


@dataclass(frozen=True)
class TierDiscards:
    """The works of one release that one tier discarded in its current generation."""

    tier: str
    """`cheap` or `expensive`."""
    generation: str | None
    """The tier's current generation (None when it has no voters: it discarded nothing)."""
    work_ids: tuple[str, ...]
    """The works its gate discarded, in release (pool) order."""


def tier_discards(ws: ScreenWorkspace, release_dir: Path, tier: str, *, store: Any = None) -> TierDiscards:
    """What `tier` discarded of the release's scope in its current generation (the store opened read-only when
    not given; no database yet: nothing). A certificate of the screen's discards samples these works."""
    if ws.screen is None:
        raise InputError(f"{ws.file}: screening is not configured, so it discarded nothing; {HOW_TO_CONFIGURE}")
    gens = generations(ws, load_prompt(ws.screen))
    if gens[tier] is None:
        return TierDiscards(tier, None, ())
    with open_readonly(ws.screen.database, WHERE, store) as db:
        if db is None:
            return TierDiscards(tier, gens[tier], ())
        scope = tier_scope(ws, release_dir, tier, cheap_generation=gens["cheap"], store=db)
        verdicts = db.verdicts(tier, gens[tier], scope.work_ids) if scope.work_ids else {}
    return TierDiscards(tier, gens[tier], tuple(w for w in scope.work_ids if verdicts.get(w) == "discard"))


def _database_label(ws: ScreenWorkspace) -> str:
    database = ws.screen.database
    if is_postgres(ws.screen.database):
        return redact_url(database)
    path = Path(database)
    return path.relative_to(ws.root).as_posix() if ws.root in path.parents else str(path)


def _labels(labels: Any) -> dict[str, str] | None:
    """work_id -> include/exclude from a labels frame (load_labels) or mapping; None without labels."""
    if labels is None:
        return None
    if isinstance(labels, Mapping):
        return dict(labels)
    return dict(zip(labels["work_id"].to_list(), labels["label"].to_list()))


def _tier(ws: ScreenWorkspace, tier: str, scope: TierScope, generation: str | None, voters: tuple, store: Any,
          known: dict[str, str] | None, release_dir: Path) -> TierStatus:
    ids = scope.work_ids
    in_scope = set(ids)
    if store is not None and generation is not None and ids:
        verdicts = store.verdicts(tier, generation, ids)
        votes = store.votes(tier, generation, ids)
        failed = [f for f in store.failures(tier, generation) if f.work_id in in_scope]
        claimed = store.counts(scope.release_id, tier, generation).claimed_live
    else:
        verdicts, votes, failed, claimed = {}, {}, [], 0
    outcomes = Counter(verdicts.values())
    incomplete = len(ids) - len(verdicts)
    tallies = tuple(_tally(v, votes, failed) for v in voters)
    agreement = _agreement(voters[0].name, voters[1].name, votes) if len(voters) == 2 else None
    calibration = None
    if known is not None and voters:
        calibration = tier_calibration(ws, release_dir, tier, ids, voters, votes, verdicts, known)
    return TierStatus(
        tier=tier, configured=bool(voters), generation=generation, scope=scope,
        claimable=max(0, incomplete - claimed), claimed=claimed, screened=len(verdicts),
        outcomes=(*((o, outcomes.get(o, 0)) for o in TIER_OUTCOMES[tier]), ("incomplete", incomplete)),
        voters=tallies, agreement=agreement, failures=len(failed), calibration=calibration)


def _tally(voter: Any, votes: dict[str, dict[str, Any]], failed: list[Any]) -> VoterTally:
    rows = [by_voter[voter.name] for by_voter in votes.values() if voter.name in by_voter]
    answers = Counter(vote_answer(r) for r in rows)
    causes = Counter(r.vote.invalid_cause for r in rows if not r.vote.valid)
    failures = Counter(f.cause for f in failed if f.voter == voter.name)
    return VoterTally(
        voter=voter.name, model=voter.model,
        answers=tuple((answer, answers.get(answer, 0)) for answer in (*ANSWERS, INVALID)),
        invalid=tuple((cause, causes.get(cause, 0)) for cause in INVALID_CAUSES),
        failures=tuple(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))),
        input_tokens=sum(r.input_tokens or 0 for r in rows), output_tokens=sum(r.output_tokens or 0 for r in rows),
        cost_usd=sum(r.cost_usd for r in rows))


def cohen_kappa(pairs: Sequence[tuple[str, str]], answers: Sequence[str] = ANSWERS) -> tuple[float | None, float | None]:
    """(observed agreement, Cohen's kappa) of answer pairs; kappa None when chance agreement is 1 (or no pairs)."""
    n = len(pairs)
    if not n:
        return None, None
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(first[k] * second[k] for k in answers) / (n * n)
    if expected >= 1:
        return observed, None
    return observed, (observed - expected) / (1 - expected)


def _agreement(a: str, b: str, votes: dict[str, dict[str, Any]]) -> Agreement:
    both = [(row[a], row[b]) for row in votes.values() if a in row and b in row]
    answers = (*ANSWERS, INVALID)
    cells = Counter((vote_answer(x), vote_answer(y)) for x, y in both)
    valid = [(x.vote.answer, y.vote.answer) for x, y in both if x.vote.valid and y.vote.valid]
    observed, kappa = cohen_kappa(valid)
    return Agreement(voters=(a, b), both=len(both),
                     table=tuple((r, tuple(cells.get((r, c), 0) for c in answers)) for r in answers),
                     valid=len(valid), observed=observed, kappa=kappa)


def _funnel(ws: ScreenWorkspace, release_dir: Path, tiers: tuple[TierStatus, ...], gens: dict[str, str | None],
            store: Any) -> ScreenFunnel:
    cheap, screen = tiers
    piles = screen_piles(release_dir)
    paying = pile_works(release_dir, piles["cheap"] + piles["expensive"])["work_id"].to_list()
    admitted = (store.verdicts("expensive", gens["expensive"], paying)
                if store is not None and gens["expensive"] and paying else {})
    c, s = dict(cheap.outcomes), dict(screen.outcomes)
    return ScreenFunnel(
        paying=len(paying), cheap=len(cheap.scope.work_ids), cheap_configured=cheap.configured,
        cheap_discarded=c.get("discard", 0) if cheap.configured else 0,
        cheap_proceeded=c.get("proceed", 0) if cheap.configured else len(cheap.scope.work_ids),
        cheap_undecided=c.get("incomplete", 0) if cheap.configured else 0,
        screen=len(screen.scope.work_ids), admitted=s.get("admit", 0), discarded=s.get("discard", 0),
        incomplete=s.get("incomplete", 0), hand_off=sum(o == "admit" for o in admitted.values()))


__all__ = ["Agreement", "Calibration", "ReleaseScreen", "ScreenFunnel", "ScreenReport", "TierPlan", "TierStatus",
           "VoterTally", "cohen_kappa", "gather_screening", "screen_report", "workspace_labels", "workspace_report"]
