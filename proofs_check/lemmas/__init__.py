"""The papers' lemmas checked along recorded runs: both sides of each inequality at every record
point (Li et al.'s Lemmas 1-5, Yu et al.'s drift bound, Ding et al.'s Lemmas 2-9)."""

import lazy_loader

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
