"""Type stub of the problems package: its public API. ``__init__.py`` loads these names lazily
(lazy_loader.attach_stub), so importing the package costs nothing until a name is used."""

from ._base import FederatedProblem, LossKind, ProblemError
from .arrays import from_arrays
from .data_folder import data_folder
from .blas_threads import one_blas_thread
from .block_partition import BlockAccuracy, BlockCyclicPartition, block_cyclic_partition, block_test_accuracy
from .block_cyclic_images import BlockCyclicImageProblem, block_cyclic_images
from .block_cyclic import BlockCyclicProblem, block_cyclic_quadratic, block_cyclic_softmax
from .constants import ProblemConstants, problem_constants
from .counterexample import li_counterexample, li_counterexample_matrices
from .digest import canonical_json, file_digest, is_hex_digest, json_digest
from .data_fetch import FETCHABLE, SOURCES, FetchError, FetchedFile, RemoteFile, fetch_dataset
from .families import Family, families, register_family
from .identical import identical_images, identical_quadratic
from .image_classification import CNN_DTYPES, ImageClassificationProblem, image_classification
from .label_blocks import label_block_partition
from .image_data import (
    BUNDLED,
    DEBIAN_FASHION_MNIST,
    IMAGE_DATASETS,
    PUBLISHED_MD5,
    AvailableDataset,
    ImageDataset,
    available_image_datasets,
    image_folders,
    load_images,
    resolve_image_dataset,
)
from .li_images import LI_AUTO_ORDER, LI_DIGITS_PER_DEVICE, LI_IMAGE_DATASETS, LI_TABLE2_SAMPLES, li_images, resolve_li_dataset
from .partition_recipe import RECIPES, PartitionRecipe
from .partition_report import LI_SOFTMAX_L2, PartitionSummary, partition_problem, summarize_partition
from .partitions import DEFAULT_MIN_SIZE, dirichlet_partition, iid_partition, lognormal_partition
from .partitions import powerlaw_partition, shard_partition, sorted_partition
from .optimum import Optimum, OptimumError, check_optimum, exact_optimum, heterogeneity_gamma
from .quadratic import random_quadratic
from .registry import build_block_cyclic, build_problem, check_problem
from .spec import FamilySpec, ProblemSpec, ViewSpec, problem_spec
from .synthetic import synthetic
from .two_curvature import two_curvature_quadratic
from .user_code import CodeReference, is_problem_builder, problem_builder
from .validation import (
    MEMORY_FRACTION,
    available_memory,
    check_int,
    check_ints,
    check_memory,
    check_problem_size,
    check_real,
    format_bytes,
)
