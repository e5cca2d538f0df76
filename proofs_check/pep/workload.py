"""The work of solving performance-estimation programs, priced before they are built (``convergence.budget``).

A program of T = E R local steps has Gram blocks of about T + 3 leaves each and about (T + 3)^2
interpolation conditions; Clarabel's iterations cost about T^4 (the dense Newton system of the
semidefinite cones). Measured (CPU seconds of building and solving one program of
``pep.li2020.thm1``, two loaded cores): 0.06 at T = 8, 0.43 at T = 16, 1.7 at T = 24, 7.6 at T = 32;
``SECONDS_PER_STEP4`` prices T^4 below all of them (an estimate is a lower bound, as every plan's is:
``proofs_check.framework.plan_workloads``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from convergence.budget import Workload

__all__ = ["PROGRAM_SECONDS", "SECONDS_PER_STEP4", "programs_workload"]

PROGRAM_SECONDS = 0.01
"""CPU seconds of a program beside its T^4 term (building with PEPit, compiling with cvxpy)."""
SECONDS_PER_STEP4 = 3e-6
"""CPU seconds per T^4 (module docstring: measured 5e-6 to 1.5e-5)."""


def programs_workload(total_steps: Sequence[int], driver: str) -> Workload:
    """The work of one program per entry of ``total_steps`` (its T), ``driver`` naming the plan field that
    sizes it (in a refusal)."""
    from convergence.budget import Workload

    seconds = sum(PROGRAM_SECONDS + SECONDS_PER_STEP4 * float(T) ** 4 for T in total_steps)
    largest = max(total_steps, default=0)
    return Workload(runs=float(len(total_steps)), seconds=seconds).with_drivers((driver, largest))
