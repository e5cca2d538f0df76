"""FedProx (Li, Sahu et al., MLSys 2020) with full participation: config, Numba kernel, NumPy reference path, engine."""
