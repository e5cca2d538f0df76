"""The constants of the theorems' hypotheses (L, mu, sigma^2, G^2, Gamma, the (G, B) pair, ...)
computed or certified for an instance, and the moments of runs and minibatches they are read from."""

import lazy_loader

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
