"""FedAvg / local SGD with full participation or Li et al.'s sampling and aggregation schemes:
config, Numba kernel, NumPy reference path, engine."""
