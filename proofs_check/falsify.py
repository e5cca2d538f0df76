"""A falsifier: search problem instances and configurations for a violation of a claim's inequality.

``falsify(claim, budget, seed)`` evaluates up to ``budget`` inputs drawn from the Hypothesis strategy
``claim.inputs`` and stops at the first whose ``claim.violation(inputs)`` is > 0; it then shrinks
that input to a simpler one that still violates the claim. The search has two phases:

* Random phase (the first ``budget // 2`` examples): plain random sampling. Every primitive choice
  the strategy makes is drawn independently from a stated distribution: a boolean is True with
  the strategy's probability p, a bounded integer or float is uniform on its range (Hypothesis's
  extra weight on boundaries is not used), a half-bounded or unbounded one is the finite bound
  (or the shrink target) plus or minus a magnitude 2^u, u uniform on [0, 16] for integers and on
  [-20, 20] for floats, strings and bytes have a uniform length in [min_size, min_size + 10] and
  uniform characters. Inputs already tried are skipped (not counted).
* Targeted phase (the rest): the score of an example is its violation. While the best score seen
  beats the median of the scores seen (the scores say where violations may lie), each example is
  the best one with one choice mutated (a boolean flipped; an integer moved by 1 or redrawn; a
  float moved by a Gaussian step of width 10^(-3u) times its range, u uniform on [0, 1], or
  redrawn; the later choices kept where they still fit, else drawn at random), and a mutant that
  scores at least as well becomes the best. Otherwise (flat scores, as on a claim whose violation
  is a bare yes/no, or a plateau) the search keeps sampling at random, so on such claims it is
  plain random sampling for its whole budget.

So on any claim the falsifier draws at least ``budget // 2`` plain random examples, and all
``budget`` when the scores carry no direction; measured on planted claims whose violations fill a
few percent of the input space (tests/test_falsifier_power.py) it finds them at least as often as
``budget`` plain random draws do. Shrinking is deterministic: position by position it tries simpler
values for one choice (an integer nearer its shrink target by halving steps, a float with fewer
significant digits or nearer the simplest value of its range, False, shorter strings), replays the
later choices where they still fit and fills the rest with their simplest values, and keeps a
candidate that still violates the claim and is simpler (fewer choices, then simpler choices),
until no candidate helps or ``_SHRINK_EVALUATIONS`` evaluations are spent.

Reproducibility. All randomness comes from ``random.Random(seed)`` and the choices are made by the
falsifier itself (a Hypothesis ``PrimitiveProvider``), not by Hypothesis's own generator, which
adds to its draws numeric literals it finds in the source files of whatever local modules are
imported (the "local constants" of recent Hypothesis versions). The same claim, budget and seed give
the same result in any process, whatever else is installed or imported. No example database is used.
The counterexample comes back as JSON from which ``reproduce`` recomputes the violation. When
nothing is found within ``budget`` examples the result says so (``found = False``): evidence, not
proof, that the claim holds on the searched family.

Writing your own claim. A ``FalsifiableClaim`` is an id, a description, a Hypothesis strategy of
inputs and a Python function ``violation(inputs) -> float``: > 0 means the inequality is violated
(by that much, e.g. (LHS - RHS) / RHS), <= 0 means it holds. It must be computed exactly (or with
a reliable interval, reporting the lower end of the excess) so that a positive value is a proof; a
graded value (how far from failing) lets the targeted phase climb towards a violation.
Inputs are encoded to JSON by ``encode`` (default: ``inputs.to_json()`` when it exists, else the
inputs themselves) and decoded by ``decode`` (default: the identity). For example:

    from hypothesis import strategies as st
    from proofs_check.falsify import FalsifiableClaim, falsify

    def excess(pair):                        # claim: (a + b)^2 <= 2 a^2 + 2 b^2
        a, b = pair
        return (a + b) ** 2 - 2 * a**2 - 2 * b**2

    claim = FalsifiableClaim("my.claim", "(a+b)^2 <= 2a^2 + 2b^2",
                             st.tuples(st.integers(-9, 9), st.integers(-9, 9)), excess)
    print(falsify(claim, budget=100, seed=0).message)   # no violation in 100 examples

Built-in claims (``FALSIFIABLE``) take a ``FedAvgInstance`` (a least-squares problem drawn by
``proofs_check.strategies`` and a FedAvg config meeting the claim's hypotheses) and evaluate every
expectation exactly (below). True ones (``shared/THEOREMS.md`` l.19-24, l.49-55, l.110):
li2020.lemma1, li2020.lemma2, li2020.lemma3, yu2019.drift (identical data, constant step) and
li2020.thm1 (E F(w_T) - F* <= C / (gamma + T - 1), C = kappa (2B/mu + mu gamma/2 ||w_1 - w*||^2),
Li schedule). Planted false ones (``known_false``): li2020.lemma3[constant=0.01] (Lemma 3 with 4
replaced by 0.01) and planted.li2020.rate-T2 (E F(w_T) - F* <= C / T^2 with Theorem 1's C; Li's
T is the index of the iterate, local steps done + 1).

Exact expectations. On least squares a local step is affine in the model, w <- (I - eta (A_b + mu I)) w
+ eta c_b, with A_b, c_b the minibatch moments, and the clients draw independent minibatches. So
the first and second moments of the stacked local models z = (w^1, ..., w^N, 1) evolve exactly:
Y <- P Y P' + corrections, P = E[step map] (block diagonal), and for client k the correction
(eta^2 / b) [(1/n_k) sum_i (x~_i' Y_k x~_i) x_i x_i' - S~_k Y_k S~_k'] of its own block (the
covariance of a b-row minibatch drawn with replacement; x~_i = (x_i, -y_i), S~_k = X_k'X~_k / n_k,
Y_k client k's augmented block); averaging maps Y to R Y R'. Every side of Li's Lemmas 1-3, Yu's
drift and E F(w_T) - F* = (1/2) E (w_T - w*)'H(w_T - w*) is a linear function of Y, hence exact up
to rounding; a violation counts only beyond a rounding allowance of 1e-9 times the size of the
terms compared. The constants are the smallest for which the assumptions hold as the papers state
them (expectations along the run), by the one definition of ``proofs_check.assumptions.IterateMoments``:
sigma_k^2 = max_t E var_k(w_t^k), G^2 = max_{t,k} E||g_k(w_t^k, xi)||^2, client k's minibatch gradient at
client k's own iterate (Li et al. ICLR 2020, Assumptions 3-4), here with exact expectations; the
lemma checks of ``proofs_check.lemmas`` use the same definition with the mean over seeds. L, mu and
Gamma are exact.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.providers import PrimitiveProvider

from convergence import FedAvgConfig, StepSize
from problems import FederatedProblem, LossKind, exact_optimum, problem_constants

from .assumptions import IterateMoments
from .strategies import build_drawn_problem, fedavg_configs, quadratic_problems

__all__ = [
    "FalsifiableClaim",
    "FalsifyResult",
    "FedAvgInstance",
    "instances",
    "falsify",
    "reproduce",
    "exact_moments",
    "FALSIFIABLE",
]

_ROUNDING = 1e-9  # relative rounding allowance of the exact expectations


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


def falsify(claim: FalsifiableClaim, budget: int, seed: int) -> FalsifyResult:
    """Search at most ``budget`` inputs of ``claim.inputs`` for a violation, then shrink it (module
    docstring: a random phase of ``budget // 2`` examples, then targeted or random examples).
    Deterministic: the same claim, budget and seed give the same result in any process."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget: must be an integer >= 1, got {budget!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")
    start = time.perf_counter()
    rng, runner = random.Random(seed), _Runner(claim)
    best: _Example | None = None
    scores: list[float] = []
    hit: _Example | None = None
    phase = "random"
    while runner.tried < budget:
        targeted = runner.tried >= budget // 2 and best is not None and best.score > statistics.median(scores)
        example = runner.next_example(rng, best if targeted else None)
        if example is None:  # no new input in _REDRAWS draws: the strategy is exhausted
            break
        if example.score > 0:
            hit, phase = example, "targeted" if targeted else "random"
            break
        scores.append(example.score)
        if best is None or example.score >= best.score:
            best = example
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
        f"{claim.id}: violated by {shrunk.score:.6g} (found at example {tried} of budget {budget} in the {phase} "
        f"phase, then {shrinking} shrinking evaluations; seed {seed})",
    )


def reproduce(claim: FalsifiableClaim, counterexample: dict[str, Any]) -> float:
    """The violation of ``claim`` on a counterexample's JSON (as returned by ``falsify``)."""
    return float(claim.violation(claim.decode(counterexample["inputs"])))


# --------------------------------------------------------------------------------- the search
_SHRINK_EVALUATIONS = 200
"""The most claim evaluations shrinking spends (Hypothesis's shrinker, used before, took 75-120 on the
planted FedAvg claims)."""
_REDRAWS = 100
"""Draws in a row that may be rejected (a strategy's filter) or repeat a tried input before the
search stops: the strategy is exhausted (a small finite input space) or rejects nearly everything."""
_MAX_CHOICES = 10_000
"""The most primitive choices one input may take (Hypothesis's own limit is of the same order)."""


@dataclass(frozen=True)
class _Choice:
    """One primitive choice a strategy made: kind ("boolean", "integer", "float", "string" or "bytes"),
    value, and Hypothesis's constraints on it (the keyword arguments of ``PrimitiveProvider.draw_<kind>``)."""

    kind: str
    value: Any
    constraints: Mapping[str, Any]


@dataclass(frozen=True, eq=False)
class _Example:
    """An evaluated input: the value the strategy built, its choices, its score (the violation) and the
    spans [start, end) of choices that each (sub-)strategy draw took."""

    value: Any
    choices: tuple[_Choice, ...]
    score: float
    spans: tuple[tuple[int, int], ...]


class _Chooser(PrimitiveProvider):
    """Makes the primitive choices of one draw from a strategy. Choice i is ``overrides[i]`` when given
    and permitted, else ``template[i]`` when of the same kind and permitted, else a fresh value: drawn
    by ``rng`` (module docstring) or, without one, the simplest permitted value."""

    def __init__(self, template: tuple[_Choice, ...] = (), overrides: Mapping[int, Any] | None = None,
                 rng: random.Random | None = None) -> None:
        super().__init__(None)
        self.template, self.overrides, self.rng = template, dict(overrides or {}), rng
        self.made: list[_Choice] = []
        self.spans: list[tuple[int, int]] = []  # [start, end) of the choices of each strategy draw
        self._open: list[int] = []

    def span_start(self, label: int) -> None:
        self._open.append(len(self.made))

    def span_end(self, discard: bool) -> None:
        start = self._open.pop()
        if len(self.made) > start:
            self.spans.append((start, len(self.made)))

    def _choose(self, kind: str, constraints: dict[str, Any]) -> Any:
        i = len(self.made)
        candidates = []
        if i in self.overrides:
            candidates.append(self.overrides[i])
        if i < len(self.template) and self.template[i].kind == kind:
            candidates.append(self.template[i].value)
        value = next((v for v in candidates if _permitted(kind, v, constraints)), _MISSING)
        if value is _MISSING:
            value = _simplest(kind, constraints) if self.rng is None else _random_value(kind, constraints, self.rng)
        self.made.append(_Choice(kind, value, constraints))
        return value

    def draw_boolean(self, p: float = 0.5) -> bool:
        return self._choose("boolean", {"p": p})

    def draw_integer(self, min_value: int | None = None, max_value: int | None = None, *,
                     weights: dict[int, float] | None = None, shrink_towards: int = 0) -> int:
        # weights (Hypothesis's extra mass on the ends of wide ranges) are left out: plain uniform sampling
        return self._choose("integer", {"min_value": min_value, "max_value": max_value, "shrink_towards": shrink_towards})

    def draw_float(self, *, min_value: float = -math.inf, max_value: float = math.inf, allow_nan: bool = True,
                   smallest_nonzero_magnitude: float = 5e-324) -> float:
        return self._choose("float", {"min_value": min_value, "max_value": max_value, "allow_nan": allow_nan,
                                      "smallest_nonzero_magnitude": smallest_nonzero_magnitude})

    def draw_string(self, intervals: Any, *, min_size: int = 0, max_size: int = 10**9) -> str:
        return self._choose("string", {"intervals": intervals, "min_size": min_size, "max_size": max_size})

    def draw_bytes(self, min_size: int = 0, max_size: int = 10**9) -> bytes:
        return self._choose("bytes", {"min_size": min_size, "max_size": max_size})


_MISSING = object()


def _lte(x: float, y: float) -> bool:
    """x <= y with -0.0 < 0.0 (Hypothesis's float bounds are sign-aware)."""
    return math.copysign(1.0, x) <= math.copysign(1.0, y) if x == 0.0 == y else x <= y


def _permitted(kind: str, value: Any, c: Mapping[str, Any]) -> bool:
    """Whether ``value`` is a choice of ``kind`` that the constraints ``c`` allow."""
    if kind == "boolean":
        return isinstance(value, bool) and (c["p"] > 0 or not value) and (c["p"] < 1 or value)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)
                and (c["min_value"] is None or value >= c["min_value"])
                and (c["max_value"] is None or value <= c["max_value"]))
    if kind == "float":
        if not isinstance(value, float):
            return False
        if math.isnan(value):
            return bool(c["allow_nan"])
        return (not 0 < abs(value) < c["smallest_nonzero_magnitude"]
                and _lte(c["min_value"], value) and _lte(value, c["max_value"]))
    if kind == "string":
        return (isinstance(value, str) and c["min_size"] <= len(value) <= c["max_size"]
                and all(ord(ch) in c["intervals"] for ch in value))
    return isinstance(value, bytes) and c["min_size"] <= len(value) <= c["max_size"]


def _integer_towards(c: Mapping[str, Any]) -> int:
    """The simplest integer allowed: the shrink target clipped to [min_value, max_value]."""
    t = c["shrink_towards"]
    if c["min_value"] is not None:
        t = max(t, c["min_value"])
    return t if c["max_value"] is None else min(t, c["max_value"])


def _simplest(kind: str, c: Mapping[str, Any]) -> Any:
    """The simplest permitted value: False, the integer shrink target, the float nearest 0, the shortest
    string of the first allowed character, zero bytes."""
    if kind == "boolean":
        return c["p"] >= 1
    if kind == "integer":
        return _integer_towards(c)
    if kind == "float":
        lo, hi = c["min_value"], c["max_value"]
        value = 0.0 if _permitted("float", 0.0, c) else -0.0 if _permitted("float", -0.0, c) else lo if lo > 0 else hi
        return max(value, c["smallest_nonzero_magnitude"]) if value > 0 else value
    if kind == "string":
        return chr(c["intervals"][0]) * c["min_size"] if len(c["intervals"]) else ""
    return bytes(c["min_size"])


def _random_value(kind: str, c: Mapping[str, Any], rng: random.Random) -> Any:
    """A value drawn at random for one choice (the distributions of the module docstring)."""
    if kind == "boolean":
        return rng.random() < c["p"]
    if kind == "integer":
        lo, hi = c["min_value"], c["max_value"]
        if lo is not None and hi is not None:
            return lo + rng.randrange(hi - lo + 1)
        offset = int(2.0 ** (16 * rng.random())) - 1
        if lo is not None:
            return lo + offset
        if hi is not None:
            return hi - offset
        return c["shrink_towards"] + (offset if rng.random() < 0.5 else -offset)
    if kind == "float":
        lo, hi = c["min_value"], c["max_value"]
        u = rng.random()
        if math.isfinite(lo) and math.isfinite(hi):
            value = lo + (hi - lo) * u if math.isfinite(hi - lo) else lo * (1 - u) + hi * u
        else:
            magnitude = 2.0 ** (40 * u - 20)
            if math.isfinite(lo):
                value = lo + magnitude
            elif math.isfinite(hi):
                value = hi - magnitude
            else:
                value = magnitude if rng.random() < 0.5 else -magnitude
        value = min(max(value, lo), hi)
        if 0 < abs(value) < c["smallest_nonzero_magnitude"]:
            value = math.copysign(c["smallest_nonzero_magnitude"], value)
        return value if _permitted("float", value, c) else _simplest("float", c)
    size = c["min_size"] + rng.randrange(min(c["max_size"], c["min_size"] + 10) - c["min_size"] + 1)
    if kind == "string":
        n = len(c["intervals"])
        return "".join(chr(c["intervals"][rng.randrange(n)]) for _ in range(size)) if n else ""
    return bytes(rng.randrange(256) for _ in range(size))


def _mutant(choice: _Choice, rng: random.Random) -> Any:
    """A random neighbour of one choice (module docstring, targeted phase)."""
    kind, value, c = choice.kind, choice.value, choice.constraints
    if kind == "boolean":
        return not value
    if kind == "integer" and rng.random() < 0.5:
        step = 1 if rng.random() < 0.5 else -1
        return value + (step if _permitted(kind, value + step, c) else -step)
    if kind == "float" and rng.random() < 0.5 and math.isfinite(value):
        lo, hi = c["min_value"], c["max_value"]
        width = hi - lo if math.isfinite(hi - lo) else max(1.0, abs(value))
        return min(max(value + width * 10.0 ** (-3 * rng.random()) * rng.gauss(0.0, 1.0), lo), hi)
    return _random_value(kind, c, rng)


def _digits(value: float) -> int:
    """Significant decimal digits of the shortest repr of a finite float (0 for 0.0)."""
    mantissa = repr(abs(value)).split("e")[0].replace(".", "").lstrip("0").rstrip("0")
    return len(mantissa)


def _choice_key(choice: _Choice) -> tuple[float, ...]:
    """How complex a choice is (smaller is simpler): distance from the integer shrink target; for a float
    its significant digits, then distance from the simplest value; True after False; length, then
    characters or bytes."""
    kind, value, c = choice.kind, choice.value, choice.constraints
    if kind == "boolean":
        return (float(value),)
    if kind == "integer":
        t = _integer_towards(c)
        return (float(abs(value - t)), float(value < t))
    if kind == "float":
        if not math.isfinite(value):
            return (math.inf, 0.0 if math.isinf(value) else 1.0)
        return (float(_digits(value)), abs(value - _simplest("float", c)), math.copysign(1.0, value))
    return (float(len(value)), *(float(ord(ch)) for ch in value)) if kind == "string" else (float(len(value)), *map(float, value))


def _complexity(choices: tuple[_Choice, ...]) -> tuple[int, tuple[tuple[float, ...], ...]]:
    """Shortlex order of inputs: fewer choices first, then the choices' keys in order."""
    return len(choices), tuple(_choice_key(choice) for choice in choices)


def _simpler_values(choice: _Choice) -> list[Any]:
    """Candidate replacements of one choice, simplest first, each simpler than it (shrinking)."""
    kind, value, c = choice.kind, choice.value, choice.constraints
    if kind == "integer":
        t = _integer_towards(c)
        distance, sign = abs(value - t), (1 if value > t else -1)
        values = [value - sign * (distance >> k) for k in range(distance.bit_length())]  # t, halfway, ..., value -+ 1
    elif kind == "float" and math.isfinite(value):
        s, digits = _simplest("float", c), max(1, _digits(value))
        values = [s, *(float(f"{value:.{k}g}") for k in range(1, digits)),  # fewer significant digits
                  *(float(f"{s + (value - s) * (1 - 0.5**j):.{digits}g}") for j in range(1, 8)),  # nearer s
                  float(f"{value - math.copysign(10.0 ** (math.floor(math.log10(abs(value))) - digits + 1), value - s):.{digits}g}")
                  if value != 0 else s]  # one unit of the last digit nearer s
    elif kind in ("string", "bytes"):
        values = [_simplest(kind, c), value[: len(value) // 2], value[:-1],
                  _simplest(kind, {**c, "min_size": len(value)})]
    else:
        values = [_simplest(kind, c)]
    key = _choice_key(choice)
    candidates = {_choice_key(_Choice(kind, v, c)): v for v in values if _permitted(kind, v, c)}
    return [candidates[k] for k in sorted(candidates) if k < key]


def _identity_key(choices: tuple[_Choice, ...]) -> tuple[Any, ...]:
    """A hashable key of the choice values (floats by bit pattern, so -0.0 and 0.0 differ)."""
    return tuple((c.kind, c.value.hex() if c.kind == "float" else c.value) for c in choices)


def _no_test() -> None:
    """Stands for the test function Hypothesis's build context expects; draws run outside any test."""


class _Runner:
    """Draws inputs of one claim through a ``_Chooser`` and evaluates them, once per distinct input.

    ``tried``: distinct inputs evaluated by the search; ``evaluations``: all claim evaluations."""

    def __init__(self, claim: FalsifiableClaim) -> None:
        self.claim = claim
        self.scores: dict[tuple[Any, ...], float] = {}
        self.tried = 0
        self.evaluations = 0

    def draw(self, chooser: _Chooser) -> _Example | None:
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
        key = _identity_key(drawn.choices)
        if key not in self.scores:
            self.evaluations += 1
            score = float(self.claim.violation(drawn.value))
            if math.isnan(score):
                raise ValueError(f"violation: claim {self.claim.id} returned NaN (a violation must be a number)")
            self.scores[key] = score
        return _Example(drawn.value, drawn.choices, self.scores[key], drawn.spans)

    def next_example(self, rng: random.Random, parent: _Example | None) -> _Example | None:
        """A new input, evaluated: a random draw, or ``parent`` with one choice mutated. None when
        ``_REDRAWS`` draws in a row were rejected or repeated tried inputs."""
        rejected = 0
        for _ in range(_REDRAWS):
            if parent is None or not parent.choices:
                chooser = _Chooser(rng=rng)
            else:
                i = rng.randrange(len(parent.choices))
                chooser = _Chooser(parent.choices, {i: _mutant(parent.choices[i], rng)}, rng)
            drawn = self.draw(chooser)
            if drawn is None:
                rejected += 1
            elif _identity_key(drawn.choices) not in self.scores:
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

    def improve(candidates: Callable[[_Example], list[_Chooser]], shorter: bool) -> bool | None:
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
                                             else _complexity(drawn.choices) < _complexity(example.choices))
            if simpler:
                tried = True
                if runner.evaluations >= limit:
                    return changed
                candidate = runner.score(drawn)
                if candidate.score > 0:
                    example, changed = candidate, True
                    continue  # the same index now names the next candidate of the simpler input
            i += 1

    def deletions(current: _Example) -> list[_Chooser]:
        spans = sorted(set(current.spans), key=lambda span: (span[0] - span[1], span[0]))
        return [_Chooser(current.choices[:a] + current.choices[b:]) for a, b in spans]

    def replacements(current: _Example) -> list[_Chooser]:
        return [_Chooser(current.choices, {i: value})
                for i, choice in enumerate(current.choices) for value in _simpler_values(choice)]

    delete = True  # until a pass finds no deletion that shortens the input (fixed-shape strategies)
    while runner.evaluations < limit:
        deleted = improve(deletions, shorter=True) if delete else False
        delete = deleted is not None
        if not (deleted or improve(replacements, shorter=False)):
            break
    return example


# ------------------------------------------------------------------------ FedAvg instances
@dataclass(frozen=True)
class FedAvgInstance:
    """A problem drawn by ``proofs_check.strategies`` and a FedAvg config: the inputs of the
    built-in claims. JSON: {"problem": spec, "algorithm": config.to_json()}."""

    problem: FederatedProblem
    config: FedAvgConfig

    def to_json(self) -> dict[str, Any]:
        return {"problem": self.problem.spec.to_json(), "algorithm": self.config.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FedAvgInstance:
        alg = data["algorithm"]
        config = FedAvgConfig(
            alg["local_steps"], alg["rounds"], StepSize(**alg["step_size"]), alg["batch_size"], alg["server_lr"],
            tuple(alg["record_rounds"]), tuple(alg["seeds"]),
        )
        return cls(build_drawn_problem(data["problem"]), config)


def instances(
    problems: st.SearchStrategy[FederatedProblem], **config_options: Any
) -> st.SearchStrategy[FedAvgInstance]:
    """FedAvgInstance pairs: a problem, then ``fedavg_configs(problem, **config_options)`` for it."""
    return problems.flatmap(lambda p: fedavg_configs(p, **config_options).map(lambda c: FedAvgInstance(p, c)))


# ---------------------------------------------------------------------- exact expectations
@dataclass(frozen=True, eq=False)
class _Trace:
    """Exact expectations along a least-squares FedAvg run, steps t = 0..T-1 (module docstring).

    moments: E var_k(w_t^k, b) and E||grad F_k(w_t^k)||^2 as ``IterateMoments`` (one exact
    realisation, shapes (1, T, N)), hence sigma_k^2 and G^2 of Li's Assumptions 3-4; spread (T,)
    E sum_k p_k ||wbar_t - w_t^k||^2; drift (T, N) E||xbar_t - w_t^i||^2 (xbar the plain mean);
    dist (T,) E||wbar_t - w*||^2; dist_next (T,) E||vbar_{t+1} - w*||^2; size (T,)
    E sum_k p_k ||w_t^k||^2 + ||w*||^2 (the scale of the squared distances, for rounding);
    gap (R,) and gap_size (R,): E F(w) - F* after rounds 1..R and (1/2)(E w'Hw + w*'Hw*); Gamma:
    Li's F* - sum_k p_k F_k* = sum_k p_k (1/2)(w* - w_k*)'H_k(w* - w_k*) (exact for quadratics, and
    free of the large constants ||y_k||^2 / (2 n_k) that F* and F_k* carry, which ill-conditioned
    data make dominate; problems.heterogeneity_gamma agrees where those constants are moderate).
    """

    eta: np.ndarray
    moments: IterateMoments
    spread: np.ndarray
    drift: np.ndarray
    dist: np.ndarray
    dist_next: np.ndarray
    size: np.ndarray
    gap: np.ndarray
    gap_size: np.ndarray
    Gamma: float

    @property
    def variance(self) -> np.ndarray:
        """E var_k(w_t^k, b), shape (T, N)."""
        return self.moments.expected_variance

    @property
    def grad_sq(self) -> np.ndarray:
        """E||grad F_k(w_t^k)||^2, shape (T, N)."""
        return self.moments.grad_sq[0]


def _exact_trace(problem: FederatedProblem, config: FedAvgConfig, w_star: np.ndarray) -> _Trace:
    """Propagate the second moment Y of (w^1, ..., w^N, 1) through every step (module docstring).

    Client data are stacked and padded with zero rows (x = 0, y = 0 adds nothing to the sums, which
    are divided by the true n_k): rows (N, n_max, d), lifted rows x~ = (x, -y) (N, n_max, d+1).
    """
    if problem.loss is not LossKind.LEAST_SQUARES or config.server_lr != 1.0:
        raise ValueError("instance: exact expectations need a least-squares problem and server_lr = 1")
    N, d, b, E, T = problem.n_clients, problem.dim, config.batch_size, config.local_steps, config.total_steps
    p, D, sizes = problem.weights, problem.n_clients * problem.dim + 1, problem.client_sizes
    eta = config.step_size.at(np.arange(T), E)
    lifted = np.zeros((N, int(sizes.max()), d + 1))
    for k in range(N):
        X, y = problem.client_data(k)
        lifted[k, : sizes[k]] = np.column_stack([X, -y])
    rows = lifted[:, :, :d]
    gram = np.einsum("kni,knj->kij", rows, lifted) / sizes[:, None, None]  # S~_k = [S_k, -c_k]
    hess = gram + problem.mu * np.eye(d, d + 1)[None]  # [S_k + mu I, -c_k]: grad F_k(w) = H~_k (w, 1)
    Q = np.zeros((D, D))
    for k in range(N):
        Q[k * d : (k + 1) * d, k * d : (k + 1) * d] = hess[k, :, :d]
        Q[k * d : (k + 1) * d, -1] = hess[k, :, d]
    H = np.einsum("k,kij->ij", p, hess[:, :, :d])
    average = np.eye(D)
    average[: N * d, : N * d] = np.kron(np.ones((N, 1)), np.kron(p[None, :], np.eye(d)))
    index = np.array([np.r_[k * d : (k + 1) * d, D - 1] for k in range(N)])  # client k's augmented block
    diagonal = (index[:, :d, None], index[:, None, :d])
    Y = np.zeros((D, D))
    Y[-1, -1] = 1.0  # w_0 = 0
    spread, dist, dist_next, size = np.empty(T), np.empty(T), np.empty(T), np.empty(T)
    variance, grad_sq, drift = np.zeros((T, N)), np.empty((T, N)), np.empty((T, N))
    gap, gap_size = np.empty(config.rounds), np.empty(config.rounds)
    star, star_H = float(w_star @ w_star), float(w_star @ H @ w_star)
    local_star = np.linalg.solve(hess[:, :, :d], -hess[:, :, d:])[:, :, 0]  # H_k w_k* = c_k
    offset = w_star[None] - local_star
    Gamma = 0.5 * float(p @ np.einsum("ki,kij,kj->k", offset, hess[:, :, :d], offset))

    def distance(traces: np.ndarray, means: np.ndarray) -> float:
        return float(p @ traces @ p - 2 * w_star @ (p @ means) + star)

    def blocks(Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.einsum("kili->kl", Y[: N * d, : N * d].reshape(N, d, N, d)), Y[: N * d, -1].reshape(N, d)

    for t in range(T):
        traces, means = blocks(Y)
        own = np.diag(traces)
        spread[t] = p @ own - p @ traces @ p
        drift[t] = own - 2 * traces.sum(axis=1) / N + traces.sum() / N**2
        dist[t] = distance(traces, means)
        size[t] = p @ own + star
        Yk = Y[index[:, :, None], index[:, None, :]]  # (N, d+1, d+1)
        grad_sq[t] = np.einsum("kij,kjl,kil->k", hess, Yk, hess)
        P = np.eye(D) - eta[t] * Q
        Y = P @ Y @ P.T
        if b:
            q = np.einsum("kni,kij,knj->kn", lifted, Yk, lifted)
            cov = (np.einsum("kni,kn,knj->kij", rows, q, rows) / sizes[:, None, None]
                   - np.einsum("kia,kab,kjb->kij", gram, Yk, gram))
            variance[t] = np.einsum("kii->k", cov) / b
            Y[diagonal] += eta[t] ** 2 / b * cov
        dist_next[t] = distance(*blocks(Y))
        if (t + 1) % E == 0:
            Y = average @ Y @ average.T
            r = (t + 1) // E - 1
            second = float(np.sum(H * Y[:d, :d]))
            gap[r] = 0.5 * (second - 2 * w_star @ H @ Y[:d, -1] + star_H)
            gap_size[r] = 0.5 * (second + star_H)
        Y = 0.5 * (Y + Y.T)
    moments = IterateMoments(grad_sq[None], variance[None], True,
                             "Li et al. Assumptions 3-4 at client k's own iterates, exact expectations (falsify)")
    return _Trace(eta, moments, spread, drift, dist, dist_next, size, gap, gap_size, Gamma)


def _excess(lhs: np.ndarray, rhs: np.ndarray, size: np.ndarray) -> float:
    """max (lhs - rhs - tol) / (rhs + tol), tol = 1e-9 size: > 0 only beyond rounding."""
    tol = _ROUNDING * np.abs(size) + np.finfo(float).tiny
    return float(np.max((lhs - rhs - tol) / (np.abs(rhs) + tol)))


def _trace_of(instance: FedAvgInstance) -> _Trace:
    optimum = exact_optimum(instance.problem, crosscheck=False)
    return _exact_trace(instance.problem, instance.config, optimum.w_star)


def exact_moments(instance: FedAvgInstance) -> IterateMoments:
    """Li's Assumption 3-4 moments of a least-squares FedAvg instance with exact expectations (one
    realisation, shapes (1, T, N)): the constants the built-in claims use, by the definition the
    lemma checks of ``proofs_check.lemmas`` estimate with the mean over seeds."""
    return _trace_of(instance).moments


# ------------------------------------------------------------------------- built-in claims
def _lemma1(instance: FedAvgInstance) -> float:
    """Li Lemma 1: E||vbar_{t+1} - w*||^2 <= (1 - eta mu) E||wbar_t - w*||^2 + eta^2 E||g - gbar||^2
    + 6 L eta^2 Gamma + 2 E sum_k p_k ||wbar_t - w_t^k||^2."""
    problem = instance.problem
    tr, consts = _trace_of(instance), problem_constants(problem)
    noise = tr.variance @ problem.weights**2
    rhs = (1 - tr.eta * consts.mu) * tr.dist + tr.eta**2 * noise + 6 * consts.L * tr.eta**2 * tr.Gamma + 2 * tr.spread
    return _excess(tr.dist_next, rhs, tr.size)


def _lemma2(instance: FedAvgInstance) -> float:
    """Li Lemma 2: E||g_t - gbar_t||^2 = sum_k p_k^2 E var_k(w_t^k) <= sum_k p_k^2 sigma_k^2."""
    tr, p2 = _trace_of(instance), instance.problem.weights**2
    return _excess(tr.variance @ p2, np.full(tr.eta.size, p2 @ tr.moments.sigma_sq), tr.variance @ p2)


def _lemma3(constant: float) -> Callable[[FedAvgInstance], float]:
    def violation(instance: FedAvgInstance) -> float:
        """Li Lemma 3: E sum_k p_k ||wbar_t - w_t^k||^2 <= constant eta_t^2 (E-1)^2 G^2."""
        tr, E = _trace_of(instance), instance.config.local_steps
        rhs = constant * tr.eta**2 * (E - 1) ** 2 * tr.moments.G_sq
        return _excess(tr.spread, rhs, tr.size)

    return violation


def _drift(instance: FedAvgInstance) -> float:
    """Yu drift: E||xbar_t - x_t^i||^2 <= 4 s^2 K^2 G^2 for every client i (constant step s, K = E)."""
    tr, K = _trace_of(instance), instance.config.local_steps
    rhs = 4 * tr.eta.max() ** 2 * K**2 * tr.moments.G_sq
    return _excess(tr.drift, np.full_like(tr.drift, rhs), np.repeat(tr.size[:, None], tr.drift.shape[1], axis=1))


def _theorem1_constant(instance: FedAvgInstance, tr: _Trace) -> tuple[float, float]:
    """(C, gamma) with Li Theorem 1 read as E F(w_T) - F* <= C / (gamma + T - 1):
    C = kappa (2B/mu + mu gamma/2 ||w_1 - w*||^2), B = sum p_k^2 sigma_k^2 + 6 L Gamma + 8 (E-1)^2 G^2."""
    problem, E = instance.problem, instance.config.local_steps
    consts = problem_constants(problem)
    optimum = exact_optimum(problem, crosscheck=False)
    B = (problem.weights**2 @ tr.moments.sigma_sq + 6 * consts.L * tr.Gamma
         + 8 * (E - 1) ** 2 * tr.moments.G_sq)
    gamma = instance.config.step_size.gamma
    C = consts.kappa * (2 * B / consts.mu + consts.mu * gamma / 2 * float(optimum.w_star @ optimum.w_star))
    return C, gamma


def _theorem1(instance: FedAvgInstance) -> float:
    """Li Theorem 1 (eq. 4): E F(w_T) - F* <= C / (gamma + T - 1), T - 1 = local steps done."""
    tr = _trace_of(instance)
    C, gamma = _theorem1_constant(instance, tr)
    steps = instance.config.local_steps * np.arange(1, instance.config.rounds + 1)
    return _excess(tr.gap, C / (gamma + steps), tr.gap_size)


def _rate_t2(instance: FedAvgInstance) -> float:
    """Planted false: E F(w_T) - F* <= C / T^2 with Theorem 1's C, T = local steps done + 1."""
    tr = _trace_of(instance)
    C, _ = _theorem1_constant(instance, tr)
    T = instance.config.local_steps * np.arange(1, instance.config.rounds + 1) + 1.0
    return _excess(tr.gap, C / T**2, tr.gap_size)


def _claim(claim_id: str, description: str, strategy: st.SearchStrategy[FedAvgInstance],
           violation: Callable[[FedAvgInstance], float], known_false: bool = False) -> FalsifiableClaim:
    return FalsifiableClaim(claim_id, description, strategy, violation, _encode_default, FedAvgInstance.from_json,
                            known_false)


_LI_INSTANCES = instances(quadratic_problems(), local_steps=(1, 4), rounds=(1, 4), max_eta_L=0.25)
_SPREAD_INSTANCES = instances(quadratic_problems(n_clients=(2, 4)), local_steps=(2, 4), rounds=(1, 4), max_eta_L=0.25)
_YU_INSTANCES = instances(quadratic_problems(n_clients=(2, 4), identical_data=True), local_steps=(2, 4),
                          rounds=(1, 4), schedules=("constant",), batch_sizes=(1, 4))
"""Lemma 3's and Yu's drift instances have N >= 2 clients and E >= 2: with one client or E = 1 the local
models never leave their average (both sides are 0), so such inputs could not fail and would only
spend the search's budget (they were about half of the inputs drawn before)."""
_RATE_INSTANCES = instances(
    quadratic_problems(n_clients=(2, 3), dim=(2, 3), mu_range=(0.5, 1.0), L_range=(1.0, 2.0), heterogeneity_range=(0.0, 1.0)),
    local_steps=(1, 2), rounds=(1, 400), schedules=("li",), batch_sizes=(1, 2),
)

FALSIFIABLE: dict[str, FalsifiableClaim] = {
    c.id: c
    for c in (
        _claim("li2020.lemma1", "Li et al. 2020 Lemma 1 (one SGD step of the virtual sequence), eta_t <= 1/(4L)",
               _LI_INSTANCES, _lemma1),
        _claim("li2020.lemma2", "Li et al. 2020 Lemma 2: E||g_t - gbar_t||^2 <= sum_k p_k^2 sigma_k^2",
               _LI_INSTANCES, _lemma2),
        _claim("li2020.lemma3", "Li et al. 2020 Lemma 3: E sum_k p_k ||wbar_t - w_t^k||^2 <= 4 eta_t^2 (E-1)^2 G^2",
               _SPREAD_INSTANCES, _lemma3(4.0)),
        _claim("li2020.lemma3[constant=0.01]", "planted false: Li Lemma 3 with the constant 4 replaced by 0.01",
               _SPREAD_INSTANCES, _lemma3(0.01), known_false=True),
        _claim("yu2019.drift", "Yu et al. 2019 client drift: E||xbar_t - x_t^i||^2 <= 4 s^2 K^2 G^2 (identical data)",
               _YU_INSTANCES, _drift),
        _claim("li2020.thm1", "Li et al. 2020 Theorem 1: E F(w_T) - F* <= C/(gamma + T - 1) with the Li schedule",
               _RATE_INSTANCES, _theorem1),
        _claim("planted.li2020.rate-T2",
               "planted false: FedAvg with the Li schedule reaches E F(w_T) - F* <= C/T^2, C = Theorem 1's constant",
               _RATE_INSTANCES, _rate_t2, known_false=True),
    )
}
"""The built-in falsifiable claims by id (module docstring)."""
