"""ding2020.table1's statistics: the rounds to a target accuracy of each run over the I grid, and the
checks that they fall as I grows (Ding et al. 2020, Sec. 5, Table 1; ``table1``, its docstring, states
the target rule and the tests).

With A_{I,s}(r) the average block accuracy of the run at I, seed s, recorded at r = 0, k, .., C M E,
A0 the mean over seeds of A(0) and Abar_I(r) the mean over seeds, the target is

    A_low = min_I max_r Abar_I(r),     target = A0 + f (A_low - A0),

and R_{I,s} the first recorded round with A_{I,s}(r) >= target (censored: C M E + 1). The checks,
per algorithm on the grid I_1 < .. < I_J in the claimed direction: (a) R_{I_1} - R_{I_J} > 0, and
(b) no significant rise between neighbours (J > 2), each a paired Student-t interval over seeds
(``convergence.check_ordering``) at one-sided level alpha / n (Bonferroni over the n tests that can
FAIL the claim, ``algorithm_test_count``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

import convergence
from convergence.verdict import Status, Uninformative, Verdict

__all__ = ["ALPHA", "RoundsToTarget", "rounds_to_accuracy", "RoundsChecks", "algorithm_test_count",
           "check_rounds_fall"]

ALPHA = 0.05
"""The family-wise level of the claim's tests (module docstring)."""


@dataclass(frozen=True)
class RoundsToTarget:
    """One algorithm's rounds to its target over the I grid: ``rounds`` (J, S) int64, the first
    recorded round with A(r) >= ``target`` (``horizon`` + 1 where censored), ``reached`` (J, S) bool;
    ``initial`` A0 and ``lowest_best`` A_low of the target rule (``table1``'s docstring), ``grid`` the J
    values of I."""

    grid: tuple[int, ...]
    rounds: np.ndarray
    reached: np.ndarray
    target: float
    initial: float
    lowest_best: float
    horizon: int

    @property
    def censored_fraction(self) -> float:
        """The fraction of the J S runs that never reached the target."""
        return float(1.0 - self.reached.mean())


def rounds_to_accuracy(average: np.ndarray, record_rounds: np.ndarray, grid: tuple[int, ...],
                       fraction: float) -> RoundsToTarget:
    """``RoundsToTarget`` from average block accuracies ``average`` (J, S, P) of the runs at the J
    values of I in ``grid``, recorded at ``record_rounds`` (P,) (increasing integers from 0, the
    last the horizon C M E), with the target A0 + ``fraction`` (A_low - A0) (``table1``'s docstring).

    Raises:
        ValueError: naming ``record_rounds`` (not increasing integers from 0), ``average`` (not (J, S,
            P) for the grid and records, non-finite, outside [0, 1]) or ``fraction`` (not in (0, 1]).
    """
    record_rounds = np.asarray(record_rounds)
    if record_rounds.ndim != 1 or record_rounds.dtype.kind not in "iu" or record_rounds.size < 2 \
            or record_rounds[0] != 0 or np.any(np.diff(record_rounds) <= 0):
        raise ValueError(f"record_rounds: need increasing integer rounds from 0, got {record_rounds!r}")
    average = np.asarray(average, dtype=np.float64)
    if average.ndim != 3 or average.shape[0] != len(grid) or average.shape[2] != record_rounds.size:
        raise ValueError(f"average: expected shape ({len(grid)} values of I, seeds, {record_rounds.size} records), "
                         f"got {average.shape}")
    if not np.all(np.isfinite(average)) or average.min() < 0 or average.max() > 1:
        raise ValueError("average: accuracies must be finite and in [0, 1]")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction: must be in (0, 1], got {fraction!r}")
    mean = average.mean(axis=1)  # (J, P)
    initial, lowest_best = float(mean[:, 0].mean()), float(mean.max(axis=1).min())
    target = initial + fraction * (lowest_best - initial)

    index, reached = convergence.rounds_to_target(-average, -target)  # A >= target  <=>  -A <= -target
    horizon = int(record_rounds[-1])
    rounds = np.append(record_rounds, horizon + 1)[index]  # a censored run's index is P: horizon + 1
    return RoundsToTarget(tuple(grid), rounds.astype(np.int64), reached, target, initial, lowest_best, horizon)


@dataclass(frozen=True)
class RoundsChecks:
    """The counted sub-checks (name, verdict) of one algorithm and its uninformative ones."""

    checks: tuple[tuple[str, Verdict], ...]
    uninformative: tuple[Uninformative, ...]


def algorithm_test_count(J: int) -> int:
    """The tests of one algorithm that can FAIL the claim on a grid of J values of I: (a) and the J - 1
    neighbour checks (b), or (a) alone when J = 2 (its pair is the only neighbours)."""
    return J if J > 2 else 1


def check_rounds_fall(claim_id: str, name: str, measured: RoundsToTarget, claimed: str = "fall",
                      n_tests: int | None = None, alpha: float = ALPHA) -> RoundsChecks:
    """Checks (a) and (b) of the module docstring on one algorithm's rounds, ``name`` naming it in
    the sub-checks; ``claimed`` "fall" (rounds non-increasing as I grows) or "rise" (non-decreasing);
    every one-sided test at level alpha / ``n_tests`` (default: one algorithm's, ``algorithm_test_count``)."""
    if claimed not in ("fall", "rise"):
        raise ValueError(f"claimed: expected 'fall' or 'rise', got {claimed!r}")
    J, S = measured.rounds.shape
    own = algorithm_test_count(J)
    n_tests = own if n_tests is None else n_tests
    if isinstance(n_tests, bool) or not isinstance(n_tests, int) or n_tests < own:
        raise ValueError(f"n_tests: need an integer >= {own} (the algorithm's own tests), got {n_tests!r}")
    if S < 2:
        raise ValueError(f"measured: need at least 2 seeds to pair, got {S}")
    order = list(range(J)) if claimed == "fall" else list(range(J - 1, -1, -1))
    I = [measured.grid[j] for j in order]
    rounds, reached = measured.rounds[order].astype(np.float64), measured.reached[order]
    confidence = 1 - 2 * alpha / n_tests
    level = f"one-sided paired t, level {alpha:g}/{n_tests} (Bonferroni)"
    table = ", ".join(f"I = {i}: {r.mean():.4g} ({int(k.sum())}/{S} reached)" for i, r, k in zip(I, rounds, reached))
    context = (f"{name}: rounds to A >= {measured.target:.3f} (A0 = {measured.initial:.3f}, lowest best mean "
               f"accuracy over I {measured.lowest_best:.3f}), means over {S} paired seeds: {table}; censored runs "
               f"count as {measured.horizon + 1}.")
    tag = f"{claim_id}/{name.lower()}"
    first = convergence.check_ordering(f"{tag}/I={I[-1]}<I={I[0]}", rounds[-1], rounds[0], confidence,
                           notes=f"{context} {level}.")
    if first.status is Status.PASS and not reached[-1].all():
        first = replace(first, status=Status.INCONCLUSIVE, notes=f"{first.notes} Not a PASS: I = {I[-1]} missed "
                        "the target in some seed, so its rounds are only lower bounds.")
    elif first.status is Status.PASS and measured.censored_fraction > 0.5:
        first = replace(first, status=Status.INCONCLUSIVE, notes=f"{first.notes} Not a PASS: "
                        f"{measured.censored_fraction:.0%} of the runs never reached the target.")
    elif first.status is Status.FAIL and not reached[0].all():
        first = replace(first, status=Status.INCONCLUSIVE, notes=f"{first.notes} Not a FAIL: I = {I[0]} missed "
                        "the target in some seed, so its rounds are only lower bounds.")
    verb = "fewer" if claimed == "fall" else "more"
    checks: list[tuple[str, Verdict]] = [(f"(a) {name}: {verb} rounds at I = {measured.grid[-1]} than at "
                                          f"I = {measured.grid[0]}", first)]
    uninformative: list[Uninformative] = []
    for j in range(J - 1 if J > 2 else 0):  # with J = 2 the only neighbours are (a)'s pair
        label = f"(b) {name}: no significant {'rise' if claimed == 'fall' else 'fall'} from I = {I[j]} to I = {I[j + 1]}"
        step = convergence.check_ordering(f"{tag}/I={I[j + 1]}<=I={I[j]}", rounds[j + 1], rounds[j], confidence,
                              notes=f"{level}.")
        if not reached[j].all():
            uninformative.append(Uninformative.of(label, step, (
                f"I = {I[j]} missed the target in some seed, so its rounds are lower bounds and a rise after it "
                "cannot be shown")))
        elif step.status is Status.FAIL:
            checks.append((label, step))
        else:
            checks.append((label, replace(step, status=Status.PASS, notes=f"{step.notes} No significant rise "
                                          "(ties allowed, as in the paper).")))
    return RoundsChecks(tuple(checks), tuple(uninformative))
