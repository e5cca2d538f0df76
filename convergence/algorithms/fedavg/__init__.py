"""FedAvg / local SGD with full participation: config, Numba kernel, NumPy reference path, engine."""
