"""Exact worst cases of FedAvg (and FedProx) by performance estimation (PEPit): the clients' symmetric program,
the N-client program of unequal client weights, their SDP, the solved worst case with the solver's accuracy,
PEPit's direct program that checks them, the client drift's N-client program, and MM-PSGD's block-cyclic
program (``block_cyclic``)."""

import lazy_loader

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
