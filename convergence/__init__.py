"""Algorithms, kernels, runs, rate fits, bounds and checks (public API)."""

import lazy_loader

from problems import compile_once

compile_once.install()  # each cached kernel specialisation compiled once per machine

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
