"""Hit rates of the falsifier on planted false claims whose violations fill about 0.1% of the input
space, for tests/test_falsifier_power.py and the README's falsify section.

Each claim's violation is graded (how far from failing) and its violation region has a measure in
closed form under plain random sampling of its strategy (every choice uniform on its range):

* ``corner``: (N, E, u, h) with N, E uniform on {1..4}, u, h on [0, 1]; the claim
  (N-1)(E-1) u h / 9 <= 0.83 fails only at N = E = 4 and u h > t = 0.83, of probability
  (1/16) P[u h > t] = (1/16)(1 - t + t ln t) = 0.000959 (P[u h > t] = int_t^1 (1 - t/u) du).
* ``corner+ignored``: the same claim on a strategy that also draws seven choices it ignores (a data
  seed, an option, a sign, ...), as the FedAvg instance strategies do; the same measure.
* ``ball+ignored``: k uniform on {0..3}, x uniform on [0, 1]^3; the claim |x - c| >= 0.1 for k = 2
  (c = (0.3, 0.6, 0.45), violation 0.1 - |x - c|; -1 for other k) fails on a ball inside the cube,
  of probability (1/4)(4/3) pi 0.1^3 = 0.00105; with seven ignored choices.
* ``product``: x uniform on [0, 1]^6; the claim prod x_i <= 1/3 fails with probability
  P[sum -ln x_i < ln 3] = P[Gamma(6, 1) < ln 3] = 1 - (1/3) sum_{k<6} (ln 3)^k / k! = 0.000970.
* ``corner yes/no``: ``corner`` with a bare yes/no violation (+1 / -1): no score to climb, so no
  search does much better than 1 - (1 - p)^budget (0.047 at budget 50).

A built-in claim with a small violation region, whose measure is only estimated:

* ``lemma3[0.92]`` (``--lemma3``): Li's Lemma 3 with the constant 4 replaced by 0.92 on the built-in
  li2020.lemma3 strategy (15-16 choices, all of them mattering: the data seed changes the problem);
  violated where spread / (4 eta^2 (E-1)^2 G^2) > 0.23, by 9 of 5000 plain random draws (0.18%,
  Clopper-Pearson 95% interval [0.08%, 0.34%]). About 12 ms an evaluation.

``hit_count`` runs the search without shrinking (it stops at the first violation). Run
``PYTHONPATH=. python tests/falsify_hit_rates.py [SEEDS] [--lemma3]`` for the hits in SEEDS (default
200) seeds at budgets 25, 50, 100 and 200 (100 at most with --lemma3); with PYTHONPATH at another
checkout it measures that checkout's falsifier. Measured, hits before -> after (before: plain random
draws for half the budget, then one-choice mutations of the best input, commit 65a4502):

    claim (seeds)         measure   budget 25     50            100           200
    corner (200)          0.000959   57 -> 128    126 -> 193    192 -> 199    200 -> 200
    corner+ignored (200)  0.000959   13 -> 65      36 -> 175    103 -> 200    164 -> 200
    ball+ignored (200)    0.001047    6 -> 27      18 -> 102     59 -> 189    155 -> 199
    product (200)         0.000962   35 -> 107    112 -> 193    192 -> 200    200 -> 200
    corner yes/no (200)   0.000959    2 -> 5        5 -> 14      11 -> 23      24 -> 38
    lemma3[0.92] (100)    ~0.0018    25 -> 28      53 -> 69      79 -> 91        -

A rate's binomial standard error is at most 0.035 with 200 seeds and 0.05 with 100. Plain random
sampling hits a region of measure 0.000959 with probability 0.024, 0.047, 0.092 and 0.175 at these
budgets: the yes/no claim shows what is left without a graded score.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from hypothesis import strategies as st

from proofs_check.falsifier.search import FalsifiableClaim, falsify

BUDGETS = (25, 50, 100, 200)

TOY = st.tuples(st.integers(1, 4), st.integers(1, 4), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
CORNER_BOUND = 0.83
IGNORED = (st.integers(0, 2**16 - 1), st.floats(0.0, 1.0), st.sampled_from("abcd"), st.floats(-5.0, 5.0),
           st.booleans(), st.integers(0, 1000), st.integers(1, 3))
"""Seven choices the claims below ignore."""
BALL_CENTRE, BALL_RADIUS = (0.3, 0.6, 0.45), 0.1
PRODUCT_BOUND = 1 / 3


@dataclass(frozen=True)
class Planted:
    """A planted false claim and the probability of its violation region under plain random sampling."""

    claim: FalsifiableClaim
    measure: float


def corner_excess(x: tuple[int, int, float, float]) -> float:
    n, e, u, h = x
    return (n - 1) * (e - 1) * u * h / 9 - CORNER_BOUND


def ball_excess(x: tuple[int, float, float, float]) -> float:
    k, *point = x
    return BALL_RADIUS - math.dist(point, BALL_CENTRE) if k == 2 else -1.0


def _corner_measure(t: float) -> float:
    return (1 - t + t * math.log(t)) / 16


def _product_measure(t: float, n: int) -> float:
    s = -math.log(t)
    return 1 - t * sum(s**k / math.factorial(k) for k in range(n))


PLANTED: dict[str, Planted] = {
    "corner": Planted(FalsifiableClaim("corner", "(N-1)(E-1)uh/9 <= 0.83", TOY, corner_excess, known_false=True),
                      _corner_measure(CORNER_BOUND)),
    "corner+ignored": Planted(
        FalsifiableClaim("corner+ignored", "(N-1)(E-1)uh/9 <= 0.83, seven choices ignored", st.tuples(TOY, *IGNORED),
                         lambda x: corner_excess(x[0]), known_false=True),
        _corner_measure(CORNER_BOUND)),
    "ball+ignored": Planted(
        FalsifiableClaim("ball+ignored", "|x - c| >= 0.1 when k = 2, seven choices ignored",
                         st.tuples(*IGNORED[:3], st.tuples(st.integers(0, 3), *[st.floats(0.0, 1.0)] * 3),
                                   *IGNORED[3:]),
                         lambda x: ball_excess(x[3]), known_false=True),
        math.pi * BALL_RADIUS**3 / 3),
    "product": Planted(FalsifiableClaim("product", "x_1 ... x_6 <= 1/3", st.tuples(*[st.floats(0.0, 1.0)] * 6),
                                        lambda x: math.prod(x) - PRODUCT_BOUND, known_false=True),
                       _product_measure(PRODUCT_BOUND, 6)),
    "corner yes/no": Planted(FalsifiableClaim("corner yes/no", "(N-1)(E-1)uh/9 <= 0.83, yes/no", TOY,
                                              lambda x: 1.0 if corner_excess(x) > 0 else -1.0, known_false=True),
                             _corner_measure(CORNER_BOUND)),
}


class _Hit(Exception):
    """Raised by a wrapped claim at its first violation: the search is over, shrinking is skipped."""


def hit_count(claim: FalsifiableClaim, budget: int, seeds: range) -> int:
    """In how many of ``seeds`` ``falsify(claim, budget, seed)`` finds a violation (not shrunk)."""

    def stop_at_violation(inputs: object) -> float:
        value = claim.violation(inputs)
        if value > 0:
            raise _Hit
        return value

    wrapped = FalsifiableClaim(claim.id, claim.description, claim.inputs, stop_at_violation)
    hits = 0
    for seed in seeds:
        try:
            falsify(wrapped, budget, seed)
        except _Hit:
            hits += 1
    return hits


def lemma3_planted(constant: float) -> FalsifiableClaim:
    """Li's Lemma 3 with the constant 4 replaced by ``constant`` on the li2020.lemma3 strategy: with v the
    built-in violation, spread / (4 X) = v + 1 up to rounding, so the planted one is (4 / constant)(v + 1) - 1."""
    from proofs_check.falsifier.claims import FALSIFIABLE

    lemma3 = FALSIFIABLE["li2020.lemma3"]
    return FalsifiableClaim(f"lemma3[{constant}]", f"Li Lemma 3 with constant {constant}", lemma3.inputs,
                            lambda x: (4 / constant) * (lemma3.violation(x) + 1) - 1, known_false=True)


if __name__ == "__main__":
    lemma3 = "--lemma3" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--lemma3"]
    n_seeds = int(args[0]) if args else 200
    budgets = BUDGETS[:3] if lemma3 else BUDGETS
    claims = {"lemma3[0.92]": lemma3_planted(0.92)} if lemma3 else {name: p.claim for name, p in PLANTED.items()}
    print(f"hits in {n_seeds} seeds at budgets {budgets}")
    for name, claim in claims.items():
        counts = [hit_count(claim, budget, range(n_seeds)) for budget in budgets]
        print(f"{name:16s} " + "  ".join(f"{count:4d}" for count in counts), flush=True)
