"""Plot specs: the data of the figures a claim returns, one frozen dataclass per kind of figure.

A claim's evaluator returns its plots as data (``ClaimResult.plots``); the reports layer draws
them (``reports.plots.draw``, dispatching on the spec's class) and never reruns anything. Every
spec validates its fields once, here, when it is built: a bad one is a ValueError naming the
field (``series[0].mean: length 3 != length of x 4``). Numbers are stored as tuples of floats
(NaN and inf allowed: a figure masks what its axes cannot show and says so); ``to_json`` writes
them with null for NaN/inf and ``plot_spec_from_json`` reads any spec back.

Kinds:

* ``RatePlot``: one or more measured series (``RateSeries``: x, mean over seeds, optional
  confidence band lo/hi) on log-log axes, with an optional bound curve at the first series' x,
  fitted power laws (``FittedPowerLaw``: log y = intercept + exponent log x, natural logarithms,
  drawn over the x range it fitted) and an optional claimed rate (``ReferenceRate``: the power
  law y_0 (x / x_0)^exponent through the first series' first point).
* ``BiasPlot``: a measured quantity against x with a lower bound, optionally grouped (e.g. by
  the number E of local steps: ``groups`` one label per point, ``group_name`` "E").
* ``CurvesPlot``: labelled curves (``Curve``: x, y, label) on shared axes, each axis linear or log.

This module imports no numerical library (claims are listed without NumPy).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Union, get_args

if TYPE_CHECKING:
    from convergence.verdict import Verdict

__all__ = [
    "RateSeries", "FittedPowerLaw", "ReferenceRate", "RatePlot", "BiasPlot", "Curve", "CurvesPlot", "PlotSpec",
    "PLOT_SPECS", "plot_spec_from_json", "rate_plot",
]


@dataclass(frozen=True)
class RateSeries:
    """One measured series of a rate plot: ``x`` (P,), ``mean`` (P,) over seeds and the optional
    confidence band ``lo``/``hi`` (P,) each (both or neither); ``label`` names it in the legend."""

    x: tuple[float, ...]
    mean: tuple[float, ...]
    lo: tuple[float, ...] | None = None
    hi: tuple[float, ...] | None = None
    label: str = "measured"

    def __post_init__(self) -> None:
        x = _floats("x", self.x)
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "mean", _floats("mean", self.mean, len(x)))
        if (self.lo is None) != (self.hi is None):
            raise ValueError("lo, hi: give both or neither")
        if self.lo is not None:
            object.__setattr__(self, "lo", _floats("lo", self.lo, len(x)))
            object.__setattr__(self, "hi", _floats("hi", self.hi, len(x)))
        _text("label", self.label, nonempty=True)

    def to_json(self) -> dict[str, Any]:
        return {"x": _json_floats(self.x), "mean": _json_floats(self.mean), "lo": _json_floats(self.lo),
                "hi": _json_floats(self.hi), "label": self.label}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RateSeries:
        return cls(_read_floats(data["x"]), _read_floats(data["mean"]), _read_floats(data.get("lo")),
                   _read_floats(data.get("hi")), data["label"])


@dataclass(frozen=True)
class FittedPowerLaw:
    """A fitted power law log y = intercept + exponent log x (natural logarithms), named ``label``
    in the legend (the figure adds its slope), drawn only over ``x_range`` = (first, last) x that
    entered the fit (``rate_plot``)."""

    exponent: float
    intercept: float
    x_range: tuple[float, float]
    label: str = "fit"

    def __post_init__(self) -> None:
        object.__setattr__(self, "exponent", _number("exponent", self.exponent))
        object.__setattr__(self, "intercept", _number("intercept", self.intercept))
        x_range = _floats("x_range", self.x_range)
        if len(x_range) != 2 or not (all(math.isfinite(v) for v in x_range) and 0 < x_range[0] < x_range[1]):
            raise ValueError(f"x_range: expected (first, last) with 0 < first < last, got {x_range}")
        object.__setattr__(self, "x_range", x_range)
        _text("label", self.label, nonempty=True)

    def to_json(self) -> dict[str, Any]:
        return {"exponent": _json_float(self.exponent), "intercept": _json_float(self.intercept),
                "x_range": list(self.x_range), "label": self.label}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FittedPowerLaw:
        return cls(_read_float(data["exponent"]), _read_float(data["intercept"]), tuple(data["x_range"]),
                   data["label"])


@dataclass(frozen=True)
class ReferenceRate:
    """A claimed rate x^exponent, drawn through the first point of a rate plot's first series."""

    exponent: float
    label: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "exponent", _number("exponent", self.exponent, finite=True))
        _text("label", self.label, nonempty=True)

    def to_json(self) -> dict[str, Any]:
        return {"exponent": self.exponent, "label": self.label}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReferenceRate:
        return cls(data["exponent"], data["label"])


@dataclass(frozen=True)
class _Figure:
    """What every spec has: ``name`` (the file stem of its PNG/SVG), ``title`` and ``caption``;
    ``kind`` tags its JSON form."""

    kind: ClassVar[str]

    name: str
    title: str
    caption: str

    def _check_figure(self) -> None:
        _text("name", self.name, nonempty=True)
        if any(c in self.name for c in '/\\:*?"<>|') or self.name.startswith("."):
            raise ValueError(f"name: {self.name!r} is not a file name (it names the figure's PNG and SVG)")
        _text("title", self.title)
        _text("caption", self.caption)

    def _json_head(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "title": self.title, "caption": self.caption}


@dataclass(frozen=True)
class RatePlot(_Figure):
    """Measured series on log-log axes with an optional bound (at the first series' x, dashed,
    labelled ``bound_label``), fitted power laws (``fits``) and claimed rate (module docstring)."""

    kind: ClassVar[str] = "rate"

    series: tuple[RateSeries, ...]
    xlabel: str
    ylabel: str
    bound: tuple[float, ...] | None = None
    bound_label: str = "theoretical bound"
    fits: tuple[FittedPowerLaw, ...] = ()
    reference: ReferenceRate | None = None

    def __post_init__(self) -> None:
        self._check_figure()
        series = _nonempty_items("series", self.series, RateSeries, "a rate plot needs at least one series")
        object.__setattr__(self, "series", series)
        _axis_labels(self.xlabel, self.ylabel)
        if self.bound is not None:
            object.__setattr__(self, "bound", _floats("bound", self.bound, len(series[0].x)))
        _text("bound_label", self.bound_label, nonempty=True)
        object.__setattr__(self, "fits", _items("fits", self.fits, FittedPowerLaw))
        if self.reference is not None and not isinstance(self.reference, ReferenceRate):
            raise ValueError(f"reference: expected a ReferenceRate or None, got {type(self.reference).__name__}")

    def to_json(self) -> dict[str, Any]:
        return {**self._json_head(), "series": [s.to_json() for s in self.series], "xlabel": self.xlabel,
                "ylabel": self.ylabel, "bound": _json_floats(self.bound), "bound_label": self.bound_label,
                "fits": [f.to_json() for f in self.fits],
                "reference": None if self.reference is None else self.reference.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RatePlot:
        reference = data.get("reference")
        return cls(data["name"], data["title"], data["caption"], tuple(RateSeries.from_json(s) for s in data["series"]),
                   data["xlabel"], data["ylabel"], _read_floats(data.get("bound")), data["bound_label"],
                   tuple(FittedPowerLaw.from_json(f) for f in data["fits"]),
                   None if reference is None else ReferenceRate.from_json(reference))


@dataclass(frozen=True)
class BiasPlot(_Figure):
    """A measured quantity (P,) against ``x`` (P,) with its lower ``bound`` (P,), on log-log axes;
    ``groups`` (P labels, ints or strings) colours the points by group, named ``group_name`` in the
    legend ("E = 2")."""

    kind: ClassVar[str] = "bias"

    x: tuple[float, ...]
    measured: tuple[float, ...]
    bound: tuple[float, ...]
    xlabel: str
    ylabel: str
    groups: tuple[int | str, ...] | None = None
    group_name: str | None = None

    def __post_init__(self) -> None:
        self._check_figure()
        x = _floats("x", self.x)
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "measured", _floats("measured", self.measured, len(x)))
        object.__setattr__(self, "bound", _floats("bound", self.bound, len(x)))
        _axis_labels(self.xlabel, self.ylabel)
        if self.groups is not None:
            groups = _items("groups", self.groups, (int, str))
            if any(isinstance(g, bool) for g in groups):
                raise ValueError("groups: labels are ints or strings, not bools")
            if len(groups) != len(x):
                raise ValueError(f"groups: length {len(groups)} != length of x {len(x)}")
            object.__setattr__(self, "groups", tuple(g if isinstance(g, str) else int(g) for g in groups))
        if self.group_name is not None:
            if self.groups is None:
                raise ValueError("group_name: given without groups")
            _text("group_name", self.group_name, nonempty=True)

    def to_json(self) -> dict[str, Any]:
        return {**self._json_head(), "x": _json_floats(self.x), "measured": _json_floats(self.measured),
                "bound": _json_floats(self.bound), "xlabel": self.xlabel, "ylabel": self.ylabel,
                "groups": None if self.groups is None else list(self.groups), "group_name": self.group_name}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BiasPlot:
        groups = data.get("groups")
        return cls(data["name"], data["title"], data["caption"], _read_floats(data["x"]),
                   _read_floats(data["measured"]), _read_floats(data["bound"]), data["xlabel"], data["ylabel"],
                   None if groups is None else tuple(groups), data.get("group_name"))


@dataclass(frozen=True)
class Curve:
    """One labelled curve: ``x`` (P,) and ``y`` (P,)."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    label: str

    def __post_init__(self) -> None:
        x = _floats("x", self.x)
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", _floats("y", self.y, len(x)))
        _text("label", self.label, nonempty=True)

    def to_json(self) -> dict[str, Any]:
        return {"x": _json_floats(self.x), "y": _json_floats(self.y), "label": self.label}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Curve:
        return cls(_read_floats(data["x"]), _read_floats(data["y"]), data["label"])


@dataclass(frozen=True)
class CurvesPlot(_Figure):
    """Labelled curves on shared axes; ``logx`` / ``logy`` choose log axes; ``compared_at`` the x at
    which a check compares them (drawn as a vertical line), None when it compares no single x."""

    kind: ClassVar[str] = "curves"

    curves: tuple[Curve, ...]
    xlabel: str
    ylabel: str
    logx: bool
    logy: bool
    compared_at: float | None = None

    def __post_init__(self) -> None:
        self._check_figure()
        object.__setattr__(self, "curves", _nonempty_items("curves", self.curves, Curve, "empty"))
        _axis_labels(self.xlabel, self.ylabel)
        for name in ("logx", "logy"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}: must be True or False, got {getattr(self, name)!r}")
        if self.compared_at is not None:
            object.__setattr__(self, "compared_at", _number("compared_at", self.compared_at, finite=True))

    def to_json(self) -> dict[str, Any]:
        return {**self._json_head(), "curves": [c.to_json() for c in self.curves], "xlabel": self.xlabel,
                "ylabel": self.ylabel, "logx": self.logx, "logy": self.logy, "compared_at": self.compared_at}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CurvesPlot:
        return cls(data["name"], data["title"], data["caption"], tuple(Curve.from_json(c) for c in data["curves"]),
                   data["xlabel"], data["ylabel"], data["logx"], data["logy"], data.get("compared_at"))


PlotSpec = Union[RatePlot, BiasPlot, CurvesPlot]
"""The data of one figure: one of the kinds above."""

PLOT_SPECS: tuple[type, ...] = get_args(PlotSpec)
"""Every kind of plot spec, as a tuple of classes (for isinstance checks)."""


def plot_spec_from_json(data: Mapping[str, Any]) -> PlotSpec:
    """The spec ``to_json`` wrote, by its ``kind``; ValueError naming ``kind`` when it is unknown,
    KeyError/ValueError on a malformed object."""
    kinds = {cls.kind: cls for cls in PLOT_SPECS}
    kind = data.get("kind")
    if kind not in kinds:
        raise ValueError(f"kind: expected one of {', '.join(kinds)}, got {kind!r}")
    return kinds[kind].from_json(data)


def rate_plot(
    name: str, title: str, caption: str, verdict: Verdict, *, xlabel: str, ylabel: str,
    bound: Iterable[float] | None = None, label: str = "measured (mean over seeds)",
    reference: ReferenceRate | None = None,
) -> RatePlot:
    """The RatePlot of a rate or bound check (``convergence.check_rate_exponent`` /
    ``check_upper_bound``): its per-point mean and interval (evidence ``x``, ``mean``, ``lo``,
    ``hi``), an optional bound and claimed rate, and the check's fits over the x they fitted: all
    usable points (``exponent``, ``intercept``, ``fit_range``) and the tail it also decides on
    (``tail``: ``exponent``, ``intercept``, ``x_from``..``x_to``; left out when it is the same fit)."""
    ev = verdict.evidence
    fits: list[FittedPowerLaw] = []
    if "exponent" in ev:
        n_used = sum(ev["used"])
        fits.append(FittedPowerLaw(ev["exponent"], ev["intercept"], tuple(ev["fit_range"]),
                                   f"fit over all {n_used} usable points"))
        tail = ev["tail"]
        if tail["n_points"] < n_used:
            fits.append(FittedPowerLaw(tail["exponent"], tail["intercept"], (tail["x_from"], tail["x_to"]),
                                       f"tail fit, last {tail['n_points']} points"))
    series = RateSeries(ev["x"], ev["mean"], ev["lo"], ev["hi"], label)
    return RatePlot(name, title, caption, (series,), xlabel, ylabel,
                    bound=None if bound is None else tuple(bound), fits=tuple(fits), reference=reference)


def _text(name: str, value: Any, *, nonempty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {value!r}")
    if nonempty and not value.strip():
        raise ValueError(f"{name}: empty")
    return value


def _axis_labels(xlabel: Any, ylabel: Any) -> None:
    """A figure's axis labels: strings (empty allowed); ValueError naming ``xlabel`` or ``ylabel``."""
    _text("xlabel", xlabel)
    _text("ylabel", ylabel)


def _number(name: str, value: Any, *, finite: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    if finite and not math.isfinite(value):
        raise ValueError(f"{name}: must be finite, got {value!r}")
    return float(value)


def _floats(name: str, values: Any, length: int | None = None) -> tuple[float, ...]:
    """``values`` (a 1-D sequence or array of real numbers) as a non-empty tuple of floats, of
    ``length`` when given; ValueError naming ``name`` otherwise."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ValueError(f"{name}: expected a sequence of numbers, got {type(values).__name__}")
    out = tuple(_number(f"{name}[{i}]", v) for i, v in enumerate(values))
    if not out:
        raise ValueError(f"{name}: empty")
    if length is not None and len(out) != length:
        raise ValueError(f"{name}: length {len(out)} != length of x {length}")
    return out


def _items(name: str, values: Any, kind: type | tuple[type, ...]) -> tuple[Any, ...]:
    """``values`` as a tuple whose items are all ``kind``; ValueError naming the bad item."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ValueError(f"{name}: expected a sequence, got {type(values).__name__}")
    out = tuple(values)
    for i, item in enumerate(out):
        if not isinstance(item, kind):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise ValueError(f"{name}[{i}]: expected a {names}, got {type(item).__name__}")
    return out


def _nonempty_items(name: str, values: Any, kind: type, empty: str) -> tuple[Any, ...]:
    """``_items`` of at least one item; ValueError "``name``: ``empty``" when there is none."""
    items = _items(name, values, kind)
    if not items:
        raise ValueError(f"{name}: {empty}")
    return items


def _json_float(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _json_floats(values: tuple[float, ...] | None) -> list[float | None] | None:
    return None if values is None else [_json_float(v) for v in values]


def _read_float(value: float | None) -> float:
    return math.nan if value is None else value


def _read_floats(values: Iterable[float | None] | None) -> tuple[float, ...] | None:
    return None if values is None else tuple(_read_float(v) for v in values)
