"""The family registry: canonical specs, round trips, caching and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import problems
from problems import ProblemError, build_problem, li_counterexample, problem_spec, random_quadratic, synthetic

DEFAULTS = {
    "li_counterexample": {"N": 5, "p": 4, "mu": 2e-4},
    "random_quadratic": {
        "n_clients": 10, "dim": 20, "mu": 0.1, "L": 10.0, "heterogeneity": 1.0,
        "samples_per_client": 50, "seed": 0, "weighting": "balanced",
    },
    "synthetic": {
        "alpha": 1.0, "beta": 1.0, "n_clients": 100, "n_features": 60, "n_classes": 10, "l2": 1e-4, "seed": 0,
    },
}


@pytest.mark.parametrize("family", DEFAULTS)
def test_problem_spec_fills_defaults(family: str) -> None:
    spec = problem_spec(family)
    assert spec.to_json() == {"family": family, "params": DEFAULTS[family]}
    assert json.loads(json.dumps(spec.to_json())) == spec.to_json()  # JSON-able
    assert list(spec.params) == sorted(spec.params)


@pytest.mark.parametrize(
    "family,params",
    [("li_counterexample", {"N": 3, "p": 2}), ("random_quadratic", {"n_clients": 3, "dim": 4, "samples_per_client": 6}),
     ("synthetic", {"n_clients": 3, "seed": 9})],
)
def test_round_trip_spec_equals_canonical(family: str, params: dict) -> None:
    spec = problem_spec(family, **params)
    problem = build_problem(spec)
    assert problem.spec == spec
    rebuilt = build_problem(json.loads(json.dumps(problem.spec.to_json())))
    assert rebuilt is problem  # cached per process on the canonical JSON
    builders = {"li_counterexample": li_counterexample, "random_quadratic": random_quadratic, "synthetic": synthetic}
    direct = builders[family](**params)
    assert direct.spec == spec  # builders record the same canonical spec
    np.testing.assert_array_equal(direct.X, problem.X)


def test_equivalent_specs_hash_alike() -> None:
    a = problem_spec("li_counterexample", N=5, p=np.int64(4), mu=0)
    b = problem_spec("li_counterexample", mu=0.0, p=4, N=5)
    assert a == b and a.canonical_json == b.canonical_json
    assert isinstance(a.params["p"], int) and isinstance(a.params["mu"], float)
    assert build_problem(a) is build_problem({"family": "li_counterexample", "params": {"N": 5, "p": 4, "mu": 0.0}})
    assert build_problem({"family": "li_counterexample"}).spec == problem_spec("li_counterexample")


@pytest.mark.parametrize("p", [4.0, 4.5, "4", True])
def test_integer_params_take_integers_only(p: object) -> None:
    with pytest.raises(ProblemError, match="^p: expected an integer"):
        problem_spec("li_counterexample", p=p)


def test_different_params_build_different_problems() -> None:
    assert build_problem(problem_spec("synthetic", n_clients=3, seed=1)) is not build_problem(
        problem_spec("synthetic", n_clients=3, seed=2)
    )


@pytest.mark.parametrize(
    "spec,pattern",
    [
        ({"family": "mnist"}, r"^family: unknown problem family 'mnist'"),
        ({"family": "synthetic", "params": {"alpah": 1.0}}, r"^params: unknown parameter 'alpah'"),
        ({"family": "synthetic", "params": {"seed": "zero"}}, r"^seed:"),
        ({"family": "random_quadratic", "params": {"weighting": 3}}, r"^weighting:"),
        ({"family": "synthetic", "params": [1, 2]}, r"^params:"),
        ({"family": "synthetic", "extra": 1}, r"^spec: unknown key 'extra'"),
        ({"params": {}}, r"^family:"),
        ({"family": ["synthetic"]}, r"^family:"),
        ({"family": "li_counterexample", "params": {"N": 1}}, r"^N:"),
    ],
)
def test_bad_specs_name_the_field(spec: dict, pattern: str) -> None:
    with pytest.raises(ProblemError, match=pattern):
        build_problem(spec)


def test_spec_must_be_a_mapping() -> None:
    with pytest.raises(ProblemError, match="^spec:"):
        build_problem("synthetic")  # type: ignore[arg-type]


def test_public_api_is_curated() -> None:
    expected = {
        "FederatedProblem", "LossKind", "ProblemError", "li_counterexample", "li_counterexample_matrices",
        "random_quadratic", "synthetic", "build_problem", "problem_spec", "ProblemConstants", "problem_constants",
        "Optimum", "OptimumError", "exact_optimum", "heterogeneity_gamma",
    }
    assert expected <= set(problems.__all__)  # other families may add their own names
    assert all(hasattr(problems, name) and not name.startswith("_") for name in problems.__all__)
