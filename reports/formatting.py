"""Text of the figures every report format shows: numbers, intervals, hypotheses, tightness.

Numbers have 3 significant digits, in scientific notation below 1e-3 and from 1e4 on
(``format_value(0.000123) == "1.23e-4"``); missing values read ``n/a``. Tightness (DESIGN.md:
upper bounds report measured/bound, "tight" or "upper bound" as PEPit's tests say) is
``tightness (label)`` from a bound check's evidence (``convergence.check_upper_bound`` keeps
``tightness`` and ``tightness_label``), e.g. ``0.347 (upper bound)``.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from convergence.verdict import Tightness, Verdict

__all__ = ["MISSING", "format_value", "format_figure", "format_interval", "format_hypotheses", "format_tightness",
           "claim_tightness"]

MISSING = "n/a"
"""The text of a value that is not there."""


def format_value(value: Any) -> str:
    """Compact text: 3 significant digits, scientific below 1e-3 and from 1e4 on; bools as
    yes/no, enums by value, mappings as ``k=v, ...``, sequences comma-separated, None as n/a."""
    if value is None:
        return MISSING
    if isinstance(value, enum.Enum):
        return format_value(value.value)
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _format_float(float(value))
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={format_value(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple, np.ndarray)):
        return ", ".join(format_value(v) for v in value)
    return str(value)


def format_figure(value: float) -> str:
    """A headline figure as it reads in a sub-check row: ``format_value``, n/a when not finite."""
    return format_value(value) if math.isfinite(value) else MISSING


def _format_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e4:
        return np.format_float_positional(float(f"{x:.3g}"), trim="-")
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def format_interval(interval: tuple[Any, Any] | None, figure: Any = format_value) -> str:
    """``[lo, hi]`` with each end written by ``figure``; n/a without an interval."""
    return MISSING if interval is None else f"[{figure(interval[0])}, {figure(interval[1])}]"


def format_hypotheses(v: Verdict) -> str:
    """E.g. ``yes (3/3)``, ``NO (2/3)``, or ``none declared``."""
    if not v.hypotheses:
        return "none declared"
    met = sum(h.met for h in v.hypotheses)
    return f"{'yes' if v.hypotheses_met else 'NO'} ({met}/{len(v.hypotheses)})"


def format_tightness(tightness: Tightness | None) -> str:
    """``0.347 (upper bound)`` of a bound check (``Verdict.tightness``); "" when there is none."""
    if tightness is None:
        return ""
    return f"{format_value(tightness.ratio)} ({tightness.label})"


def claim_tightness(v: Verdict, compact: bool = False) -> str:
    """The tightness of the claim's headline when it is a bound check; otherwise that of each bound
    sub-check ("name: 0.02 (upper bound); ..."; ``compact``: their range and count); "" when none."""
    own = format_tightness(v.tightness)
    if own:
        return own
    checks = [(c.name, c.verdict) for c in v.checks if c.verdict.tightness is not None]
    if not checks:
        return ""
    if not compact:
        return "; ".join(f"{name}: {format_tightness(check.tightness)}" for name, check in checks)
    ratios = [check.tightness.ratio for _, check in checks]
    labels = ", ".join(dict.fromkeys(check.tightness.label for _, check in checks))
    return f"{len(checks)} bound sub-check(s): {format_value(min(ratios))}..{format_value(max(ratios))} ({labels})"
