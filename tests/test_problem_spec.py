"""ProblemSpec: frozen, hashable, canonical from construction, owning the JSON that run ids hash.

The golden JSON below is what the dict-based specs (``problems._params.make_spec`` and the registry's
view dicts, before specs became dataclasses) produced for the same calls; run ids hash that JSON,
so equal JSON keeps every stored run reachable.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pickle

import numpy as np
import pytest

from convergence import ConfigError, FedAvgConfig, RunConfig, StepSize
from problems import (
    FamilySpec,
    FederatedProblem,
    ProblemError,
    ProblemSpec,
    ViewSpec,
    build_block_cyclic,
    build_problem,
    families,
    label_block_partition,
    problem_spec,
)

GOLDEN_DEFAULTS = json.loads("""{
 "block_cyclic_quadratic": {"family": "block_cyclic_quadratic", "params": {"block_spread": 1.0,
   "client_spread": 0.5, "dim": 10, "identical_blocks": false, "mu": 0.1, "n_blocks": 5, "n_clients": 10,
   "noise": 0.1, "samples_per_client": 20, "seed": 0}},
 "block_cyclic_softmax": {"family": "block_cyclic_softmax", "params": {"block_spread": 1.0, "client_spread": 0.5,
   "l2": 0.001, "n_blocks": 5, "n_classes": 3, "n_clients": 10, "n_features": 10, "samples_per_client": 20,
   "seed": 0}},
 "identical_quadratic": {"family": "identical_quadratic", "params": {"L": 10.0, "dim": 10, "mu": 0.1,
   "n_clients": 8, "samples_per_client": 50, "seed": 0}},
 "li_counterexample": {"family": "li_counterexample", "params": {"N": 5, "mu": 0.0002, "p": 4}},
 "random_quadratic": {"family": "random_quadratic", "params": {"L": 10.0, "dim": 20, "heterogeneity": 1.0,
   "mu": 0.1, "n_clients": 10, "samples_per_client": 50, "seed": 0, "weighting": "balanced"}},
 "synthetic": {"family": "synthetic", "params": {"alpha": 1.0, "beta": 1.0, "l2": 0.0001, "n_classes": 10,
   "n_clients": 100, "n_features": 60, "seed": 0}},
 "two_curvature_quadratic": {"family": "two_curvature_quadratic", "params": {"L": 1.0, "dissimilarity": 1.0,
   "n_clients": 2, "noise": 0.0, "optimum": 0.0, "samples_per_client": 2, "soft_curvature": 0.1}}
}""")
SMALL_BLOCKS = {"family": "block_cyclic_quadratic", "params": {
    "block_spread": 1.0, "client_spread": 0.5, "dim": 2, "identical_blocks": False, "mu": 0.1, "n_blocks": 2,
    "n_clients": 3, "noise": 0.1, "samples_per_client": 3, "seed": 0}}
GOLDEN_VIEWS = {
    "nested": {"view": "nested", "n_blocks": 1, "n_clients": 2, "of": SMALL_BLOCKS},
    "shuffled": {"view": "shuffled", "shuffle_seed": 4, "of": SMALL_BLOCKS},
    "block": {"view": "block", "block": 1, "of": SMALL_BLOCKS},
}
GOLDEN_RUN_IDS = {"li_counterexample": "7b74c5c26f09f83b", "shuffled": "12fe6e95fb47d2f3"}
"""RunConfig(spec, FedAvgConfig(5, 10, StepSize.constant(0.1))).run_id for the counterexample of Li et al.
(N=5, p=4, mu=2e-4) and for the shuffled view above, computed with the dict-based specs."""


def small_blocks():
    return build_block_cyclic(problem_spec("block_cyclic_quadratic", n_clients=3, n_blocks=2, dim=2,
                                           samples_per_client=3))


def test_golden_json_covers_every_shipped_family_but_arrays() -> None:
    shipped = {family.name for family in families() if family.shipped}
    # arrays (test_from_arrays.py), image_classification (test_cnn_problem.py), li_images
    # (test_li_image_recipe.py), block_cyclic_images (test_cnn_block_cyclic.py) and identical_images
    # (test_yu2019_cnn.py), sorted_images (test_yu2019icml_smooth.py) came after the dict-based specs
    assert set(GOLDEN_DEFAULTS) == shipped - {"arrays", "image_classification", "li_images", "block_cyclic_images",
                                              "identical_images", "sorted_images"}


@pytest.mark.parametrize("family", sorted(GOLDEN_DEFAULTS))
def test_shipped_family_json_is_unchanged(family: str) -> None:
    spec = problem_spec(family)
    assert spec.to_json() == GOLDEN_DEFAULTS[family]
    assert spec.canonical_json == json.dumps(GOLDEN_DEFAULTS[family], sort_keys=True, separators=(",", ":"))
    assert spec.digest == hashlib.sha256(spec.canonical_json.encode()).hexdigest()
    assert ProblemSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec


def test_builders_record_the_spec_they_are_rebuilt_from() -> None:
    spec = problem_spec("identical_quadratic", n_clients=3, dim=4, mu=1, L=2, samples_per_client=5, seed=3)
    assert spec.to_json() == {"family": "identical_quadratic", "params": {
        "L": 2.0, "dim": 4, "mu": 1.0, "n_clients": 3, "samples_per_client": 5, "seed": 3}}
    assert build_problem(spec).spec == spec


@pytest.mark.parametrize("view", sorted(GOLDEN_VIEWS))
def test_view_json_is_unchanged_and_rebuilds_the_view(view: str) -> None:
    parent = small_blocks()
    made = {"nested": lambda: parent.nested(2, 1).combined, "shuffled": lambda: parent.shuffled(4),
            "block": lambda: parent.block(1)}[view]()
    assert isinstance(made.spec, ViewSpec) and made.spec.to_json() == GOLDEN_VIEWS[view]
    rebuilt = build_problem(json.loads(json.dumps(GOLDEN_VIEWS[view])))
    assert rebuilt.spec == made.spec and rebuilt.fingerprint == made.fingerprint


def test_run_ids_are_unchanged() -> None:
    alg = FedAvgConfig(5, 10, StepSize.constant(0.1))
    assert RunConfig(problem_spec("li_counterexample", N=5, p=4, mu=2e-4), alg).run_id == GOLDEN_RUN_IDS[
        "li_counterexample"]
    assert RunConfig(small_blocks().shuffled(4).spec, alg).run_id == GOLDEN_RUN_IDS["shuffled"]


def test_specs_are_immutable_hashable_and_canonical() -> None:
    a = problem_spec("random_quadratic", n_clients=np.int64(3), mu=1, seed=2)
    b = FamilySpec("random_quadratic", {"seed": 2, "mu": 1.0, "n_clients": 3})
    assert a == b and hash(a) == hash(b) and {a: "x"}[b] == "x"
    assert a.canonical_json == b.canonical_json and a.digest == b.digest
    assert a != problem_spec("random_quadratic", n_clients=3, mu=1, seed=3)
    assert a.digest != problem_spec("random_quadratic", n_clients=3, mu=1, seed=3).digest
    assert type(a.params["mu"]) is float and type(a.params["n_clients"]) is int
    assert a.params == a.to_json()["params"]  # the params compare as a mapping
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.family = "synthetic"  # type: ignore[misc]
    with pytest.raises(TypeError):
        a.params["seed"] = 5  # type: ignore[index]
    view = ViewSpec("shuffled", {"shuffle_seed": 1}, a)
    assert view == ViewSpec("shuffled", {"shuffle_seed": np.int32(1)}, b) and hash(view) == hash(
        ViewSpec("shuffled", {"shuffle_seed": 1}, b))


def test_specs_pickle_through_their_json() -> None:
    spec = small_blocks().nested(2, 2).spec
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert spec.__reduce__() == (ProblemSpec.from_json, (spec.to_json(),))


@pytest.mark.parametrize("data,pattern", [
    ("synthetic", r"^spec: expected a mapping"),
    ({"family": "synthetic", "params": {}, "extra": 1}, r"^spec: unknown key 'extra'"),
    ({"params": {}}, r"^family: the spec names no problem family"),
    ({"family": 3}, r"^family: expected a family name"),
    ({"family": "mnist"}, r"^family: unknown problem family 'mnist'"),
    ({"family": "synthetic", "params": [1]}, r"^params: expected a mapping"),
    ({"family": "synthetic", "params": {"alpah": 1.0}}, r"^params: unknown parameter 'alpah'"),
    ({"family": "synthetic", "params": {"seed": 1.5}}, r"^seed: expected an integer"),
    ({"family": "synthetic", "params": {"alpha": float("nan")}}, r"^alpha: must be finite"),
    ({"family": "block_cyclic_quadratic", "params": {"identical_blocks": 1}}, r"^identical_blocks: expected True"),
    ({"family": "random_quadratic", "params": {"weighting": 3}}, r"^weighting: expected a string"),
    ({"family": "synthetic", "builder": "problems.synthetic:synthetic"}, r"^builder: 'synthetic' is a shipped"),
    ({"view": "zoom", "of": {}}, r"^view: unknown view 'zoom'"),
    ({"view": "shuffled", "of": SMALL_BLOCKS}, r"^shuffle_seed: the shuffled view spec has no"),
    ({"view": "shuffled", "shuffle_seed": 0, "seed": 1, "of": SMALL_BLOCKS}, r"^spec: unknown key 'seed'"),
    ({"view": "block", "block": -1, "of": SMALL_BLOCKS}, r"^block: must be >= 0"),
    ({"view": "nested", "n_clients": 1, "n_blocks": 1.0, "of": SMALL_BLOCKS}, r"^n_blocks: expected an integer"),
    ({"view": "block", "block": 0, "of": {"family": "mnist"}}, r"^family: unknown problem family"),
])
def test_from_json_names_the_bad_field(data: object, pattern: str) -> None:
    with pytest.raises(ProblemError, match=pattern):
        ProblemSpec.from_json(data)


def test_from_json_on_a_subclass_returns_that_subclass() -> None:
    assert isinstance(FamilySpec.from_json(SMALL_BLOCKS), FamilySpec)
    with pytest.raises(ProblemError, match="^spec: expected a FamilySpec, got the JSON of a ViewSpec"):
        FamilySpec.from_json(GOLDEN_VIEWS["block"])


def test_views_refuse_what_they_cannot_view() -> None:
    with pytest.raises(ProblemError, match="^of: expected the ProblemSpec"):
        ViewSpec("block", {"block": 0}, SMALL_BLOCKS)  # type: ignore[arg-type]
    with pytest.raises(ProblemError, match="^of: a block view needs a block-cyclic problem"):
        build_problem({"view": "block", "block": 0, "of": GOLDEN_DEFAULTS["li_counterexample"]})
    with pytest.raises(ProblemError, match="^block: block index must be < n_blocks = 2"):
        build_problem({"view": "block", "block": 2, "of": SMALL_BLOCKS})
    with pytest.raises(ProblemError, match="^view: 'block' is not a block-cyclic problem view"):
        build_block_cyclic(GOLDEN_VIEWS["block"])


def test_problems_and_run_configs_take_specs_not_dicts() -> None:
    X, y = np.eye(2), np.ones(2)
    with pytest.raises(ProblemError, match="^spec: expected a ProblemSpec or None, got dict"):
        FederatedProblem("t", "least_squares", X, y, [0, 1, 2], [0.5, 0.5], 0.0, spec=SMALL_BLOCKS)
    assert FederatedProblem("t", "least_squares", X, y, [0, 1, 2], [0.5, 0.5], 0.0).describe()["spec"] is None
    with pytest.raises(ConfigError, match="^problem: expected a ProblemSpec"):
        RunConfig(SMALL_BLOCKS, FedAvgConfig(1, 1, StepSize.constant(0.1)))  # type: ignore[arg-type]


def test_problems_without_a_spec_make_views_without_one() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 60).astype(float)
    problem = label_block_partition(np.c_[rng.normal(size=(60, 2)), np.ones(60)], y, 2, 2, 3, seed=0,
                                    source={"data": "test"})
    assert problem.spec is None and problem.combined.spec is None and '"source": {"data": "test"}' in problem.combined.notes
    assert problem.block(0).spec is None and problem.shuffled(1).spec is None and problem.nested(2, 1).spec is None
