"""IRIS (Zhao et al., arXiv 2603.00590v1, ICLR 2026) understanding sector as lmms-eval tasks, and the profile.

Modules: :mod:`.vocabulary` (the shipped occupations, aliases, questions, reference tables, label parsing),
:mod:`.mapping` and :mod:`.embedder` (free answer -> occupation), :mod:`.answers` (ratings, yes/no),
:mod:`.settings`, :mod:`.sources` and :mod:`.corpus` (FACET / manifest / Hugging Face corpora, sampling,
checks), :mod:`.images` (decoding, crops, the blank image), :mod:`.probe` and :mod:`.prompts`,
:mod:`.documents` (``process_docs``), :mod:`.statistics` (every statistic, declared once),
:mod:`.scoring` (prompts, images, ``process_results``, each metric's aggregation, the provenance), :mod:`.answer_shares`
(coverage and its minimum), :mod:`.ifs_und`, :mod:`.rfs_und`, :mod:`.bis_und` and :mod:`.pairs` (records and
metrics),
:mod:`.profile` and :mod:`.profile_cli` (``fairness-evals iris-profile``). README.md documents every rule.
"""
