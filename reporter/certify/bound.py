"""The bound: the most relevant works a stratum can hold, given a uniform sample of it, exactly.

A stratum holds N works, K of them relevant (unknown). A uniform sample of
n of them without replacement shows X relevant works, X hypergeometric:
P[X = x] = C(K, x) C(N-K, n-x) / C(N, n). Having seen k, `max_relevant` is
the largest K for which P_K[X <= k] >= 1 - confidence: any larger K would
show k or fewer relevant works less often than that, so it is rejected at
that confidence (the one-sided exact upper bound, Clopper-Pearson's for a
finite population). P_K[X <= k] never grows with K (more relevant works
shift X up), so a binary search over K in [k, N - (n - k)] finds it: about
log2(N) evaluations of the CDF.

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
    whole = math.comb(N, n)
    holds = lambda K: alpha.denominator * _numerator(k, N, K, n) >= alpha.numerator * whole  # noqa: E731
    low, high = k, N - (n - k)  # holds(low): the sample's k relevant works are all there are
    while low < high:
        mid = (low + high + 1) // 2
        if holds(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _check(N: int, n: int, k: int) -> None:
    if not (0 <= k <= n <= N):
        raise ValueError(f"need 0 <= k <= n <= N, not k={k}, n={n}, N={N}")
