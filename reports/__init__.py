"""Plots, HTML / Markdown / JSON rendering and the command line (public API)."""

import lazy_loader

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
