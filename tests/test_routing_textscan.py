"""The literal scanner's two engines (Hyperscan, the aho-corasick DFA) give the same hits.

Hits are compared as whole sets of (row, literal, start, end, left_ok,
right_ok): every occurrence of every literal, overlapping ones included,
with hits that straddle two rows dropped. On text built from a small
alphabet (so literals overlap, repeat and cross row ends) and on the real
SYNERGY abstracts with the benchmark's 54-rule book.
"""

from __future__ import annotations

import gzip
import json
import pickle
import platform
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from support.routing import TODAY

from reporter.routing.fieldbuffer import FieldBuffer
from reporter.routing.textscan import Scanner, default_engine

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
WORKS = DATA / "synergy_v1" / "synergy_v1_works.jsonl.gz"

if platform.system() == "Linux" and platform.machine() == "x86_64":
    import hyperscan  # noqa: F401  (a dependency here: its absence is a failed install, not a skip)
else:  # pragma: no cover - the wheel exists only for Linux x86-64
    pytest.skip("Hyperscan's wheel is installed only on Linux x86-64", allow_module_level=True)


ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def hit_set(scanner: Scanner, texts: list[str]) -> list[tuple]:
    hits = scanner.scan(FieldBuffer.of(pa.array(texts, pa.string())))
    rows = zip(*(getattr(hits, f).tolist() for f in ("row", "lit", "start", "end", "left_ok", "right_ok")))
    return sorted(rows)


def both(literals: list[str]) -> tuple[Scanner, Scanner]:
    return Scanner(literals, engine="hyperscan"), Scanner(literals, engine="aho-corasick")


def test_hyperscan_is_the_default_where_installed():
    assert default_engine() == "hyperscan"
    assert Scanner(["trial"]).engine == "hyperscan"


def test_known_hits_overlapping_and_across_rows():
    hs, ac = both(["aa", "a a", "ab"])
    texts = ["aaa", "a", "ab  a a", ""]
    expected = [
        (0, 0, 0, 2, True, False), (0, 0, 1, 3, False, True),       # "aa" twice in "aaa", overlapping
        (2, 1, 4, 7, True, True),                                   # "a a" at the end of row 2
        (2, 2, 0, 2, True, True),                                   # "ab"
        (2, 3, 2, 4, False, False),                                 # the two spaces (whitespace trouble)
    ]
    assert hit_set(hs, texts) == sorted(expected)
    assert hit_set(ac, texts) == sorted(expected)


@settings(max_examples=300, deadline=None)
@given(literals=st.lists(st.text(alphabet="ab é-", min_size=1, max_size=4), min_size=1, max_size=8, unique=True),
       texts=st.lists(st.text(alphabet="abAB éÉ-\n", max_size=30), min_size=1, max_size=8))
def test_engines_agree_on_any_text(literals, texts):
    """Hyperscan reads the raw text and folds ASCII case; the DFA reads it ASCII-lower-cased."""
    hs, ac = both(literals)
    assert hs.caseless and not ac.caseless
    lowered = [t.translate(ASCII_LOWER) for t in texts]
    assert hit_set(hs, texts) == hit_set(ac, lowered)
    assert hit_set(hs, texts) == hit_set(hs, lowered)  # 'É' is not folded: normalisation lower-cases it


def test_a_sliced_array_is_scanned_from_its_own_first_row():
    hs, ac = both(["bc", "cd"])
    arr = pa.array(["abcd", "bcd", "xbc"], pa.string()).slice(1)
    for scanner in (hs, ac):
        hits = scanner.scan(FieldBuffer.of(arr))
        assert sorted(zip(hits.row.tolist(), hits.lit.tolist(), hits.start.tolist())) == \
            [(0, 0, 0), (0, 1, 1), (1, 0, 1)]


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.one_of(st.none(), st.text(alphabet="ab é’\n", max_size=40)), min_size=1, max_size=12),
       cut=st.integers(0, 3), step=st.integers(1, 3))
def test_ascii_rows_are_the_rows_without_a_high_byte(texts, cut, step):
    """Every alignment of a high byte within its 8-byte word, across words and rows, slices and nulls.

    The array is sliced so that bytes before its first row (which belong to
    no row) may be non-ASCII; the scratch step is shrunk to a few words so
    that the test also crosses the passes of a long column.
    """
    import reporter.routing.fieldbuffer as fieldbuffer
    arr = pa.array(["é" * cut, *texts], pa.string()).slice(1)
    expected = [t is None or t.isascii() for t in texts]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fieldbuffer, "_ASCII_STEP", step)
        assert FieldBuffer.of(arr).ascii_rows().tolist() == expected
    assert FieldBuffer.of(arr).ascii_rows().tolist() == expected


def test_ascii_rows_of_an_empty_and_an_all_null_array():
    assert FieldBuffer.of(pa.array([], pa.string())).ascii_rows().tolist() == []
    assert FieldBuffer.of(pa.array([None, None], pa.string())).ascii_rows().tolist() == [True, True]


def test_a_subset_scanner_reports_the_plans_indices_and_trouble_above_n():
    """A field's scanner looks for some of a plan's literals and reports each by the plan's index."""
    texts = ["Trial  of a Random\nsample", "random trial", "no hit"]
    whole = both(["x", "trial", "y", "random"])
    subset = (Scanner(["random", "trial"], engine="hyperscan", ids=[3, 1], n=4),
              Scanner(["random", "trial"], engine="aho-corasick", ids=[3, 1], n=4))
    lowered = [t.translate(ASCII_LOWER) for t in texts]
    for full, part, text in ((whole[0], subset[0], texts), (whole[1], subset[1], lowered)):
        assert hit_set(part, text) == hit_set(full, text)
        assert {h[1] for h in hit_set(part, text)} == {1, 3, 4, 6}  # markers from n: "  " 4, "\n" 6
        assert hit_set(pickle.loads(pickle.dumps(part)), text) == hit_set(full, text)
    with pytest.raises(ValueError, match="index below n"):
        Scanner(["a"], ids=[4], n=4)


def test_a_plan_scans_each_field_for_the_literals_its_rules_read_there(tmp_path):
    from reporter.routing.plan import compile_plan
    from reporter.routing.specs import load_rulebook
    book = load_rulebook(ROOT / "bench" / "rules50")
    plan = compile_plan(book, pa.schema([("work_id", pa.string()), ("source", pa.string()), ("title", pa.string()),
                                         ("abstract", pa.string()), ("type", pa.string())]))
    title, abstract = (set(plan.scanners[f].literals) for f in ("title", "abstract"))
    assert title | abstract == set(plan.lit_index)
    assert "<" in title and "<" not in abstract  # only a title regex looks for markup
    assert "(β = " in abstract and "(β = " not in title  # only an abstract regex looks for statistics
    assert "replicat" in title & abstract  # a regex on `text` reads both
    for f in ("title", "abstract"):
        assert [plan.lit_index[lit] for lit in plan.scanners[f].literals] == plan.scanners[f].ids
        assert plan.scanners[f].n == len(plan.lit_index)


def test_a_scanner_pickles_and_threads_share_it():
    """A Dask worker receives the scanner pickled and routes pieces on several threads."""
    hs = Scanner(["trial", "random"], engine="hyperscan")
    copy = pickle.loads(pickle.dumps(hs))
    texts = ["a randomised trial", "random trial trial"] * 500
    want = hit_set(hs, texts)
    assert hit_set(copy, texts) == want
    results, errors = [], []

    def work() -> None:
        try:
            for _ in range(20):
                results.append(hit_set(copy, texts) == want)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 80 and all(results)


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="unknown scanning engine 'pcre'"):
        Scanner(["x"], engine="pcre")


@pytest.mark.realdata
@pytest.mark.slow
def test_engines_agree_on_real_abstracts_with_the_benchmark_book():
    if not WORKS.exists():
        pytest.skip(f"real data not found at {WORKS}")
    from reporter.routing.plan import compile_plan
    from reporter.routing.specs import load_rulebook
    book = load_rulebook(ROOT / "bench" / "rules50")
    plan = compile_plan(book, pa.schema([("work_id", pa.string()), ("source", pa.string()), ("title", pa.string()),
                                         ("abstract", pa.string()), ("type", pa.string())]))
    texts = []
    with gzip.open(WORKS, "rt", encoding="utf-8") as f:
        for line in f:
            texts.append(json.loads(line).get("abstract") or "")
    hs, ac = both(list(plan.lit_index))
    got = hit_set(hs, texts)
    assert got == hit_set(ac, [t.translate(ASCII_LOWER) for t in texts])
    assert len(got) > 1000
    assert np.unique([h[1] for h in got]).size > 20


@pytest.mark.realdata
@pytest.mark.slow
def test_a_release_is_the_same_bytes_with_either_engine(tmp_path):
    """The whole route (normalisation, patch rows, evidence, samples) over real records, once per engine."""
    import pyarrow.parquet as pq
    from support.routing import synergy_works

    from reporter.routing.release import route_release
    rows = synergy_works()
    pool = tmp_path / "pool.parquet"
    pq.write_table(pa.Table.from_pylist(rows), pool)
    out = {}
    for engine in ("hyperscan", "aho-corasick"):
        result = route_release(pool, ROOT / "bench" / "rules50", tmp_path / engine, workers=1, progress=False,
                               as_of=TODAY, engine=engine)
        out[engine] = {name: (result.release_dir / name).read_bytes()
                       for name in ("routing.parquet", "rule_stats.json", "samples.json")}
    assert out["hyperscan"] == out["aho-corasick"]
    stats = json.loads(out["hyperscan"]["rule_stats.json"])
    assert sum(stats["piles"].values()) == len(rows) and stats["piles"]["pending"] < len(rows)


def test_an_unknown_engine_name_in_the_environment_is_refused():
    from reporter.errors import InputError
    from reporter.routing.textscan import scan_engine
    with pytest.raises(InputError, match="REPORTER_SCAN_ENGINE='re2': name one of hyperscan, aho-corasick"):
        scan_engine({"REPORTER_SCAN_ENGINE": "re2"})
    assert scan_engine({}) is None and scan_engine({"REPORTER_SCAN_ENGINE": "aho-corasick"}) == "aho-corasick"


def test_the_engine_is_read_at_the_commands_edge_never_inside_the_scanner(tmp_path, monkeypatch, capsys):
    """`reporter route` refuses an unknown REPORTER_SCAN_ENGINE before it writes anything (exit 2); the scanner
    itself reads no environment: it takes the engine it is given, else the process's default."""
    from support.routing import write_pool, write_specs
    from support.routing_fixture import ROWS, RULES

    from reporter.cli import main
    monkeypatch.setenv("REPORTER_SCAN_ENGINE", "re2")
    assert Scanner(["x"]).engine == default_engine()
    assert Scanner(["x"], "aho-corasick").engine == "aho-corasick"
    pool, specs = write_pool(tmp_path / "pool.parquet", ROWS), write_specs(tmp_path, RULES)
    code = main(["route", "--pool", str(pool), "--specs", str(specs), "--out", str(tmp_path / "releases")])
    assert code == 2
    assert "REPORTER_SCAN_ENGINE='re2': name one of hyperscan, aho-corasick" in capsys.readouterr().err
    assert not (tmp_path / "releases").exists()


_UTF8_EDGES = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
               0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@example(rows=[b"\xed\xa0\x80"], skip=0)            # a surrogate
@example(rows=[b"\xed\x9f\xbf"], skip=0)            # ... the last character before them
@example(rows=[b"\xe0\x9f\xbf"], skip=0)            # an overlong 3-byte form
@example(rows=[b"\xe0\xa0\x80"], skip=0)            # ... the first that is not
@example(rows=[b"\xf0\x8f\xbf\xbf"], skip=0)        # an overlong 4-byte form
@example(rows=[b"\xf0\x90\x80\x80"], skip=0)
@example(rows=[b"\xf4\x90\x80\x80"], skip=0)        # past U+10FFFF
@example(rows=[b"\xf4\x8f\xbf\xbf"], skip=0)        # U+10FFFF itself
@example(rows=[b"\xc0\xaf"], skip=0)                # C0 and C1 lead nothing
@example(rows=[b"caf\xc3", b"\xa9"], skip=0)         # a character split between two rows
@example(rows=[b"\xe2\x82"], skip=0)                # a character cut short at the end
@example(rows=[b"\xa9x"], skip=1)                   # a continuation byte after a stray lead outside the slice
@given(rows=st.lists(st.one_of(st.binary(max_size=8),
                               st.lists(st.sampled_from(_UTF8_EDGES), max_size=8).map(bytes),
                               st.text(max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass"))),
                     min_size=1, max_size=5),
       skip=st.integers(0, 2))
def test_utf8_validity_from_the_high_bytes_is_that_of_each_row(rows, skip):
    """FieldBuffer.utf8_valid says True exactly when every row decodes as UTF-8 on its own (Python's
    strict decoder: no overlong forms, no surrogates, nothing past U+10FFFF, no character across rows)."""
    values = [b"\xc3"] * skip + rows  # a sliced array: its first row starts past a stray byte
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum([len(v) for v in values], out=offsets[1:])
    arr = pa.Array.from_buffers(pa.string(), len(values), [None, pa.py_buffer(offsets.tobytes()),
                                                           pa.py_buffer(b"".join(values))]).slice(skip)
    buf = FieldBuffer.of(arr)
    want = True
    for row in rows:
        try:
            row.decode("utf-8")
        except UnicodeDecodeError:
            want = False
    assert buf.utf8_valid(buf.high_bytes()) == want


@pytest.mark.parametrize("share", [0.0, 0.001, 0.05, 0.3, 1.0])
def test_high_bytes_are_every_byte_from_0x80_up_however_dense(share):
    """Sparse text is searched word by word, mostly non-ASCII text (CJK) byte by byte: the same positions."""
    rng = np.random.default_rng(3)
    rows = ["".join("研" if rng.random() < share else "a" for _ in range(int(rng.integers(0, 300))))
            for _ in range(2_000)]
    arr = pa.array(["é skipped"] + rows).slice(1)
    buf = FieldBuffer.of(arr)
    start, end = int(buf.offsets[0]), int(buf.offsets[-1])
    high = buf.high_bytes()
    assert high.tolist() == (start + np.flatnonzero(buf.data[start:end] >= 128)).tolist()
    assert buf.utf8_valid(high)
