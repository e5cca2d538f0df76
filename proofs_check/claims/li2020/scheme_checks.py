"""The sub-checks and figures of li2020.schemes (``schemes``, whose module docstring states the claim,
the statistics and what was measured): per instance the paired orderings of final loss, instability U
and rounds to target (``instance_checks``), transformed Scheme II = Scheme II on balanced data
(``equality_check``), and the loss curves per scheme (``scheme_plot``). Li, Huang, Yang, Wang, Zhang,
ICLR 2020, Sec. 5 and App. D.3 (Fig. 1c, 1d, Fig. 4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

import convergence
from convergence.verdict import Verdict

from ...framework.plot_specs import Curve, CurvesPlot

if TYPE_CHECKING:
    from convergence import RunResult
    from problems import FamilySpec


__all__ = ["SchemeInstance", "SchemeChoices", "SCHEME_LABELS", "instability", "EQUALITY_TOLERANCE",
           "TARGET_PROGRESS", "instance_checks", "equality_check", "scheme_plot"]


class SchemeChoices(Protocol):
    """What the sub-checks read of li2020.schemes' plan (``schemes.Li2020SchemesPlan``): the planted
    alternatives, the instance of the equality check, the step and the seeds."""

    scheme_ii_stable: bool
    scheme_ii_lower: bool
    original_faster: bool
    equality_data: str
    eta0: float
    seeds: int


SCHEME_LABELS = {"scheme_i": "Scheme I", "scheme_ii": "Scheme II", "transformed_scheme_ii": "transformed Scheme II",
                 "original": "original scheme"}
"""Participation option -> the paper's name of the scheme."""
EQUALITY_TOLERANCE = 1e-9
"""Largest relative distance between transformed Scheme II and Scheme II on balanced data (N p_k = 1
up to rounding: 100 x 0.01 differs from 1 by an ulp)."""
TARGET_PROGRESS = 0.9
"""The target gap of the speed checks lies this fraction of the way from the initial gap down to the
larger of the two schemes' mean final gaps (a level both reach when they are equally fast)."""
_PAPER = {
    "image balanced": "Fig. 1c: Schemes I and II nearly the same, both better than the original scheme; transformed "
                      "Scheme II coincides with Scheme II.",
    "image unbalanced": "Fig. 1d: Scheme I the best; Scheme II unstable; transformed Scheme II stable but slower; the "
                        "original scheme slower than Scheme I.",
    "synthetic(0,0)": "Fig. 4: Scheme I stable and the best, the original second; Scheme II fluctuates; transformed "
                      "Scheme II converges more slowly than Scheme I.",
}
_PAPER["synthetic(1,1)"] = _PAPER["synthetic(0,0)"]


@dataclass(frozen=True)
class SchemeInstance:
    """One instance of the comparison: its label, problem spec, E, batch size, rounds, balance, and
    for an image instance the pixels m of the source image behind its features (None: the features
    are the data)."""

    label: str
    spec: FamilySpec
    local_steps: int
    batch_size: int
    rounds: int
    balanced: bool
    source_pixels: int | None = None


def instability(loss: np.ndarray) -> np.ndarray:
    """U = sum_r max(F(w_{r+1}) - F(w_r), 0) per seed from losses (S, R + 1): the total rise (S,)."""
    return np.maximum(np.diff(loss, axis=1), 0.0).sum(axis=1)


def _speed_check(name: str, key: str, first: RunResult, second: RunResult, first_label: str,
                 second_label: str) -> tuple[str, Verdict]:
    """The check that ``second`` is slower than ``first``: r_first(eps) < r_second(eps), with eps the gap
    TARGET_PROGRESS of the way from the initial gap to the larger of the two mean final gaps."""
    level = max(first.gap[:, -1].mean(), second.gap[:, -1].mean())
    target = level + (1.0 - TARGET_PROGRESS) * (first.gap[:, 0].mean() - level)
    r_first = convergence.rounds_to_target(first.gap, target, first.rounds)[0].astype(float)
    r_second = convergence.rounds_to_target(second.gap, target, second.rounds)[0].astype(float)
    return name, convergence.check_ordering(key, r_first, r_second, notes=(
        f"rounds to F(w) - F* <= {target:.4g} ({TARGET_PROGRESS:g} of the way from the initial gap to the larger mean "
        f"final gap, {level:.4g}; {int(first.rounds[-1]) + 1} = never): {first_label} {r_first.mean():.1f}, {second_label} {r_second.mean():.1f} (means over seeds)."))


def _reversed_final_check(label: str, key: str, final: dict[str, np.ndarray]) -> tuple[str, Verdict]:
    """The planted reversal of "Scheme I ends below Scheme II" on an unbalanced instance: F(w_R) of Scheme II
    below Scheme I's, paired over seeds (``final``: scheme -> final gaps (S,))."""
    return (f"{label}: Scheme II ends below Scheme I", convergence.check_ordering(
        f"li2020.schemes/{key}/final-II<I", final["scheme_ii"], final["scheme_i"],
        notes=f"final F(w_R) - F*: Scheme II {final['scheme_ii'].mean():.4g}, Scheme I {final['scheme_i'].mean():.4g} "
        "(means over seeds); the reversed ordering, planted."))


def instance_checks(instance: SchemeInstance, run: dict[str, RunResult],
                     plan: SchemeChoices) -> list[tuple[str, Verdict]]:
    """The ordering checks of one instance (module docstring)."""
    label, key = instance.label, instance.label.replace(" ", "-")
    final = {scheme: result.gap[:, -1] for scheme, result in run.items()}
    checks = []
    rivals = ("original",) if instance.balanced else ("scheme_ii", "transformed_scheme_ii", "original")
    for rival in rivals:
        if rival == "scheme_ii" and plan.scheme_ii_lower:
            checks.append(_reversed_final_check(label, key, final))
            continue
        checks.append((f"{label}: Scheme I ends below the {SCHEME_LABELS[rival]}", convergence.check_ordering(
            f"li2020.schemes/{key}/final-I<{rival}", final["scheme_i"], final[rival],
            notes=f"final F(w_R) - F*: Scheme I {final['scheme_i'].mean():.4g}, {SCHEME_LABELS[rival]} "
            f"{final[rival].mean():.4g} (means over seeds).")))
    if instance.balanced:
        checks.append((f"{label}: Scheme II ends below the original scheme", convergence.check_ordering(
            f"li2020.schemes/{key}/final-II<original", final["scheme_ii"], final["original"],
            notes=f"final F(w_R) - F*: Scheme II {final['scheme_ii'].mean():.4g}, original "
            f"{final['original'].mean():.4g}.")))
    else:
        U = {scheme: instability(result.gap) for scheme, result in run.items()}  # F - F*: the same rises as F
        stable, unstable = ("scheme_ii", "scheme_i") if plan.scheme_ii_stable else ("scheme_i", "scheme_ii")
        checks.append((f"{label}: {SCHEME_LABELS[unstable]} less stable than {SCHEME_LABELS[stable]}", convergence.check_ordering(
            f"li2020.schemes/{key}/U-{stable}<{unstable}", U[stable], U[unstable],
            notes=f"instability U = total rise of the loss curve: Scheme I {U['scheme_i'].mean():.4g}, Scheme II "
            f"{U['scheme_ii'].mean():.4g}, transformed II {U['transformed_scheme_ii'].mean():.4g}, original "
            f"{U['original'].mean():.4g} (means over seeds).")))
        checks.append((f"{label}: transformed Scheme II more stable than Scheme II", convergence.check_ordering(
            f"li2020.schemes/{key}/U-tII<II", U["transformed_scheme_ii"], U["scheme_ii"],
            notes=f"instability U: transformed II {U['transformed_scheme_ii'].mean():.4g}, Scheme II "
            f"{U['scheme_ii'].mean():.4g}.")))
        checks.append(_speed_check(f"{label}: transformed Scheme II slower than Scheme I", f"li2020.schemes/{key}/"
                                   "speed-I<tII", run["scheme_i"], run["transformed_scheme_ii"], "Scheme I",
                                   "transformed II"))
    if plan.original_faster:
        checks.append(_speed_check(f"{label}: the original scheme faster than Scheme I", f"li2020.schemes/{key}/"
                                   "speed-original<I", run["original"], run["scheme_i"], "original", "Scheme I"))
    else:
        checks.append(_speed_check(f"{label}: the original scheme slower than Scheme I", f"li2020.schemes/{key}/"
                                   "speed-I<original", run["scheme_i"], run["original"], "Scheme I", "original"))
    return checks


def equality_check(instances: tuple[SchemeInstance, ...], results: dict[tuple[str, str, float], RunResult],
                    plan: SchemeChoices) -> tuple[str, Verdict]:
    """Transformed Scheme II = Scheme II on the plan's ``equality_data`` image instance (module docstring)."""
    label = f"image {plan.equality_data}"
    (instance,) = [i for i in instances if i.label == label]
    plain = results[(label, "scheme_ii", plan.eta0)]
    transformed = results[(label, "transformed_scheme_ii", plan.eta0)]
    distance = np.linalg.norm(transformed.iterates - plain.iterates, axis=2)
    relative = distance / np.maximum(np.linalg.norm(plain.iterates, axis=2), 1e-300)  # (S, P)
    worst = relative.max(axis=0)[None, 1:]  # rounds 1..R (both start at w_0 = 0)
    rounds = plain.rounds[1:].astype(float)
    return (f"{label}: transformed Scheme II equals Scheme II", convergence.check_upper_bound(
        f"li2020.schemes/{label.replace(' ', '-')}/tII=II", rounds, worst, np.full(rounds.size, EQUALITY_TOLERANCE),
        deterministic=True, notes=f"largest relative distance between the two iterates over {plan.seeds} seeds and "
        f"{instance.rounds} rounds: {worst.max():.3g} (tolerance {EQUALITY_TOLERANCE:g}; p_k = 1/N makes N p_k = 1)."))


def scheme_plot(instance: SchemeInstance, run: dict[str, RunResult], F_star: float, eta_best: float, scale: float,
          plan: SchemeChoices) -> CurvesPlot:
    """Global loss F(w_r) vs round per scheme (mean over seeds), the paper's statement in the caption;
    ``scale`` the factor from eta_0 to the step on the features."""
    curves = []
    for scheme, result in run.items():
        eta = eta_best if scheme == "original" else plan.eta0
        curves.append(Curve(result.rounds.astype(float).tolist(), (result.gap.mean(axis=0) + F_star).tolist(),
                            f"{SCHEME_LABELS[scheme]} (eta_0 = {eta:g})"))
    name = instance.label.replace(" ", "_").replace("(", "").replace(")", "").replace(",", "_")
    return CurvesPlot(
        f"li2020_schemes_{name}", f"Sampling and averaging schemes: {instance.label}",
        f"Global loss F(w) after each round, mean over {plan.seeds} seeds; E = {instance.local_steps}, K = "
        f"{plan.participants}, batch {instance.batch_size}, eta_0 / (1 + round)"
        f"{'' if scale == 1.0 else f' (eta_0 per source pixel: x{scale:g} on the features)'}. The paper: "
        f"{_PAPER[instance.label]}",
        curves=tuple(curves), xlabel="round", ylabel=r"$F(w)$", logx=False, logy=False)
