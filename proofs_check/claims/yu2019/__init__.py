"""The claims of Yu, Yang, Zhu (AAAI 2019, arXiv:1807.06629), "Parallel Restarted SGD with Faster
Convergence and Less Communication": Theorem 1, Corollary 2 and their form on a CNN."""
