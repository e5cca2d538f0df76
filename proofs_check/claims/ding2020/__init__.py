"""The claims of Ding, Niu, Yan, Shen, Wang, Chen (2020, arXiv:2002.07454), "Distributed Optimization
over Block-Cyclic Data": Theorems 1 and 2 (MM-PSGD, MC-PSGD), the speed-up in N and M, the ordering of
the algorithms and the experiments of Sec. 5 (Fig. 2, Table 1, Fig. 4, Fig. 5)."""
