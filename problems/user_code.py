"""Code a user names by text, and what fedbound checks before it runs any of it.

Two places name code: a user problem family's ``builder`` (an experiment file's ``[problem]``
table, the JSON of a family spec read back by a worker or from a run store) and ``fedbound
falsify MODULE:ATTRIBUTE``. Naming code runs it, so a name is taken in one of two forms only:

* ``FILE.py:NAME``: a Python file, loaded by its path (``importlib.util.spec_from_file_location``)
  under a private module name derived from that path (``_fedbound_user_<digest>``), once per
  process. A relative FILE is taken from a folder the caller gives (an experiment file's folder,
  where FILE must lie; falsify's current directory) and recorded as its absolute path, so a
  worker process loads the same file the same way. The file's folder is never put on
  ``sys.path``: nothing else is imported from there (a ``matplotlib.py`` beside an experiment file
  stays unread).
* ``MODULE:NAME``: an installed module, found on ``sys.path`` (fedbound never adds the current
  directory to it). A relative name (``..os``), ``__main__`` and any module of Python's standard
  library (``sys.stdlib_module_names``: ``this`` prints on import, ``pdb:main`` starts a debugger)
  are refused before anything is imported.

A problem builder must declare itself with the decorator ``@problem_builder`` (``problems.
problem_builder``). The declaration is checked twice: before the file or module is imported, its
source is read (not run) and NAME must be a top-level ``def`` decorated ``problem_builder`` (or
``something.problem_builder``), so a file or module whose NAME is not declared is never imported;
after the import, the function must carry the decorator's mark before it is ever called.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .validation import ProblemError

__all__ = ["CodeReference", "is_problem_builder", "load_builder", "loaded_file", "problem_builder"]

F = TypeVar("F", bound=Callable[..., Any])

_MARK = "__fedbound_problem_builder__"
_PRIVATE_PREFIX = "_fedbound_user_"
_MAX_SOURCE_BYTES = 16 * 1024 * 1024
"""Largest source file read for the declaration check (a builder module is kilobytes)."""
_FILES: dict[str, Path] = {}
"""Private module name -> the file it was loaded from (this process)."""


def problem_builder(function: F) -> F:
    """Declare ``function`` a fedbound problem builder (module docstring): a decorator that marks it
    and returns it unchanged. Only a declared function can be registered as a problem family
    (``problems.register_family``) or named as a ``builder`` by an experiment file or a spec."""
    if not inspect.isfunction(function):
        raise ProblemError(f"builder: @problem_builder decorates a function, got {function!r}")
    setattr(function, _MARK, True)
    return function


def is_problem_builder(value: Any) -> bool:
    """Whether ``value`` is a function declared with ``@problem_builder`` (its own mark, not one an
    object invents for any attribute name)."""
    return inspect.isfunction(value) and vars(value).get(_MARK) is True


@dataclass(frozen=True)
class CodeReference:
    """A named piece of code: ``attribute`` of the Python ``file`` (an absolute path) or of the
    installed ``module`` (exactly one of them is set). ``field`` names it in errors."""

    attribute: str
    field: str
    file: Path | None = None
    module: str | None = None

    @classmethod
    def parse(cls, text: Any, field: str, base_dir: str | os.PathLike[str] | None = None,
              *, confine: bool = False) -> CodeReference:
        """``FILE.py:NAME`` or ``MODULE:NAME`` (module docstring), checked without importing
        anything. A relative FILE is taken from ``base_dir`` (refused without one); with ``confine``
        it must lie in ``base_dir`` and be relative. ProblemError naming ``field`` otherwise."""
        if not isinstance(text, str) or ":" not in text:
            raise ProblemError(f"{field}: expected FILE.py:NAME or MODULE:NAME, got {text!r}")
        location, _, attribute = text.rpartition(":")
        if not attribute.isidentifier() or not location.strip():
            raise ProblemError(f"{field}: expected FILE.py:NAME or MODULE:NAME (NAME a Python identifier), "
                               f"got {text!r}")
        if location.endswith(".py"):
            return cls(attribute, field, file=_source_file(location, field, base_dir, confine))
        _check_module_name(location, field)
        return cls(attribute, field, module=location)

    @property
    def text(self) -> str:
        """The reference as a spec records it: ``/absolute/FILE.py:NAME`` or ``MODULE:NAME``."""
        return f"{self.file if self.file is not None else self.module}:{self.attribute}"

    def check_declared(self) -> None:
        """ProblemError naming the field unless the source (read, not run) has ``attribute`` as a
        top-level ``def`` decorated ``problem_builder``: the check made before any import."""
        path = self.file if self.file is not None else _module_source(self.module or "", self.field)
        try:
            if path.stat().st_size > _MAX_SOURCE_BYTES:
                raise ProblemError(f"{self.field}: {str(path)!r} is larger than {_MAX_SOURCE_BYTES} bytes; "
                                   "not read as a builder's source")
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise ProblemError(f"{self.field}: cannot read {str(path)!r} as Python source "
                               f"({type(exc).__name__}: {exc})") from None
        defined = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == self.attribute]
        if defined and any(_is_builder_decorator(decorator) for decorator in defined[-1].decorator_list):
            return  # the last definition is the one the module keeps
        raise ProblemError(f"{self.field}: {self.text} is not declared a problem builder: {str(path)!r} has no "
                           f"top-level function {self.attribute!r} decorated @problems.problem_builder (an "
                           "undeclared function is never imported or called)")

    def load(self) -> Any:
        """Import the file or module (the file under its private name, once per process) and return
        ``attribute``; ProblemError naming the field when it cannot be imported or has no such name."""
        if self.file is not None:
            module = _load_file(self.file, self.field)
        else:
            module = _import(self.module or "", self.field)
        try:
            return getattr(module, self.attribute)
        except AttributeError:
            raise ProblemError(f"{self.field}: {self.text}: the module has no attribute {self.attribute!r}") from None


def load_builder(text: str, base_dir: str | os.PathLike[str] | None = None,
                 field: str = "builder") -> Callable[..., Any]:
    """The declared problem builder ``text`` names (module docstring): its source checked before
    it is imported, its mark checked before it is returned. ProblemError naming ``field`` otherwise."""
    reference = CodeReference.parse(text, field, base_dir)
    reference.check_declared()
    builder = reference.load()
    if not is_problem_builder(builder):
        raise ProblemError(f"{field}: {reference.text} is not declared a problem builder (decorate it with "
                           "@problems.problem_builder)")
    return builder


def loaded_file(module_name: str) -> Path | None:
    """The file a private module of this process was loaded from (None: not one of them)."""
    return _FILES.get(module_name)


def _is_builder_decorator(node: ast.expr) -> bool:
    """``@problem_builder`` or ``@<anything>.problem_builder``."""
    return (isinstance(node, ast.Name) and node.id == "problem_builder") or (
        isinstance(node, ast.Attribute) and node.attr == "problem_builder")


def _source_file(location: str, field: str, base_dir: str | os.PathLike[str] | None, confine: bool) -> Path:
    """The absolute path of FILE, a regular file (a FIFO or a device is refused unopened)."""
    given = Path(location)
    if not given.is_absolute():
        if base_dir is None:
            raise ProblemError(f"{field}: {location!r} is a relative path; a recorded builder names its file by "
                               "its absolute path")
        given = Path(base_dir) / given
    elif confine:
        raise ProblemError(f"{field}: {location!r} is an absolute path; name a file in the experiment file's folder "
                           "by its path relative to that folder")
    path = given.resolve()
    if confine and base_dir is not None and not path.is_relative_to(Path(base_dir).resolve()):
        raise ProblemError(f"{field}: {location!r} lies outside the experiment file's folder {str(base_dir)!r}")
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise ProblemError(f"{field}: cannot read {str(path)!r} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        raise ProblemError(f"{field}: {str(path)!r} is not a regular file")
    return path


def _check_module_name(module: str, field: str) -> None:
    """ProblemError naming ``field`` for a relative name, ``__main__`` or a standard-library module
    (checked on the top-level package, before anything is imported)."""
    if module.startswith("."):
        raise ProblemError(f"{field}: {module!r} is a relative module name; name an installed module, or a file "
                           "as FILE.py:NAME")
    if not all(part.isidentifier() for part in module.split(".")):
        raise ProblemError(f"{field}: {module!r} is not a module name")
    top = module.partition(".")[0]
    if top == "__main__":
        raise ProblemError(f"{field}: __main__ is the running program, not an installed module")
    if top in sys.stdlib_module_names:
        raise ProblemError(f"{field}: {module!r} is a module of Python's standard library, which holds no fedbound "
                           "code; it is not imported")


def _module_source(module: str, field: str) -> Path:
    """The source file of an installed module, found without importing it or its packages."""
    parts = module.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name: nothing is imported
        for i in range(1, len(parts)):
            locations = None if spec is None else spec.submodule_search_locations
            spec = None if not locations else importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]),
                                                                                         list(locations))
    except (ImportError, ValueError) as exc:
        raise ProblemError(f"{field}: cannot find module {module!r} ({exc})") from None
    if spec is None:
        raise ProblemError(f"{field}: no installed module {module!r} (fedbound does not import from the current "
                           "directory: name a file as FILE.py:NAME)")
    origin = spec.origin
    if origin is None or not origin.endswith(".py") or not os.path.isfile(origin):
        raise ProblemError(f"{field}: module {module!r} has no Python source to check ({origin!r})")
    return Path(origin)


def _import(module: str, field: str) -> Any:
    """The installed ``module``, imported; ProblemError naming ``field`` when it is not installed or
    its own code fails."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module or module.startswith(f"{exc.name}."):
            raise ProblemError(f"{field}: no installed module {module!r} (fedbound does not import from the current "
                               "directory: name a file as FILE.py:NAME)") from None
        raise ProblemError(f"{field}: cannot import {module!r} (ModuleNotFoundError: {exc})") from None
    except Exception as exc:  # the module's own code failed: its error, named
        raise ProblemError(f"{field}: cannot import {module!r} ({type(exc).__name__}: {exc})") from None


def _load_file(path: Path, field: str) -> Any:
    """The module of the Python file ``path`` under its private name (loaded once per process)."""
    name = _PRIVATE_PREFIX + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ProblemError(f"{field}: cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the file's own code failed: its error, named
        del sys.modules[name]
        raise ProblemError(f"{field}: running {str(path)!r} failed ({type(exc).__name__}: {exc})") from None
    _FILES[name] = path
    return module
