"""The CNN problem family ``image_classification``: data, partition, the oracle, bad fields."""

from __future__ import annotations

import numpy as np
import pytest

from problems import (
    ImageClassificationProblem, ProblemError, ProblemSpec, build_problem, check_problem, families, image_classification,
    load_images, problem_spec,
)
from problems.models import NETWORK_NAMES, digits_net, network_for

SPEC = problem_spec("image_classification", recipe="shards", n_clients=5, n_train=160, n_test=40, seed=3)


@pytest.fixture(scope="module")
def problem() -> ImageClassificationProblem:
    return build_problem(SPEC)


def test_the_family_is_shipped_and_its_spec_records_the_data_set(problem):
    assert "image_classification" in {family.name for family in families()}
    assert problem.spec == SPEC and ProblemSpec.from_json(SPEC.to_json()) == SPEC
    assert SPEC.to_json()["params"]["dataset"] == "digits" and SPEC.to_json()["params"]["network"] == "digits_net"
    assert problem.dataset.startswith("digits (train, 1438 images 8x8x1") and "bundled" in problem.dataset
    assert check_problem(problem, SPEC) is problem
    assert problem.describe()["dataset"] == problem.dataset


def test_clients_hold_the_partition_of_a_subsample_grouped_by_client(problem):
    train = load_images("digits", "train")
    assert problem.images.dtype == np.float32 and problem.images.shape == (160, 8, 8, 1)
    assert problem.test_images.shape == (40, 8, 8, 1)
    assert problem.n_clients == 5 and problem.client_sizes.sum() == 160
    np.testing.assert_allclose(problem.weights, problem.client_sizes / 160)
    for k in range(5):  # two shards per client: at most two labels each
        assert len(np.unique(problem.client_data(k)[1])) <= 2
    # every image is one of the data set's, with its label
    flat = train.images.reshape(train.n, -1).astype(np.float32)
    for image, label in zip(problem.images[:10], problem.labels[:10]):
        match = np.flatnonzero(np.all(flat == image.reshape(-1), axis=1))
        assert match.size >= 1 and label in train.labels[match]
    assert not problem.images.flags.writeable


def test_the_same_spec_gives_the_same_data_and_another_seed_other_data(problem):
    again = image_classification(recipe="shards", n_clients=5, n_train=160, n_test=40, seed=3)
    other = image_classification(recipe="shards", n_clients=5, n_train=160, n_test=40, seed=4)
    assert again.fingerprint == problem.fingerprint != other.fingerprint


def test_the_objective_is_the_weighted_mean_cross_entropy_of_the_clients(problem):
    net = digits_net()
    theta = problem.initial_model(0).astype(np.float64)
    local = [net.loss(theta, problem.client_data(k)[0].astype(np.float64), problem.client_data(k)[1]) for k in range(5)]
    np.testing.assert_allclose(problem.local_objectives(theta), local, rtol=1e-12)
    assert problem.objective(theta) == pytest.approx(float(problem.weights @ np.array(local)), rel=1e-12)
    assert 0.0 <= problem.test_accuracy(theta) <= 1.0 and 0.0 <= problem.accuracy(theta) <= 1.0


def test_client_gradients_agree_between_engines_and_with_the_network(problem):
    theta = problem.initial_model(1)
    rows = np.array([0, 5, 5, 7])
    numba = problem.client_gradient(theta, 2, rows)
    numpy = problem.client_gradient(theta, 2, rows, engine="numpy")
    assert numba.dtype == np.float32
    np.testing.assert_allclose(numba, numpy, rtol=1e-4, atol=1e-6)
    images, labels = problem.client_data(2)
    np.testing.assert_array_equal(numba, digits_net().loss_and_gradient(theta, images[rows], labels[rows])[1])


def test_the_initialisation_is_the_networks_at_the_run_seed(problem):
    w0 = problem.initial_model(5)
    assert w0.dtype == np.float32 and w0.shape == (problem.dim,) == (2746,)
    np.testing.assert_array_equal(w0, digits_net().init_params(5, np.float32))
    assert not np.array_equal(w0, problem.initial_model(6))
    assert np.any(w0 != 0.0)


def test_float64_problems_hold_float64_images():
    problem = build_problem(problem_spec("image_classification", n_clients=2, n_train=20, n_test=10, dtype="float64"))
    assert problem.images.dtype == np.float64 and problem.initial_model(0).dtype == np.float64


def test_the_network_registry():
    assert NETWORK_NAMES == ("digits_net", "digits_tanh_mlp", "lenet5", "tutorial_cifar_net")
    assert network_for("lenet5").input_shape == (28, 28, 1)
    assert network_for("tutorial_cifar_net").n_params == 62006


@pytest.mark.parametrize(("params", "field"), [
    ({"network": "resnet"}, "network"),
    ({"network": "lenet5"}, "network"),  # 28x28 input, the digits are 8x8
    ({"dtype": "float16"}, "dtype"),
    ({"dataset": "imagenet"}, "name"),
    ({"recipe": "random"}, "recipe"),
    ({"n_train": 5000}, "n_train"),
    ({"n_train": 0}, "n_train"),
    ({"n_test": 1000}, "n_test"),
    ({"n_clients": 30, "n_train": 20}, "n_clients"),
    ({"recipe": "dirichlet"}, "alpha"),
    ({"seed": -1}, "seed"),
])
def test_bad_fields_are_named(params, field):
    with pytest.raises(ProblemError, match=f"^{field}: "):
        image_classification(**{"n_clients": 2, **params})


def test_bad_arrays_are_named(problem):
    good = dict(name="p", network_name="digits_net", images=problem.images, labels=problem.labels,
                offsets=problem.offsets, weights=problem.weights, test_images=problem.test_images,
                test_labels=problem.test_labels)
    for field, value in (("images", problem.images.astype(np.float64)), ("labels", problem.labels + 10),
                         ("offsets", np.array([0, 200])), ("weights", problem.weights * 2),
                         ("test_images", problem.test_images[:, :4]), ("network_name", "vgg")):
        named = "network" if field == "network_name" else field
        with pytest.raises(ProblemError, match=f"^{named}: "):
            ImageClassificationProblem(**{**good, field: value})
    with pytest.raises(ProblemError, match="^theta: "):
        problem.objective(np.zeros(3))
