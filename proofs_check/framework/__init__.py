"""The claim framework: what a claim is (``claim``), its parameters and plans per mode
(``parameters``, ``claim_text``), the settings of a verification (``settings``), its plots as data
(``plot_specs``), the works it cites (``references``), the registry that discovers claims
(``registry``) and the budget check of a claim's plan (``plan_workloads``). Nothing here imports a
numerical library at import time, so ``fedbound list`` answers at once."""
