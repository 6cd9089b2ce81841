"""The bound is exact: the hypergeometric CDF against independent computations, and max_relevant against a scan.

Independent means computed another way: every subset of a tiny population
counted one by one; or, for N = 5,000,000, each term C(K, x) C(N-K, n-x) by
`math.comb` itself rather than by the ratio of one term to the next; and
max_relevant by scanning every K rather than by a binary search.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reporter.certify import bound
from reporter.certify.bound import as_fraction, max_relevant

BIG = 5_000_000


def bound_cdf(k: int, N: int, K: int, n: int) -> Fraction:
    """P[X <= k] from the numerator max_relevant compares (bound._numerator), over C(N, n)."""
    return Fraction(bound._numerator(k, N, K, n), math.comb(N, n))


def enumerated_cdf(k: int, N: int, K: int, n: int) -> Fraction:
    """P[X <= k] by drawing every subset of size n of N works, the first K relevant."""
    draws = list(itertools.combinations(range(N), n))
    return Fraction(sum(sum(w < K for w in d) <= k for d in draws), len(draws))


def direct_cdf(k: int, N: int, K: int, n: int) -> Fraction:
    """P[X <= k] as a sum of products of binomial coefficients, each from math.comb."""
    return Fraction(sum(math.comb(K, x) * math.comb(N - K, n - x) for x in range(0, k + 1)), math.comb(N, n))


def scanned_max(N: int, n: int, k: int, confidence: Fraction) -> int:
    """The largest K whose direct CDF at k is at least 1 - confidence, every K tried."""
    return max(K for K in range(N + 1) if direct_cdf(k, N, K, n) >= 1 - confidence)


def test_the_cdf_counts_every_subset_of_a_tiny_population():
    for N in range(0, 8):
        for n in range(0, N + 1):
            for K in range(0, N + 1):
                for k in range(0, n + 1):
                    assert bound_cdf(k, N, K, n) == enumerated_cdf(k, N, K, n), (k, N, K, n)


@pytest.mark.parametrize("k", [0, 1, 3, 12])
def test_the_cdf_at_five_million_equals_the_direct_sum(k):
    for K in (0, 1, k, 37_305, 59_019, 250_000, BIG - 400, BIG):
        if K < k or BIG - K < 400 - k:
            continue
        assert bound_cdf(k, BIG, K, 400) == direct_cdf(k, BIG, K, 400), K


def test_max_relevant_equals_a_scan_of_every_k_for_small_populations():
    for conf in (Fraction(95, 100), Fraction(1, 2), Fraction(99, 100)):
        for N in range(1, 26):
            for n in range(0, N + 1, 3):
                for k in range(0, n + 1, 2):
                    assert max_relevant(N, n, k, conf) == scanned_max(N, n, k, conf), (N, n, k, conf)


@pytest.mark.parametrize(("n", "k", "expected"), [(400, 0, 37_305), (400, 1, 59_019), (400, 10, 210_179),
                                                  (2_000, 0, 7_482), (2_000, 20, 72_485)])
def test_max_relevant_at_five_million_is_the_last_k_that_holds(n, k, expected):
    alpha = Fraction(5, 100)
    assert max_relevant(BIG, n, k, 0.95) == expected
    assert direct_cdf(k, BIG, expected, n) >= alpha > direct_cdf(k, BIG, expected + 1, n)


def test_k_zero_at_five_million_agrees_with_the_closed_form():
    """With k = 0, P[X = 0] = prod (N-K-i)/(N-i); in logs its root is near N (1 - 0.05 ** (1/n))."""
    got = max_relevant(BIG, 400, 0, 0.95)
    log_p = lambda K: sum(math.log((BIG - K - i) / (BIG - i)) for i in range(400))  # noqa: E731
    assert log_p(got) >= math.log(0.05) > log_p(got + 1)
    assert abs(got - BIG * (1 - 0.05 ** (1 / 400))) < 30


def test_the_edges():
    assert max_relevant(1000, 0, 0, 0.95) == 1000, "nothing labelled: nothing known"
    assert max_relevant(1000, 1000, 7, 0.95) == 7, "every work labelled: the count is known"
    assert max_relevant(1000, 50, 50, 0.95) == 1000, "every sampled work relevant: no bound below N"
    assert max_relevant(1, 1, 0, 0.95) == 0
    for bad in ((10, 11, 0), (10, 5, 6), (10, 5, -1)):
        with pytest.raises(ValueError):
            max_relevant(*bad, 0.95)
    for conf in (0, 1, 1.5):
        with pytest.raises(ValueError):
            max_relevant(10, 5, 0, conf)
    assert as_fraction(0.95) == Fraction(19, 20) and as_fraction("0.999") == Fraction(999, 1000)


def test_five_million_takes_a_binary_search_of_the_cdf(monkeypatch):
    """At N = 5,000,000 a bound is a binary search over K: about log2(N) evaluations of the CDF, never a scan."""
    evaluations = []
    numerator = bound._numerator
    monkeypatch.setattr(bound, "_numerator", lambda *a: evaluations.append(a) or numerator(*a))
    for n, k in ((400, 0), (400, 5), (2_000, 20), (4_000, 40)):
        evaluations.clear()
        K = max_relevant(BIG, n, k, 0.95)
        assert 1 <= len(evaluations) <= math.ceil(math.log2(BIG)) + 1, (n, k, len(evaluations))
        assert {a[0] for a in evaluations} == {k}  # each evaluation sums k + 1 terms at most
        assert k < K < BIG - (n - k)


@settings(max_examples=150, deadline=None)
@given(N=st.integers(1, 3_000), data=st.data())
def test_more_relevant_in_the_sample_or_more_confidence_never_lowers_the_bound(N, data):
    n = data.draw(st.integers(0, min(N, 300)))
    k = data.draw(st.integers(0, n))
    base = max_relevant(N, n, k, 0.9)
    assert k <= base <= N - (n - k)
    assert max_relevant(N, n, k, 0.99) >= base
    if k < n:
        assert max_relevant(N, n, k + 1, 0.9) >= base
