"""The claims of Yu, Jin, Yang (ICML 2019, arXiv:1905.03817), "On the Linear Speedup Analysis of
Communication Efficient Momentum SGD for Distributed Non-Convex Optimization", in the momentum-less
form restated in Liu's lecture note: Theorem 3 (FedAvg on non-iid data under bounded gradient
dissimilarity) and Corollary 4 (its O(1/sqrt(NT)) rate and linear speedup)."""
