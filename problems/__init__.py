"""Federated problem families, their constants and exact optima (the first layer of fedbound).

Public API (everything else is private):

* the problem model: ``FederatedProblem``, ``LossKind``, ``ProblemError``;
* families: ``li_counterexample`` (Li et al. 2020, Appendix C) and ``li_counterexample_matrices``,
  ``random_quadratic``, ``synthetic`` (Li et al. 2020, Appendix D / FedProx),
  ``two_curvature_quadratic`` (stiff and soft clients pulling apart: the largest drift bias);
* block-cyclic data (Ding et al. 2020): ``BlockCyclicProblem``, ``block_cyclic_quadratic``,
  ``block_cyclic_softmax``, ``label_block_partition``; Sec. 5's partition of labelled (image) data,
  ``block_cyclic_partition`` -> ``BlockCyclicPartition`` (blocks, clients fetched in sequence,
  test-set blocks), and its metric ``block_test_accuracy`` -> ``BlockAccuracy``;
* specs (``spec``): ``ProblemSpec`` (immutable, owning its canonical JSON: ``to_json``, ``from_json``,
  ``digest``), ``FamilySpec`` (a family and its parameters; ``problem_spec(family, **params)``) and
  ``ViewSpec`` (a nested / shuffled / block view of a block-cyclic problem);
* families (``families``): ``families()``, ``register_family(name, builder)`` (a user's own), ``Family``;
  a user's builder declares itself with ``@problem_builder`` (``user_code``: ``is_problem_builder``, and
  ``CodeReference``, code named ``FILE.py:NAME`` or ``MODULE:NAME``, checked before it is imported);
* a user's arrays: ``from_arrays(X, y, client_of_row, loss=..., l2=...)`` and ``data_folder()``;
* image data, offline (``image_data``): ``load_images(name, split, data_dir)`` -> ``ImageDataset``
  (MNIST / Fashion-MNIST IDX files, CIFAR-10 python batches, checked against ``PUBLISHED_MD5``, or
  scikit-learn's bundled 8x8 digits), ``available_image_datasets``, ``image_folders``,
  ``resolve_image_dataset`` ("auto": the first data set of an order present here);
* downloads (``data_fetch``): ``fetch_dataset(name, data_dir)`` (``SOURCES``: the published URLs and
  digests, ``FETCHABLE``) -> ``FetchedFile`` per file, ``FetchError``, ``RemoteFile``;
* partitions (``partitions``): ``shard_partition``, ``sorted_partition``, ``dirichlet_partition``, ``powerlaw_partition``,
  ``lognormal_partition``, ``iid_partition`` (labels, N, seed -> client_of_row), the typed
  ``PartitionRecipe`` (``RECIPES``), and ``summarize_partition`` -> ``PartitionSummary``,
  ``partition_problem`` (Li et al.'s softmax, ``LI_SOFTMAX_L2``);
* digests (``digest``), one way for every layer: ``canonical_json`` and ``json_digest`` (SHA-256 of
  it: spec digests, run ids), ``file_digest(path, algorithm)`` (streamed) and ``is_hex_digest``;
* the registry: ``build_problem(spec)``, ``build_block_cyclic(spec)``;
* constants: ``ProblemConstants``, ``problem_constants``;
* optima: ``Optimum``, ``OptimumError``, ``exact_optimum``, ``heterogeneity_gamma``, ``check_optimum``;
* the registry's ``check_problem(problem, spec)`` (does a problem belong to a spec?);
* BLAS on one thread around a call, through one cached controller (every layer's kernels and
  dense algebra): ``one_blas_thread``;
* validation shared by every layer: ``check_int``, ``check_ints``, ``check_real``, ``check_memory``, ``check_problem_size``,
  ``available_memory``, ``format_bytes``, ``MEMORY_FRACTION``.
"""

import lazy_loader

from . import numba_setup

numba_setup.install()  # kernels compiled once per machine, cached with the sources' digest

# The public names are those imported in __init__.pyi; each submodule is imported on first use.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
