"""The checklist's method items (M2..M8) from the evidence: each sentence from a record, with the record's path.

An item is `filled` when the records say all it asks, `partial` when they say some of it (what is missing is
named in `missing`: the author's to write), `author` when no record says anything of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..runs import RunRecord
from .evidence import PANEL_KINDS, Evidence, Observed

STATUSES = ("filled", "partial", "author")
"""How much of an item the records fill."""

TITLES = {
    "M2": "Tool, version and provider", "M3": "Stage and task", "M4": "Input data",
    "M5": "Output and post-processing", "M6": "Prompts and parameters", "M7": "Other settings",
    "M8": "Human oversight", "M9": "Evaluation", "R1": "Flow of decisions", "R2": "Performance",
    "D1": "Limitations",
}
"""The PRISMA-trAIce items a disclosure drafts, in order, with their headings."""

GATES = {
    "cheap": "it may only discard: two valid excludes discard a work; any include, cannot_be_determined, invalid "
             "answer or provider failure passes the work on to the expensive tier",
    "expensive": "two valid excludes discard a work; anything else (an include, cannot_be_determined, an invalid "
                 "answer) admits it to the hand-off",
    "judge": "the criteria judge's answer decides the week's KEEP, REVIEW or DROP with the digest's rules",
}
"""What each step's gate does with its two answers (reporter/screening/answer.py: cheap_gate, screen_gate)."""


NOTHING_ON_RECORD = {
    "M5": "no screen run is on record for this release: say what the models' answers became, if any model was used",
    "M6": "no model run is on record for this release: give any prompt and its parameters, if a model was used",
    "M7": "no run on record names other settings",
}
"""What the author is told when no record says anything of an item."""


@dataclass
class Item:
    """One checklist item: its sentences (each with the records it comes from) and what the author must add."""

    id: str
    status: str = "author"
    sentences: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    blocks: list[tuple[str, str]] = field(default_factory=list)
    """(caption, text shown exactly): a prompt, an answer schema."""

    def say(self, text: str, *sources: str) -> None:
        self.sentences.append((text, tuple(s for s in sources if s)))

    @property
    def title(self) -> str:
        return TITLES[self.id]

    @property
    def text(self) -> str:
        return " ".join(t for t, _ in self.sentences)

    @property
    def sources(self) -> list[str]:
        return list(dict.fromkeys(s for _, ss in self.sentences for s in ss))

    def settle(self) -> Item:
        """Its status from what it says: nothing said is the author's; something said with something missing,
        partial."""
        if not self.sentences and not self.missing:
            self.missing.append(NOTHING_ON_RECORD.get(self.id, "nothing on record says this"))
        self.status = "author" if not self.sentences else "partial" if self.missing else "filled"
        return self

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "status": self.status, "text": self.text,
                "sources": self.sources, "missing": list(self.missing), "warnings": list(self.warnings),
                "blocks": [{"caption": c, "text": t} for c, t in self.blocks]}


def n(value: int, noun: str) -> str:
    """`1 work`, `2,345 works`."""
    return f"{value:,} {noun}{'' if value == 1 else 's'}"


def dates(records: Sequence[tuple[str, RunRecord]]) -> str:
    """`on 2026-07-07` or `between 2026-07-01 and 2026-07-07` (the records' start and end days)."""
    first, last = min(r.started for _, r in records)[:10], max(r.ended for _, r in records)[:10]
    return f"on {first}" if first == last else f"between {first} and {last}"


def model_uses(ev: Evidence) -> list[tuple[Any, list[str]]]:
    """Each (step, voter, model, host, prompt, generation) the panel records name, with the records naming it."""
    uses: dict[Any, list[str]] = {}
    for path, r in ev.of(*PANEL_KINDS):
        for m in r.models:
            uses.setdefault(m, []).append(path)
    return list(uses.items())


def voter_settings(ev: Evidence, task: str, voter: str) -> dict[str, Any]:
    """A voter's settings as the last panel record gives them (`settings.tasks.<task>[...]`), else {}."""
    for _path, r in reversed(ev.of(*PANEL_KINDS)):
        tasks = r.settings.get("tasks") if isinstance(r.settings.get("tasks"), dict) else {}
        for v in tasks.get(task) or ():
            if isinstance(v, dict) and v.get("name") == voter:
                return v
    return {}


def calibrated(ev: Evidence) -> list[Any]:
    """The screen's tiers with a calibration against labels on works the models decided (none before a screen)."""
    if ev.screen is None or not ev.of("screen"):
        return []
    return [t for t in ev.screen.tiers if t.calibration is not None and t.calibration.gate.judged]


def m2(ev: Evidence) -> Item:
    item = Item("M2")
    versions = sorted({r.tool_version for _, r in ev.runs})
    if ev.runs:
        item.say(f"The runs on record used reporter {', '.join(versions)} (an open-source tool), "
                 f"{dates(ev.runs)}.", *(p for p, _ in ev.runs))
    uses = model_uses(ev)
    if not uses:
        item.missing.append("no model run is on record for this release: name any AI tool used outside reporter, "
                            "its version and provider")
    seen = {(o.task, o.voter): o for o in ev.observed}
    for path, r in ev.of(*PANEL_KINDS):
        steps = sorted({k.split(".")[0] for k in r.counts if k.endswith(".votes")})
        said = "; ".join(f"{t}: {n(r.counts.get(f'{t}.votes', 0), 'answer')} and "
                         f"{n(r.counts.get(f'{t}.failures', 0), 'failure')}" for t in steps)
        if said:
            item.say(f"The {r.kind} run of {r.started} recorded {said}.", path)
    for m, paths in uses:
        item.say(f"In the {m.task} step, voter {m.voter} was configured with model {m.model} at host "
                 f"{m.host or 'unknown'} (an OpenAI-compatible Chat Completions API).", *paths)
        o = seen.get((m.task, m.voter))
        if o is None:
            item.missing.append(f"the model name the server reported for voter {m.voter} ({m.task}): no raw reply "
                                f"is on record")
            continue
        reported = [x or "(none)" for x in o.reported]
        item.say(f"The server reported the model as {', '.join(reported) or '(no answer)'} in its "
                 f"{n(o.answers, 'answer')}, the first on {o.first} and the last on {o.last}.", o.source)
        tally = voter_tally(ev, m.task, m.voter)
        if tally is not None:
            invalid, failed = sum(k for _, k in tally.invalid), sum(k for _, k in tally.failures)
            item.say(f"In the current generation, voter {m.voter} has {n(tally.votes, 'recorded answer')} "
                     f"({invalid:,} invalid) and {n(failed, 'provider failure')} after retries.",
                     *(p for p, _ in ev.of("screen")))
        for w in model_warnings(o):
            item.warnings.append(w)
            item.say(f"Warning: {w}.", o.source)
    return item.settle()


def voter_tally(ev: Evidence, task: str, voter: str) -> Any:
    """The screen report's tally of a voter (`screening.report.VoterTally`), or None."""
    for t in (ev.screen.tiers if ev.screen is not None else ()):
        for v in t.voters if t.tier == task else ():
            if v.voter == voter:
                return v
    return None


def model_warnings(o: Observed) -> list[str]:
    """Why the models of a voter's answers need a second look: another name than configured, or a change."""
    out = []
    if len(o.configured) > 1:
        out.append(f"voter {o.voter} ({o.task}) was asked for different models during the run: "
                   f"{', '.join(o.configured)}")
    if len(o.reported) > 1:
        out.append(f"the model the server reported for voter {o.voter} ({o.task}) changed during the run: "
                   f"{', '.join(x or '(none)' for x in o.reported)}")
    differ = [x for x in o.reported if x not in o.configured]
    if differ:
        out.append(f"the server reported {', '.join(x or '(none)' for x in differ)} for voter {o.voter} "
                   f"({o.task}), configured as {', '.join(o.configured)}")
    return out


def m3(ev: Evidence) -> Item:
    item = Item("M3")
    routes = ev.of("route")
    specs = ev.release.manifest.inputs.get("specs", "")
    live = ev.release.stats.live()
    item.say(f"Works were first routed by a rule book of {n(len(live), 'rule')} (sha256 {specs}) into piles; "
             f"the rules, not a model, decided which works were discarded, set aside or sent to screening.",
             ev.release_source, *(p for p, _ in routes))
    for task in dict.fromkeys(m.task for m, _ in model_uses(ev)):
        paths = [p for p, r in ev.of(*PANEL_KINDS) if any(m.task == task for m in r.models)]
        voters = [m.voter for m, _ in model_uses(ev) if m.task == task]
        item.say(f"In the {task} step, {n(len(dict.fromkeys(voters)), 'model voter')} each answered include, "
                 f"exclude or cannot_be_determined for every work in scope; {GATES.get(task, '')}.", *paths)
    if ev.certificates:
        item.say("People labelled seeded random samples of discarded works to bound how many relevant works "
                 "the discards hold.", *(p for p, _ in ev.certificates))
    return item.settle()


def m4(ev: Evidence) -> Item:
    item = Item("M4")
    stats, man = ev.release.stats, ev.release.manifest
    routes = [p for p, _ in ev.of("route")]
    item.say(f"The pool held {n(stats.rows, 'work')} (sha256 {man.inputs.get('pool', '')}): "
             f"{stats.pool.with_title:,} with a title and {stats.pool.with_abstract:,} with an abstract; "
             f"{n(stats.title_only, 'work')} were screened on the title alone.", ev.release_source, *routes)
    item.say("Each model saw a work's title and abstract (or its title alone) in the prompt of item M6, and "
             "nothing else of it.", ev.release_source)
    item.missing.append("the search strategy, the databases and registers searched, the dates of each search, "
                        "and how the pool was de-duplicated: reporter does not run the search")
    return item.settle()


def m5(ev: Evidence) -> Item:
    item = Item("M5")
    s = ev.screen
    if s is None or not ev.of("screen"):
        return item.settle()
    paths = [p for p, _ in ev.of("screen")]
    item.say("Each answer is a JSON object {label, reason} checked against the answer schema of item M6; a "
             "refusal, a truncated or unparseable reply or an unknown label is recorded as invalid, never "
             "guessed, and a provider failure is asked again.", *paths)
    f = s.funnel
    item.say(f"The screen admitted {n(f.admitted, 'work')} and discarded {n(f.discarded, 'work')}; "
             f"{n(f.incomplete, 'work')} had no verdict; the hand-off (reporter export) holds "
             f"{n(f.hand_off, 'work')}.", *paths)
    return item.settle()


def m6(ev: Evidence) -> Item:
    from ..screening.answer import ANSWER_SCHEMA
    item = Item("M6")
    uses = model_uses(ev)
    for m, paths in uses:
        v = voter_settings(ev, m.task, m.voter)
        params = ", ".join(f"{k} {v[k]}" for k in ("temperature", "max_tokens", "structured_output",
                                                   "timeout_seconds") if k in v)
        item.say(f"Voter {m.voter} ({m.task}, model {m.model}): {params or 'no request parameters on record'}; "
                 f"prompt sha256 {m.prompt_sha256}, generation {m.generation}.", *paths)
    s = ev.screen
    hashes = {m.prompt_sha256 for m, _ in uses if m.task in ("cheap", "expensive")}
    if s is not None and hashes:
        if hashes == {s.prompt_hash}:
            text = "\n\n".join(f"[{name}]\n{body}" for name, body in s.fragments)
            item.blocks.append((f"The screen's prompt (sha256 {s.prompt_hash}), fragment by fragment", text))
            item.say(f"The prompt's text, whose sha256 is {s.prompt_hash}, is given below; each work fills its "
                     f"title and abstract in the work fragment.", *[p for p, _ in ev.of("screen")])
        else:
            item.missing.append("the text of the prompt whose sha256 the records give: the workspace's prompt "
                                f"has changed since (its sha256 is now {s.prompt_hash})")
        item.blocks.append(("The answer schema (response_format, JSON schema)",
                            json.dumps(ANSWER_SCHEMA, indent=2, sort_keys=True)))
    if any(m.task == "judge" for m, _ in uses):
        item.missing.append("the criteria judge's prompt text (its sha256 is on record; its criteria document is "
                            "the workspace's [digest] criteria)")
    return item.settle()


def m7(ev: Evidence) -> Item:
    item = Item("M7")
    for path, r in ev.of(*PANEL_KINDS):
        tasks = r.settings.get("tasks") if isinstance(r.settings.get("tasks"), dict) else {}
        keys = ("batch_size", "lease_seconds", "budget")
        shown = ", ".join(f"{k} {tasks[k]}" for k in keys if tasks.get(k) is not None)
        item.say(f"The {r.kind} run of {r.started} ({r.status}): max_cost {r.settings.get('max_cost') or 'none'}, "
                 f"{shown or 'default batching'}; it cost ${r.cost_usd:.4f} and sent "
                 f"{n(r.counts.get('requests.sent', 0), 'request')} ({r.counts.get('requests.retries', 0):,} "
                 f"retried).", path)
    for path, r in ev.of("route"):
        found = "" if r.counts.get("created", 1) else " (it found the release already written)"
        item.say(f"The route ran with engine {r.settings.get('engine_version', '')} on {r.started}{found}.", path)
    return item.settle()


def m8(ev: Evidence) -> Item:
    item = Item("M8")
    s = ev.screen
    for t in calibrated(ev):
        item.say(f"People's labels of {n(t.calibration.labelled, 'work')} in the {t.tier} tier's scope "
                 f"({t.calibration.includes:,} include) were compared with the models' answers.", ev.labels_source)
    for path, c in ev.certificates:
        who = f"by {c.labeller}" if c.labeller else "(the labeller is not on record)"
        item.say(f"A person labelled {n(c.n_labelled, 'work')} of a seeded sample of {c.n_drawn:,} drawn from "
                 f"the {c.stratum} stratum ({c.N:,} works) {who}.", path)
        if not c.labeller:
            item.missing.append(f"who labelled the {c.stratum} sample")
    for path, r in ev.of("feedback"):
        item.say(f"Readers marked {n(r.counts.get('marks', 0), 'published paper')} wanted or not wanted "
                 f"({r.started[:10]}).", path)
    if not item.sentences:
        item.missing.append("no person's decision is on record (no labels, certificate or reader feedback): say "
                            "who checked the models' decisions, how, and on how many works")
    else:
        item.missing.append("who the people were, their expertise, and how disagreements were resolved")
    return item.settle()


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))
