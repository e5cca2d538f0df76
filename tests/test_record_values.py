"""``convergence.record_values``: F at every record, bit-identical to one ``objective`` call per model,
memoised per process by the objective's data and the records' bytes, least recently used dropped."""

from __future__ import annotations

import numpy as np
import pytest

from convergence import record_values as memo_module
from convergence.record_values import record_values
from problems import FederatedProblem


def _softmax_problem(mu: float) -> FederatedProblem:
    """Two clients of 3 and 2 rows, 2 features, 3 classes."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, -1.0], [0.5, 0.5]])
    return FederatedProblem("tiny softmax", "softmax", X, np.array([0.0, 1.0, 2.0, 1.0, 0.0]), np.array([0, 3, 5]),
                            np.array([0.4, 0.6]), mu, n_classes=3)


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memo_module, "_memo", type(memo_module._memo)())


def _iterates(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(2, 3, 6))  # S = 2 seeds, P = 3 records, d = 2 x 3


def test_values_are_the_objective_at_each_record_and_read_only():
    problem, iterates = _softmax_problem(0.1), _iterates(0)
    values = record_values(problem, iterates)
    expected = np.array([[problem.objective(w) for w in seed] for seed in iterates])
    assert values.shape == (2, 3) and np.array_equal(values, expected)
    with pytest.raises(ValueError):
        values[0, 0] = 0.0


def test_same_records_hit_the_memo_other_objective_or_records_do_not():
    problem, iterates = _softmax_problem(0.1), _iterates(0)
    first = record_values(problem, iterates)
    assert record_values(problem, iterates.copy()) is first  # equal bytes, another array: a hit
    other_mu = record_values(_softmax_problem(0.2), iterates)  # F changes with mu: its own entry
    assert other_mu is not first and np.all(other_mu > first)
    moved = iterates.copy()
    moved[1, 2, 0] += 1.0
    changed = record_values(problem, moved)
    assert changed is not first and np.array_equal(changed[0], first[0]) and changed[1, 2] != first[1, 2]
    assert record_values(problem, iterates.reshape(2, 3, 6)[:, :2]) is not first  # fewer records: another key


def test_least_recently_used_entry_dropped(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(memo_module, "MEMO_ENTRIES", 2)
    calls = []
    objective = FederatedProblem.objective
    monkeypatch.setattr(FederatedProblem, "objective", lambda self, w: calls.append(1) or objective(self, w))
    problem = _softmax_problem(0.1)
    a, b, c = (_iterates(seed) for seed in range(3))
    first_a = record_values(problem, a)
    record_values(problem, b)
    assert len(calls) == 12  # 2 x 3 records each
    assert record_values(problem, a) is first_a and len(calls) == 12  # a used last: b is now the oldest
    record_values(problem, c)  # drops b
    assert record_values(problem, a) is first_a and len(memo_module._memo) == 2
    record_values(problem, b)
    assert len(calls) == 24  # c, then b again: b was dropped
