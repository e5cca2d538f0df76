"""The falsifier: property-based search (hypothesis strategies, a Sobol' design, (1+1)-ES climbs)
for an instance on which an inequality of a paper fails, with the claims it knows."""

import lazy_loader

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
