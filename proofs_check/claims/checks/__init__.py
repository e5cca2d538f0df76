"""Checks across the papers: the assumption constants of every claim's instances, the lemma table
(Li et al.'s Lemmas 1-3, Yu et al.'s drift bound, Ding et al.'s lemmas) and negative controls."""
