"""Seed counts that claims of several sources share (each claim's own minimum lives beside it)."""

__all__ = ["SPEEDUP_SEEDS"]

SPEEDUP_SEEDS = 8
"""At least this many seeds for yu2019.cor2 and ding2020.speedup, whose exponents lie 0.05-0.2 inside
their thresholds: with 4 seeds the rate intervals (Student t on 3 df with the jackknife over seeds,
``convergence.rates``) straddle them (yu2019.cor2 about -0.50 +- 0.07 against -0.45, ding2020.speedup's
M sweep 0.04 +- 0.22 against 0.25); with 8 every one lies inside."""
