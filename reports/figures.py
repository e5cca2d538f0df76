"""Draw the PlotSpecs that claims return, as PNG and SVG files beside the report."""

from __future__ import annotations

from pathlib import Path

from proofs_check import PlotSpec

from .plots import plot_bias, plot_curves, plot_rate
from .render import ReportFigure

__all__ = ["draw"]


def draw(spec: PlotSpec, claim_id: str, out_dir: Path) -> ReportFigure:
    """Render ``spec`` to ``out_dir/<name>.png`` (and ``.svg``) and return it as a figure of ``claim_id``."""
    path = Path(out_dir) / f"{spec.name}.png"
    d = spec.data
    if spec.kind == "rate":
        plot_rate(
            path, d["x"], d["mean"], d.get("lo"), d.get("hi"), bound=d.get("bound"),
            fit=tuple(d["fit"]) if d.get("fit") else None,
            reference=tuple(d["reference"]) if d.get("reference") else None, xlabel=d["xlabel"], ylabel=d["ylabel"],
            title=spec.title, label=d.get("label", "measured"),
        )
    elif spec.kind == "bias":
        plot_bias(
            path, d["x"], d["measured"], d["bound"], xlabel=d["xlabel"], ylabel=d["ylabel"], title=spec.title,
            groups=d.get("groups"), group_name="E",
        )
    elif spec.kind == "curves":
        curves = [(c["x"], c["y"], c["label"]) for c in d["curves"]]
        plot_curves(path, curves, logx=d["logx"], logy=d["logy"], xlabel=d["xlabel"], ylabel=d["ylabel"], title=spec.title)
    else:
        raise ValueError(f"kind: unknown plot kind {spec.kind!r} in plot {spec.name!r}")
    return ReportFigure(claim_id, path, spec.caption)
