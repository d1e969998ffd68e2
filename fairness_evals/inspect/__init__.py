"""Our benchmarks as tasks of UK AISI's Inspect (``inspect-ai``; the ``fairness-evals[inspect]`` extra).

``inspect eval fairness_evals/<task>`` runs a task with no flag: the ``inspect_ai`` entry point of this package names
:mod:`fairness_evals.inspect._registry`, which registers every benchmark's Inspect tasks (each benchmark builds them
in its own package, from the same documents, prompts, parsing and statistics tables as its lm-eval and lmms-eval
tasks: its ``inspect_tasks`` and ``inspect`` hooks). What is shared lives here:

* :mod:`fairness_evals.inspect.plans`: a task's plan (the benchmark's own), for the metric and the log reader;
* :mod:`fairness_evals.inspect.metric`: ``benchmark_task``, the metric and the hook every task uses;
* :mod:`fairness_evals.inspect.headline`: the one ``@metric`` of every task (its headline statistics over all
  samples, with their coverages and intervals), the rules for values Inspect cannot hold and for epochs;
* :mod:`fairness_evals.inspect.logs`: an Inspect log (``.eval`` or ``.json``) read back as per-task runs, for
  ``fairness-evals check``, ``report``, ``compare`` and ``score``.

Only :mod:`~fairness_evals.inspect.logs` is imported by the rest of the package, and only when it meets an Inspect
log; nothing else here is imported unless Inspect runs a task, so the package works without ``inspect_ai``.
See ``docs/inspect.md``.
"""
