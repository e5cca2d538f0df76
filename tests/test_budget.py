"""Absurd requests are refused with an estimate before any work; ordinary ones are not (issue 30).

Every path (verify and claim parameters, run, falsify, and ``convergence.execute``) prices its
work with ``convergence.budget`` from its plan before it builds a config, a grid or a record
array. Each absurd request of the issue is refused within seconds (10 s asked; the imports are
warmed first, the refusal itself takes milliseconds) with one line naming the field and the
estimate, exit status 2, and no output folder made; the shipped plans (quick, default, full), the
default verification as a whole and the README's example experiment are estimated under the
default limit.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from convergence import FedAvgConfig, RunConfig, RunRequest, StepSize, SweepOptions, execute
from convergence.algorithms import algorithm_for
from convergence.budget import (
    DEFAULT_MAX_CPU_HOURS,
    MAX_CPU_HOURS_ENV,
    RUN_SECONDS,
    STEP_SECONDS,
    BudgetError,
    Workload,
    check_workload,
    max_cpu_hours,
    run_workload,
)
from convergence.config import ConfigError
from problems import build_problem, problem_spec
from proofs_check import FALSIFIABLE, falsify, select_claim
from proofs_check.framework.settings import VerifySettings
from proofs_check.experiments import experiment_workload, load_experiment
from proofs_check.falsifier.search import EXAMPLE_SECONDS, falsify_workload
from proofs_check.framework.plan_workloads import check_claim_budget, check_claims_budget, plan_workload
from proofs_check.framework.registry import CLAIMS, default_claims
from reports.cli import main

ROOT = Path(__file__).resolve().parents[1]
REFUSAL_SECONDS = 10.0

EXPERIMENT = """
seeds = {seeds}
record_rounds = {record_rounds}

[problem]
family = "synthetic"
params = {{alpha = 1.0, beta = 1.0, n_clients = 10}}

[algorithm]
name = "fedavg"
{algorithm}
step_size = {{kind = "constant", eta0 = 0.01}}

{grid}

[[checks]]
kind = "rate"
name = "rate"
exponent = -1.0
tolerance = 0.2
"""


def _experiment(folder: Path, *, seeds: str = "4", record_rounds: str = "{log_spaced = 20}", rounds: str = "100",
                algorithm: str | None = None, grid: str = "") -> Path:
    """An experiment file: FedAvg on synthetic(1,1), ``algorithm`` (default: ``rounds``, E = 5, batch 4)."""
    path = folder / "absurd.toml"
    algorithm = f"rounds = {rounds}\nlocal_steps = 5\nbatch_size = 4" if algorithm is None else algorithm
    path.write_text(EXPERIMENT.format(seeds=seeds, record_rounds=record_rounds, algorithm=algorithm, grid=grid),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module", autouse=True)
def warm_imports() -> None:
    """Import what a refusal imports (Numba among it), so that the timed calls time the refusal."""
    check_claim_budget(CLAIMS["li2020.thm1"], {}, VerifySettings())
    falsify_workload(1)


def _refused(argv: list[str], field: str, capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI; assert exit 2 within REFUSAL_SECONDS with one line starting with ``field``."""
    start = time.monotonic()
    status = main(argv)
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2, err
    assert elapsed < REFUSAL_SECONDS, f"refused after {elapsed:.1f} s"
    assert len(err) == 1 and err[0].startswith(f"fedbound: error: {field}: "), err
    return err[0]


@pytest.mark.parametrize("claim, field, words", [
    ("li2020.thm1[seeds=1000000000]", "seeds", "1e+09 runs"),
    # was an internal OverflowError; refused by the parameter's bound (at most 19 digits) before any estimate
    ("li2020.thm1[seeds=" + "1" + "0" * 30 + "]", "seeds", "an integer of 31 digits"),
    ("control.constant-step-rate[rounds=1000000000000]", "rounds", "CPU-hours"),
    ("li2020.thm1[horizon_scale=1e9]", "horizon_scale", "CPU-hours"),
    ("ding2020.table1[cycles=1000000000]", "cycles", "CPU-hours"),
])
def test_absurd_claim_parameters_are_refused_with_the_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], claim: str, field: str, words: str
) -> None:
    out = tmp_path / "report"
    line = _refused(["verify", "--claim", claim, "--out", str(out), "--no-progress"], field, capsys)
    assert words in line and f"claim {claim.split('[')[0]!r}"[:-1] in line
    assert not out.exists()


def test_seeds_from_the_settings_are_named_as_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(["verify", "--claim", "yu2019.thm1", "--seeds", "1000000", "--out", str(tmp_path / "r"),
                     "--no-progress"], "--seeds", capsys)
    assert "claim 'yu2019.thm1' would take about" in line


@pytest.mark.parametrize("fields, field", [
    (dict(rounds="1000000000000"), "algorithm.rounds"),
    (dict(rounds='"ceil(kappa * 1e12)"'), "algorithm.rounds"),
    (dict(algorithm="batch_size = 4", grid="[grid]\nlocal_steps = [" + ", ".join(map(str, range(1, 1001))) + "]\n"
          "rounds = [" + ", ".join(map(str, range(1, 1001))) + "]"), "grid"),
    (dict(record_rounds="{log_spaced = 1000000000}"), "record_rounds.log_spaced"),
    (dict(seeds="1000000000"), "seeds"),
])
def test_absurd_experiment_files_are_refused_before_anything_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fields: dict[str, str], field: str
) -> None:
    path = _experiment(tmp_path, **fields)
    out = tmp_path / "report"
    _refused(["run", str(path), "--out", str(out), "--no-progress"], field, capsys)
    assert not out.exists()


def test_a_falsify_budget_of_a_billion_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(["falsify", "li2020.lemma3", "--budget", "1000000000"], "budget", capsys)
    assert "1e+09 runs" in line
    assert falsify_workload(10**9).seconds == pytest.approx((10**9 + 200) * EXAMPLE_SECONDS)
    with pytest.raises(BudgetError, match="^budget: a search of 'li2020.lemma3' would take"):
        falsify(FALSIFIABLE["li2020.lemma3"], 10**9, 0)


def test_the_limit_is_an_option_and_an_environment_variable(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    claim = CLAIMS["control.constant-step-rate"]
    params = {"rounds": 10**9}  # about 2 CPU-hours by the estimate
    work = check_claim_budget(claim, params, VerifySettings(max_cpu_hours=3.0))
    assert 1.0 < work.seconds / 3600 < 3.0
    with pytest.raises(BudgetError, match=r"^rounds: .* over the limit of 1 CPU-hours"):
        check_claim_budget(claim, params, VerifySettings(max_cpu_hours=1.0))
    monkeypatch.setenv(MAX_CPU_HOURS_ENV, "0.5")
    assert max_cpu_hours() == 0.5 and max_cpu_hours(7) == 7.0
    with pytest.raises(BudgetError, match="over the limit of 0.5 CPU-hours"):
        check_claim_budget(claim, params, VerifySettings())
    monkeypatch.setenv(MAX_CPU_HOURS_ENV, "lots")
    with pytest.raises(ConfigError, match=f"^{MAX_CPU_HOURS_ENV}: expected a number of CPU-hours > 0, got 'lots'"):
        max_cpu_hours()
    monkeypatch.delenv(MAX_CPU_HOURS_ENV)
    assert max_cpu_hours() == DEFAULT_MAX_CPU_HOURS
    with pytest.raises(SystemExit):  # argparse: exit status 2
        main(["falsify", "li2020.lemma3", "--max-cpu-hours", "0"])
    assert "--max-cpu-hours: expected a number > 0, got '0'" in capsys.readouterr().err


def test_check_workload_refuses_exactly_above_the_limit() -> None:
    hour = Workload(runs=1, seconds=3600.0)
    check_workload(hour, "one hour", "x", limit_hours=1.0)
    with pytest.raises(BudgetError, match=r"^x: one hour would take about 1 CPU-hours .* over the limit of 0.999"):
        check_workload(hour, "one hour", "x", limit_hours=0.999)
    with pytest.raises(BudgetError, match=r"^x: .* more than 50% of the .* of memory available"):
        check_workload(Workload(memory_bytes=math.inf), "infinite memory", "x")
    with pytest.raises(BudgetError, match=r"^rounds: "):  # no field given: the largest driver
        check_workload(Workload(seconds=math.inf, drivers=(("seeds", 4.0), ("rounds", 1e12))), "it")


def test_engine_counts_are_the_configs_client_steps() -> None:
    """Closed forms: FedAvg takes seeds x rounds x E steps on K clients; MC-PSGD runs two chains."""
    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    problem = build_problem(spec)
    full = FedAvgConfig(5, 10, StepSize.constant(0.05), 0, 1.0, (10,), (0, 1))
    work = algorithm_for(full).workload(problem, full, "numba", False, False)
    assert work.runs == 2 and work.client_steps == 2 * 10 * 5 * 5
    assert dict(work.drivers)["rounds"] == 10 and dict(work.drivers)["seeds"] == 2
    sampled = FedAvgConfig(5, 10, StepSize.constant(0.05), 0, 1.0, (10,), (0, 1), participation="scheme_i",
                           participants=2)
    assert algorithm_for(sampled).workload(problem, sampled, "numba", False, False).client_steps == 2 * 10 * 5 * 2
    bare = run_workload(seeds=3, rounds=7, steps_per_round=2, clients=4, rows=0, flops_per_row=0, records=0)
    assert bare.client_steps == 3 * 7 * 2 * 4
    assert bare.seconds == pytest.approx(3 * RUN_SECONDS + 168 * STEP_SECONDS)
    huge = run_workload(seeds=10**400, rounds=1, steps_per_round=1, clients=1, rows=1, flops_per_row=1)
    assert huge.runs == math.inf  # beyond float range: priced as +inf, never an OverflowError


def test_execute_refuses_an_absurd_sweep_before_it_runs() -> None:
    spec = problem_spec("li_counterexample", N=5, p=4, mu=2e-4)
    config = RunConfig(spec, FedAvgConfig(5, 10**12, StepSize.constant(0.05), 0, 1.0, (10**12,), (0,)))
    start = time.monotonic()
    with pytest.raises(BudgetError, match=r"^rounds: the sweep 'runs' would take about .* CPU-hours"):
        execute([RunRequest(config)], SweepOptions(progress=False))
    assert time.monotonic() - start < REFUSAL_SECONDS


@pytest.mark.parametrize("mode", ["quick", "default", "full"])
def test_every_shipped_plan_is_estimated_under_the_default_limit(mode: str) -> None:
    """Not so pessimistic that it blocks real work: each claim alone and the default claims together."""
    settings = VerifySettings(quick=mode == "quick", full=mode == "full")
    total = 0.0
    for claim in CLAIMS.values():
        work = check_claim_budget(claim, {}, settings)
        assert work == plan_workload(claim.plan_for(settings, {}))
        total += work.seconds
    check_claims_budget([select_claim(claim) for claim in default_claims()], settings)
    assert total < DEFAULT_MAX_CPU_HOURS * 3600 / 2


def test_the_readme_example_experiment_is_estimated_under_the_limit() -> None:
    work = experiment_workload(load_experiment(ROOT / "examples" / "fedavg_rate.toml"))
    # 2 cells x 16 seeds; rounds 4000 x E (1 or 5) on 10 clients: 4000 x 6 x 10 x 16 client-steps
    assert work.runs == 32 and work.client_steps == 4000 * 6 * 10 * 16
    assert work.seconds < 60


def test_a_large_grid_is_priced_from_its_shape_without_enumerating_it(tmp_path: Path) -> None:
    values = ", ".join(map(str, range(1, 1001)))
    path = _experiment(tmp_path, algorithm="batch_size = 4",
                       grid=f"[grid]\nlocal_steps = [{values}]\nrounds = [{values}]")
    start = time.monotonic()
    work = experiment_workload(load_experiment(path))
    assert time.monotonic() - start < REFUSAL_SECONDS
    # sum over the cells of 4 seeds x rounds x E x 10 clients = 4 x 10 x (sum of 1..1000)^2, sampled: within 20%
    exact = 4 * 10 * (1000 * 1001 / 2) ** 2
    assert work.runs == 4 * 10**6 and abs(work.client_steps / exact - 1) < 0.2
