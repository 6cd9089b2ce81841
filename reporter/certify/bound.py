"""The bound: the most relevant works a stratum can hold, given a uniform sample of it, exactly.

A stratum holds N works, K of them relevant (unknown). A uniform sample of
n of them without replacement shows X relevant works, X hypergeometric:
P[X = x] = C(K, x) C(N-K, n-x) / C(N, n). Having seen k, `max_relevant` is
the largest K for which P_K[X <= k] >= 1 - confidence: any larger K would
show k or fewer relevant works less often than that, so it is rejected at
that confidence (the one-sided exact upper bound, Clopper-Pearson's for a
finite population). P_K[X <= k] never grows with K (more relevant works
shift X up), so a search over K in [k, N - (n - k)] finds it: galloping up
from k by about what the sample suggests ((k + 1) N / n, then doubling)
until a K is rejected, then halving between the last two, about
log2(max_relevant) evaluations of the CDF, each over the
smaller of K and n (the distribution is symmetric in them), so a bound far
below N stays cheap however large the sample.

Each evaluation is exact, in integers. The terms t_x = C(K, x) C(N-K, n-x)
are integers and follow one another by the ratio
t_{x+1} = t_x (K-x)(n-x) / ((x+1)(N-K-n+x+1)), an exact division, so the
CDF's numerator is one `math.comb` and k big-by-small products and
divisions, O(k) terms of about n log2(N/n) bits. It is compared with
1 - confidence = p/q as q * sum >= p * C(N, n): no float, no
approximation. At N = 5,000,000 and n = 400 a bound takes milliseconds.
"""

from __future__ import annotations

import math
from fractions import Fraction


def as_fraction(value: float | str | Fraction) -> Fraction:
    """A probability as an exact fraction: a float by its shortest decimal (0.95 is 19/20), a string as written."""
    return value if isinstance(value, Fraction) else Fraction(str(value) if isinstance(value, float) else value)


def _numerator(k: int, N: int, K: int, n: int) -> int:
    """sum over x <= k of C(K, x) C(N-K, n-x): the CDF times C(N, n)."""
    low, high = max(0, n - (N - K)), min(k, K, n)
    if low > high:
        return 0
    term = math.comb(K, low) * math.comb(N - K, n - low)
    total = term
    for x in range(low, high):
        term = term * (K - x) * (n - x) // ((x + 1) * (N - K - n + x + 1))
        total += term
    return total


def max_relevant(N: int, n: int, k: int, confidence: float | str | Fraction) -> int:
    """The largest K with P_K[X <= k] >= 1 - confidence: at most this many of the N works are relevant.

    `n` is the labelled sample's size and `k` the relevant works it holds. With n = 0 nothing is known (N);
    with n = N the count is known exactly (k).
    """
    _check(N, n, k)
    conf = as_fraction(confidence)
    if not 0 < conf < 1:
        raise ValueError(f"confidence {confidence} must be above 0 and below 1")
    alpha = 1 - conf
    whole: list[int] = []  # C(N, n), computed once if a K >= n is tested

    def holds(K: int) -> bool:
        if K >= n and not whole:
            whole.append(math.comb(N, n))
        return not _rejects(N, n, k, K, alpha, whole[0] if whole else None)

    low, high = k, N - (n - k)  # holds(low): the sample's k relevant works are all there are
    # gallop up from k, first by about what a sample of n shows (k + 1 relevant in n: (k + 1) N / n), then
    # doubling: the bound is usually far below N, and a small K is cheap to test
    step = max(1, (k + 1) * N // max(n, 1))
    while low + step <= high and holds(low + step):
        low, step = low + step, step * 2
    high = min(high, low + step - 1)
    while low < high:
        mid = (low + high + 1) // 2
        if holds(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _rejects(N: int, n: int, k: int, K: int, alpha: Fraction, whole: int | None = None) -> bool:
    """P_K[X <= k] < alpha: a stratum of N works holding K relevant ones would show k or fewer in a sample of n
    less often than alpha. The hypergeometric is symmetric in K and n (C(K,x) C(N-K,n-x) / C(N,n) =
    C(n,x) C(N-n,K-x) / C(N,K)), so the sum runs over the smaller of the two: a few relevant works in a large
    sample cost as little as a small sample (`whole`: C(N, n) when already computed)."""
    if K < n:
        return alpha.denominator * _numerator(k, N, n, K) < alpha.numerator * math.comb(N, K)
    return alpha.denominator * _numerator(k, N, K, n) < alpha.numerator * (math.comb(N, n) if whole is None
                                                                            else whole)


def _check(N: int, n: int, k: int) -> None:
    if not (0 <= k <= n <= N):
        raise ValueError(f"need 0 <= k <= n <= N, not k={k}, n={n}, N={N}")


def bonferroni(confidence: float | str | Fraction, m: int) -> Fraction:
    """The confidence each of `m` statements needs for all of them to hold at `confidence` together (Bonferroni:
    the chance that any one fails is at most the sum of theirs, m * alpha / m = alpha)."""
    conf = as_fraction(confidence)
    return 1 - (1 - conf) / max(m, 1)


def joint_confidence(confidences: list[float | str | Fraction]) -> Fraction:
    """The confidence at which statements made at `confidences` all hold together (Bonferroni: 1 - sum of their
    alphas; 0 when that sum reaches 1)."""
    return max(Fraction(0), 1 - sum((1 - as_fraction(c) for c in confidences), Fraction(0)))


def recall_lower_bound(found: int, k: int, most: int) -> Fraction | None:
    """found / (found + most - k): `found` relevant works are handed on (counting the `k` a sample found and
    rescued), and the stratum held at most `most` relevant works, `k` of them rescued, so at most `most - k`
    are missed. None when nothing is known to be relevant (found + most - k = 0 gives no ratio)."""
    missed = most - k
    return None if found + missed == 0 else Fraction(found, found + missed)


def allowed_missed(base: int | None, k: int, N: int, min_recall: float | None,
                   max_missed_fraction: float | None) -> int | None:
    """The largest bound `max_relevant` a sample holding `k` relevant works may give for the target to be met:
    (base + k) / (base + U) >= min_recall (`base`: relevant works found without the sample) and U / N <=
    max_missed_fraction, each when set. None when no target is set; -1 when none can be met (recall set, base
    unknown)."""
    limits = []
    if min_recall is not None:
        if base is None:
            return -1
        r = as_fraction(min_recall)
        limits.append(math.floor((base * (1 - r) + k) / r) if r > 0 else N)
    if max_missed_fraction is not None:
        limits.append(math.floor(as_fraction(max_missed_fraction) * N))
    return min(limits) if limits else None


def smallest_n(N: int, k: int, confidence: float | str | Fraction, allowed: int) -> int | None:
    """The smallest sample size n (of N works) whose bound, if the sample holds `k` relevant works, is at most
    `allowed`; None when no n does (even the whole stratum, whose bound is k, exceeds it). The bound never grows
    with n (a larger sample with the same k is stochastically more telling), so a binary search finds it."""
    if k > N or allowed < k:
        return None
    if N == 0:
        return 0
    alpha = 1 - as_fraction(confidence)
    # max_relevant(N, n, k) <= allowed exactly when K = allowed + 1 is rejected (P_K[X <= k] falls as K grows)
    meets = lambda n: allowed + 1 > N or _rejects(N, n, k, allowed + 1, alpha)  # noqa: E731
    low, high = max(k, 1), N
    if not meets(high):
        return None
    while low < high:
        mid = (low + high) // 2
        if meets(mid):
            high = mid
        else:
            low = mid + 1
    return low
