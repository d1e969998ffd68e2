"""The command layer: ``fairness-evals`` (:mod:`.main`) and its commands that are not a benchmark's own (``check``,
``compare``, ``report``, ``metrics``). Nothing below this folder imports from it."""
