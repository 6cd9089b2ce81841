"""Meaning, offline (issue 33, items 1-3): the embedded model, the order within a score, the safety net.

The model is wordllama's, read from its installed wheel: loaded here with the network blocked (no socket may be
opened, no hub variable set to help), and its vectors compared with the package's own inference.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from reporter.digest.archive import read_week
from reporter.digest.config import DigestSettings, parse_digest
from reporter.digest.criteria import parse_criteria
from reporter.digest.decide import decide, decide_week, rank_key, score_axes
from reporter.digest.meaning import (CLOSE_FLOOR, CLOSE_SHOWN, ORDER_MEANING, ORDER_RELEVANCE, Nearness, blend,
                                     close_in_meaning, suggest_phrase, week_meaning)
from reporter.digest.semantic import load_model, package_dir, similarities
from reporter.digest.watchlist import parse_watchlist
from reporter.digest.weeks import run_weeks
from reporter.errors import InputError
from reporter.hashing import canonical_json
from reporter.pool.record import Record
from reporter.settings import Table

CRITERIA = parse_criteria("""# Splatting
## In scope
- 3D Gaussian splatting for novel view synthesis: `gaussian splatting`, `3DGS`
- Neural radiance fields: `NeRF`, `radiance field*`
""", "criteria.md")
WATCHLIST = parse_watchlist("gaussian splatting\nNeRF\n", "watchlist.txt")


def rec(i: str, title: str, abstract: str | None = None) -> Record:
    return Record(id=f"arxiv:2606.{i}", title=title, abstract=abstract, authors=(f"Ada Surname{i}",))


WEEK = [
    rec("00001", "Gaussian splatting for real-time novel view synthesis",
        "We render scenes with 3D Gaussian splatting and compare with NeRF."),
    rec("00002", "Faster NeRF training", "Radiance field training in minutes with NeRF."),
    rec("00003", "4D reconstruction of dynamic scenes with deformable 3D Gaussians",
        "We reconstruct moving scenes from monocular video and render novel views in real time."),
    rec("00004", "A survey of soil bacteria", "Soil samples from farms were sequenced."),
    rec("00005", "Point maps for multi-view stereo and neural rendering",
        "Dense point maps give geometry for rendering new viewpoints of a scene."),
    # KEEPs by their words alone, far in meaning: they bring the KEEP median (the list's floor) down.
    rec("00006", "NeRF: a survey of soil bacteria", "Soil samples from dairy farms were sequenced and the bacteria "
        "counted by season, rainfall and the crops grown, with NeRF as the name of the farm cooperative."),
    rec("00007", "Gaussian splatting in tax law", "Tax returns of small farms and the courts' reading of income "
        "rules, the gaussian splatting of the penalties over the years of an audit and the appeals."),
    rec("00008", "NeRF bakery recipes", "Bread, butter and the oven temperatures of a village bakery over a winter, "
        "the flour and the yeast, and gaussian splatting of icing on cakes for weddings."),
    rec("00009", "NeRF shipping tariffs", "Container ships, ports and customs duties on grain and steel between two "
        "harbours, with gaussian splatting as the name of the freight company."),
]


def test_the_model_loads_from_the_wheel_with_no_network(tmp_path):
    """No socket is created, no hub variable helps, HOME is empty (no cache): the weights are the wheel's."""
    script = tmp_path / "offline.py"
    script.write_text(
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise AssertionError('a socket was opened')\n"
        "socket.socket = refuse\nsocket.create_connection = refuse\nsocket.getaddrinfo = refuse\n"
        "from reporter.digest.semantic import load_model\n"
        "m = load_model()\n"
        "v = m.embed(['3D Gaussian splatting'])\n"
        "print(m.name, m.vectors.shape, round(float(v[0] @ v[0]), 6))\n"
        "import sys; print('wordllama' in sys.modules, 'requests' in sys.modules)\n", encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    name, rest = done.stdout.split(" (", 1)
    assert name.startswith("wordllama ") and name.endswith(" l2_supercat_256")
    assert rest.splitlines()[0] == "32000, 256) 1.0"
    assert done.stdout.splitlines()[1] == "False False", "the package itself (its download path) is never imported"
    assert not list(tmp_path.glob(".cache/**/*")), "nothing was cached or downloaded"


def test_the_vectors_are_wordllama_s_own():
    """The mean of the token vectors, normalised: what WordLlamaInference.embed(norm=True) gives, to 1e-6."""
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    m = load_model()
    theirs = WordLlamaInference(m.vectors, Tokenizer.from_file(str(package_dir() / "tokenizers" /
                                                                   "l2_supercat_tokenizer_config.json")))
    texts = [r.title for r in WEEK]
    assert np.abs(theirs.embed(texts, norm=True) - m.embed(texts)).max() < 1e-6


def test_a_vector_does_not_depend_on_the_rest_of_the_batch():
    m = load_model()
    alone = m.embed([WEEK[2].title])
    together = m.embed([WEEK[0].abstract, WEEK[2].title, "x " * 500])
    assert alone[0].tobytes() == together[1].tobytes()
    assert not m.embed([""]).any(), "a text without a token is the zero vector"


def test_meaning_reads_what_the_keywords_miss():
    """The 4D-reconstruction paper names no watchlist phrase, yet is nearer the concepts than the soil survey."""
    near = {r.id: n for r, n in zip(WEEK, week_meaning(load_model(), WEEK, CRITERIA))}
    assert near["arxiv:2606.00003"].similarity > near["arxiv:2606.00004"].similarity + 0.1
    assert near["arxiv:2606.00001"].nearest.line == 3 and near["arxiv:2606.00002"].nearest.line == 4
    assert all(round(n.similarity, 4) == n.similarity for n in near.values())


def test_the_order_within_a_score_is_the_documented_blend():
    assert (ORDER_RELEVANCE, ORDER_MEANING) == (0.8, 0.2)
    assert blend(2.0, 0.5, 4.0) == round(0.8 * 0.5 + 0.2 * 0.5, 4) == 0.5
    assert blend(0.0, 0.3, 0.0) == 0.06
    axes = score_axes(WEEK, WATCHLIST, CRITERIA, [], model=load_model())
    top = max(a.relevance for a in axes)
    assert all(a.order == blend(a.relevance, a.meaning.similarity, top) for a in axes)
    # Two papers of one score and one relevance: the one nearer in meaning comes first, whatever the ids say.
    a, b = axes[2], axes[4]
    tied = [replace(a, relevance=1.0, order=blend(1.0, 0.1, 1.0)),
            replace(b, relevance=1.0, order=blend(1.0, 0.6, 1.0))]
    out = decide([WEEK[2], WEEK[4]], tied, CRITERIA)
    assert [d.id for d in out.decisions] == ["arxiv:2606.00005", "arxiv:2606.00003"]
    assert sorted(out.decisions, key=rank_key) == list(out.decisions)


def test_meaning_changes_no_score_decision_or_threshold():
    with_meaning = decide_week(WEEK, WATCHLIST, CRITERIA, model=load_model())
    without = decide_week(WEEK, WATCHLIST, CRITERIA)
    strip = lambda o: sorted((d.id, d.decision, d.score, d.axes, d.tags) for d in o.decisions)  # noqa: E731
    assert strip(with_meaning) == strip(without)
    assert without.close_in_meaning is None and all(d.similarity is None for d in without.decisions)
    assert all("similarity" not in d.to_json() for d in without.decisions)


def test_the_safety_net_lists_close_papers_that_are_not_keep():
    model = load_model()
    out = decide_week(WEEK, WATCHLIST, CRITERIA, model=model)
    by = {d.id: d for d in out.decisions}
    close = out.close_in_meaning
    kept = [d.similarity for d in out.decisions if d.decision == "KEEP"]
    assert len(kept) == 6 and close is not None
    assert [e["id"] for e in close] == ["arxiv:2606.00003", "arxiv:2606.00005"], "the 4D and point-map papers"
    for e in close:
        assert set(e) == {"id", "similarity", "nearest_concept", "suggested_phrase", "concept"}
        assert by[e["id"]].decision == "DROP" and e["similarity"] == by[e["id"]].similarity
        assert e["similarity"] >= float(np.median(kept))
        assert e["nearest_concept"] in ("criteria.md:3", "criteria.md:4")
        assert e["concept"].startswith(e["nearest_concept"] + ' "')
        assert e["suggested_phrase"]
    assert by["arxiv:2606.00004"].similarity < float(np.median(kept)), "the soil survey is not close"


def _nearness(sim: float) -> Nearness:
    return Nearness(sim, CRITERIA.concepts[0], sim)


def test_the_list_s_rule_floor_cap_order_and_no_already_covered():
    """From the KEEP median up (CLOSE_FLOOR without a KEEP), at most CLOSE_SHOWN, most similar first then by id,
    never a KEEP nor a paper already covered (a prior week kept it)."""
    from reporter.digest.records import Axes, Decision

    def d(i: int, decision: str, cause: str | None = None) -> Decision:
        return Decision(f"arxiv:2606.{i:05d}", decision, 50, Axes(1, 1, 1), "r", (), f"Title {i}", cause=cause)

    records = {f"arxiv:2606.{i:05d}": rec(f"{i:05d}", f"Title {i} about radiance") for i in range(20)}
    ds = [d(0, "KEEP"), d(1, "KEEP"), d(2, "KEEP"), *(d(i, "REVIEW") for i in range(3, 12)),
          d(12, "DROP", "already-covered"), d(13, "DROP", "weak-match")]
    sims = {0: 0.2, 1: 0.5, 2: 0.9, 12: 0.95, 13: 0.5, **{i: 0.4 + i / 100 for i in range(3, 12)}}
    sims[4] = sims[5] = 0.7
    meaning = {f"arxiv:2606.{i:05d}": _nearness(s) for i, s in sims.items()}
    got = close_in_meaning(ds, meaning, records, load_model(), CRITERIA, WATCHLIST)
    assert [e["id"][-2:] for e in got] == ["04", "05", "11", "10", "13"]  # from the 0.5 median; ties by id; 5 at most
    assert len(got) == CLOSE_SHOWN
    sims[1] = 0.6  # the median is 0.6 now: only the two at 0.7 are as close
    meaning = {f"arxiv:2606.{i:05d}": _nearness(s) for i, s in sims.items()}
    assert [e["id"][-2:] for e in close_in_meaning(ds, meaning, records, load_model(), CRITERIA, WATCHLIST)] == \
        ["04", "05"]
    none_kept = [x for x in ds if x.decision != "KEEP"]
    floor = [e["similarity"] for e in close_in_meaning(none_kept, meaning, records, load_model(), CRITERIA, WATCHLIST)]
    assert floor and min(floor) >= CLOSE_FLOOR


def test_a_suggested_phrase_is_new_to_the_watchlist_and_a_phrase_of_the_rule_language():
    model = load_model()
    concept = CRITERIA.concepts[0]
    phrase = suggest_phrase(model, WEEK[2], concept, WATCHLIST)
    assert phrase in WEEK[2].title.lower() and len(phrase.split()) in (2, 3)
    # A phrase the watchlist already covers is never suggested: here every bigram of the title is covered.
    covered = parse_watchlist("gaussian splatting\nsplatting for\nreal-time novel\nnovel view*\n", "w.txt")
    got = suggest_phrase(model, rec("9", "Gaussian splatting"), concept, covered)
    assert got is None
    assert suggest_phrase(model, rec("9", "the of and"), concept, WATCHLIST) is None


def test_semantic_false_is_a_setting_of_digest():
    def table(**extra):
        return Table(Path("reporter.toml"), "digest", {"papers": "p", "watchlist": "w", "criteria": "c", **extra},
                     Path("."))
    assert parse_digest(table(semantic=False)).semantic is False
    assert parse_digest(table()).semantic is True
    with pytest.raises(InputError, match="semantic"):
        parse_digest(table(semantic="no"))


def _week(tmp_path: Path, **kw) -> dict:
    papers = tmp_path / "papers"
    papers.mkdir(parents=True)
    rows = [{**r.to_json(), "published": "2026-06-02"} for r in WEEK]
    (papers / "2026-W23.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "criteria.md").write_text("# Splatting\n## In scope\n- 3D Gaussian splatting for novel view synthesis:"
                                          " `gaussian splatting`, `3DGS`\n- Neural radiance fields: `NeRF`, "
                                          "`radiance field*`\n", encoding="utf-8")
    (tmp_path / "watchlist.txt").write_text("gaussian splatting\nNeRF\n", encoding="utf-8")
    s = DigestSettings(papers=papers, watchlist=tmp_path / "watchlist.txt", criteria=tmp_path / "criteria.md",
                       archive=tmp_path / "archive", **kw)
    run_weeks(s, ["2026-W23"])
    return json.loads((tmp_path / "archive" / "2026-W23" / "decisions.json").read_text(encoding="utf-8"))


def test_decisions_json_records_the_model_and_the_list_and_reads_back(tmp_path):
    doc = _week(tmp_path)
    assert doc["rules"] == "digest.4"
    assert doc["settings"]["semantic"] == load_model().name
    assert doc["close_in_meaning"] and all(isinstance(d["similarity"], float) for d in doc["decisions"])
    week = read_week(canonical_json(doc).encode(), "decisions.json")
    assert [e.id for e in week.close] == [e["id"] for e in doc["close_in_meaning"]]
    kept = next(d["id"] for d in doc["decisions"] if d["decision"] == "KEEP")
    bad = {**doc, "close_in_meaning": [{**doc["close_in_meaning"][0], "id": kept}]}
    with pytest.raises(InputError, match="not KEEP"):
        read_week(canonical_json(bad).encode(), "decisions.json")


def test_the_same_week_gives_the_same_bytes_and_semantic_false_turns_it_off(tmp_path):
    a = _week(tmp_path / "a")
    b = _week(tmp_path / "b")
    assert canonical_json(a) == canonical_json(b)
    off = _week(tmp_path / "c", semantic=False)
    assert off["close_in_meaning"] is None and off["settings"]["semantic"] is False
    assert all("similarity" not in d for d in off["decisions"])
    assert read_week(canonical_json(off).encode(), "decisions.json").close is None


def test_similarities_are_rounded_cosines():
    a = np.array([[1.0, 0.0], [0.6, 0.8]])
    assert similarities(a, a).tolist() == [[1.0, 0.6], [0.6, 1.0]]
    assert similarities(np.zeros((0, 2)), a).shape == (0, 2)


def test_a_missing_model_package_is_an_input_error_naming_the_setting(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(InputError, match=r"\[digest\] semantic.*semantic = false"):
        package_dir()


def test_a_week_read_back_ranks_by_the_same_blend(tmp_path):
    """A week left as it was (already published) is ranked as it was decided: the blend is set again from each
    decision's relevance and similarity (`with_order`), not relevance alone."""
    from reporter.digest.meaning import with_order
    from reporter.digest.records import WeekDecisions

    doc = _week(tmp_path)
    read = with_order(WeekDecisions.from_json(doc).decisions)
    assert [d.id for d in sorted(read, key=rank_key)] == \
        [d["id"] for d in sorted(doc["decisions"], key=lambda d: (-d["score"], -blend(
            d["relevance"], d["similarity"], max(x["relevance"] for x in doc["decisions"])), d["id"]))]
    by_relevance = sorted(WeekDecisions.from_json(doc).decisions, key=lambda d: (-d.score, -d.relevance, d.id))
    assert [d.id for d in sorted(read, key=rank_key)] != [d.id for d in by_relevance], "the blend orders otherwise"
    plain = WeekDecisions.from_json({**doc, "decisions": [{k: v for k, v in d.items() if k != "similarity"}
                                                          for d in doc["decisions"]]}).decisions
    assert with_order(plain) == plain and all(d.order is None for d in with_order(plain))


def test_hostile_text_is_read_bounded_and_a_lone_surrogate_as_a_replacement_character():
    """A lone surrogate made the tokenizer raise TypeError, and a 1 MB abstract took 10 s: both seen before the fix."""
    from reporter.digest.semantic import TEXT_CHARS

    m = load_model()
    assert m.embed(["a \ud800 b"]).tobytes() == m.embed(["a \ufffd b"]).tobytes()
    long = "gaussian splatting " * 500_000
    assert m.embed([long]).tobytes() == m.embed([long[:TEXT_CHARS]]).tobytes()


def test_a_phrase_is_suggested_from_the_start_of_a_huge_abstract():
    from reporter.digest.meaning import SUGGEST_CHARS

    huge = rec("1", "the of", "radiance fields for cities " * 200_000 + "neural rendering")
    assert SUGGEST_CHARS == 1_000
    assert suggest_phrase(load_model(), huge, CRITERIA.concepts[1], WATCHLIST) == "radiance fields"


def test_a_suggested_phrase_never_spans_punctuation():
    """`LGMT: Logic-Grounded` and `Contextual, LLM-Judges` were suggested from real arXiv titles before the fix."""
    m, concept = load_model(), CRITERIA.concepts[0]
    for title in ("LGMT: Logic-Grounded Metamorphic Testing", "Safety is Contextual, LLM-Judges Are Not",
                  "Large language models (LLMs) for rendering"):
        phrase = suggest_phrase(m, rec("1", title), concept, WATCHLIST)
        assert phrase is None or phrase in {"logic-grounded metamorphic", "metamorphic testing",
                                            "logic-grounded metamorphic testing", "safety", "llm-judges",
                                            "large language", "language models", "large language models"}, phrase


def test_a_text_s_token_ids_are_the_tokenizer_s_own_piece_by_piece():
    """Token ids are made piece by piece, each distinct piece tokenised once (issue 35, item 3): the same ids as
    the tokenizer's `encode` of the whole text, one text at a time or a batch at once, for runs of spaces, a literal `▁`, tabs, emoji, bytes outside the
    vocabulary, a special token's text, and real titles and abstracts; and the same ids a second time (cached)."""
    m = load_model()
    assert m.pieces is not None, "the shipped tokenizer splits into pieces (semantic.word_pieces)"
    texts = ["", " ", "   ", "\u2581", "\u2581\u2581x", "a\u2581b", "a  b   c ", " lead", "trail  ", "\tx\n y",
             "x </s> y", "<s>", "<unk>a", "日本語のテキスト 中文", "😀 😀😀", "é\u0301 ĳ", "a" * 3000,
             *(r.title for r in WEEK), *(r.abstract or "" for r in WEEK)]
    texts += ["\x01 \x02 joined", "\x00 <s>", "ends with a space "]  # characters the batch might join with
    every_control = ["".join(map(chr, range(32))) + " x", "a b"]  # no control character free to join with
    assert [ids.tolist() for ids in m.token_arrays(every_control)] == [
        m.tokenizer.encode(t, add_special_tokens=False).ids for t in every_control]
    theirs = [m.tokenizer.encode(t, add_special_tokens=False).ids for t in texts]
    for _ in range(2):
        assert [m.token_ids(t) for t in texts] == theirs
        assert [ids.tolist() for ids in m.token_arrays(texts)] == theirs  # one batch, cut at each text's end
        assert [ids.tolist() for ids in m.token_arrays(texts[::-1])] == theirs[::-1]


def test_a_tokenizer_whose_merges_join_pieces_is_encoded_whole():
    """A BPE with a token holding `▁` after another character (a merge across pieces) is never split."""
    from tokenizers import Tokenizer
    from tokenizers.models import BPE

    from reporter.digest.semantic import word_pieces

    shipped = load_model().tokenizer
    assert word_pieces(shipped)
    vocab = {"\u2581": 0, "a": 1, "\u2581a": 2, "a\u2581": 3}
    joined = Tokenizer(BPE(vocab, [("\u2581", "a"), ("a", "\u2581")]))
    joined.normalizer = shipped.normalizer
    assert not word_pieces(joined)
    assert not word_pieces(Tokenizer(BPE({"a": 0, "\u2581": 1}, [])))  # no normaliser: not the one checked


def test_suggested_phrases_are_checked_together_with_the_same_verdicts_as_alone():
    """The rule language's check runs once for a paper's candidate phrases (issue 35, item 3); a refused phrase
    is dropped and the rest checked again, so the verdicts are the ones each phrase gets alone."""
    from reporter.digest.meaning import _accepted, _accepted_alone

    phrases = ["a b", "x*y z", "c d", "*ab", "e f", "a * b", "ab*", "été x"]
    assert _accepted(phrases) == [p for p in phrases if _accepted_alone(p)] == ["a b", "c d", "e f", "ab*", "été x"]
    assert _accepted([]) == [] and _accepted(["*ab"]) == []


def test_the_piece_cache_is_bounded_and_refilled_with_the_same_ids(monkeypatch):
    """Past PIECES_CACHED pieces the cache starts again (a long run's memory stays bounded); the ids do not change."""
    import reporter.digest.semantic as semantic

    m = load_model()
    texts = [r.title for r in WEEK] + [r.abstract or "" for r in WEEK]
    theirs = [m.tokenizer.encode(t, add_special_tokens=False).ids for t in texts]
    monkeypatch.setattr(semantic, "PIECES_CACHED", 5)
    for text, ids in zip(texts, theirs):
        assert m.token_ids(text) == ids
        assert len(m.pieces) <= 5 + len(text.split()) + 1


def test_texts_embedded_in_batches_give_the_same_vectors(monkeypatch):
    import reporter.digest.semantic as semantic

    m = load_model()
    texts = [r.title for r in WEEK] + [None, "", "x </s> y"] + [r.abstract or "" for r in WEEK]
    whole = m.embed(texts)
    monkeypatch.setattr(semantic, "BATCH", 3)
    assert m.embed(texts).tobytes() == whole.tobytes()
