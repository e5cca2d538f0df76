"""Numba's cache of fedbound's kernels follows every change of the guarded packages
(``problems.kernel_cache``): a kernel whose callee's file changed is recompiled, never loaded stale."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from numba.core import caching

from problems import kernel_cache

_RUN = textwrap.dedent(
    """
    import sys
    import numba.core.caching as caching
    from problems import kernel_cache
    if sys.argv[1] == "guarded":
        kernel_cache.guard(("stalepkg",))
        kernel_cache.install_locators(caching)
    from stalepkg.kern import value
    print(value())
    """
)


def _package(root: Path, constant: int) -> None:
    """stalepkg: kern.value() returns consts.VALUE, a constant of another file (frozen at compile)."""
    (root / "stalepkg").mkdir()
    (root / "stalepkg" / "__init__.py").write_text("")
    (root / "stalepkg" / "consts.py").write_text(f"VALUE = {constant}\n")
    (root / "stalepkg" / "kern.py").write_text(
        "from numba import njit\nfrom .consts import VALUE\n\n\n@njit(cache=True)\ndef value():\n    return VALUE\n"
    )


def _value(root: Path, mode: str) -> int:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), str(Path(__file__).parents[1])]),
               NUMBA_CACHE_DIR=str(root / "cache"), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", _RUN, mode], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize("mode", ["plain", "guarded"])
def test_a_changed_callee_file_recompiles_only_when_guarded(tmp_path: Path, mode: str) -> None:
    """Numba alone loads the stale kernel after the constant's file changes (the control: the test
    can see staleness); with the fingerprinted locators the kernel is recompiled and returns 2."""
    _package(tmp_path, 1)
    assert _value(tmp_path, mode) == 1
    (tmp_path / "stalepkg" / "consts.py").write_text("VALUE = 2\n")  # the kernel's own file unchanged
    assert _value(tmp_path, mode) == (1 if mode == "plain" else 2)


def test_the_digest_follows_content_not_file_times(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, 1)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(kernel_cache, "_guarded", ["stalepkg"])
    kernel_cache.kernel_source_digest.cache_clear()
    try:
        first = kernel_cache.kernel_source_digest()
        os.utime(tmp_path / "stalepkg" / "consts.py", (1, 1))
        kernel_cache.kernel_source_digest.cache_clear()
        assert kernel_cache.kernel_source_digest() == first
        (tmp_path / "stalepkg" / "consts.py").write_text("VALUE = 3\n")
        kernel_cache.kernel_source_digest.cache_clear()
        assert kernel_cache.kernel_source_digest() != first
    finally:
        kernel_cache.kernel_source_digest.cache_clear()


def test_fedbound_kernels_take_the_fingerprinted_locator_and_others_numbas() -> None:
    """The hook is in place in this process (installed when Numba loaded): a fedbound kernel's cache
    is stamped with the digest, a function of another module keeps Numba's own locator and stamp."""
    from numba import njit

    from problems.models.cnn.relu import relu_forward

    impl = relu_forward._cache._impl
    assert type(impl.locator).__module__ == kernel_cache.__name__
    assert impl.locator.get_source_stamp()[1] == kernel_cache.kernel_source_digest()

    def outside():
        return 1

    outside.__module__ = "someone_else"
    other = caching.FunctionCache(njit(outside).py_func)
    assert type(other._impl.locator).__module__ == caching.__name__
