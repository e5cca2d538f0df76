"""problems/compile_once.py: processes that need the same new cached specialisation at once compile it
once (the others load it from Numba's cache), with identical results, no deadlock through nested or
mutually recursive kernels, and lock files only in the cache directory.

Each test starts fresh Python processes on one empty ``NUMBA_CACHE_DIR``; they meet at a file barrier
and then call a probe kernel. A ``numba:compile`` listener in each process records every compilation
of a probe function and sleeps 1 s at its start, so that without the lock the processes' compiles
overlap for certain (the second process reaches its cache lookup long before the first has saved).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = '''
import numba
import numpy as np


@numba.njit(cache=True)
def callee(x):
    s = 0.0
    for v in x:
        s += np.sin(v) * v
    return s


@numba.njit(cache=True)
def caller(x):
    return callee(x) + 2.0 * callee(x[::2])


@numba.njit
def uncached(x):
    return np.sum(np.cos(x))
'''

WORKER = '''
import json, os, sys, time
guard, name, barrier, parties = sys.argv[1] == "1", sys.argv[2], sys.argv[3], int(sys.argv[4])
import numba.core.event as ev
from problems import compile_once
compile_once.guard(("probe_kernels",) if guard else ())
compiled = []


class Listener(ev.Listener):
    def on_start(self, event):
        py_func = event.data["dispatcher"].py_func
        if py_func.__module__ == "probe_kernels.k":
            compiled.append(f"{py_func.__name__}{tuple(event.data['args'])}")
            time.sleep(1.0)

    def on_end(self, event):
        pass


ev.register("numba:compile", Listener())
import numpy as np
import probe_kernels.k as k
x = np.linspace(0.0, 3.0, 201)
open(os.path.join(barrier, str(os.getpid())), "w").close()
deadline = time.monotonic() + 60
while len(os.listdir(barrier)) < parties and time.monotonic() < deadline:
    time.sleep(0.005)
value = getattr(k, name)(x)
print(json.dumps({"compiled": compiled, "value": float(value).hex()}))
'''


def _run(tmp_path: Path, names: list[str], guard: bool = True) -> list[dict]:
    """Start one process per name at once, each calling probe kernel ``name``; their reports."""
    src, cache, barrier = tmp_path / "src", tmp_path / "cache", tmp_path / "barrier"
    (src / "probe_kernels").mkdir(parents=True, exist_ok=True)
    (src / "probe_kernels" / "__init__.py").write_text("")
    (src / "probe_kernels" / "k.py").write_text(PROBE)
    barrier.mkdir()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(WORKER), "1" if guard else "0", name,
                               str(barrier), str(len(names))], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for name in names]
    reports = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            proc.kill()
    return reports


def _count(reports: list[dict], name: str) -> int:
    """Compilations of probe function ``name`` (any argument types) in all processes."""
    return sum(entry.split("(")[0] == name for report in reports for entry in report["compiled"])


def _repeated(reports: list[dict]) -> list[str]:
    """Specialisations (function and argument types) compiled more than once over all processes."""
    entries = [entry for report in reports for entry in report["compiled"]]
    return sorted({entry for entry in entries if entries.count(entry) > 1})


def test_two_processes_compile_a_new_specialisation_once(tmp_path: Path) -> None:
    reports = _run(tmp_path, ["caller", "caller"])
    assert _count(reports, "caller") == 1 and _count(reports, "callee") == 2  # C and A layouts
    assert _repeated(reports) == [] and reports[0]["value"] == reports[1]["value"]
    locks = sorted(path.name.split(".")[0] for path in (tmp_path / "cache").rglob("*.lock"))
    assert locks == ["callee", "callee", "caller"]
    assert not list((tmp_path / "src").rglob("*.lock")) and not list(ROOT.glob("**/probe_kernels*"))


def test_without_the_lock_both_processes_compile(tmp_path: Path) -> None:
    reports = _run(tmp_path, ["caller", "caller"], guard=False)
    assert _count(reports, "caller") == 2 and len(_repeated(reports)) == 3
    assert reports[0]["value"] == reports[1]["value"]
    assert not list((tmp_path / "cache").rglob("*.lock"))


def test_a_nested_callee_compiled_alone_elsewhere_no_deadlock(tmp_path: Path) -> None:
    reports = _run(tmp_path, ["caller", "callee", "caller"])
    assert _count(reports, "caller") == 1 and _repeated(reports) == []
    assert reports[0]["value"] == reports[2]["value"]


CHAIN = '''
import os, sys, time
from problems import compile_once


def f():
    pass


def g():
    pass


first, second, folder, barrier = sys.argv[1:]
functions = {"f": f, "g": g}
with compile_once._compile_lock(folder, functions[first], "(int64,)"):
    open(os.path.join(barrier, first), "w").close()
    while len(os.listdir(barrier)) < 2:
        time.sleep(0.005)
    time.sleep(0.3)
    with compile_once._compile_lock(folder, functions[second], "(int64,)"):
        print(len(compile_once._held))
        time.sleep(0.3)
'''


def test_crossed_chains_do_not_deadlock(tmp_path: Path) -> None:
    """Mutual recursion seen from both ends (P1 holds f and needs g, P2 holds g and needs f; Numba
    0.68 cannot load such cached kernels at all, so the locks are taken directly): the younger chain
    goes ahead without its nested lock, the older one waits for it and then takes it; a deadlock
    would time out."""
    (tmp_path / "barrier").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", CHAIN, first, second, str(tmp_path / "locks"),
                               str(tmp_path / "barrier")], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for first, second in (("f", "g"), ("g", "f"))]
    held = []
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            held.append(int(out))
    finally:
        for proc in procs:
            proc.kill()
    assert sorted(held) == [1, 2]


def test_caching_off_takes_no_lock(tmp_path: Path) -> None:
    reports = _run(tmp_path, ["uncached", "uncached"])
    assert _count(reports, "uncached") == 2
    assert not list(tmp_path.rglob("*.lock"))


def test_installed_on_numbas_import_once_and_no_numba_import_before() -> None:
    code = ("import sys, problems, convergence\n"
            "print('numba' in sys.modules)\n"
            "import numba.core.dispatcher as d\n"
            "problems.numba_setup.install()\n"
            "inner = d.Dispatcher.compile.__wrapped__\n"
            "print(inner.__qualname__, hasattr(inner, '__wrapped__'), d.__loader__.__class__.__name__)")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "Dispatcher.compile", "False", "SourceFileLoader"]
