"""The works fedbound's claims come from: one ``Reference`` each, cited in the report and its
bibliography. Importing this module costs nothing (no numerical libraries)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Reference", "LI2020", "DING2020", "YU2019", "YU2019ICML", "LIU2022_NOTE", "KARIMIREDDY2020", "TAYLOR2017",
           "PEPIT2024", "REFERENCES"]


@dataclass(frozen=True)
class Reference:
    """A cited work: ``key`` is the short label used in claim cards (e.g. ``li2020``); ``year`` None for
    a work without one (an experiment file, ``proofs_check.experiments.compile``)."""

    key: str
    authors: str
    title: str
    venue: str
    year: int | None
    arxiv: str | None = None
    note: str = ""

    @property
    def short(self) -> str:
        """In-text citation, e.g. ``Li, Huang, Yang, Wang, Zhang (ICLR 2020, arXiv:1907.02189)``."""
        where = " ".join(str(part) for part in (self.venue, self.year) if part)
        arxiv = (", " if where else "") + f"arXiv:{self.arxiv}" if self.arxiv else ""
        return f"{self.authors} ({where}{arxiv})" if where or arxiv else self.authors

    @property
    def url(self) -> str | None:
        """The arXiv abstract page, when the work has an arXiv id."""
        return f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else None

    @property
    def entry(self) -> str:
        """The bibliography entry: authors, title, venue, year, arXiv id, note."""
        published = ", ".join(str(part) for part in (self.venue, self.year) if part)
        parts = [f"{self.authors}. {self.title}." + (f" {published}." if published else "")]
        if self.arxiv:
            parts.append(f"arXiv:{self.arxiv}.")
        if self.note:
            parts.append(self.note)
        return " ".join(parts)


LI2020 = Reference(
    "li2020", "X. Li, K. Huang, W. Yang, S. Wang, Z. Zhang", "On the Convergence of FedAvg on Non-IID Data",
    "ICLR", 2020, "1907.02189",
)
DING2020 = Reference(
    "ding2020", "Y. Ding, C. Niu, Y. Yan, Z. Zheng, F. Wu, G. Chen, S. Tang, R. Jia",
    "Distributed Optimization over Block-Cyclic Data", "preprint", 2020, "2002.07454",
)
YU2019 = Reference(
    "yu2019", "H. Yu, S. Yang, S. Zhu",
    "Parallel Restarted SGD with Faster Convergence and Less Communication: Demystifying Why Model Averaging "
    "Works for Deep Learning", "AAAI", 2019, "1807.06629",
    note="Theorem 1 and Corollary 2 are checked as restated in Liu's lecture note (below).",
)
YU2019ICML = Reference(
    "yu2019icml", "H. Yu, R. Jin, S. Yang",
    "On the Linear Speedup Analysis of Communication Efficient Momentum SGD for Distributed Non-Convex Optimization",
    "ICML", 2019, "1905.03817",
    note="Theorem 3 and Corollary 4 (momentum-less) are checked as restated in Liu's lecture note (below).",
)
LIU2022_NOTE = Reference(
    "liu2022", "J. Liu", "Lecture Note 3-1: Federated Learning (feat. Distributed Learning), ECE 8101: Nonconvex "
    "Optimization for Machine Learning", "The Ohio State University", 2022,
    note="Source of the heterogeneity measures sigma_G^2 and the (G, B)-BGD pair, and of the restated Yu et al. results.",
)

KARIMIREDDY2020 = Reference(
    "karimireddy2020", "S. P. Karimireddy, S. Kale, M. Mohri, S. J. Reddi, S. U. Stich, A. T. Suresh",
    "SCAFFOLD: Stochastic Controlled Averaging for Federated Learning", "ICML", 2020, "1910.06378",
    note="Proceedings of the 37th ICML, PMLR 119. Checked against the main text (Algorithm 1, Theorem III); the "
         "appendix with the explicit constants was not available.",
)

TAYLOR2017 = Reference(
    "taylor2017", "A. B. Taylor, J. M. Hendrickx, F. Glineur",
    "Smooth strongly convex interpolation and exact worst-case performance of first-order methods",
    "Mathematical Programming 161", 2017, "1502.05666",
    note="Performance estimation (after Drori and Teboulle, Math. Program. 145, 2014): the worst case of a "
         "first-order method over a function class as an SDP, exact through interpolation conditions.",
)
PEPIT2024 = Reference(
    "pepit2024", "B. Goujaud, C. Moucer, F. Glineur, J. M. Hendrickx, A. B. Taylor, A. Dieuleveut",
    "PEPit: computer-assisted worst-case analyses of first-order optimization methods in Python",
    "Mathematical Programming Computation", 2024, "2201.04040",
    note="The library the pep.* claims write their programs with (MIT licence, version 0.5).",
)

REFERENCES: dict[str, Reference] = {r.key: r for r in (LI2020, DING2020, YU2019, YU2019ICML, LIU2022_NOTE,
                                                       KARIMIREDDY2020, TAYLOR2017, PEPIT2024)}
