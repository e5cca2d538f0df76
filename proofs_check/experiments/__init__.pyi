"""Type stub of the experiments package: its public API. ``__init__.py`` loads these names lazily
(lazy_loader.attach_stub), so importing the package costs nothing until a name is used."""

from .compile import ExperimentPlan, compile_experiment, evaluate_experiment
from .expression import Expression
from .fields import ExperimentError
from .file import Experiment, RecordRounds, load_experiment
from .workload import check_experiment_budget, experiment_workload
