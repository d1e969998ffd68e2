"""``fairness-evals compare``: is run B fairer than run A? Paired differences with intervals, p-values and verdicts.

:mod:`.runs` reads the runs (harness output folders with ``--log_samples``, Inspect logs, score outputs); each
benchmark's adapter (its :class:`.problem.Adapter`, registered with the benchmark) turns a task's logged records into
a :class:`.problem.Problem` (units, strata, counts and the task's own statistics); :mod:`.engine` resamples two runs
jointly and takes each metric's difference (:mod:`metrics.paired`); :mod:`.comparison` decides what is comparable
and gives Holm-adjusted verdicts; :mod:`.table` writes Markdown and strict JSON;
:mod:`fairness_evals.commands.compare` is the command. ``docs/compare.md`` explains how to
read a verdict.
"""
