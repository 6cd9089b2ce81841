"""The sample is bottom-k on routing's seeded id hash: the same ids, seed and n give the same sample in the same
order, whatever the order the ids come in, and a stratum that only loses works keeps every sampled work left."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from test_routing_id_hashes import reference

from reporter.certify.sample import bottom_k

IDS = [f"doi:10.5555/w{i:04d}" for i in range(500)]


def test_the_sample_is_the_n_smallest_hashes_of_the_definition():
    expected = [w for _, w in sorted((reference(w, 7), w) for w in IDS)][:40]
    assert bottom_k(IDS, 7, 40) == tuple(expected)


def test_neither_the_order_of_the_ids_nor_a_second_draw_changes_it():
    shuffled = IDS[:]
    random.Random(3).shuffle(shuffled)
    assert bottom_k(shuffled, 7, 40) == bottom_k(IDS, 7, 40) == bottom_k(IDS, 7, 40)
    assert bottom_k(IDS, 8, 40) != bottom_k(IDS, 7, 40), "another seed, another sample"


def test_a_larger_sample_extends_a_smaller_one():
    assert bottom_k(IDS, 0, 100)[:40] == bottom_k(IDS, 0, 40)


def test_a_stratum_smaller_than_n_is_taken_whole_in_rank_order():
    assert sorted(bottom_k(IDS[:30], 0, 400)) == sorted(IDS[:30]) and len(bottom_k(IDS[:30], 0, 400)) == 30
    assert bottom_k([], 0, 10) == ()


@settings(max_examples=100, deadline=None)
@given(keep=st.lists(st.booleans(), min_size=len(IDS), max_size=len(IDS)), n=st.integers(1, 80),
       seed=st.integers(0, 2**32))
def test_works_that_stay_in_a_shrinking_stratum_stay_in_its_sample(keep, n, seed):
    before = bottom_k(IDS, seed, n)
    after_ids = [w for w, k in zip(IDS, keep) if k]
    after = set(bottom_k(after_ids, seed, n))
    assert {w for w in before if w in set(after_ids)} <= after
