"""The ceilings of Li et al.'s and Yu et al.'s explicit bounds: the largest value the bounded quantity
can take on the run it is checked on (``convergence.Ceiling``).

A bound at or above its ceiling at every record point could not have failed on that run, whatever
the algorithm did: ``convergence.check_upper_bound`` then reports it uninformative
(``Verdict.cannot_fail``) and ``combine_checks`` lists it so, never as a PASS. One rule for every
explicit bound on a gap or a gradient norm in the Li (ICLR 2020) and Yu (AAAI 2019) claims:

* a gap F(w) - F* of a method that provably never increases F has the ceiling F(w_0) - F*. No run
  of these claims is such a method: FedAvg's local steps descend the client objectives F_k, not F, so
  with E > 1 on non-iid data a round can raise F, and a stochastic gradient step (minibatch SGD, any E)
  can raise F too. So every gap bound takes the ball's ceiling instead (``gap_ceiling``): for F
  L-smooth with grad F(w*) = 0,

      F(w) - F* <= (L/2) ||w - w*||^2 <= L R^2 / 2    for every w with ||w - w*|| <= R,

  with R the largest ||w - w*|| over every seed, step and client of the run, w_0 and the global
  models included (the FedAvg kernels track it exactly: ``FedAvgExtras.max_radius_sq``), so every
  model whose gap is recorded lies in that ball; L the smoothness of F itself (L_F <= max_k L_k;
  exact for least squares, a certified upper bound for logistic / softmax, either way at least the
  true constant, so the ceiling is at least the largest possible gap).
* a squared gradient norm ||grad f(x)||^2 at points of the ball ||x - c|| <= R, and any average of
  such values (Yu's (1/t) sum_tau ||grad f(xbar_tau)||^2): grad f is L-Lipschitz, so
  ||grad f(x)|| <= ||grad f(c)|| + L R, and the ceiling is (||grad f(c)|| + L R)^2
  (``gradient_ceiling``; c = x* gives L^2 R^2).

A ceiling larger than the true supremum only lists fewer bounds as uninformative: never a bound that
could fail. A bound beyond the ceiling at some record points only is still counted; the check names
those points (``check_upper_bound``'s ``unfailable_points``).
"""

from __future__ import annotations

from convergence import Ceiling
from problems import check_real

__all__ = ["gap_ceiling", "gradient_ceiling"]


def gap_ceiling(L: float, radius: float, method: str) -> Ceiling:
    """The ceiling L R^2 / 2 of a gap F(w) - F* over the ball B(w*, R) (module docstring): ``L`` the
    smoothness of F, ``radius`` R the largest ||w - w*|| of the run, ``method`` the run in words (why
    F(w_0) - F* is no ceiling for it: it is not a descent method on F).

    Raises:
        ValueError: naming ``L`` or ``radius`` (finite, L > 0, R >= 0).
    """
    L = check_real("L", L, 0.0, strict=True)
    radius = check_real("radius", radius, 0.0)
    value = L * radius**2 / 2
    return Ceiling(value, f"the largest gap F(w) - F* in the ball around w* that holds w_0 and every iterate of "
                          f"every seed is at most L R^2/2 = {value:.4g} (L = {L:.4g} the smoothness of F, R = "
                          f"{radius:.4g}); F(w_0) - F* is no ceiling here: {method} need not decrease F")


def gradient_ceiling(L: float, centre_gradient_norm: float, radius: float, where: str) -> Ceiling:
    """The ceiling (||grad f(c)|| + L R)^2 of ||grad f(x)||^2, and of any average of it, over the ball
    ||x - c|| <= R (module docstring): ``L`` the smoothness of f, ``centre_gradient_norm``
    ||grad f(c)||, ``radius`` R, ``where`` the ball in words (which iterates it holds).

    Raises:
        ValueError: naming ``L``, ``centre_gradient_norm`` or ``radius`` (finite, L > 0, the others >= 0).
    """
    L = check_real("L", L, 0.0, strict=True)
    centre = check_real("centre_gradient_norm", centre_gradient_norm, 0.0)
    radius = check_real("radius", radius, 0.0)
    value = (centre + L * radius) ** 2
    return Ceiling(value, f"||grad f||^2 is at most (||grad f(c)|| + L R)^2 = {value:.4g} on {where} (||grad f(c)|| = "
                          f"{centre:.4g}, L = {L:.4g}, R = {radius:.4g}: grad f is L-Lipschitz), and so is any "
                          "average of it")
