"""Fact-or-Fair (Huang et al., arXiv:2502.05849) as lm-evaluation-harness tasks.

Modules: :mod:`.items` (the shipped statistics table), :mod:`.documents` (seeded document building),
:mod:`.prompts` (prompt text), :mod:`.parsing` (answer parsing), :mod:`.scoring` (per-document records
and the aggregation glue onto :mod:`metrics.fact_fair`). Task YAMLs are in ``llm/``.
"""
