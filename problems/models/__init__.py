"""Models behind the model oracle: loss, gradients and Hessian over a flat parameter vector, with
a NumPy path and a Numba path (``kernels``). Each model is written once, in its own module;
algorithms and problems only talk to the oracle. Names load lazily (see ``__init__.pyi``)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
