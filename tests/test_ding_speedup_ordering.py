"""ding2020.speedup and ding2020.ordering: nested instances, the tracking statistic, and every
sub-check PASSing on the paper's claim and FAILing on a planted false variant (quick settings).

The claim evaluations share one run store (module fixture), so each planted variant re-reads the
runs of the true claim and only redoes the analysis: the variants change what is claimed, never
what is run (apart from the control, which runs anyway).
"""

from __future__ import annotations

import numpy as np
import pytest

from convergence import Status
from problems import ProblemError, block_cyclic_quadratic, build_block_cyclic, build_problem
from proofs_check import VerifySettings, get_claim
from proofs_check.claims.ding2020.ordering import block_tracking
from proofs_check.claims.ding2020.hypotheses import largest_local_steps
from proofs_check.claims.ding2020.speedup import fixed_T, speedup_parent

evaluate_ordering = get_claim("ding2020.ordering").evaluate  # the mode's plan, parameters by name
evaluate_speedup = get_claim("ding2020.speedup").evaluate
PLAN = get_claim("ding2020.speedup").plan.default
N_GRID, M_GRID = PLAN.N_grid, PLAN.M_grid


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> VerifySettings:
    store = tmp_path_factory.mktemp("ding-speedup-ordering") / "runs.sqlite"
    # 4 seeds: with 2 the gamma upper limit of a bound check cannot certify a skewed mean (bound_checks),
    # so the tracking ratio's PASS needs more
    return VerifySettings(quick=True, seeds=4, jobs=1, progress=False, store=str(store))


def checks(verdict) -> dict[str, str]:
    """Sub-check id -> status."""
    return {c.verdict.claim_id: c.verdict.status.value for c in verdict.checks}


# ----------------------------------------------------------------------------- nested views
def test_nested_view_keeps_the_rows_of_its_clients_and_blocks() -> None:
    parent = block_cyclic_quadratic(n_clients=3, n_blocks=4, dim=2, samples_per_client=5, seed=1)
    view = parent.nested(2, 3)
    assert (view.n_clients, view.n_blocks, view.combined.n_clients) == (2, 3, 6)
    np.testing.assert_array_equal(view.combined.weights, np.full(6, 1 / 6))  # eq. 3, 6: weights 1/(M' N')
    for m in range(3):
        for i in range(2):
            k, k_parent = m * 2 + i, m * 3 + i  # pseudo-client (m, i) in the view and in the parent
            c, p = view.combined, parent.combined
            np.testing.assert_array_equal(c.X[c.offsets[k]:c.offsets[k + 1]], p.X[p.offsets[k_parent]:p.offsets[k_parent + 1]])
            np.testing.assert_array_equal(c.y[c.offsets[k]:c.offsets[k + 1]], p.y[p.offsets[k_parent]:p.offsets[k_parent + 1]])
    # F_m of the view is (1/N') sum_{i < N'} F_m^i of the parent's objectives (eq. 6)
    w = np.array([0.3, -1.2])
    local = parent.combined.local_objectives(w).reshape(4, 3)
    np.testing.assert_allclose(view.block_objectives(w), local[:3, :2].mean(axis=1), rtol=1e-13)
    # the whole problem as a view: the same data
    assert parent.nested(3, 4).combined.fingerprint == parent.combined.fingerprint
    # a view of a view keeps the rows of the view
    assert view.nested(1, 2).combined.fingerprint == parent.nested(1, 2).combined.fingerprint


def test_views_rebuild_from_their_spec() -> None:
    parent = speedup_parent(PLAN)
    view = parent.nested(4, 3)
    rebuilt = build_block_cyclic(view.spec)
    assert rebuilt.spec == view.spec and rebuilt.combined.fingerprint == view.combined.fingerprint
    assert build_problem(view.spec).fingerprint == view.combined.fingerprint
    shuffled = view.shuffled(2)
    assert build_problem(shuffled.spec).fingerprint == shuffled.fingerprint
    # the nested sweeps' smaller instances are views on the rows of the largest one
    assert parent.nested(max(N_GRID), 3).nested(2, 3).combined.fingerprint == parent.nested(2, 3).combined.fingerprint
    assert parent.n_blocks == max(M_GRID) and parent.n_clients == max(N_GRID)


@pytest.mark.parametrize("bad, field", [
    (dict(n_clients=5, n_blocks=2), "n_clients"),
    (dict(n_clients=2, n_blocks=7), "n_blocks"),
    (dict(n_clients=0, n_blocks=2), "n_clients"),
    (dict(n_clients=2, n_blocks=True), "n_blocks"),
])
def test_nested_view_bad_input_names_the_field(bad: dict, field: str) -> None:
    parent = block_cyclic_quadratic(n_clients=3, n_blocks=4, dim=2, samples_per_client=5)
    with pytest.raises(ProblemError, match=f"^{field}:"):
        parent.nested(**bad)
    with pytest.raises(ProblemError, match=f"^{field}:"):
        build_block_cyclic({"view": "nested", **bad, "of": parent.spec.to_json()})


@pytest.mark.parametrize("spec, field", [
    ({"view": "nested", "n_clients": 2, "of": None}, "n_blocks"),
    ({"view": "nested", "n_clients": 2, "n_blocks": 2, "shuffle_seed": 0, "of": None}, "spec"),
    ({"view": "subset", "of": None}, "view"),
    ({"view": "shuffled", "shuffle_seed": 0, "of": None}, "view"),  # a shuffled view is not block-cyclic
])
def test_view_spec_errors_name_the_field(spec: dict, field: str) -> None:
    spec = dict(spec, of=block_cyclic_quadratic(n_clients=2, n_blocks=2, dim=2, samples_per_client=3).spec.to_json())
    with pytest.raises(ProblemError, match=f"^{field}:"):
        build_block_cyclic(spec)


# ----------------------------------------------------------------------------- tracking statistic
def test_tracking_ratio_is_one_for_a_model_that_ignores_the_block_order() -> None:
    # A constant model x: g_{j,m} = g_m at every block end. Over C cycles each block is the current
    # one C times, so sum_j g_(j,b_j) = C sum_m g_m and sum_j gbar_j = C/(M-1) sum_m (sum_k g_k - g_m)
    # = C sum_m g_m: R = 1, and every swing is (1/M) sum_j (gbar_j - g_(j,b_j)) = 0 per cycle.
    g = np.array([0.2, 0.5, 1.1, 0.05])  # M = 4
    gaps = np.broadcast_to(g, (3, 2 * 4, 4))  # 3 seeds, C = 2 cycles
    tracking = block_tracking(gaps, 4)
    np.testing.assert_allclose(tracking.ratio, 1.0, rtol=1e-14)
    np.testing.assert_allclose(tracking.swing, 0.0, atol=1e-15)


def test_tracking_statistics_by_hand() -> None:
    # M = 2, C = 2, one seed: block ends close blocks 0, 1, 0, 1.
    gaps = np.array([[[0.0, 1.0], [2.0, 0.5], [0.1, 1.0], [3.0, 0.0]]])
    tracking = block_tracking(gaps, 2)
    np.testing.assert_allclose(tracking.own, [[0.0, 0.5, 0.1, 0.0]])
    np.testing.assert_allclose(tracking.others, [[1.0, 2.0, 1.0, 3.0]])
    np.testing.assert_allclose(tracking.ratio, [0.6 / 7.0])  # (0 + 0.5 + 0.1 + 0) / (1 + 2 + 1 + 3)
    np.testing.assert_allclose(tracking.swing, [[(1.0 + 1.5) / 2, (0.9 + 3.0) / 2]])


@pytest.mark.parametrize("gaps, n_blocks, field", [
    (np.zeros((2, 6, 3)), 1, "n_blocks"),
    (np.zeros((2, 6, 3)), 2, "gaps"),
    (np.zeros((2, 5, 3)), 3, "gaps"),
    (np.zeros((6, 3)), 3, "gaps"),
    (np.full((1, 3, 3), np.nan), 3, "gaps"),
])
def test_tracking_bad_input_names_the_field(gaps: np.ndarray, n_blocks: int, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        block_tracking(gaps, n_blocks)


# ----------------------------------------------------------------------------- ding2020.ordering
def test_ordering_passes_with_the_tracking_check_and_its_shuffled_control(quick: VerifySettings) -> None:
    result = get_claim("ding2020.ordering").evaluate(quick)
    status = checks(result.verdict)
    assert result.verdict.status is Status.PASS, result.verdict.notes
    assert status == {
        "ding2020.ordering/mm<fedavg": "PASS", "ding2020.ordering/mc<fedavg": "PASS", "ding2020.ordering/mc<=mm": "PASS",
        "ding2020.ordering/tracking": "PASS", "ding2020.ordering/persistence": "PASS",
        "ding2020.ordering/control": "PASS",
    }
    by_id = {c.verdict.claim_id: c.verdict for c in result.verdict.checks}
    assert all(v.p_fail is not None for v in by_id.values())  # every sub-check a test: Holm applies to all six
    assert "eq. 7's uniform average" in result.verdict.notes
    # the headline figures are ratios mean R / (1/2): far below 1 on cyclic data, about 2 (R near 1) on shuffled data
    assert by_id["ding2020.ordering/tracking"].measured < 0.1
    assert 1.5 < by_id["ding2020.ordering/control"].measured < 2.5
    assert [p.name for p in result.plots] == ["ding2020_fedavg_tracking"]


def test_ordering_planted_variants_fail(quick: VerifySettings) -> None:
    # data roles swapped: FedAvg on shuffled data has no block order to follow, so tracking claimed for
    # it must FAIL, and the control claimed on cyclic data (no tracking there) must FAIL too
    swapped = checks(evaluate_ordering(quick, fedavg_data="shuffled").verdict)
    assert swapped["ding2020.ordering/tracking"] == "FAIL" and swapped["ding2020.ordering/control"] == "FAIL"
    # the swing does not double from the first cycle to the last (constant step: it stays about the same)
    doubling = evaluate_ordering(quick, persistence=2.0).verdict
    assert doubling.status is Status.FAIL
    assert {k for k, v in checks(doubling).items() if v == "FAIL"} == {"ding2020.ordering/persistence"}
    # FedAvg's single model beating the block predictors (and MM-PSGD beating MC-PSGD) is false
    reversed_ = checks(evaluate_ordering(quick, reverse_orders=True).verdict)
    assert {k for k, v in reversed_.items() if v == "FAIL"} == {
        "ding2020.ordering/fedavg<mm", "ding2020.ordering/fedavg<mc", "ding2020.ordering/mm<=mc"}
    with pytest.raises(ValueError, match="^fedavg_data:"):
        evaluate_ordering(quick, fedavg_data="iid")
    with pytest.raises(ValueError, match="^persistence:"):
        evaluate_ordering(quick, persistence=float("nan"))
    with pytest.raises(ValueError, match="^reverse_orders:"):
        evaluate_ordering(quick, reverse_orders=1)


# ----------------------------------------------------------------------------- ding2020.speedup
FIXED_T = {"ding2020.speedup/M_fixed_T/mm", "ding2020.speedup/M_fixed_T/mc"}
"""The paper's sentence at fixed T, one sub-check per algorithm: both FAIL on this instance (module docstring)."""


def test_speedup_fails_the_papers_sentence_at_fixed_T_and_passes_the_rest(quick: VerifySettings) -> None:
    """Ding et al. Sec. 4.1: "the performance would not deteriorate as M increases". At fixed T the per-block
    gap grows like M^2 (MM-PSGD) and M^1 (MC-PSGD) on the nested instances, so the sentence FAILs for both
    algorithms and the claim FAILs; the re-posed form at fixed K, the speedup in N and the traffic PASS."""
    verdict = get_claim("ding2020.speedup").evaluate(quick).verdict
    assert verdict.status is Status.FAIL, verdict.notes
    assert checks(verdict) == {"ding2020.speedup/N": "PASS", "ding2020.speedup/M_fixed_T/mm": "FAIL",
                               "ding2020.speedup/M_fixed_T/mc": "FAIL", "ding2020.speedup/M": "PASS",
                               "ding2020.speedup/traffic": "PASS"}
    by_id = {c.verdict.claim_id: c for c in verdict.checks}
    assert by_id["ding2020.speedup/M_fixed_T/mm"].name.startswith("the paper's sentence")
    assert by_id["ding2020.speedup/M"].name.startswith("re-posed")
    assert by_id["ding2020.speedup/M_fixed_T/mm"].verdict.interval[0] > 1.5  # growth like M^2
    assert by_id["ding2020.speedup/M_fixed_T/mc"].verdict.interval[0] > 0.5  # growth like M
    names = {h.name for h in verdict.hypotheses}
    # every point of every sweep carries its theorem's two hypotheses, all met
    assert {f"[N={N}] K > C M N" for N in N_GRID} | {f"[K=1024, M={M}] K > C M N" for M in M_GRID} <= names
    assert {f"[T={fixed_T(M_GRID)}, {a}, M={M}] K > C M N" for a in ("mm", "mc") for M in M_GRID} <= names
    assert len(verdict.hypotheses) == 2 * (len(N_GRID) + 3 * len(M_GRID)) and all(h.met for h in verdict.hypotheses)
    # fixed T in N: T = C M K = 2 * 3 * 2048 at every N; fixed T = 12384 in M; fixed K in M
    assert "T = 12288 " in by_id["ding2020.speedup/N"].verdict.notes
    assert "T = 12384 " in by_id["ding2020.speedup/M_fixed_T/mc"].verdict.notes
    assert "K = 1024 " in by_id["ding2020.speedup/M"].verdict.notes
    assert "the paper's sentence fails" in verdict.notes


def test_speedup_fixed_T_check_passes_a_claim_the_data_support(quick: VerifySettings) -> None:
    """Claimed growth at most M^2.5 at fixed T (threshold 2.75) holds for both algorithms, so the fixed-T
    sub-checks can PASS: their FAIL on the paper's sentence is the data's, not the check's."""
    verdict = evaluate_speedup(quick, m_exponent_fixed_T=2.5).verdict
    assert {k: v for k, v in checks(verdict).items() if k in FIXED_T} == dict.fromkeys(FIXED_T, "PASS")
    assert verdict.status is Status.PASS


def test_fixed_T_runs_every_M_exactly() -> None:
    # M = 2, 3, 4, 6, 8, N = 4, C = 2: T = 12384 is the first multiple of lcm(2M) = 48 from 12288 at which
    # K = T/(2M) = 3096, 2064, 1548, 1032, 774 is a multiple of I_MM = 3 and of I_MC (3 at M = 2, else 2):
    # I_MM = floor(12384^(1/4) / 4^(3/4)) = floor(3.73), I_MC = floor((12384/M)^(1/4) / 4^(3/4))
    T = fixed_T(M_GRID)
    assert T == 12384
    for M in M_GRID:
        K = T // (2 * M)
        assert 2 * M * K == T and K > 2 * M * 4
        assert K % largest_local_steps("mm", 4, M, T) == 0 and K % largest_local_steps("mc", 4, M, T) == 0
    with pytest.raises(ValueError, match="^blocks:"):  # K > C M N never holds below 64 x the floor
        fixed_T((2,), N=1000, floor=1)


@pytest.mark.parametrize("params, failing", [
    ({"n_exponent": -2.0}, "ding2020.speedup/N"),  # the gap would fall like 1/N^2 at fixed T
    ({"m_exponent": -0.5}, "ding2020.speedup/M"),  # the per-block gap would fall like M^-1/2 at fixed K
    ({"traffic_factor": 1.0}, "ding2020.speedup/traffic"),  # MC-PSGD would send M^(1/4) times MM-PSGD's floats
])
def test_speedup_planted_variants_fail(quick: VerifySettings, params: dict, failing: str) -> None:
    verdict = evaluate_speedup(quick, **params).verdict
    assert verdict.status is Status.FAIL
    assert {k for k, v in checks(verdict).items() if v == "FAIL"} == {failing} | FIXED_T  # the finding stays


@pytest.mark.parametrize("params, field", [
    ({"n_exponent": float("inf")}, "n_exponent"), ({"m_exponent": "0"}, "m_exponent"),
    ({"m_exponent_fixed_T": float("nan")}, "m_exponent_fixed_T"),
    ({"traffic_factor": 0.0}, "traffic_factor"),
])
def test_speedup_bad_parameters_name_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        evaluate_speedup(VerifySettings(quick=True, seeds=2, progress=False), **params)
