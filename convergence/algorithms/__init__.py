"""The algorithms fedbound runs, one per module or folder, behind one contract (``_base``): a
config, an engine registered for its name (``registry``) with a Numba kernel and a NumPy reference
path. Names load lazily (see ``__init__.pyi``)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
