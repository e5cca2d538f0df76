"""The block-cyclic algorithms (MM-PSGD, MC-PSGD, FedAvg-cyclic, PR-SGD) on a CNN over Ding et
al.'s block-cyclic image data (``problems.block_cyclic_images``): the problem's structure, kernel
against reference for each algorithm, float32 against float64, hand-checkable cases, MC = MM
where the chains coincide, determinism across executors, the per-block accuracy, bad fields."""

from __future__ import annotations

import numpy as np
import pytest

from convergence import (
    ConfigError, FedAvgConfig, FedAvgCyclicConfig, MCPSGDConfig, MMPSGDConfig, PRSGDConfig, RunConfig, RunRequest,
    StepSize, execute, run,
)
from convergence._rng import sample_indices_np
from convergence.algorithms import algorithm_for
from convergence.algorithms.block_cyclic.kernel import SeedRecords
from convergence.algorithms.block_cyclic.reference_pieces import chain_keys_np, chain_rows_np
from convergence.store import RunStore
from convergence.sweep import SweepOptions
from convergence.sweep_runs import seed_task
from problems import (
    BlockCyclicImageProblem, ProblemError, ViewSpec, block_cyclic_images, build_block_cyclic, build_problem,
    check_problem, problem_spec,
)
from problems.models import digits_net


def _spec(dtype: str = "float64", **params):
    fields = {"n_blocks": 2, "clients_per_block": 3, "labels_per_block": 6, "n_train": 150, "n_test": 60,
              "dtype": dtype, **params}
    return problem_spec("block_cyclic_images", **fields)


SCHEDULE = dict(cycles=2, rounds_per_block=2, local_steps=2, step_size=StepSize.constant(0.1), batch_size=3,
                seeds=(0, 1))
RECORDS = (0, 1, 4, 8)


def _config(algorithm: str, **fields):
    fields = {**SCHEDULE, **fields}
    if algorithm == "mm_psgd":
        return MMPSGDConfig(record_rounds=RECORDS, **fields)
    if algorithm == "mc_psgd":
        return MCPSGDConfig(record_rounds=RECORDS, block_step_size=StepSize.constant(0.05), **fields)
    if algorithm == "fedavg_cyclic":
        return FedAvgCyclicConfig(**fields)
    return PRSGDConfig(rounds=3, sync_interval=2, step_size=fields["step_size"], batch_size=fields["batch_size"],
                       participants=fields.get("participants"), record_rounds=(0, 1, 3), seeds=fields["seeds"])


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


# ------------------------------------------------------------------------------------ the problem
def test_the_problem_is_dings_partition_of_the_images():
    spec = _spec()
    problem = build_block_cyclic(spec)
    assert isinstance(problem, BlockCyclicImageProblem) and problem.spec == spec
    assert build_problem(spec) is problem.combined and check_problem(problem.combined, spec) is problem.combined
    c, partition = problem.combined, problem.partition
    assert (problem.n_blocks, problem.n_clients, c.n_clients) == (2, 3, 6)
    np.testing.assert_array_equal(problem.block_sizes(), partition.sizes)
    np.testing.assert_allclose(c.weights, 1 / 6)
    assert partition.block_labels == ((0, 1, 2, 3, 4, 5), (5, 6, 7, 8, 9, 0))  # overlapping label sets
    for m in range(2):
        for i in range(3):
            _, labels = c.client_data(m * 3 + i)
            assert set(labels.tolist()) <= set(partition.block_labels[m])
        assert set(c.test_labels[partition.test_rows(m)].tolist()) <= set(partition.block_labels[m])
    np.testing.assert_allclose(problem.block_objectives(c.initial_model(0)).mean(), c.objective(c.initial_model(0)),
                               rtol=1e-12)
    assert "digits" in c.dataset and "2 blocks of labels" in c.dataset
    again = block_cyclic_images(n_blocks=2, clients_per_block=3, labels_per_block=6, n_train=150, n_test=60,
                                dtype="float64")
    assert again.combined.fingerprint == c.fingerprint  # same parameters, same data


def test_block_accuracy_is_each_blocks_predictor_on_its_test_images():
    problem = build_block_cyclic(_spec())
    c, net = problem.combined, digits_net()
    models = np.stack([c.initial_model(3), c.initial_model(4)])
    accuracy = problem.block_accuracy(models)
    for m in range(2):
        rows = problem.partition.test_rows(m)
        expected = np.mean(net.predict(models[m], c.test_images[rows], "numpy") == c.test_labels[rows])
        assert accuracy.per_block[m] == expected and accuracy.test_sizes[m] == rows.size
    assert accuracy.mean == pytest.approx(np.mean(accuracy.per_block))
    assert problem.block_accuracy(models, "numpy") == accuracy  # the Numba kernel's counts are the reference's


def test_the_run_scores_its_records_and_a_stored_run_without_scores_is_refused():
    """A seed's result (what a sweep's worker returns and the store keeps) carries its block accuracies
    (P, M), scored in the run; extras refuse a seed stored without them (an older fedbound's) by name."""
    spec = _spec("float32")
    config = _config("mm_psgd", seeds=(1,))
    task = seed_task(RunRequest(RunConfig(spec, config)), 1, "numba", RECORDS)
    stored = task.fn(*task.args)
    assert stored["block_accuracy"].shape == (len(RECORDS), 2)
    engine, problem = algorithm_for(config), build_block_cyclic(spec)
    plan = engine.plan(problem, config)
    np.testing.assert_array_equal(engine.extras(problem, plan, [SeedRecords(**stored)]).block_accuracy[0],
                                  stored["block_accuracy"])
    older = SeedRecords(**{name: value for name, value in stored.items() if name != "block_accuracy"})
    with pytest.raises(ConfigError, match="^block_accuracy: a seed of this CNN run has no per-block accuracies"):
        engine.extras(problem, plan, [older])


# ---------------------------------------------------------------------------- kernel vs reference
@pytest.mark.parametrize("algorithm,fields", [
    ("mm_psgd", {}),
    ("mm_psgd", {"predictor": "exponential", "participants": 2}),
    ("mc_psgd", {}),
    ("mc_psgd", {"batch_size": 0, "participants": 2}),
    ("fedavg_cyclic", {}),
    ("pr_sgd", {"participants": 2}),
], ids=["mm", "mm_exponential_partial", "mc", "mc_exact_partial", "fedavg_cyclic", "pr_sgd"])
def test_kernel_and_reference_agree_in_float64(algorithm, fields):
    spec = _spec(n_blocks=1, labels_per_block=10) if algorithm == "pr_sgd" else _spec()
    config = RunConfig(spec, _config(algorithm, **fields))
    kernel, reference = run(config, track=True), run(config, engine="numpy", track=True)
    assert _relative(kernel.iterates, reference.iterates) <= 1e-10
    k, r = kernel.extras, reference.extras
    for name in ("predictors", "separate_models"):
        if getattr(k, name) is not None:
            assert _relative(getattr(k, name), getattr(r, name)) <= 1e-10
    for name in ("selected_separate", "block_accuracy", "blocks", "block_rounds"):
        if getattr(k, name) is not None:
            np.testing.assert_array_equal(getattr(k, name), getattr(r, name))
    for name in ("grad_sq_mean", "max_mean_drift", "max_drift", "max_norm_sq"):
        np.testing.assert_allclose(getattr(k, name), getattr(r, name), rtol=1e-10)
    assert np.all(k.max_drift[:, -1] > 0) and np.all(np.isfinite(k.grad_sq_mean[:, -1]))
    assert k.block_accuracy.shape == (2, len(kernel.rounds), 1 if algorithm == "pr_sgd" else 2)
    if algorithm in ("mm_psgd", "mc_psgd"):
        assert k.predictors.shape == (2, len(RECORDS), 2, digits_net().n_params)
    else:
        assert k.predictors is None


def test_the_extras_score_the_recorded_predictors():
    """block_accuracy[s, p] is block_accuracy of the predictors recorded at point p (MM/MC), or of
    the global model on every block (FedAvg-cyclic: the paper scores FedAvg this way)."""
    problem = build_block_cyclic(_spec())
    mc = run(RunConfig(_spec(), _config("mc_psgd", seeds=(2,))))
    cyclic = run(RunConfig(_spec(), _config("fedavg_cyclic", seeds=(2,))))
    for p in range(len(RECORDS)):
        expected = problem.block_accuracy(mc.extras.predictors[0, p]).per_block
        np.testing.assert_array_equal(mc.extras.block_accuracy[0, p], expected)
    for p in range(len(cyclic.rounds)):
        model = cyclic.iterates[0, p]
        expected = problem.block_accuracy(np.stack([model, model])).per_block
        np.testing.assert_array_equal(cyclic.extras.block_accuracy[0, p], expected)


def test_a_sweep_keeps_the_accuracies_of_the_predictors_not_the_models(tmp_path):
    """A CNN seed as a sweep's worker returns it and the store keeps it has empty predictors and
    separate models; its block accuracies are block_accuracy of the predictors the in-process run
    recorded, bit for bit, and the stored records are that run's iterates; execute's extras have
    the models as None, read back from the store the same."""
    problem = build_block_cyclic(_spec())
    config = RunConfig(_spec(), _config("mc_psgd", seeds=(2,)))
    whole = run(config)
    task = seed_task(RunRequest(config), 2, "numba", RECORDS)
    stored = task.fn(*task.args)
    assert stored["predictors"].size == 0 and stored["separate"].size == 0
    np.testing.assert_array_equal(stored["records"], whole.iterates[0])
    np.testing.assert_array_equal(stored["selected"], whole.extras.selected_separate[0])
    for p in range(len(RECORDS)):
        expected = problem.block_accuracy(whole.extras.predictors[0, p]).per_block
        np.testing.assert_array_equal(stored["block_accuracy"][p], expected)
    with RunStore(tmp_path / "runs.sqlite") as store:
        options = SweepOptions(jobs=1, progress=False, store=store)
        computed, = execute([RunRequest(config)], options)
        assert store.get(task.key)["predictors"].size == 0
        read_back, = execute([RunRequest(config)], options)
    for swept in (computed, read_back):
        assert swept.extras.predictors is None and swept.extras.separate_models is None
        np.testing.assert_array_equal(swept.extras.block_accuracy, whole.extras.block_accuracy)
        np.testing.assert_array_equal(swept.iterates, whole.iterates)


def test_float32_agrees_with_float64_and_its_reference():
    """The float32 path (the default) stays within 1e-5 relative (max norm) of float64 over 8 rounds
    of 2 steps, for both of MC-PSGD's chains and the predictors, and its kernel within 1e-5 of its
    NumPy reference (direct loops against im2col); the records hold float32 values exactly."""
    single, double = RunConfig(_spec("float32"), _config("mc_psgd")), RunConfig(_spec("float64"), _config("mc_psgd"))
    kernel32, reference32, kernel64 = run(single), run(single, engine="numpy"), run(double)
    assert np.array_equal(kernel32.iterates, kernel32.iterates.astype(np.float32).astype(np.float64))
    for a, b in ((kernel32, kernel64), (kernel32, reference32)):
        assert _relative(a.iterates, b.iterates) <= 1e-5
        assert _relative(a.extras.predictors, b.extras.predictors) <= 1e-5
        assert _relative(a.extras.separate_models, b.extras.separate_models) <= 1e-5
    assert not np.array_equal(kernel32.iterates, kernel64.iterates)


# --------------------------------------------------------------------------------- by-hand cases
@pytest.mark.parametrize("batch", [0, 3])
def test_one_block_one_client_one_step_of_pr_sgd_is_one_sgd_step(batch):
    """M = 1, N = 1, one round of I = 1 step: x_1 = w0 - eta grad F(w0) over the client's images
    (batch 0) or the counter-based minibatch of (seed 5, step 0, client 0); the average of one
    client is its model, and the predictor is that model."""
    spec = _spec(n_blocks=1, clients_per_block=1, labels_per_block=10, n_train=30, n_test=20)
    problem = build_block_cyclic(spec)
    images, labels = problem.combined.client_data(0)
    rows = np.arange(30) if batch == 0 else sample_indices_np(5, 0, problem.combined.client_sizes, batch)[0]
    w0 = problem.combined.initial_model(5)
    _, grad = digits_net().loss_and_gradient(w0, images[rows], labels[rows])
    expected = w0 - 0.3 * grad
    config = PRSGDConfig(rounds=1, sync_interval=1, step_size=StepSize.constant(0.3), batch_size=batch, seeds=(5,))
    np.testing.assert_array_equal(run(RunConfig(spec, config)).iterates[0, -1], expected)
    np.testing.assert_allclose(run(RunConfig(spec, config), engine="numpy").iterates[0, -1], expected, rtol=1e-12,
                               atol=1e-15)
    mm = run(RunConfig(spec, MMPSGDConfig(cycles=1, rounds_per_block=1, local_steps=1, step_size=StepSize.constant(0.3),
                                          batch_size=batch, seeds=(5,))))
    np.testing.assert_array_equal(mm.extras.predictors[0, -1, 0], expected)


def test_one_block_mm_psgd_is_fedavg_on_the_combined_problem():
    """M = 1: Algorithm 1's global model is FedAvg's with weights 1/N on the same minibatch streams,
    bit for bit (the same step primitive, the same float64 average)."""
    spec = _spec("float32", n_blocks=1, labels_per_block=10)
    mm = run(RunConfig(spec, MMPSGDConfig(cycles=1, rounds_per_block=4, local_steps=2, step_size=StepSize.constant(0.1),
                                          batch_size=3, record_rounds=(1, 4), seeds=(0, 1))))
    fedavg = run(RunConfig(spec, FedAvgConfig(2, 4, StepSize.constant(0.1), 3, 1.0, (1, 4), seeds=(0, 1))))
    np.testing.assert_array_equal(mm.iterates, fedavg.iterates)


def test_mc_equals_mm_when_the_chains_coincide():
    """One block, eta = gamma, exact gradients: the y chain restarts from w_bar_1 = y_bar = x_bar and
    takes the x chain's steps, so every loss comparison is a tie (which keeps x_bar) and MC-PSGD's
    predictors are MM-PSGD's bit for bit."""
    spec = _spec(n_blocks=1, labels_per_block=10, n_train=60)
    base = dict(cycles=2, rounds_per_block=2, local_steps=2, step_size=StepSize.constant(0.2), batch_size=0,
                record_rounds=(1, 2, 4))
    mc = run(RunConfig(spec, MCPSGDConfig(**base, block_step_size=StepSize.constant(0.2))))
    mm = run(RunConfig(spec, MMPSGDConfig(**base)))
    assert not mc.extras.selected_separate.any()
    np.testing.assert_array_equal(mc.extras.predictors, mm.extras.predictors)
    np.testing.assert_array_equal(mc.extras.separate_models[:, :, 0], mc.iterates)
    np.testing.assert_array_equal(mc.extras.block_accuracy, mm.extras.block_accuracy)


def test_the_chains_draw_their_own_minibatch_rows():
    """The x chain's rows are the linear kernels' (``sample_indices_np``); the y chain's come from its
    salted key and differ."""
    sizes = np.array([7, 12, 30])
    key_x, key_y = chain_keys_np(4)
    np.testing.assert_array_equal(chain_rows_np(key_x, 9, sizes, 5), sample_indices_np(4, 9, sizes, 5))
    assert not np.array_equal(chain_rows_np(key_y, 9, sizes, 5), chain_rows_np(key_x, 9, sizes, 5))


# ----------------------------------------------------------------------------------- determinism
def test_runs_are_bit_identical_across_repeats_and_executors(on_the_pool: None) -> None:
    config = RunConfig(_spec("float32"), _config("mc_psgd", participants=2, seeds=(0, 1, 2)))
    once = run(config)
    np.testing.assert_array_equal(run(config).extras.predictors, once.extras.predictors)
    (serial,) = execute([RunRequest(config)], SweepOptions(jobs=1, progress=False))
    (pooled,) = execute([RunRequest(config)], SweepOptions(jobs=2, progress=False))
    for result in (serial, pooled):  # a sweep keeps the predictors' accuracies, not the predictors
        np.testing.assert_array_equal(result.iterates, once.iterates)
        np.testing.assert_array_equal(result.extras.selected_separate, once.extras.selected_separate)
        np.testing.assert_array_equal(result.extras.block_accuracy, once.extras.block_accuracy)
    assert not np.array_equal(once.iterates[0], once.iterates[1])


# ------------------------------------------------------------------------------------ bad fields
@pytest.mark.parametrize("params,field", [
    ({"clients_per_block": 0}, "clients_per_block"),
    ({"clients_per_block": 200}, "clients_per_block"),
    ({"labels_per_block": 11}, "labels_per_block"),
    ({"n_blocks": 0}, "n_blocks"),
    ({"dtype": "float16"}, "dtype"),
    ({"network": "lenet5"}, "network"),
    ({"n_train": 5000}, "n_train"),
    ({"n_test": 1, "n_blocks": 5, "labels_per_block": 2}, "n_test"),
])
def test_bad_problem_fields_are_named(params, field):
    with pytest.raises(ProblemError, match=f"^{field}: "):
        build_block_cyclic(_spec(**params))


def test_bad_run_fields_are_named():
    spec = _spec()
    problem = build_block_cyclic(spec)
    with pytest.raises(ConfigError, match="^trace: a CNN run keeps no per-step trace"):
        run(RunConfig(spec, _config("mm_psgd")), engine="numpy", trace=True)
    with pytest.raises(ConfigError, match="^participants: "):
        run(RunConfig(spec, _config("mm_psgd", participants=4)))
    with pytest.raises(ProblemError, match="^n_blocks: parallel restarted SGD runs on one block"):
        run(RunConfig(spec, _config("pr_sgd")))
    with pytest.raises(ProblemError, match="^family: 'image_classification' is not a block-cyclic"):
        run(RunConfig(problem_spec("image_classification", n_clients=2, n_train=40, n_test=10), _config("pr_sgd")))
    with pytest.raises(ProblemError, match="^predictors: expected shape"):
        problem.block_accuracy(np.zeros((3, problem.dim)))
    with pytest.raises(ProblemError, match="^partition: "):
        BlockCyclicImageProblem(problem.combined, 2, 3, build_block_cyclic(_spec(seed=1)).partition)


# ------------------------------------------------------------------------------ the shuffled view
def test_the_shuffled_view_pools_the_same_images_and_fedavg_runs_on_it():
    """Sec. 5's baseline: the same training images dealt to N clients at random (weights n_k / n),
    the same test split; rebuilt from its view spec, and FedAvg runs on it."""
    of = _spec("float32")
    problem = build_block_cyclic(of)
    view = ViewSpec("shuffled", {"shuffle_seed": 2}, of)
    shuffled = build_problem(view)
    assert shuffled.spec == view and shuffled.n_clients == 3
    c = problem.combined
    assert sorted(map(bytes, shuffled.images)) == sorted(map(bytes, c.images))
    np.testing.assert_array_equal(np.sort(shuffled.labels), np.sort(c.labels))
    np.testing.assert_allclose(shuffled.weights, shuffled.client_sizes / shuffled.client_sizes.sum())
    np.testing.assert_array_equal(shuffled.test_images, c.test_images)
    assert max(shuffled.client_sizes) - min(shuffled.client_sizes) <= 1
    result = run(RunConfig(view, FedAvgConfig(2, 2, StepSize.constant(0.1), 3, 1.0, (0, 2), seeds=(0,))))
    assert result.iterates.shape == (1, 2, c.dim)
    with pytest.raises(ProblemError, match="^view: a block_cyclic_images problem has only the shuffled view"):
        build_problem(ViewSpec("block", {"block": 0}, of))
