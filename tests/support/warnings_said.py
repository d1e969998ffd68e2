"""The rule every task's warnings keep (:mod:`fairness_evals.notes`): one short line per problem.

Tests that once counted "one warning per task" check this instead: each line names the task, at most
:data:`~fairness_evals.notes.SHOWN_NAMES` metrics (the others counted as "and N more"), and no two lines give the
same reason.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from fairness_evals.notes import SHOWN_NAMES

#: The longest line a warning may be: the task, three names and a reason (the longest reason, the position test's
#: finding with its numbers, is about 330 characters).
LONGEST = 600


def task_warnings(records: Iterable[logging.LogRecord], task: str | None = None) -> list[str]:
    """The warnings of ``task`` (None: every warning, each of one task) among the captured ``records``, checked
    against the rule; their lines."""
    lines = [r.getMessage() for r in records if r.levelno == logging.WARNING]
    if task is not None:
        lines = [line for line in lines if line.startswith(f"{task}:")]
    problems = []
    for line in lines:
        assert "\n" not in line and len(line) <= LONGEST, line
        owner, colon, said_of = line.partition(": ")
        assert colon and owner.strip() and " " not in owner, f"a warning names its task first: {line}"
        names, said, reason = said_of.partition(" null: ")
        if said:
            more = re.search(r" and (\d+) more$", names)
            shown = names[: more.start()] if more else names
            assert len(_names(shown)) <= SHOWN_NAMES, line
            problems.append((owner, reason))
        else:
            problems.append((owner, names))
    assert len(set(problems)) == len(problems), f"two warnings of one task give one reason: {lines}"
    return lines


def _names(shown: str) -> list[str]:
    """The metrics a line names (commas inside "(and its interval)" do not occur)."""
    return [part for part in shown.split(", ") if part]
