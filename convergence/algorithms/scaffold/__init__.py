"""SCAFFOLD (Karimireddy et al., ICML 2020) with full or partial participation: config, the control
variates' steps in the shared local-SGD loop (kernel and NumPy reference), engine. Public names
load lazily: ``from convergence.algorithms.scaffold import ScaffoldConfig``."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__, submod_attrs={"config": ["CONTROL_UPDATES", "ScaffoldConfig"], "engine": ["SCAFFOLD", "ScaffoldEngine"]},
)
