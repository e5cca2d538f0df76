"""Experiment files (TOML, ``fedbound run``): read and checked (``file``, ``fields``, ``names``,
``expression``, ``algorithm``, ``checks``), priced (``workload``), compiled into a claim
(``compile``) whose evaluator runs the grid and the checks (``verdicts``). Public API."""

import lazy_loader

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
