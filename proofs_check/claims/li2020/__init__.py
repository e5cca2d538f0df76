"""The claims of Li, Huang, Yang, Wang, Zhang (ICLR 2020, arXiv:1907.02189), "On the Convergence of
FedAvg on Non-IID Data": Theorems 1-4, the sampling schemes, eq. 8's choice of E and the effect of K."""
