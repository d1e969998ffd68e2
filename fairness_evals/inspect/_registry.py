"""What the ``inspect_ai`` entry point of fairness-evals loads: every Inspect task of ours, the metric and the hook.

Inspect imports this module when it resolves a ``fairness_evals/<task>`` name; the tasks are registered under the
prefix ``fairness_evals/`` (the top-level package of the modules that define them).
"""

from __future__ import annotations

from fairness_evals.inspect import fact_or_fair, fairlens, iris
from fairness_evals.inspect.metric import TaskEndWarnings, headline

__all__ = ["TaskEndWarnings", "fact_or_fair", "fairlens", "headline", "iris"]
