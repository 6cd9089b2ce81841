"""The seeded work_id hash behind the sample keys and the duplicate check, against its definition.

For an id of UTF-8 bytes b_0 .. b_k-1: the sum of (b_i + 1) * P**i modulo
2**64 (P the 64-bit FNV prime), XOR the seed times the golden ratio
constant, through splitmix64's finaliser. The numpy version must give the
same number for every id, empty and null ones, sliced arrays and any
characters: samples.json of every release depends on it.
"""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.routing.samples import id_hashes, sample_keys

M = (1 << 64) - 1


def reference(work_id: str | None, seed: int) -> int:
    h = 0
    for i, b in enumerate((work_id or "").encode("utf-8")):
        h = (h + (b + 1) * pow(1099511628211, i, 1 << 64)) & M
    h ^= ((seed & M) * 0x9E3779B97F4A7C15) & M
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & M
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & M
    return h ^ (h >> 31)


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.one_of(st.none(), st.text(max_size=40)), max_size=30), cut=st.integers(0, 3),
       seed=st.integers(0, 2**63))
def test_id_hashes_follow_their_definition(ids, cut, seed):
    arr = pa.array(["x:pad"] * cut + ids, pa.string()).slice(cut)
    assert id_hashes(arr, seed).tolist() == [reference(i, seed) for i in ids]


def test_sample_keys_are_the_top_53_bits_of_the_hash():
    arr = pa.array(["doi:10.1/a", "", None, "openalex:W1" * 20], pa.string())
    assert sample_keys(arr, 5).tolist() == [(reference(i, 5) >> 11) / 2**53 for i in arr.to_pylist()]
