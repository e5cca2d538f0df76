"""Build the problem a spec describes (``spec.ProblemSpec``), once per process.

``build_problem(spec)`` takes a ``ProblemSpec`` or its JSON (a run store's, a user's: read with
``ProblemSpec.from_json``, which canonicalises it), and returns the problem; ``build_problem(spec)
.spec`` equals the canonical spec. A family spec calls the family's builder (``families``); a
block-cyclic family builds a ``BlockCyclicProblem``: ``build_block_cyclic(spec)`` returns it and
``build_problem(spec)`` its combined problem (F over the M*N pseudo-clients), from one cache. A view
spec derives its problem from the block-cyclic problem its ``of`` builds: ``"nested"``
(``BlockCyclicProblem.nested``, block-cyclic), ``"shuffled"`` (``BlockCyclicProblem.shuffled``) and
``"block"`` (``BlockCyclicProblem.block``), both federated problems; of a ``block_cyclic_images``
problem only ``"shuffled"`` (``BlockCyclicImageProblem.shuffled``, a CNN problem). So runs on a view go through
the sweep layer (which rebuilds problems from their spec in the worker) like runs on a family.

Built problems are cached per process (``functools.lru_cache`` on the spec, which is hashable and
canonical); they are immutable (frozen dataclass, read-only arrays), so sharing them is safe.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from ._base import FederatedProblem, ProblemError
from .block_cyclic import BlockCyclicProblem
from .block_cyclic_images import BlockCyclicImageProblem
from .families import find_family
from .image_classification import ImageClassificationProblem
from .spec import FamilySpec, ProblemSpec, ViewSpec

__all__ = ["build_problem", "build_block_cyclic", "check_problem"]

_CACHE_SIZE = 16  # built problems kept per process (the largest default, synthetic, is ~20 MB)
BLOCK_CYCLIC = (BlockCyclicProblem, BlockCyclicImageProblem)
"""The block-cyclic problems: linear models (``block_cyclic``) and CNNs (``block_cyclic_images``)."""
_FINGERPRINTS: dict[ProblemSpec, str] = {}
"""spec -> fingerprint of the (combined) problem it builds (kept after the problem leaves the cache)."""


def build_problem(spec: ProblemSpec | Mapping[str, Any]) -> FederatedProblem | ImageClassificationProblem:
    """The problem ``spec`` describes (cached per process; a CNN family builds an ImageClassificationProblem).

    For a block-cyclic family (or a nested view) this is ``BlockCyclicProblem.combined``.
    """
    built = _build(_as_spec(spec))
    return built.combined if isinstance(built, BLOCK_CYCLIC) else built


def build_block_cyclic(spec: ProblemSpec | Mapping[str, Any]) -> BlockCyclicProblem | BlockCyclicImageProblem:
    """The BlockCyclicProblem of a block-cyclic family's or a nested view's ``spec``, or the
    BlockCyclicImageProblem of a ``block_cyclic_images`` spec (cached per process)."""
    spec = _as_spec(spec)
    built = _build(spec)
    if not isinstance(built, BLOCK_CYCLIC):
        field, name = ("view", spec.view) if isinstance(spec, ViewSpec) else ("family", spec.family)
        raise ProblemError(f"{field}: {name!r} is not a block-cyclic problem {field}")
    return built


def check_problem(
    problem: Any, spec: ProblemSpec | Mapping[str, Any] | None
) -> FederatedProblem | ImageClassificationProblem:
    """``problem`` if it is the problem ``spec`` describes; ProblemError naming ``problem`` otherwise.

    The problem must record the same spec, and its data must be those the spec builds, compared by
    ``FederatedProblem.fingerprint`` with the fingerprint recorded when this process built that
    spec (built once if it never was). A problem without a spec (made directly, not by a family)
    matches only ``spec = None``, and nothing can be rebuilt to compare its data with.
    """
    if not isinstance(problem, (FederatedProblem, ImageClassificationProblem)):
        raise ProblemError(f"problem: expected a FederatedProblem or ImageClassificationProblem, "
                           f"got {type(problem).__name__}")
    spec = None if spec is None else _as_spec(spec)
    if problem.spec != spec:
        recorded = None if problem.spec is None else problem.spec.canonical_json
        expected = None if spec is None else spec.canonical_json
        raise ProblemError(f"problem: {problem.name!r} has spec {recorded}, not the config's spec {expected}")
    if spec is not None and problem.fingerprint != _fingerprint(spec):
        raise ProblemError(
            f"problem: the data of {problem.name!r} are not those its spec builds "
            f"(fingerprint {problem.fingerprint[:12]}, expected {_fingerprint(spec)[:12]})"
        )
    return problem


def _as_spec(spec: Any) -> ProblemSpec:
    """``spec`` as a ProblemSpec: itself, or the spec of its JSON (ProblemError naming the bad field)."""
    return spec if isinstance(spec, ProblemSpec) else ProblemSpec.from_json(spec)


def _fingerprint(spec: ProblemSpec) -> str:
    """Fingerprint of the (combined) problem ``spec`` builds, building it only if never built."""
    if spec not in _FINGERPRINTS:
        _build(spec)
    return _FINGERPRINTS[spec]


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _build(spec: ProblemSpec) -> FederatedProblem | BlockCyclicProblem | ImageClassificationProblem | BlockCyclicImageProblem:
    """Build (once per process) the problem of a canonical spec."""
    built = _derive(spec) if isinstance(spec, ViewSpec) else _from_family(spec)
    _FINGERPRINTS[spec] = (built.combined if isinstance(built, BLOCK_CYCLIC) else built).fingerprint
    return built


def _derive(spec: ViewSpec) -> FederatedProblem | BlockCyclicProblem | ImageClassificationProblem:
    """The view ``spec`` of the block-cyclic problem ``spec.of`` builds."""
    parent = _build(spec.of)
    if isinstance(parent, BlockCyclicImageProblem) and spec.view == "shuffled":
        return parent.shuffled(spec.params["shuffle_seed"])
    if isinstance(parent, BlockCyclicImageProblem):
        raise ProblemError(f"view: a block_cyclic_images problem has only the shuffled view, got {spec.view!r}")
    if not isinstance(parent, BlockCyclicProblem):
        raise ProblemError(f"of: a {spec.view} view needs a block-cyclic problem, got {parent.name!r}")
    if spec.view == "nested":
        return parent.nested(spec.params["n_clients"], spec.params["n_blocks"])
    if spec.view == "shuffled":
        return parent.shuffled(spec.params["shuffle_seed"])
    if spec.params["block"] >= parent.n_blocks:  # named as the spec names it (BlockCyclicProblem.block says m)
        raise ProblemError(f"block: block index must be < n_blocks = {parent.n_blocks}, got {spec.params['block']}")
    return parent.block(spec.params["block"])


def _from_family(spec: FamilySpec) -> FederatedProblem | BlockCyclicProblem | ImageClassificationProblem | BlockCyclicImageProblem:
    """The problem the family's builder makes from ``spec.params``, carrying ``spec``.

    A builder may return its problem without a spec (a user's builder need not know about specs):
    it gets ``spec``; one that records a spec must record exactly ``spec``.
    """
    family = find_family(spec.family, spec.builder)
    built = family.load()(**spec.params)
    if isinstance(built, BlockCyclicProblem):
        if built.spec is None:
            combined = dataclasses.replace(built.combined, spec=spec)
            built = BlockCyclicProblem(combined, built.n_blocks, built.n_clients, spec)
    elif isinstance(built, BlockCyclicImageProblem):
        if built.spec is None:
            combined = dataclasses.replace(built.combined, spec=spec)
            built = BlockCyclicImageProblem(combined, built.n_blocks, built.n_clients, built.partition, spec)
    elif isinstance(built, (FederatedProblem, ImageClassificationProblem)):
        if built.spec is None:
            built = dataclasses.replace(built, spec=spec)
    else:
        raise ProblemError(
            f"builder: {family.builder} returned a {type(built).__name__}, not a FederatedProblem, BlockCyclicProblem, "
            "ImageClassificationProblem or BlockCyclicImageProblem"
        )
    if built.spec != spec:
        recorded = built.spec.canonical_json if isinstance(built.spec, ProblemSpec) else repr(built.spec)
        raise ProblemError(f"builder: {family.builder} returned a problem with spec {recorded}, not {spec.canonical_json}")
    return built
