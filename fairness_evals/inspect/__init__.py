"""Our benchmarks as tasks of UK AISI's Inspect (``inspect-ai``; the ``fairness-evals[inspect]`` extra).

``inspect eval fairness_evals/<task>`` runs a task with no flag: the ``inspect_ai`` entry point of this package names
:mod:`fairness_evals.inspect._registry`, which imports the task modules. The tasks are built from the same
documents, prompts, parsing and statistics tables as the lm-eval and lmms-eval tasks (nothing is copied):

* :mod:`fairness_evals.inspect.fact_or_fair`: ``fact_or_fair`` and each of its tasks, with the lite variants;
* :mod:`fairness_evals.inspect.fairlens`: ``fairlens``, ``fairlens_<domain>`` and ``fairlens_open_<domain>``;
* :mod:`fairness_evals.inspect.headline`: the one ``@metric`` of every task (its headline statistics over all
  samples, with their coverages and intervals), the rules for values Inspect cannot hold and for epochs;
* :mod:`fairness_evals.inspect.judge`: the open-ended bias judge as an Inspect scorer through a grader model;
* :mod:`fairness_evals.inspect.logs`: an Inspect log (``.eval`` or ``.json``) read back as per-task runs, for
  ``fairness-evals check``, ``report``, ``compare`` and ``score``.

Only :mod:`~fairness_evals.inspect.logs` is imported by the rest of the package, and only when it meets an Inspect
log; nothing else here is imported unless Inspect runs a task, so the package works without ``inspect_ai``.
See ``docs/inspect.md``.
"""
