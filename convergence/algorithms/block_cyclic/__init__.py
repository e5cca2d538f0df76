"""The block-cyclic engine shared by MM-PSGD, MC-PSGD, FedAvg-cyclic and PR-SGD: kernel, reference path, engine."""
