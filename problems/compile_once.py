"""Each cached kernel specialisation compiled once per machine: an inter-process compile lock.

fedbound's processes (the ``verify`` driver, its claim workers and run workers, Dask workers on one
machine) share one Numba cache directory, but Numba looks into that cache only once, before it
compiles: two processes that need the same new specialisation at once both compile it (a cold
default ``fedbound verify`` spent 46-52 s of its ~187 s of compile CPU that way, e.g. the float32
block-cyclic network kernel in two processes at once). Numba has no option for this.

The mechanism: before a cached (``cache=True``) kernel of a guarded package (``FEDBOUND_PACKAGES``,
and any added with ``guard(packages)``) compiles a specialisation it does not hold in memory,
the process takes an exclusive ``fcntl.flock`` on a lock file for (function, argument types,
return type) in that function's cache directory (``NUMBA_CACHE_DIR``'s subfolder, or Numba's own
choice without it: the ``__pycache__`` beside the source, git-ignored, where its index and data files
already go), and only then runs Numba's compile, which first loads from the cache what another
process saved meanwhile (no compile, no ``numba:compile`` event) and otherwise compiles and saves
before the lock is released. Lock files (``<function>.<hash>.lock``, empty or one line naming the
holder) stay in the cache directory: removing a file that another process may be waiting on would
let two processes hold "the" lock. A kernel with caching off (a ``NullCache``) and every function
outside the guarded packages compile exactly as before, without a lock or a file.

Deadlock. Numba compiles a callee while typing its caller, so the locks one process holds are the
chain of specialisations it is compiling, each calling the next. Taking every lock under Numba's
``global_compiler_lock`` (a re-entrant per-process lock that every compile holds anyway) keeps one
chain per process and orders the two locks the same way in every thread. A process that holds no
lock (its outermost guarded compile) waits for its lock as long as it takes: it holds nothing anyone
can wait for. A nested compile (its process holds the chain above it) could close a cycle only
through mutual recursion between cached specialisations (P1 holds f and needs g, P2 holds g and
needs f). fedbound's kernels have none, but the rule does not rely on that: each lock file names
its holder's chain age (the time its outermost lock was taken, and its pid) and whether that chain
is waiting. A nested compile waits for a younger holder, or an older one that is not waiting itself;
it goes ahead without the lock (what Numba does anyway) when the holder is older and waiting. In a
cycle of waiting chains, the chain waiting for the cycle's oldest member finds an older holder that
waits, within one poll (20 ms), and goes ahead: no deadlock lasts, and a duplicate compile happens
only then. The same specialisation met again inside its own chain is not locked twice. (Numba 0.68.1
cannot load cached mutually recursive kernels at all: the second process segfaults, lock or not; the
test of this rule takes the locks directly.)

Reliance on Numba's internals (numba 0.68; checked by ``tests/test_compile_once.py``):
``Dispatcher.compile(self, sig)`` is the one entry of every compile of a ``@njit`` dispatcher (calls,
callers' typing, explicit signatures) and itself does, in order, the in-memory lookup
(``self.overloads``), the cache lookup (``self._cache.load_overload``, which rereads the index
file), the ``numba:compile`` event, the compile and ``self._cache.save_overload``;
``Dispatcher._cache`` is a ``NullCache`` unless caching is on, and the cache's ``cache_path`` is
the folder of its index. The patch wraps ``Dispatcher.compile`` once (the original is kept as
``__wrapped__``) when Numba loads (``problems.numba_setup``, installed when ``problems`` or
``convergence`` is imported).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: no flock, so ``patch`` leaves Numba as it is
    fcntl = None  # type: ignore[assignment]

__all__ = ["FEDBOUND_PACKAGES", "guard", "patch"]

FEDBOUND_PACKAGES = frozenset({"problems", "convergence", "proofs_check", "reports"})

_POLL_S = 0.02
_guarded: set[str] = set(FEDBOUND_PACKAGES)
_held: dict[str, int] = {}  # lock key -> its open file, for the chain this process is compiling
_chain_age: list[tuple[int, int]] = []  # (time_ns, pid) when the chain's outermost lock was taken


def guard(packages: tuple[str, ...]) -> None:
    """Guard the cached kernels of ``packages`` (top-level names) too, besides fedbound's."""
    _guarded.update(packages)


def patch(dispatcher_module: ModuleType) -> None:
    """Wrap ``Dispatcher.compile`` of ``dispatcher_module`` (``numba.core.dispatcher``) once; does
    nothing where ``fcntl`` is missing (Windows). Called by ``problems.numba_setup`` when Numba loads."""
    dispatcher = dispatcher_module.Dispatcher
    if fcntl is not None and not hasattr(dispatcher.compile, "__wrapped__"):
        dispatcher.compile = _compile_once(dispatcher.compile)


def _compile_once(original: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    from numba.core.caching import NullCache
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.sigutils import normalize_signature

    def compile(self: Any, sig: Any) -> Any:
        cache = getattr(self, "_cache", None)
        py_func = getattr(self, "py_func", None)
        module = getattr(py_func, "__module__", None) or ""
        if cache is None or isinstance(cache, NullCache) or module.partition(".")[0] not in _guarded:
            return original(self, sig)
        args, return_type = normalize_signature(sig)
        if tuple(args) in self.overloads:
            return original(self, sig)
        with global_compiler_lock, _compile_lock(cache.cache_path, py_func, f"{args} -> {return_type}"):
            return original(self, sig)

    compile.__wrapped__ = original  # type: ignore[attr-defined]
    compile.__doc__ = original.__doc__
    return compile


@contextlib.contextmanager
def _compile_lock(directory: str, py_func: Any, signature: str) -> Iterator[None]:
    """Hold the lock of (py_func, signature) in ``directory`` around the body, or go ahead without
    it where the rules in the module docstring say so (or the folder cannot be written)."""
    code = py_func.__code__
    identity = f"{py_func.__module__}:{py_func.__qualname__}:{code.co_firstlineno}:{signature}"
    key = hashlib.sha256(identity.encode()).hexdigest()[:20]
    if key in _held:
        yield
        return
    name = re.sub(r"[^A-Za-z0-9_.]", "_", py_func.__qualname__)
    try:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(os.path.join(directory, f"{name}.{key}.lock"), os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        if not _acquire(fd):
            yield
            return
        _held[key] = fd
        try:
            yield
        finally:
            del _held[key]
            if not _held:
                _chain_age.clear()
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int) -> bool:
    """Lock ``fd`` and write this chain's state into it; False: a nested compile goes ahead unlocked
    (its holder is older and waiting, the module docstring's rule)."""
    if not _held:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _chain_age[:] = [(time.time_ns(), os.getpid())]
    else:
        _mark(_held.values(), waiting=True)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    holder = _holder(fd)
                    if holder is not None and holder[0] < _chain_age[0] and holder[1]:
                        return False
                    time.sleep(_POLL_S)
        finally:
            _mark(_held.values(), waiting=False)
    _mark([fd], waiting=False)
    return True


def _mark(fds: Iterable[int], waiting: bool) -> None:
    """Write this chain's age and whether it waits into the lock files it holds (fixed width)."""
    ns, pid = _chain_age[0]
    line = f"{ns:020d} {pid:010d} {int(waiting)}\n".encode()
    for fd in fds:
        os.pwrite(fd, line, 0)


def _holder(fd: int) -> tuple[tuple[int, int], bool] | None:
    """The holder's chain age and whether it waits, or None while the lock is taken or given back."""
    fields = os.pread(fd, 64, 0).split()
    if len(fields) != 3 or not all(field.isdigit() for field in fields):
        return None
    return (int(fields[0]), int(fields[1])), fields[2] == b"1"


def _forget_in_child() -> None:
    """A forked child holds none of its parent's locks (flock belongs to the parent's open files)."""
    for fd in _held.values():
        os.close(fd)
    _held.clear()
    _chain_age.clear()


if fcntl is not None:
    os.register_at_fork(after_in_child=_forget_in_child)
