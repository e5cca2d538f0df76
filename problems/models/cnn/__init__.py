"""Convolutional networks behind the model oracle: layers (conv2d, 2x2 max-pool, ReLU, tanh, dense,
softmax cross-entropy) with forward and backward passes in Numba and a NumPy reference each,
networks over one flat parameter vector (``layout``), PyTorch's default initialisation from a
counter-based generator (`fedbound bench` times the step: ``convergence.bench_cnn``). Names load lazily (``__init__.pyi``)."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
