"""fedbound's own claims, one module per claim, grouped by source: ``li2020/`` (Li, Huang, Yang,
Wang, Zhang, ICLR 2020), ``ding2020/`` (Ding, Niu, Yan, Shen, Wang, Chen, 2020), ``yu2019/`` (Yu, Yang,
Zhu, AAAI 2019), ``yu2019icml/`` (Yu, Jin, Yang, ICML 2019), ``karimireddy2020/`` (Karimireddy, Kale,
Mohri, Reddi, Stich, Suresh, ICML 2020: SCAFFOLD), ``pep/`` (theorems against exact worst cases over their
class, ``proofs_check.pep``) and ``checks/`` (checks across the papers: assumption constants, the lemma
table, negative controls).

A claim module defines ``CLAIM`` (a ``proofs_check.framework.Claim``) with its plan dataclass, its
evaluator and its planted variants; ``proofs_check.framework.registry`` finds it, so adding a claim
is adding a module. Every module here imports no numerical library at its top level (numerical code
is reached through the lazily loaded packages ``convergence``, ``problems``,
``proofs_check.constants`` and ``proofs_check.lemmas``), so ``fedbound list`` stays instant."""
