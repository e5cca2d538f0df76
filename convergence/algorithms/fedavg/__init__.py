"""FedAvg / local SGD with full participation or Li et al.'s sampling and aggregation schemes:
config, engine (the shared local-SGD loop, ``local_sgd``), CNN kernel, traces. Its public names
(what another algorithm may build on) load lazily; the modules are its internals."""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={"config": ["FedAvgConfig"], "engine": ["FEDAVG", "FedAvgEngine", "FedAvgExtras", "FedAvgPlan", "FedAvgSeed"]},
)
