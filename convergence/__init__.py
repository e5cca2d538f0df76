"""Algorithms, kernels, runs, rate fits, bounds and checks (public API)."""

import lazy_loader

from problems import numba_setup

numba_setup.install()  # kernels compiled once per machine, cached with the sources' digest

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
