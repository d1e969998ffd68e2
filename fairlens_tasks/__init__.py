"""FairLens (Khazaie, Radwan, Raza; arXiv 2609.01691) as lmms-eval tasks: closed- and open-ended questions.

Modules: :mod:`.questions` (the shipped question suite with ids), :mod:`.prompts` (the released prompt),
:mod:`.normalise` (reply -> option), :mod:`.labels` (groups, UTKFace names), :mod:`.settings` (corpus
configuration), :mod:`.sources` and :mod:`.corpus` (reading, sampling and checking a face corpus),
:mod:`.sampling` (stratified sampling), :mod:`.images` (decode cache), :mod:`.documents` (one document per
image and question), :mod:`.scoring` (records, metrics, lmms-eval glue), :mod:`.cli` (export / score).
Open-ended questions: :mod:`.open_documents` (one document per image and open question), :mod:`.open_scoring`
(records, judged metrics, judging in the aggregation) and the :mod:`.judging` subpackage (the LLM bias judge
and ``fairness-evals judge``). Task YAMLs are in this folder; README.md documents every rule and metric.
"""
