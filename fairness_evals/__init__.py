"""fairness-evals: Fact-or-Fair, FairLens and IRIS as lm-evaluation-harness and lmms-eval tasks.

This package holds the command line and the harness registration. The autoload hook imports it (through
``fairness_evals._autoload``) while a harness imports its task manager, so it must stay import-light: no
harness, numpy or torch imports here.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "task_paths", "tasks_dir"]


def tasks_dir(harness: str) -> str:
    """One folder holding every task of ours for ``harness`` ("lm-eval" or "lmms-eval").

    Pass it as ``--include_path`` or ``TaskManager(include_path=...)``. See :mod:`fairness_evals.paths`.
    """
    from fairness_evals.paths import tasks_dir as _tasks_dir

    return _tasks_dir(harness)


def task_paths(harness: str) -> list[str]:
    """The task folders of ours for ``harness``, as a list (both TaskManagers accept lists)."""
    from fairness_evals.paths import task_paths as _task_paths

    return _task_paths(harness)
