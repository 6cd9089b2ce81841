"""The routing engine: one record batch in, its routing rows and partial counts out.

Per batch: normalise title and abstract once, scan each with one
Aho-Corasick pass for every literal of the book, evaluate every rule's
`match` and `domain` as numpy boolean vectors (regexes only on rows where
they can still change the predicate's value), pick winners by marking
rules in reverse precedence, apply the no_text policy, and count. Counts
are sums over batches, so batches may run in any number of workers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .normalise import is_word_char, normalise_array, normalise_batch, normalise_text, unicode_work
from .specs import All, AnyOf, ColumnIn, Empty, Not, Phrase, Predicate, Regex, RuleBook
from .textscan import FieldBuffer, Hits, Scanner

FIELDS = ("title", "abstract")
REASONS = (None, "unrouted", "no_text")
EVIDENCE_TEXT_MAX = 200
CONTEXT_CHARS = 80

EVIDENCE_TYPE = pa.struct([("field", pa.string()), ("start", pa.int32()),
                           ("end", pa.int32()), ("text", pa.string())])
ROUTING_SCHEMA = pa.schema([
    ("work_id", pa.string()), ("pile", pa.string()), ("pending_reason", pa.string()),
    ("winner", pa.string()), ("matched", pa.list_(pa.string())),
    ("shadow_matched", pa.list_(pa.string())), ("evidence", EVIDENCE_TYPE), ("title_only", pa.bool_()),
])


def _uncapture(pattern: str) -> str:
    """Turn a regex's unnamed capturing groups into non-capturing ones (for span extraction)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":
                out.append("[]")
                i += 2
                continue
        elif ch == "(" and pattern[i + 1:i + 2] != "?":
            out.append("(?:")
            i += 1
            continue
        elif ch == "(" and pattern[i + 1:i + 3] == "?P" and pattern[i + 3:i + 4] == "<":
            close = pattern.index(">", i)
            out.append("(?:")
            i = close + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


class _Re:
    """A tiny reader of RE2 syntax, enough to find literals every match must contain."""

    def __init__(self, pattern: str):
        self.p, self.i = pattern, 0

    def peek(self) -> str:
        return self.p[self.i] if self.i < len(self.p) else ""

    def alt(self):
        branches = [self.seq()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.seq())
        return ("alt", branches)

    def seq(self):
        items = []
        while self.peek() not in ("", "|", ")"):
            atom = self.atom()
            lo = self.quantifier()
            items.append(atom if lo >= 1 else ("opt",))
        return ("seq", items)

    def quantifier(self) -> int:
        ch, lo = self.peek(), 1
        if ch in ("?", "*"):
            self.i += 1
            lo = 0
        elif ch == "+":
            self.i += 1
        elif ch == "{":
            close = self.p.find("}", self.i)
            if close < 0:
                self.i += 1
                return 1
            body = self.p[self.i + 1:close].split(",")[0].strip()
            lo = int(body) if body.isdigit() else 0
            self.i = close + 1
            lo = min(lo, 1)
        else:
            return 1
        if self.peek() == "?":  # lazy
            self.i += 1
        return lo

    def atom(self):
        ch = self.peek()
        self.i += 1
        if ch == "(":
            if self.peek() == "?":
                close = self.p.find(")", self.i)
                colon = self.p.find(":", self.i)
                if self.p.startswith("?P<", self.i) or self.p.startswith("?<", self.i):
                    self.i = self.p.find(">", self.i) + 1
                elif 0 <= colon < close or close < 0:
                    self.i = colon + 1
                else:  # a flag group such as (?i)
                    self.i = close + 1
                    return ("other",)
            inner = self.alt()
            if self.peek() == ")":
                self.i += 1
            return ("group", inner)
        if ch == "[":
            j = self.i + (1 if self.peek() == "^" else 0)
            j += 1 if self.p[j:j + 1] == "]" else 0
            close = self.p.find("]", j)
            self.i = len(self.p) if close < 0 else close + 1
            return ("other",)
        if ch == "\\":
            esc = self.peek()
            self.i += 1
            if esc in ("p", "P") and self.peek() == "{":
                self.i = self.p.find("}", self.i) + 1
                return ("other",)
            if esc and not esc.isalnum():
                return ("lit", esc)
            return ("other",)
        if ch in ".^$":
            return ("other",)
        return ("lit", ch)


def _requirement(node) -> set[str] | None:
    """A set of strings one of which every match contains, or None."""
    kind = node[0]
    if kind == "alt":
        sets = [_requirement(b) for b in node[1]]
        if any(s is None for s in sets):
            return None
        return set().union(*sets)
    if kind == "group":
        return _requirement(node[1])
    if kind == "seq":
        options, run = [], []
        for item in node[1] + [("other",)]:
            if item[0] == "lit":
                run.append(item[1])
                continue
            if run:
                options.append({"".join(run)})
                run = []
            if item[0] == "group":
                req = _requirement(item[1])
                if req:
                    options.append(req)
        return max(options, key=lambda o: min(len(x.strip()) for x in o), default=None)
    return None


def required_literals(pattern: str) -> tuple[str, ...] | None:
    """Lower-cased literals one of which every match of the regex contains, or None.

    The regex then runs only on rows where the literal pass saw one of them.
    Each literal keeps a leading or trailing space (the text has single
    spaces), and must have at least 3 characters, or there is no requirement.
    """
    try:
        req = _requirement(_Re(pattern).alt())
    except (ValueError, IndexError):
        return None
    if not req:
        return None
    out = set()
    for lit in req:
        core = normalise_text(lit)
        if len(core) < 3:
            return None
        out.add((" " if lit[:1].isspace() else "") + core + (" " if lit[-1:].isspace() else ""))
    return tuple(sorted(out))


def required_literal(pattern: str) -> str | None:
    """The single required literal of a regex, when there is exactly one."""
    lits = required_literals(pattern)
    return lits[0] if lits and len(lits) == 1 else None


@dataclass(frozen=True)
class Plan:
    """A rule book compiled against a pool schema, shared read-only by the workers."""

    book: RuleBook
    literals: tuple[str, ...]
    """Every distinct lower-cased literal of every phrase leaf."""
    lit_index: dict[str, int]
    scanner: Scanner
    value_sets: dict[tuple[str, tuple], pa.Array]
    """Per (column, values) leaf: the value set cast to the column's type."""
    columns: tuple[str, ...]
    """Pool columns read per batch."""
    rule_ids: tuple[str, ...]
    precedence: np.ndarray
    shadow: np.ndarray
    rule_pile: np.ndarray
    """Pile index of each rule."""
    pile_names: tuple[str, ...]
    paying: np.ndarray
    """Per pile: kind screen."""
    pending_index: int
    title_only_sources: pa.Array
    positive_text: tuple[tuple, ...]
    """Per rule: its text leaves not under a `not` (for evidence)."""
    regex_literals: dict
    """Per regex leaf: a literal every match contains (the regex runs only where it occurs)."""


def compile_plan(book: RuleBook, schema: pa.Schema) -> Plan:
    """Compile a rule book for a pool schema (column types checked here)."""
    literals: dict[str, int] = {}
    value_sets: dict[tuple[str, tuple], pa.Array] = {}
    regex_literals: dict[Regex, tuple[str, ...]] = {}

    def walk(pred: Predicate, rule_id: str, file: str) -> None:
        if isinstance(pred, Phrase):
            for lit, _ in pred.phrases:
                literals.setdefault(lit, len(literals))
        elif isinstance(pred, Regex):
            lits = required_literals(pred.pattern)
            if lits:
                for lit in lits:
                    literals.setdefault(lit, len(literals))
                regex_literals[pred] = lits
        elif isinstance(pred, ColumnIn):
            ftype = schema.field(pred.column).type
            if pa.types.is_list(ftype) or pa.types.is_large_list(ftype) or pa.types.is_struct(ftype):
                raise InputError(f"{file}: rule {rule_id!r}: column {pred.column!r} has type {ftype}; "
                                 "`in` tests columns of single values")
            try:
                vs = pa.array(list(pred.values)).cast(ftype if not pa.types.is_dictionary(ftype) else ftype.value_type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                raise InputError(f"{file}: rule {rule_id!r}: the values {list(pred.values)!r} cannot be "
                                 f"compared with column {pred.column!r} of type {ftype}") from None
            value_sets[(pred.column, pred.values)] = vs
        elif isinstance(pred, (All, AnyOf)):
            for c in pred.children:
                walk(c, rule_id, file)
        elif isinstance(pred, Not):
            walk(pred.child, rule_id, file)

    for rule in book.rules:
        walk(rule.match, rule.id, rule.file)
        if rule.domain is not None:
            walk(rule.domain, rule.id, rule.file)
    pile_names = tuple(p.name for p in book.piles)
    lit_list = list(literals)
    columns = ["work_id", "source", "title", "abstract"]
    for c in sorted(book.columns()):
        if c not in columns:
            columns.append(c)
    return Plan(
        book=book, literals=tuple(lit_list), lit_index=dict(literals), scanner=Scanner(lit_list),
        value_sets=value_sets, columns=tuple(columns),
        rule_ids=tuple(r.id for r in book.rules),
        precedence=np.array([r.precedence for r in book.rules], dtype=np.int64),
        shadow=np.array([r.shadow for r in book.rules], dtype=bool),
        rule_pile=np.array([pile_names.index(r.pile) for r in book.rules], dtype=np.int64),
        pile_names=pile_names,
        paying=np.array([p.paying for p in book.piles], dtype=bool),
        pending_index=pile_names.index(book.pending.name),
        title_only_sources=pa.array(list(book.title_only_sources), pa.string()),
        positive_text=tuple(tuple(_positive_text(r.match)) for r in book.rules),
        regex_literals=regex_literals,
    )


def _positive_text(pred: Predicate) -> list:
    if isinstance(pred, (Phrase, Regex)):
        return [pred]
    if isinstance(pred, (All, AnyOf)):
        return [leaf for c in pred.children for leaf in _positive_text(c)]
    return []


def _cost(pred: Predicate) -> int:
    if isinstance(pred, Regex):
        return 10
    if isinstance(pred, Phrase):
        return 1
    if isinstance(pred, (All, AnyOf)):
        return max(_cost(c) for c in pred.children)
    if isinstance(pred, Not):
        return _cost(pred.child)
    return 0


class FieldText:
    """One text field of a batch, normalised, with its literal hits.

    Fast path: lower-case the raw text's ASCII letters and scan it once. Rows
    that normalisation would change (whitespace runs or control whitespace,
    found by the same scan; spaces at either end; non-ASCII characters that
    NFKC, the dash rule or lower-casing would change) are normalised in full
    and scanned again; their first-pass hits are dropped.
    """

    def __init__(self, raw: pa.Array, scanner: Scanner):
        if isinstance(raw, pa.ChunkedArray):
            raw = raw.combine_chunks()
        n = len(raw)
        self.n = n
        low = pc.ascii_lower(raw)
        buf = FieldBuffer.of(low)
        hits = scanner.scan(buf)
        ws = np.zeros(n, dtype=bool)
        ws[scanner.trouble_rows(hits)] = True
        lengths = np.diff(buf.offsets)
        nonempty = np.flatnonzero(lengths > 0)
        if len(nonempty):
            first = buf.data[buf.offsets[nonempty]]
            last = buf.data[buf.offsets[nonempty + 1] - 1]
            ws[nonempty[(first == 32) | (last == 32)]] = True
        work = unicode_work(buf.data, buf.offsets)
        fix = ws.copy()
        fix[work.rows] = True
        real = hits.lit < scanner.n
        if fix.any():
            self.norm, self.low = normalise_batch(raw, low, buf.offsets, work, ws)
            rows = np.flatnonzero(fix)
            sub_hits = scanner.scan(FieldBuffer.of(self.low.take(pa.array(rows))))
            hits = Scanner.concat(Scanner.select(hits, real & ~fix[hits.row]),
                                  Scanner.select(sub_hits, sub_hits.lit < scanner.n, rows))
        else:
            hits = Scanner.select(hits, real)
            self.norm, self.low = raw, low
        self.hits = hits
        self.buf = FieldBuffer.of(self.low)
        self.norm_buf = FieldBuffer.of(self.norm)
        self.blank = np.diff(self.buf.offsets) == 0
        # Rows that held no non-ASCII byte before normalisation hold none after it.
        self.ascii = np.ones(n, dtype=bool)
        self.ascii[work.non_ascii] = False
        order = np.argsort(self.hits.lit, kind="stable")
        bounds = np.searchsorted(self.hits.lit[order], np.arange(scanner.n + 1))
        self._by_lit = (order, bounds)

    def buf_norm_text(self, row: int) -> str:
        """One row's normalised, case-preserved text."""
        return self.norm_buf.text(row)

    def hit_index(self, lit: int) -> np.ndarray:
        """Indices into hits of one literal."""
        order, bounds = self._by_lit
        return order[bounds[lit]: bounds[lit + 1]]

    def good_hits(self, lit: int, prefix: bool) -> np.ndarray:
        """Indices of one literal's hits that satisfy the word boundaries."""
        idx = self.hit_index(lit)
        ok = self.hits.left_ok[idx]
        if not prefix:
            ok = ok & self.hits.right_ok[idx]
        return idx[ok]


class Evaluator:
    """Evaluates predicates on one batch; leaf results are cached per batch."""

    def __init__(self, plan: Plan, batch: pa.RecordBatch, fields: dict[str, FieldText]):
        self.plan, self.batch, self.fields = plan, batch, fields
        self.n = batch.num_rows
        self.cache: dict[object, np.ndarray] = {}

    def eval(self, pred: Predicate, care: np.ndarray | None = None) -> np.ndarray:
        """Boolean vector, exact on the rows in `care` (all rows when None)."""
        if isinstance(pred, All):
            acc = np.ones(self.n, dtype=bool)
            for child in sorted(pred.children, key=_cost):
                sub = acc if care is None else (acc & care)
                if not sub.any():
                    return np.zeros(self.n, dtype=bool)
                acc &= self.eval(child, sub)
            return acc
        if isinstance(pred, AnyOf):
            acc = np.zeros(self.n, dtype=bool)
            for child in sorted(pred.children, key=_cost):
                sub = ~acc if care is None else (care & ~acc)
                if not sub.any():
                    break
                acc |= self.eval(child, sub)
            return acc
        if isinstance(pred, Not):
            return ~self.eval(pred.child, care)
        if isinstance(pred, Regex):
            return self._regex(pred, care)
        key = pred
        if key not in self.cache:
            self.cache[key] = self._leaf(pred)
        return self.cache[key]

    def _fields(self, name: str) -> list[FieldText]:
        return [self.fields[f] for f in FIELDS] if name == "text" else [self.fields[name]]

    def _leaf(self, pred: Predicate) -> np.ndarray:
        if isinstance(pred, Empty):
            out = np.ones(self.n, dtype=bool)
            for ft in self._fields(pred.field):
                out &= ft.blank
            return out
        if isinstance(pred, ColumnIn):
            col = self.batch.column(pred.column)
            vs = self.plan.value_sets[(pred.column, pred.values)]
            return pc.fill_null(pc.is_in(col, value_set=vs), False).to_numpy(zero_copy_only=False)
        if isinstance(pred, Phrase):
            out = np.zeros(self.n, dtype=bool)
            for ft in self._fields(pred.field):
                for lit, prefix in pred.phrases:
                    idx = ft.good_hits(self.plan.lit_index[lit], prefix)
                    out[ft.hits.row[idx]] = True
            return out
        raise TypeError(pred)

    def _regex(self, pred: Regex, care: np.ndarray | None) -> np.ndarray:
        key = ("regex", pred)
        if key in self.cache:
            return self.cache[key]
        out = np.zeros(self.n, dtype=bool)
        lits = self.plan.regex_literals.get(pred)
        if lits is not None:
            seen = np.zeros(self.n, dtype=bool)
            for ft in self._fields(pred.field):
                for lit in lits:
                    seen[ft.hits.row[ft.hit_index(self.plan.lit_index[lit])]] = True
            care = seen if care is None else (care & seen)
            key = None  # the result is exact only where the literal occurs: never cache it
        rows = None if care is None or care.mean() > 0.5 else np.flatnonzero(care)
        for ft in self._fields(pred.field):
            arr = ft.norm if rows is None else ft.norm.take(pa.array(rows))
            if len(arr) == 0:
                continue
            hit = pc.fill_null(pc.match_substring_regex(arr, pred.pattern, ignore_case=not pred.case_sensitive),
                               False).to_numpy(zero_copy_only=False)
            if rows is None:
                out |= hit
            else:
                out[rows[hit]] = True
        if rows is None and key is not None:
            self.cache[key] = out
        return out


@dataclass
class BatchResult:
    """The routing rows of one batch and its partial counts."""

    table: pa.Table
    counts: dict[str, np.ndarray]
    samples: dict[str, list[tuple[float, int, dict]]] = field(default_factory=dict)
    work_ids: pa.Array | None = None


def route_batch(plan: Plan, batch: pa.RecordBatch, batch_index: int, sample_seed: int = 0,
                sample_k: int = 20, rule_sample_k: int = 10) -> BatchResult:
    """Route one record batch: every rule on every row, one pile per row, partial counts."""
    n = batch.num_rows
    fields = {f: FieldText(batch.column(f), plan.scanner) for f in FIELDS}
    ev = Evaluator(plan, batch, fields)
    R = len(plan.rule_ids)
    M = np.zeros((n, R), dtype=bool)
    D = np.zeros((n, R), dtype=bool)
    has_domain = np.zeros(R, dtype=bool)
    for j, rule in enumerate(plan.book.rules):
        M[:, j] = ev.eval(rule.match)
        if rule.domain is not None:
            has_domain[j] = True
            D[:, j] = ev.eval(rule.domain)

    # Winner: the highest-precedence non-shadow rule that matched (rules are
    # sorted highest first, so marking from the lowest up leaves the highest).
    winner = np.full(n, -1, dtype=np.int64)
    live = np.flatnonzero(~plan.shadow)
    for j in live[::-1]:
        winner[M[:, j]] = j

    has_abstract = ~fields["abstract"].blank
    has_title = ~fields["title"].blank
    source = batch.column("source")
    title_only_src = pc.fill_null(pc.is_in(source, value_set=plan.title_only_sources), False).to_numpy(
        zero_copy_only=False)
    exempt = title_only_src & has_title

    def final_pile(rule_idx: np.ndarray, matched: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pile index, downgraded, title_only) for rows won by rule_idx (-1: none)."""
        pile = np.where(matched, plan.rule_pile[np.maximum(rule_idx, 0)], plan.pending_index)
        paying_win = matched & plan.paying[pile]
        no_text = paying_win & ~has_abstract
        downgraded = no_text & ~exempt
        pile = np.where(downgraded, plan.pending_index, pile)
        return pile, downgraded, no_text & exempt

    won_any = winner >= 0
    pile, downgraded, title_only = final_pile(winner, won_any)
    reason = np.where(~won_any, 1, np.where(downgraded, 2, 0))
    paying_final = plan.paying[pile]

    P = len(plan.pile_names)
    counts: dict[str, np.ndarray] = {
        "rows": np.array([n]),
        "with_title": np.array([int(has_title.sum())]),
        "with_abstract": np.array([int(has_abstract.sum())]),
        "piles": np.bincount(pile, minlength=P),
        "reasons": np.bincount(reason, minlength=3),
        "title_only": np.array([int(title_only.sum())]),
        "matched": M.sum(axis=0),
    }
    won = np.zeros(R, dtype=np.int64)
    no_text = np.zeros(R, dtype=np.int64)
    outranked = np.zeros(R, dtype=np.int64)
    would_win = np.zeros(R, dtype=np.int64)
    would_move = np.zeros(R, dtype=np.int64)
    outranked_by = np.zeros((R, R), dtype=np.int64)
    domain_rows = np.zeros(R, dtype=np.int64)
    domain_matched = np.zeros(R, dtype=np.int64)
    domain_miss = np.zeros(R, dtype=np.int64)
    miss_winners = np.zeros((R, R), dtype=np.int64)
    win_counts = np.bincount(winner[won_any], minlength=R)
    nt_counts = np.bincount(winner[downgraded], minlength=R)
    miss_masks: dict[int, np.ndarray] = {}
    for j in range(R):
        mj = M[:, j]
        if plan.shadow[j]:
            ww = mj & ((winner < 0) | (winner > j))
            would_win[j] = ww.sum()
            if would_win[j]:
                alt, _, _ = final_pile(np.full(n, j), ww)
                would_move[j] = (ww & (alt != pile)).sum()
        else:
            won[j] = win_counts[j] - nt_counts[j]
            no_text[j] = nt_counts[j]
            beaten = mj & (winner >= 0) & (winner < j)
            outranked[j] = beaten.sum()
            if outranked[j]:
                outranked_by[j] = np.bincount(winner[beaten], minlength=R)
        if has_domain[j]:
            dj = D[:, j]
            domain_rows[j] = dj.sum()
            domain_matched[j] = (dj & mj).sum()
            miss = dj & ~mj & paying_final
            domain_miss[j] = miss.sum()
            if domain_miss[j]:
                miss_winners[j] = np.bincount(winner[miss], minlength=R)
                miss_masks[j] = miss
    Mf = M.astype(np.float32)
    counts.update(won=won, no_text=no_text, outranked=outranked, would_win=would_win, would_move=would_move,
                  outranked_by=outranked_by, domain_rows=domain_rows, domain_matched=domain_matched,
                  domain_miss=domain_miss, miss_winners=miss_winners,
                  overlap=np.rint(Mf.T @ Mf).astype(np.int64))

    evidence = _evidence(plan, ev, fields, winner, n)
    table = _routing_table(plan, fields, batch.column("work_id"), pile, reason, winner, M, evidence, title_only)

    samples = _samples(plan, batch, fields, table, evidence, batch_index, sample_seed, sample_k, rule_sample_k,
                       pile, winner, downgraded, miss_masks)
    return BatchResult(table=table, counts=counts, samples=samples, work_ids=batch.column("work_id"))


def _evidence(plan: Plan, ev: Evaluator, fields: dict[str, FieldText], winner: np.ndarray, n: int):
    """Per row: (field index, char start, char end) of the winner's first text hit, or -1."""
    best_field = np.full(n, 9, dtype=np.int64)
    best_start = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    best_end = np.zeros(n, dtype=np.int64)
    best_byte = np.zeros(n, dtype=bool)  # offsets still in bytes (phrase hits)
    for j in np.unique(winner[winner >= 0]):
        rows_mask = winner == j
        for leaf in plan.positive_text[j]:
            names = FIELDS if leaf.field == "text" else (leaf.field,)
            for name in names:
                fi = FIELDS.index(name)
                ft = fields[name]
                if isinstance(leaf, Phrase):
                    for lit, prefix in leaf.phrases:
                        idx = ft.good_hits(plan.lit_index[lit], prefix)
                        idx = idx[rows_mask[ft.hits.row[idx]]]
                        if len(idx) == 0:
                            continue
                        rows = ft.hits.row[idx]
                        start = ft.hits.start[idx]
                        end = ft.hits.end[idx]
                        if prefix:
                            base = ft.buf.offsets[rows]
                            end = _word_end(ft.buf, rows, end + base) - base
                        _take_better(best_field, best_start, best_end, best_byte, rows, fi, start, end, True, ft)
                else:
                    cand = np.flatnonzero(rows_mask & ~ft.blank)
                    if len(cand) == 0:
                        continue
                    arr = ft.norm.take(pa.array(cand))
                    flags = "" if leaf.case_sensitive else "(?i)"
                    ext = pc.extract_regex(arr, f"{flags}(?s)(?P<pre>.*?)(?P<m>{_uncapture(leaf.pattern)})")
                    valid = ext.is_valid().to_numpy(zero_copy_only=False)
                    if not valid.any():
                        continue
                    ext = ext.filter(pa.array(valid))
                    pre = pc.utf8_length(ext.field("pre")).to_numpy().astype(np.int64)
                    mlen = pc.utf8_length(ext.field("m")).to_numpy().astype(np.int64)
                    rows = cand[valid]
                    _take_better(best_field, best_start, best_end, best_byte, rows, fi, pre, pre + mlen, False, ft)
    return best_field, best_start, best_end, best_byte


def _word_end(buf: FieldBuffer, rows: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Extend prefix-phrase hits (`trial*`) to the end of the word they start."""
    from .textscan import _ASCII_WORD, _char_at
    end = end.copy()
    row_end = buf.offsets[rows + 1]
    active = np.flatnonzero(end < row_end)
    while len(active):
        nxt = buf.data[end[active]]
        word = _ASCII_WORD[nxt]
        for k in np.flatnonzero(nxt >= 0x80):
            i = active[k]
            ch = _char_at(buf.data, int(end[i]), int(row_end[i]))
            if is_word_char(ch):
                word[k] = True
                end[i] += len(ch.encode("utf-8")) - 1
        end[active[word]] += 1
        active = active[word]
        active = active[end[active] < row_end[active]]
    return end


def _take_better(bf, bs, be, bb, rows, fi, start, end, in_bytes, ft):
    """Keep, per row, the hit with the lowest (field, start), in character offsets."""
    if in_bytes:
        # Byte offsets equal character offsets on ASCII rows; decode the rest.
        odd = np.flatnonzero(~ft.ascii[rows])
        if len(odd):
            start = start.copy()
            end = end.copy()
            base = ft.buf.offsets[rows[odd]]
            for k, i in enumerate(odd):
                r = int(rows[i])
                start[i] = ft.buf.char_offset(r, int(base[k] + start[i]))
                end[i] = ft.buf.char_offset(r, int(base[k] + end[i]))
    order = np.lexsort((start, rows))
    rows, start, end = rows[order], start[order], end[order]
    first = np.concatenate([[True], rows[1:] != rows[:-1]])
    rows, start, end = rows[first], start[first], end[first]
    better = (fi < bf[rows]) | ((fi == bf[rows]) & (start < bs[rows]))
    r = rows[better]
    bf[r] = fi
    bs[r] = start[better]
    be[r] = end[better]


def _routing_table(plan, fields, work_id, pile, reason, winner, M, evidence, title_only) -> pa.Table:
    n = len(pile)
    pile_arr = pa.array(plan.pile_names, pa.string()).take(pa.array(pile))
    reason_arr = pa.array(list(REASONS), pa.string()).take(pa.array(reason))
    ids_with_null = pa.array(list(plan.rule_ids) + [None], pa.string())
    winner_arr = ids_with_null.take(pa.array(np.where(winner < 0, len(plan.rule_ids), winner)))
    live = np.flatnonzero(~plan.shadow)
    shadow = np.flatnonzero(plan.shadow)

    def lists(cols: np.ndarray) -> pa.Array:
        sub = M[:, cols]
        rows, which = np.nonzero(sub)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(sub.sum(axis=1), out=offsets[1:])
        values = pa.array([plan.rule_ids[c] for c in cols], pa.string()).take(pa.array(which)) \
            if len(cols) else pa.array([], pa.string())
        return pa.ListArray.from_arrays(pa.array(offsets), values)

    bf, bs, be, _ = evidence
    has_ev = bf < len(FIELDS)
    starts = np.where(has_ev, bs, 0).astype(np.int32)
    ends = np.where(has_ev, be, 0).astype(np.int32)
    field_arr = pa.array(list(FIELDS) + [None], pa.string()).take(pa.array(np.minimum(bf, len(FIELDS))))
    evidence_arr = pa.StructArray.from_arrays(
        [field_arr, pa.array(starts), pa.array(ends), _evidence_texts(fields, evidence, n)],
        fields=list(EVIDENCE_TYPE), mask=pa.array(~has_ev))
    return pa.Table.from_arrays(
        [work_id, pile_arr, reason_arr, winner_arr, lists(live), lists(shadow), evidence_arr,
         pa.array(title_only)], schema=ROUTING_SCHEMA)


def _evidence_texts(fields: dict[str, "FieldText"], evidence, n: int) -> pa.Array:
    """The evidence spans' text (case-preserved, at most 200 characters), null where none."""
    bf, bs, be, _ = evidence
    out = pa.nulls(n, pa.string())
    for fi, name in enumerate(FIELDS):
        ft = fields[name]
        rows = np.flatnonzero(bf == fi)
        if len(rows) == 0:
            continue
        span = np.minimum(be[rows] - bs[rows], EVIDENCE_TEXT_MAX)
        # Character offsets equal byte offsets on ASCII rows; encode the rest.
        begin = bs[rows].copy()
        length = span.copy()
        for k in np.flatnonzero(~ft.ascii[rows]):
            text = ft.buf_norm_text(int(rows[k]))
            a, ln = int(begin[k]), int(length[k])
            begin[k] = len(text[:a].encode("utf-8"))
            length[k] = len(text[a:a + ln].encode("utf-8"))
        begin += ft.norm_buf.offsets[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(length, out=offsets[1:])
        idx = np.repeat(begin - offsets[:-1], length) + np.arange(offsets[-1])
        data = ft.norm_buf.data[idx]
        arr = pa.StringArray.from_buffers(len(rows), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))
        mask = np.zeros(n, dtype=bool)
        mask[rows] = True
        out = pc.replace_with_mask(out, pa.array(mask), arr)
    return out


_POWERS = np.ones(1, dtype=np.uint64)


def sample_keys(work_ids: pa.Array, seed: int) -> np.ndarray:
    """A seeded pseudo-random key in [0, 1) per work, from its work_id alone.

    Samples are the works with the smallest keys, so they depend only on the
    seed and the ids: not on batch size, worker count or pool order, and a
    work sampled in one release is sampled again in the next.
    """
    global _POWERS
    buf = FieldBuffer.of(work_ids if work_ids.type == pa.string() else work_ids.cast(pa.string()))
    n = len(work_ids)
    lengths = np.diff(buf.offsets)
    longest = int(lengths.max()) if n else 0
    if len(_POWERS) < longest + 1:
        p = np.ones(longest + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for i in range(1, longest + 1):
                p[i] = p[i - 1] * np.uint64(1099511628211)
        _POWERS = p
    data = buf.data[buf.offsets[0]:buf.offsets[-1]].astype(np.uint64) + np.uint64(1)
    row = np.repeat(np.arange(n), lengths)
    pos = np.arange(len(data)) - (buf.offsets[:-1] - buf.offsets[0])[row]
    with np.errstate(over="ignore"):
        terms = data * _POWERS[pos]
        h = np.zeros(n, dtype=np.uint64)
        np.add.at(h, row, terms)
        h ^= np.uint64(seed & 0xFFFFFFFFFFFFFFFF) * np.uint64(0x9E3779B97F4A7C15)
        # splitmix64 finaliser
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _samples(plan, batch, fields, table, evidence, batch_index, seed, k, rule_k,
             pile, winner, downgraded, miss_masks) -> dict[str, list[tuple[float, int, int, dict]]]:
    """Seeded sample candidates of this batch: the k smallest work keys per group."""
    n = batch.num_rows
    keys = sample_keys(batch.column("work_id"), seed)
    groups: dict[str, np.ndarray] = {}
    for p, name in enumerate(plan.pile_names):
        groups[f"pile:{name}"] = (pile == p, k)
    for j, rid in enumerate(plan.rule_ids):
        if not plan.shadow[j]:
            groups[f"wins:{rid}"] = ((winner == j) & ~downgraded, rule_k)
    for j, miss in miss_masks.items():
        groups[f"miss:{plan.rule_ids[j]}"] = (miss, rule_k)
    chosen: dict[str, np.ndarray] = {}
    for name, (mask, limit) in groups.items():
        rows = np.flatnonzero(mask)
        if len(rows) > limit:
            rows = rows[np.argpartition(keys[rows], limit - 1)[:limit]]
        if len(rows):
            chosen[name] = rows
    if not chosen:
        return {}
    wanted = np.unique(np.concatenate(list(chosen.values())))
    payloads = _payloads(plan, batch, fields, table, evidence, wanted)
    return {name: [(float(keys[r]), payloads[int(r)]["work_id"], int(r), payloads[int(r)]) for r in rows]
            for name, rows in chosen.items()}


def _payloads(plan, batch, fields, table, evidence, rows: np.ndarray) -> dict[int, dict]:
    """What a page shows of one work: ids, title, fate, evidence and its context."""
    bf, bs, be, _ = evidence
    sub = table.take(pa.array(rows)).to_pylist()
    src = batch.column("source").take(pa.array(rows)).to_pylist()
    titles = batch.column("title").take(pa.array(rows)).to_pylist()
    out = {}
    for i, r in enumerate(rows.tolist()):
        row = sub[i]
        context = None
        if bf[r] < len(FIELDS):
            text = fields[FIELDS[bf[r]]].buf_norm_text(r)
            a, b = int(bs[r]), int(be[r])
            context = {"field": FIELDS[bf[r]], "before": text[max(0, a - CONTEXT_CHARS):a],
                       "match": text[a:b], "after": text[b:b + CONTEXT_CHARS]}
        out[r] = {"work_id": row["work_id"], "source": src[i], "title": titles[i], "pile": row["pile"],
                  "pending_reason": row["pending_reason"], "winner": row["winner"],
                  "title_only": row["title_only"], "evidence": row["evidence"], "context": context}
    return out
