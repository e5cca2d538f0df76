"""A falsifier: search problem instances and configurations for a violation of a claim's inequality.

``falsify(claim, budget, seed)`` evaluates up to ``budget`` inputs drawn from the Hypothesis strategy
``claim.inputs`` and stops at the first whose ``claim.violation(inputs)`` is > 0; it then shrinks
that input to a simpler one that still violates the claim. The search (``falsify_proposals``):

* Design (the first ``explore = max(1, round(budget / 5))`` examples): points of a scrambled Sobol'
  sequence, one coordinate per primitive choice, mapped to each choice by the inverse of its plain
  random distribution (``falsify_choices``: uniform on bounded ranges, no extra weight on
  boundaries). Each design input has the plain random distribution; together they fill the
  choices' ranges evenly. Inputs already tried are skipped (not counted).
* Climbs (the rest): the score of an example is its violation. When the best score of the design
  examples beats the median of the scores seen (the scores say where violations may lie), the
  search climbs from that input: a (1+1) evolution strategy that moves about one choice at a time
  with a step width adapted per choice (1/5 success rule) and learns which choices leave the score
  unchanged. A climb that has not improved for ``falsify_proposals.stall_after(n)`` proposals, or
  whose proposals repeat tried inputs ``_REDRAWS`` times in a row, ends; the search then takes
  ``explore`` more design points and climbs again from the best of them.
  Otherwise (flat scores, as on a claim whose violation is a bare yes/no, or a plateau) the search
  keeps taking design points, so on such claims it is the Sobol' design for its whole budget.

Measured on planted claims whose graded violations fill about 0.1% of the input space
(tests/falsify_hit_rates.py, 200 seeds each), this finds them far more often at small budgets than
the search it replaced (plain random draws for half the budget, then one-choice mutations of the
best input): at budget 50, 175 seeds of 200 against 36 with seven choices the claim ignores, 193
against 126 without them (the README's falsify section has the table). Shrinking is deterministic:
position by position it tries simpler values for one choice (``falsify_choices.simpler_values``: an
integer nearer its shrink target by halving steps, a float with fewer significant digits or nearer
the simplest value of its range, False, shorter strings), replays the later choices where they
still fit and fills the rest with their simplest values, and keeps a candidate that still violates
the claim and is simpler (fewer choices, then simpler choices: ``falsify_choices.complexity``),
until no candidate helps or ``_SHRINK_EVALUATIONS`` evaluations are spent.

Reproducibility. All randomness comes from ``random.Random(seed)`` and the Sobol' sequence scrambled
by ``numpy.random.default_rng(seed)``, and the choices are made by the falsifier itself
(``falsify_choices.Chooser``, a Hypothesis ``PrimitiveProvider``), not by Hypothesis's own
generator, which adds to its draws numeric literals it finds in the source files of whatever local
modules are imported (the "local constants" of recent Hypothesis versions). The
same claim, budget and seed give the same result in any process, whatever else is installed or
imported. No example database is used. The counterexample comes back as JSON from which
``reproduce`` recomputes the violation. When nothing is found within ``budget`` examples the result
says so (``found = False``): evidence, not proof, that the claim holds on the searched family.

Writing your own claim. A ``FalsifiableClaim`` is an id, a description, a Hypothesis strategy of
inputs and a Python function ``violation(inputs) -> float``: > 0 means the inequality is violated
(by that much, e.g. (LHS - RHS) / RHS), <= 0 means it holds. It must be computed exactly (or with
a reliable interval, reporting the lower end of the excess) so that a positive value is a proof; a
graded value (how far from failing) lets the climbs head towards a violation.
Inputs are encoded to JSON by ``encode`` (default: ``inputs.to_json()`` when it exists, else the
inputs themselves) and decoded by ``decode`` (default: the identity). For example:

    from hypothesis import strategies as st
    from proofs_check import FalsifiableClaim, falsify

    def excess(pair):                        # claim: (a + b)^2 <= 2 a^2 + 2 b^2
        a, b = pair
        return (a + b) ** 2 - 2 * a**2 - 2 * b**2

    claim = FalsifiableClaim("my.claim", "(a+b)^2 <= 2a^2 + 2b^2",
                             st.tuples(st.integers(-9, 9), st.integers(-9, 9)), excess)
    print(falsify(claim, budget=100, seed=0).message)   # no violation in 100 examples

The built-in claims are in ``proofs_check.falsifier.claims``.
"""

from __future__ import annotations

import heapq
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.data import ConjectureData

from .choices import Choice, Chooser, complexity, identity_key, simpler_values
from .proposals import Climb, SobolDesign

if TYPE_CHECKING:
    from convergence.budget import Workload

__all__ = ["EXAMPLE_BYTES", "EXAMPLE_SECONDS", "FalsifiableClaim", "FalsifyResult", "falsify", "falsify_workload",
           "reproduce"]


# ------------------------------------------------------------------------------ public types
def _encode_default(inputs: Any) -> Any:
    return inputs.to_json() if hasattr(inputs, "to_json") else inputs


def _identity(data: Any) -> Any:
    return data


@dataclass(frozen=True)
class FalsifiableClaim:
    """An inequality to falsify: ``violation(inputs) > 0`` means it fails on ``inputs`` (module
    docstring); ``known_false`` marks planted false claims (negative controls)."""

    id: str
    description: str
    inputs: st.SearchStrategy[Any] = field(repr=False)
    violation: Callable[[Any], float] = field(repr=False)
    encode: Callable[[Any], Any] = field(default=_encode_default, repr=False)
    decode: Callable[[Any], Any] = field(default=_identity, repr=False)
    known_false: bool = False


@dataclass(frozen=True)
class FalsifyResult:
    """The outcome of ``falsify``: whether a violation was found, the shrunk counterexample as JSON
    ({"claim", "inputs", "violation"}), the seed and budget that reproduce the search, how many
    examples the search tried (at most ``budget``; up to and including the first violating one),
    how many more evaluations shrinking took, and how long it all took."""

    claim_id: str
    found: bool
    violation: float | None
    counterexample: dict[str, Any] | None
    seed: int
    budget: int
    examples_tried: int
    shrink_evaluations: int
    seconds: float
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim_id, "found": self.found, "violation": self.violation,
            "counterexample": self.counterexample, "seed": self.seed, "budget": self.budget,
            "examples_tried": self.examples_tried, "shrink_evaluations": self.shrink_evaluations,
            "seconds": self.seconds, "message": self.message,
        }


def falsify(claim: FalsifiableClaim, budget: int, seed: int, *, max_cpu_hours: float | None = None) -> FalsifyResult:
    """Search at most ``budget`` inputs of ``claim.inputs`` for a violation, then shrink it (module
    docstring: a Sobol' design of ``round(budget / 5)`` examples, then climbs or more design points).
    Deterministic: the same claim, budget and seed give the same result in any process. Before the
    first draw the search is priced (``falsify_workload``): BudgetError naming ``budget`` when it is
    over ``max_cpu_hours`` (``convergence.budget``) or beyond the memory available."""
    from convergence.budget import check_workload

    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget: must be an integer >= 1, got {budget!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")
    check_workload(falsify_workload(budget), f"a search of {claim.id!r}", "budget", limit_hours=max_cpu_hours)
    start = time.perf_counter()
    rng, runner, design = random.Random(seed), _Runner(claim), SobolDesign(seed)
    explore = max(1, round(budget / _EXPLORE_SHARE))
    climb: Climb | None = None
    batch_end, batch_best = explore, None  # the design examples since the last climb ended, and their best
    scores = _RunningMedian()
    hit: _Example | None = None
    while runner.tried < budget:
        if (climb is None and runner.tried >= batch_end and batch_best is not None and batch_best.choices
                and batch_best.score > scores.median()):
            climb = Climb(batch_best.choices, batch_best.score)
        example = runner.next_example(design.propose if climb is None else climb.propose, rng)
        if example is None and climb is not None:  # no new input near the parent: back to the design
            climb, batch_best, batch_end = None, None, runner.tried + explore
            continue
        if example is None:  # no new input in _REDRAWS design draws: the strategy is exhausted
            break
        if example.score > 0:
            hit = example
            break
        scores.add(example.score)
        if climb is None:
            batch_best = example if batch_best is None or example.score >= batch_best.score else batch_best
            continue
        climb.record(example.choices, example.score)
        if climb.stalled:
            climb, batch_best, batch_end = None, None, runner.tried + explore
    found_by = "in the design" if climb is None else "by a climb"
    tried = runner.tried
    if hit is None:
        stop = "" if tried == budget else f"; the strategy gave no new input in {_REDRAWS} draws"
        return FalsifyResult(claim.id, False, None, None, seed, budget, tried, 0, time.perf_counter() - start,
                             f"{claim.id}: no violation in {tried} examples (budget {budget}, seed {seed}{stop})")
    shrunk = _shrink(runner, hit)
    counterexample = {"claim": claim.id, "inputs": claim.encode(shrunk.value), "violation": shrunk.score}
    json.dumps(counterexample)  # the counterexample must be JSON
    shrinking = runner.evaluations - tried
    return FalsifyResult(
        claim.id, True, shrunk.score, counterexample, seed, budget, tried, shrinking, time.perf_counter() - start,
        f"{claim.id}: violated by {shrunk.score:.6g} (found at example {tried} of budget {budget} {found_by}, "
        f"then {shrinking} shrinking evaluations; seed {seed})",
    )


class _RunningMedian:
    """The median of the scores seen (``statistics.median``'s value: the middle one, or the mean of
    the two middle ones) in O(log n) a score: the lower half in a max-heap, the upper in a min-heap,
    so a search costs the same per example whatever its budget."""

    def __init__(self) -> None:
        self._lower: list[float] = []  # negated
        self._upper: list[float] = []

    def add(self, score: float) -> None:
        if self._lower and score > -self._lower[0]:
            heapq.heappush(self._upper, score)
        else:
            heapq.heappush(self._lower, -score)
        if len(self._lower) > len(self._upper) + 1:
            heapq.heappush(self._upper, -heapq.heappop(self._lower))
        elif len(self._upper) > len(self._lower):
            heapq.heappush(self._lower, -heapq.heappop(self._upper))

    def median(self) -> float:
        if len(self._lower) > len(self._upper):
            return -self._lower[0]
        return (-self._lower[0] + self._upper[0]) / 2


def falsify_workload(budget: int) -> Workload:
    """The work of a search of ``budget`` examples and its shrinking (``_SHRINK_EVALUATIONS`` more at
    most): EXAMPLE_SECONDS and EXAMPLE_BYTES each (``convergence.budget``)."""
    from convergence.budget import Workload

    examples = float(budget) + _SHRINK_EVALUATIONS if budget < 1e300 else math.inf
    return Workload(runs=examples, seconds=examples * EXAMPLE_SECONDS, memory_bytes=examples * EXAMPLE_BYTES)


def reproduce(claim: FalsifiableClaim, counterexample: dict[str, Any]) -> float:
    """The violation of ``claim`` on a counterexample's JSON (as returned by ``falsify``)."""
    return float(claim.violation(claim.decode(counterexample["inputs"])))


# --------------------------------------------------------------------------------- the search
EXAMPLE_SECONDS = 5e-3
"""CPU seconds per example drawn and scored, the price of a search (``falsify_workload``). Measured on
the built-in claims: 5.0 ms (li2020.lemma3, the cheapest) to 22 ms (li2020.thm1), 200 examples each
(``time.process_time``); a claim of your own may cost more."""
EXAMPLE_BYTES = 4 * 1024
"""Memory the search keeps per example (its score, the key of the input tried, the choices of the
best one). Measured: 3.8-5.1 KB per example (tracemalloc peak over 200 examples of each built-in)."""
_SHRINK_EVALUATIONS = 200
"""The most claim evaluations shrinking spends (Hypothesis's shrinker, used before, took 75-120 on the
planted FedAvg claims)."""
_EXPLORE_SHARE = 5
"""One example in this many of the budget goes to the design before the first climb (and after each stall)."""
_REDRAWS = 100
"""Draws in a row that may be rejected (a strategy's filter) or repeat a tried input before the
search stops: the strategy is exhausted (a small finite input space) or rejects nearly everything."""
_MAX_CHOICES = 10_000
"""The most primitive choices one input may take (Hypothesis's own limit is of the same order)."""



@dataclass(frozen=True, eq=False)
class _Example:
    """An evaluated input: the value the strategy built, its choices, its score (the violation) and the
    spans [start, end) of choices that each (sub-)strategy draw took."""

    value: Any
    choices: tuple[Choice, ...]
    score: float
    spans: tuple[tuple[int, int], ...]



def _no_test() -> None:
    """Stands for the test function Hypothesis's build context expects; draws run outside any test."""


class _Runner:
    """Draws inputs of one claim through a ``Chooser`` and evaluates them, once per distinct input.

    ``tried``: distinct inputs evaluated by the search; ``evaluations``: all claim evaluations."""

    def __init__(self, claim: FalsifiableClaim) -> None:
        self.claim = claim
        self.scores: dict[tuple[Any, ...], float] = {}
        self.tried = 0
        self.evaluations = 0

    def draw(self, chooser: Chooser) -> _Example | None:
        """The input the strategy builds from the chooser's choices, not yet scored (score NaN); None when
        the strategy rejects them. Uses Hypothesis's ConjectureData and BuildContext, internal APIs that
        pyproject's hypothesis >= 6.140 pins (tested up to 6.170)."""
        data = ConjectureData(random=None, provider=chooser, max_choices=_MAX_CHOICES)
        try:
            with BuildContext(data, is_final=False, wrapped_test=_no_test):
                value = data.draw(self.claim.inputs)
        except StopTest:
            return None
        return _Example(value, tuple(chooser.made), math.nan, tuple(chooser.spans))

    def score(self, drawn: _Example) -> _Example:
        """``drawn`` with its score: the claim's violation, evaluated once per distinct input."""
        key = identity_key(drawn.choices)
        if key not in self.scores:
            self.evaluations += 1
            score = float(self.claim.violation(drawn.value))
            if math.isnan(score):
                raise ValueError(f"violation: claim {self.claim.id} returned NaN (a violation must be a number)")
            self.scores[key] = score
        return _Example(drawn.value, drawn.choices, self.scores[key], drawn.spans)

    def next_example(self, propose: Callable[[random.Random], Chooser], rng: random.Random) -> _Example | None:
        """A new input from the choosers ``propose(rng)`` gives, evaluated. None when ``_REDRAWS`` draws in
        a row were rejected or repeated tried inputs."""
        rejected = 0
        for _ in range(_REDRAWS):
            drawn = self.draw(propose(rng))
            if drawn is None:
                rejected += 1
            elif identity_key(drawn.choices) not in self.scores:
                self.tried += 1
                return self.score(drawn)
        if self.tried == 0 and rejected == _REDRAWS:
            raise ValueError(f"inputs: the strategy of claim {self.claim.id} rejected {_REDRAWS} draws in a row "
                             "(its filters or assume() calls reject nearly everything)")
        return None


def _shrink(runner: _Runner, example: _Example) -> _Example:
    """A simpler violating input (module docstring): greedy passes that first delete the choices of one
    strategy draw (a list element, say) where that shortens the input, then replace one choice by a
    simpler value, each time keeping the first candidate that still violates the claim, until a
    pass changes nothing or ``_SHRINK_EVALUATIONS`` evaluations are spent."""
    limit = runner.evaluations + _SHRINK_EVALUATIONS

    def improve(candidates: Callable[[_Example], list[Chooser]], shorter: bool) -> bool | None:
        """One pass; True if it simplified the input, None if no candidate was even simpler to try."""
        nonlocal example
        changed, tried = False, False
        i = 0
        while True:
            options = candidates(example)
            if i >= len(options):
                return changed if tried else None
            drawn = runner.draw(options[i])
            simpler = drawn is not None and (len(drawn.choices) < len(example.choices) if shorter
                                             else complexity(drawn.choices) < complexity(example.choices))
            if simpler:
                tried = True
                if runner.evaluations >= limit:
                    return changed
                candidate = runner.score(drawn)
                if candidate.score > 0:
                    example, changed = candidate, True
                    continue  # the same index now names the next candidate of the simpler input
            i += 1

    def deletions(current: _Example) -> list[Chooser]:
        spans = sorted(set(current.spans), key=lambda span: (span[0] - span[1], span[0]))
        return [Chooser(current.choices[:a] + current.choices[b:]) for a, b in spans]

    def replacements(current: _Example) -> list[Chooser]:
        return [Chooser(current.choices, {i: value})
                for i, choice in enumerate(current.choices) for value in simpler_values(choice)]

    delete = True  # until a pass finds no deletion that shortens the input (fixed-shape strategies)
    while runner.evaluations < limit:
        deleted = improve(deletions, shorter=True) if delete else False
        delete = deleted is not None
        if not (deleted or improve(replacements, shorter=False)):
            break
    return example

