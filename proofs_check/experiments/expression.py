"""Arithmetic expressions of an experiment file, parsed with ``ast`` and evaluated without ``eval``.

An expression is what a user writes for a bound (``"4 * L / (mu**2 * (gamma + T))"``), a rate
check's x-axis (``"gamma + T"``) or a config field that depends on the problem
(``gamma = "max(8 * kappa, local_steps)"``). The grammar is a whitelist; anything else is refused
when the file is read, before any run, with one ExperimentError naming the field and the token:

* numbers (integers and floats, at most the largest float64; not booleans, strings or complex numbers);
* names from the list the field allows (``proofs_check.experiments.names``); a name outside it is
  "unknown name 'Lip'", with the allowed ones listed;
* the binary operators ``+ - * / **`` and the unary ``-`` and ``+``, parentheses;
* calls of ``FUNCTIONS`` with positional arguments: ``sqrt``, ``log`` (natural), ``exp``,
  ``ceil``, ``floor`` (one argument each) and ``min``, ``max`` (two or more, element-wise).

No attribute access, subscripts, comparisons, keyword arguments, lambdas or other calls. Values
are float64 scalars or 1-d arrays (the record steps ``T``, shape (P,)); operations broadcast as in
NumPy, so an expression of ``T`` is a curve over the record points. A result that is not finite
everywhere (a division by zero, the log of a negative number) is an ExperimentError naming the
field, never a NaN passed on to a check.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

import numpy as np

from .fields import ExperimentError

__all__ = ["Expression", "FUNCTIONS", "MAX_LENGTH"]

MAX_LENGTH = 500
"""Longest expression accepted, in characters: room for any theorem's bound, and shallow enough
that parsing and evaluating it cannot exhaust Python's recursion limit."""

Value = float | np.ndarray


def _elementwise(reduce: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., Value]:
    return lambda *args: functools.reduce(reduce, args)


FUNCTIONS: Mapping[str, tuple[Callable[..., Value], int]] = {
    "sqrt": (np.sqrt, 1),
    "log": (np.log, 1),
    "exp": (np.exp, 1),
    "ceil": (np.ceil, 1),
    "floor": (np.floor, 1),
    "min": (_elementwise(np.minimum), 2),
    "max": (_elementwise(np.maximum), 2),
}
"""Function name -> (its NumPy implementation, its number of arguments; min and max take that many or more)."""

_BINARY: Mapping[type, tuple[str, Callable[[Value, Value], Value]]] = {
    ast.Add: ("+", np.add),
    ast.Sub: ("-", np.subtract),
    ast.Mult: ("*", np.multiply),
    ast.Div: ("/", np.divide),
    ast.Pow: ("**", np.power),
}
_UNARY: Mapping[type, Callable[[Value], Value]] = {ast.USub: np.negative, ast.UAdd: np.positive}
_OPERATOR_TEXT = {ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
                  ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.Invert: "~", ast.Not: "not"}


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its ``text``, the ``names`` it reads and its syntax ``tree`` (checked
    against the whitelist of the module docstring)."""

    text: str
    names: frozenset[str]
    tree: ast.expr = field(repr=False, compare=False)

    @classmethod
    def parse(cls, text: object, path: str, allowed: Collection[str]) -> Expression:
        """``text`` parsed and checked; ExperimentError naming ``path`` and the offending token for
        anything outside the grammar, a name not in ``allowed``, or text that is not a non-empty
        string of at most MAX_LENGTH characters."""
        if not isinstance(text, str) or not text.strip():
            raise ExperimentError(f"{path}: expected an expression (a non-empty string), got {text!r}")
        if len(text) > MAX_LENGTH:
            raise ExperimentError(f"{path}: the expression has {len(text)} characters; at most {MAX_LENGTH}")
        try:
            tree = ast.parse(text.strip(), mode="eval").body
        except SyntaxError as exc:
            raise ExperimentError(f"{path}: cannot parse {text!r} ({exc.msg})") from None
        names: set[str] = set()
        _check(tree, path, frozenset(allowed), names)
        return cls(text, frozenset(names), tree)

    def evaluate(self, values: Mapping[str, Value], path: str) -> Value:
        """The value for ``values`` of the names (each a float or a float array; every name of
        ``self.names`` must be given): a float, or an array when a value is one. ExperimentError
        naming ``path`` when the result is not finite everywhere."""
        missing = sorted(self.names - set(values))
        if missing:
            raise ExperimentError(f"{path}: no value for {', '.join(missing)} in {self.text!r}")
        with np.errstate(all="ignore"):
            result = np.asarray(_evaluate(self.tree, values), dtype=np.float64)
        if not np.all(np.isfinite(result)):
            raise ExperimentError(f"{path}: {self.text!r} is not finite (a division by zero, an overflow or the log "
                                  f"or sqrt of a negative number) for {_described(values, self.names)}")
        return float(result) if result.ndim == 0 else result


def _check(node: ast.expr, path: str, allowed: frozenset[str], names: set[str]) -> None:
    """Walk ``node``; ExperimentError naming ``path`` and the token at the first thing outside the grammar."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExperimentError(f"{path}: constant {node.value!r} is not a number")
        if isinstance(node.value, int) and abs(node.value) > sys.float_info.max:
            raise ExperimentError(f"{path}: the integer of {len(str(abs(node.value)))} digits is beyond the largest "
                                  f"float64 ({sys.float_info.max:.4g}), which every value of an expression is")
    elif isinstance(node, ast.Name):
        if node.id not in allowed:
            hint = f" ('{node.id}' is a function: call it)" if node.id in FUNCTIONS else ""
            raise ExperimentError(f"{path}: unknown name '{node.id}'{hint} (allowed here: {', '.join(sorted(allowed))})")
        names.add(node.id)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise ExperimentError(f"{path}: operator '{_OPERATOR_TEXT.get(type(node.op), type(node.op).__name__)}' is "
                                  "not allowed (allowed: + - * / **)")
        _check(node.left, path, allowed, names)
        _check(node.right, path, allowed, names)
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise ExperimentError(f"{path}: operator '{_OPERATOR_TEXT.get(type(node.op), type(node.op).__name__)}' is "
                                  "not allowed (allowed: unary - and +)")
        _check(node.operand, path, allowed, names)
    elif isinstance(node, ast.Call):
        _check_call(node, path, allowed, names)
    elif isinstance(node, ast.Attribute):
        raise ExperimentError(f"{path}: attribute access '{ast.unparse(node)}' is not allowed")
    else:
        raise ExperimentError(f"{path}: '{ast.unparse(node)}' ({type(node).__name__}) is not allowed: an expression has "
                              "numbers, names, + - * / **, parentheses and calls of "
                              f"{', '.join(FUNCTIONS)}")


def _check_call(node: ast.Call, path: str, allowed: frozenset[str], names: set[str]) -> None:
    """A call of a whitelisted function by name, with positional arguments only, in its arity."""
    function = node.func.id if isinstance(node.func, ast.Name) else None
    if function not in FUNCTIONS:
        raise ExperimentError(f"{path}: call of '{ast.unparse(node.func)}' is not allowed (allowed functions: "
                              f"{', '.join(FUNCTIONS)})")
    if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
        raise ExperimentError(f"{path}: '{ast.unparse(node)}' passes keyword or starred arguments; give "
                              f"{function} positional arguments")
    arity = FUNCTIONS[function][1]
    count = len(node.args)
    if (function in ("min", "max") and count < arity) or (function not in ("min", "max") and count != arity):
        wanted = f"at least {arity}" if function in ("min", "max") else str(arity)
        raise ExperimentError(f"{path}: {function} takes {wanted} argument(s), got {count} in '{ast.unparse(node)}'")
    for arg in node.args:
        _check(arg, path, allowed, names)


def _evaluate(node: ast.expr, values: Mapping[str, Value]) -> Value:
    """The value of a checked tree."""
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)][1](_evaluate(node.left, values), _evaluate(node.right, values))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, values))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)  # the only node _check lets through
    return FUNCTIONS[node.func.id][0](*(_evaluate(arg, values) for arg in node.args))


def _described(values: Mapping[str, Value], names: Collection[str]) -> str:
    """``name = value`` for the names an expression reads (arrays by their range)."""
    parts = []
    for name in sorted(names):
        value = np.asarray(values[name])
        parts.append(f"{name} = {float(value):.6g}" if value.ndim == 0
                     else f"{name} in [{float(value.min()):.6g}, {float(value.max()):.6g}]")
    return ", ".join(parts) or "no names"
