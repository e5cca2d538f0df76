"""Resource bounds: worker counts, memory estimates, orphaned workers and unreachable schedulers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from convergence import (
    ConfigError, FedAvgConfig, RunConfig, StepSize, check_jobs, check_scheduler, check_sweep_memory, run,
)
from problems import ProblemError, available_memory, problem_spec

_DRIVER = textwrap.dedent(
    """
    import os, sys, time
    import numpy as np
    from convergence import SweepOptions, SweepTask, run_sweep

    def sleeper(i, folder):
        open(os.path.join(folder, f"worker-{os.getpid()}"), "w").close()
        time.sleep(60)
        return {"i": np.array(i)}

    if __name__ == "__main__":
        tasks = [SweepTask(f"k{i}", sleeper, (i, sys.argv[1]), {"i": i}) for i in range(4)]
        run_sweep(tasks, SweepOptions(executor="process", jobs=2, progress=False))
    """
)


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads process states from /proc")
def test_killed_driver_leaves_no_workers(tmp_path: Path) -> None:
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    root = Path(__file__).resolve().parents[1]
    driver = subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=root,
                              env={**os.environ, "PYTHONPATH": str(root)})
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("worker-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = [int(path.name.split("-")[1]) for path in tmp_path.glob("worker-*")]
        assert len(workers) == 2, "the pool never started its two workers"
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = [pid for pid in workers if _alive(pid)]
    for pid in survivors:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert not survivors, f"workers {survivors} outlived the killed driver"


def test_jobs_above_cores_warn_and_are_capped() -> None:
    cores = os.cpu_count() or 1
    with pytest.warns(RuntimeWarning, match="--jobs"):
        assert check_jobs(cores + 1, name="--jobs") == cores
    assert check_jobs(cores + 1, force=True) == cores + 1
    with pytest.raises(ConfigError, match="^jobs"):
        check_jobs(1.5)


@pytest.mark.parametrize("address", ["nonsense", "", "foo://host:1", "tcp://host:0", "tcp://:8786", "tcp://h:x", 5])
def test_malformed_scheduler_address_names_the_option(address: object) -> None:
    with pytest.raises(ConfigError, match="^--scheduler"):
        check_scheduler(address, name="--scheduler")


def test_unreachable_scheduler_fails_fast() -> None:
    start = time.monotonic()
    with pytest.raises(ConfigError, match="^scheduler: no Dask scheduler reachable"):
        check_scheduler("tcp://127.0.0.1:1")
    assert time.monotonic() - start < 10


def test_cli_bad_scheduler_is_one_line(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from reports.cli import main; sys.exit(main(sys.argv[1:]))", "verify", "--claim", "control.constant-step-rate", "--out",
         str(tmp_path), "--scheduler", "nonsense"],
        cwd=root, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fedbound: error: --scheduler:"), done.stderr


def test_huge_sizes_are_refused_naming_the_field() -> None:
    from problems import build_problem

    with pytest.raises(ProblemError, match="n_clients"):
        build_problem(problem_spec("synthetic", n_clients=10**9))
    with pytest.raises(ProblemError, match="dim"):
        build_problem(problem_spec("random_quadratic", dim=10**5, samples_per_client=10**5))
    spec = problem_spec("li_counterexample")
    with pytest.raises(ConfigError, match="batch_size"):
        run(RunConfig(spec, FedAvgConfig(2, 2, StepSize.constant(0.01), batch_size=10**9)))


def test_seed_count_is_bounded_by_memory() -> None:
    check_sweep_memory(1000, 0, name="--seeds")
    with pytest.raises(ConfigError, match="^--seeds: .* would need about"):
        check_sweep_memory(available_memory(), 0, name="--seeds")
