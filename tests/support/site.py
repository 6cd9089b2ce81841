"""A toy router that writes release folders exactly as docs/release-format.md describes.

The site tests use it to make small, fully controlled releases (identity
holding, hostile titles, two releases for a diff) without the real engine.
Rules here are a toy format of their own, not the rule language: one
lower-cased substring on a field, an optional domain of sources (the rule
language's reference is support.reference). Also a small HTML tree
(`parse_html`) for structural assertions on pages.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from reporter.hashing import dump_json, sha256_json

PILES = [
    {"name": "discard", "kind": "discard", "tier": None},
    {"name": "hold", "kind": "hold", "tier": None},
    {"name": "screen_cheap", "kind": "screen", "tier": "cheap"},
    {"name": "screen", "kind": "screen", "tier": "expensive"},
    {"name": "pending", "kind": "pending", "tier": None},
]
PAYING = {"screen_cheap", "screen"}
TITLE_ONLY = {"osf"}


def rule(id: str, pile: str, precedence: int, phrase: str, field: str = "text", *, shadow: bool = False,
         domain: list[str] | None = None, description: str = "") -> dict[str, Any]:
    """A toy rule: matches when `phrase` occurs (lower-cased) in `field`."""
    return {"id": id, "pile": pile, "precedence": precedence, "phrase": phrase, "field": field,
            "shadow": shadow, "domain": domain, "description": description}


def _blank(s: str | None) -> bool:
    return s is None or not s.strip()


def _hit(r: dict[str, Any], w: dict[str, Any]) -> dict[str, Any] | None:
    fields = ["title", "abstract"] if r["field"] == "text" else [r["field"]]
    for f in fields:
        text = (w.get(f) or "").lower()
        at = text.find(r["phrase"].lower())
        if at >= 0 and r["phrase"]:
            end = at + len(r["phrase"])
            return {"field": f, "start": at, "end": end, "text": text[at:end]}
    return None


def _in_domain(r: dict[str, Any], w: dict[str, Any]) -> bool:
    return r["domain"] is not None and w["source"] in r["domain"]


def route(works: list[dict[str, Any]], rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Route every work: winner, pile, pending reason, evidence."""
    live = sorted([r for r in rules if not r["shadow"]], key=lambda r: -r["precedence"])
    shadow = sorted([r for r in rules if r["shadow"]], key=lambda r: -r["precedence"])
    out = []
    for w in works:
        hits = {r["id"]: _hit(r, w) for r in rules}
        matched = [r["id"] for r in live if hits[r["id"]]]
        winner = next((r for r in live if hits[r["id"]]), None)
        pile, reason, title_only = "pending", "unrouted", False
        if winner is not None:
            pile, reason = winner["pile"], None
            if pile in PAYING and _blank(w.get("abstract")):
                if w["source"] in TITLE_ONLY and not _blank(w.get("title")):
                    title_only = True
                else:
                    pile, reason = "pending", "no_text"
        out.append({"work": w, "pile": pile, "pending_reason": reason, "winner": winner["id"] if winner else None,
                    "matched": matched, "shadow_matched": [r["id"] for r in shadow if hits[r["id"]]],
                    "evidence": hits[winner["id"]] if winner else None, "title_only": title_only, "hits": hits})
    return out


def _final_pile(pile: str, w: dict[str, Any]) -> tuple[str, str | None]:
    if pile in PAYING and _blank(w.get("abstract")) and not (w["source"] in TITLE_ONLY and not _blank(w.get("title"))):
        return "pending", "no_text"
    return pile, None


def stats_of(rows: list[dict[str, Any]], rules: list[dict[str, Any]], release_id: str) -> dict[str, Any]:
    """rule_stats.json for routed rows."""
    prec = {r["id"]: r["precedence"] for r in rules}
    piles = {p["name"]: 0 for p in PILES}
    pending = {"unrouted": 0, "no_text": 0}
    for row in rows:
        piles[row["pile"]] += 1
        if row["pending_reason"]:
            pending[row["pending_reason"]] += 1
    out_rules = []
    for r in sorted(rules, key=lambda r: -r["precedence"]):
        rid = r["id"]
        mine = [row for row in rows if row["hits"][rid]]
        won = sum(1 for row in mine if row["winner"] == rid and row["pending_reason"] is None)
        no_text = sum(1 for row in mine if row["winner"] == rid and row["pending_reason"] == "no_text")
        outranked_by: dict[str, int] = {}
        for row in mine:
            if row["winner"] not in (None, rid):
                outranked_by[row["winner"]] = outranked_by.get(row["winner"], 0) + 1
        entry = {
            "id": rid, "description": r["description"], "file": "rules/toy.json", "pile": r["pile"],
            "precedence": r["precedence"], "shadow": r["shadow"], "matched": len(mine),
            "won": 0 if r["shadow"] else won, "no_text": 0 if r["shadow"] else no_text,
            "outranked": 0 if r["shadow"] else len(mine) - won - no_text,
            "would_win": None, "would_move": None, "domain": None, "domain_rows": None,
            "domain_matched": None, "domain_miss": None, "domain_miss_winners": [],
            "outranked_by": [] if r["shadow"] else
            [{"rule": k, "rows": v} for k, v in sorted(outranked_by.items(), key=lambda kv: (-kv[1], kv[0]))],
            "spec": {k: v for k, v in r.items() if v is not None},
        }
        if r["shadow"]:
            wins = [row for row in mine if row["winner"] is None or prec[row["winner"]] < r["precedence"]]
            entry["would_win"] = len(wins)
            moved = 0
            for row in wins:
                new = _final_pile(r["pile"], row["work"])
                old = (row["pile"], row["pending_reason"])
                if new[0] != old[0]:
                    moved += 1
            entry["would_move"] = moved
        if r["domain"] is not None:
            dom = [row for row in rows if _in_domain(r, row["work"])]
            misses = [row for row in dom if not row["hits"][rid] and row["pile"] in PAYING]
            winners: dict[str, int] = {}
            for row in misses:
                winners[row["winner"]] = winners.get(row["winner"], 0) + 1
            entry.update(domain={"column": "source", "in": r["domain"]}, domain_rows=len(dom),
                         domain_matched=sum(1 for row in dom if row["hits"][rid]), domain_miss=len(misses),
                         domain_miss_winners=[{"rule": k, "rows": v} for k, v in
                                              sorted(winners.items(), key=lambda kv: (-kv[1], kv[0]))])
        out_rules.append(entry)
    ids = [r["id"] for r in out_rules]
    matrix = [[sum(1 for row in rows if row["hits"][a] and row["hits"][b]) for b in ids] for a in ids]
    works = [row["work"] for row in rows]
    return {
        "schema_version": 1, "release_id": release_id, "rows": len(rows), "identity_holds": True,
        "piles": piles, "pile_order": PILES, "pending": pending,
        "title_only": sum(1 for row in rows if row["title_only"]),
        "pool": {"rows": len(rows), "with_title": sum(1 for w in works if not _blank(w.get("title"))),
                 "with_abstract": sum(1 for w in works if not _blank(w.get("abstract"))), "utf8_replaced": 0},
        "overlay": {"rows": 0, "abstracts_filled": 0, "titles_filled": 0, "unknown_ids": 0},
        "rules": out_rules, "overlap": {"rules": ids, "matrix": matrix},
    }


def _sample_work(row: dict[str, Any]) -> dict[str, Any]:
    w, ev = row["work"], row["evidence"]
    ctx = None
    if ev:
        text = (w.get(ev["field"]) or "").lower()
        ctx = {"field": ev["field"], "before": text[max(0, ev["start"] - 80):ev["start"]],
               "match": text[ev["start"]:ev["end"]], "after": text[ev["end"]:ev["end"] + 80]}
    return {"work_id": w["work_id"], "source": w["source"], "title": w.get("title"), "pile": row["pile"],
            "pending_reason": row["pending_reason"], "winner": row["winner"], "title_only": row["title_only"],
            "evidence": ev, "context": ctx}


def _pick(rows: list[dict[str, Any]], k: int, rng: random.Random) -> list[dict[str, Any]]:
    rows = sorted(rows, key=lambda r: r["work"]["work_id"])
    chosen = rows if len(rows) <= k else rng.sample(rows, k)
    return [_sample_work(r) for r in sorted(chosen, key=lambda r: r["work"]["work_id"])]


def write_release(releases: Path, works: list[dict[str, Any]], rules: list[dict[str, Any]], *,
                  seed: int = 0, labels: dict[str, str] | None = None) -> str:
    """Route toy works with toy rules and write a release folder plus index.json; return the id."""
    rows = route(works, rules)
    inputs = {"pool": sha256_json(works), "overlay": "none", "specs": sha256_json(rules),
              "piles": sha256_json(PILES), "normalisation": sha256_json({"toy": 1}), "engine": sha256_json("toy")}
    rid = sha256_json(inputs)
    folder = releases / rid
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "release.json").write_text(dump_json({
        "schema_version": 1, "release_id": rid, "inputs": inputs, "engine_version": "0.1.0+toy.1",
        "normalisation": {"toy": 1}, "rows": len(rows)}), encoding="utf-8")
    (folder / "rule_stats.json").write_text(dump_json(stats_of(rows, rules, rid)), encoding="utf-8")
    rng = random.Random(seed)
    samples = {"seed": seed, "k": 20, "context_chars": 80,
               "piles": {p["name"]: _pick([r for r in rows if r["pile"] == p["name"]], 20, rng) for p in PILES},
               "rules": {}}
    for r in rules:
        wins = [row for row in rows if row["winner"] == r["id"] and row["pending_reason"] is None]
        misses = [row for row in rows if _in_domain(r, row["work"]) and not row["hits"][r["id"]]
                  and row["pile"] in PAYING]
        samples["rules"][r["id"]] = {"wins": _pick(wins, 10, rng), "domain_misses": _pick(misses, 10, rng)}
    (folder / "samples.json").write_text(dump_json(samples), encoding="utf-8")
    ev_type = pa.struct([("field", pa.string()), ("start", pa.int32()), ("end", pa.int32()), ("text", pa.string())])
    table = pa.table({
        "work_id": [r["work"]["work_id"] for r in rows], "pile": [r["pile"] for r in rows],
        "pending_reason": pa.array([r["pending_reason"] for r in rows], pa.string()),
        "winner": pa.array([r["winner"] for r in rows], pa.string()),
        "matched": pa.array([r["matched"] for r in rows], pa.list_(pa.string())),
        "shadow_matched": pa.array([r["shadow_matched"] for r in rows], pa.list_(pa.string())),
        "evidence": pa.array([r["evidence"] for r in rows], ev_type),
        "title_only": [r["title_only"] for r in rows]})
    pq.write_table(table, folder / "routing.parquet")
    if labels is not None:
        (folder / "labels.json").write_text(dump_json(labels_of(rows, rules, labels)), encoding="utf-8")
    index = releases / "index.json"
    ids = json.loads(index.read_text()) if index.exists() else []
    if rid not in ids:
        ids.append(rid)
    index.write_text(json.dumps(ids), encoding="utf-8")
    return rid


def labels_of(rows: list[dict[str, Any]], rules: list[dict[str, Any]], labels: dict[str, str]) -> dict[str, Any]:
    """labels.json for toy rows (Wilson interval at 95%)."""
    by_id = {row["work"]["work_id"]: row for row in rows}
    out = []
    for r in sorted(rules, key=lambda r: -r["precedence"]):
        mine = [row for row in rows if row["hits"][r["id"]] and row["work"]["work_id"] in labels]
        inc = [row for row in mine if labels[row["work"]["work_id"]] == "include"]
        won = [row for row in mine if row["winner"] == r["id"] and row["pending_reason"] is None]
        judged = [row for row in won if row["pile"] != "hold"]
        correct = [row for row in judged if (labels[row["work"]["work_id"]] == "include") == (row["pile"] in PAYING)]
        p = len(correct) / len(judged) if judged else None
        lo, hi = _wilson(len(correct), len(judged)) if judged else (None, None)
        to_discard = sum(1 for row in inc if row["winner"] == r["id"] and row["pile"] == "discard")
        out.append({"id": r["id"], "pile": r["pile"], "shadow": r["shadow"], "includes_matched": len(inc),
                    "includes_won": sum(1 for row in inc if row["winner"] == r["id"]),
                    "includes_to_discard": to_discard,
                    "includes_to_hold": sum(1 for row in inc if row["winner"] == r["id"] and row["pile"] == "hold"),
                    "won_labelled": len(judged), "won_correct": len(correct), "precision": p,
                    "wilson_low": lo, "wilson_high": hi, "flagged": to_discard > 0})
    lost = sorted(({"work_id": wid, "rule": by_id[wid]["winner"]} for wid, lab in labels.items()
                   if lab == "include" and wid in by_id and by_id[wid]["pile"] == "discard"),
                  key=lambda x: x["work_id"])
    return {"labels_digest": sha256_json(labels), "labels": len(labels),
            "labels_in_pool": sum(1 for wid in labels if wid in by_id),
            "includes_in_pool": sum(1 for wid, lab in labels.items() if wid in by_id and lab == "include"),
            "rules": out, "lost_includes": {"count": len(lost), "works": lost[:1000]}}


def _wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / den
    return max(0.0, centre - half), min(1.0, centre + half)


HOSTILE = [
    "<script>alert('x')</script> replication of a classic",
    '<img src=x onerror="alert(1)"> a trial of trials',
    "pipes | in | the | title, replication",
    "**bold** and _under_ and [link](http://evil.example) replication",
    "Supercalifragilistic" * 12 + " replication",
    "دراسة تكرار replication عربية",
    "back\\slash `code` &amp; &lt;tag&gt; ~strike~ $x$ # hash",
]


def toy_works(n: int = 40) -> list[dict[str, Any]]:
    """A few dozen works, hostile titles among them, covering every pile and pending reason."""
    sources = ["openalex", "osf", "pubmed", "arxiv"]
    topics = ["replication study", "erratum notice", "randomised trial", "meta-analysis", "editorial",
              "conference abstract", "replication attempt", "cohort data"]
    works = []
    for i in range(n):
        title = HOSTILE[i % len(HOSTILE)] if i % 5 == 0 else f"A {topics[i % len(topics)]} number {i}"
        abstract = None if i % 7 == 3 else f"We report a {topics[(i * 3) % len(topics)]} with data set {i}."
        works.append({"work_id": f"doi:10.1000/toy.{i:03d}" if i % 3 else f"osf:toy{i:03d}",
                      "source": sources[i % len(sources)], "title": title, "abstract": abstract})
    works.append({"work_id": "openalex:W0000000001", "source": "openalex", "title": None, "abstract": None})
    return works


def toy_rules(variant: int = 1) -> list[dict[str, Any]]:
    """Five rules and a shadow; variant 2 promotes the shadow and moves a precedence."""
    rules = [
        rule("discard-erratum", "discard", 90, "erratum", description="errata are not papers"),
        rule("discard-editorial", "discard", 85, "editorial", "title"),
        rule("hold-conference", "hold", 60, "conference abstract"),
        rule("replication", "screen", 70, "replication", domain=["osf", "openalex"],
             description="says it replicates <b>a study</b>"),
        rule("trial-cheap", "screen_cheap", 50, "trial", domain=["pubmed"]),
        rule("meta-shadow", "discard", 95, "meta-analysis", shadow=True),
    ]
    if variant == 2:
        rules[5] = rule("meta-shadow", "discard", 95, "meta-analysis")
        rules[2] = rule("hold-conference", "hold", 75, "conference abstract")
    return rules


# --- a small HTML tree for structural assertions ----------------------------
from html.parser import HTMLParser  # noqa: E402

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    """An element: tag, attributes, children (Nodes and strings)."""

    def __init__(self, tag: str, attrs: dict[str, str | None], parent: "Node | None" = None):
        self.tag, self.attrs, self.parent, self.children = tag, attrs, parent, []

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find_all(self, tag: str | None = None, **attrs: str) -> list["Node"]:
        return [n for n in self.iter() if (tag is None or n.tag == tag)
                and all(n.attrs.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items())]

    def find(self, tag: str | None = None, **attrs: str) -> "Node":
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag} {attrs}>"
        return found[0]

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, dict(attrs), self.cur))

    def handle_endtag(self, tag):
        node = self.cur
        while node is not self.root and node.tag != tag:
            node = node.parent
        assert node is not self.root, f"unbalanced </{tag}>"
        self.cur = node.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse_html(text: str) -> Node:
    """Parse a page into a Node tree (asserting its tags balance)."""
    b = _Builder()
    b.feed(text)
    b.close()
    assert b.cur is b.root, f"unclosed <{b.cur.tag}>"
    return b.root
