"""The claims of Karimireddy, Kale, Mohri, Reddi, Stich, Suresh (ICML 2020, arXiv:1910.06378), "SCAFFOLD:
Stochastic Controlled Averaging for Federated Learning": SCAFFOLD removes client drift (Sec. 3-4, on Li
et al.'s Appendix C problem) and Theorem III's strongly convex rate."""
