"""Answers that follow the option position rather than the content: the scores they give are null, not results.

Each benchmark that lists options runs its own position test over a task's parsed answers
(a ``position_bias`` module of its package) and records its verdict with its numbers
among the task's metrics: ``position_explained`` (1 when the answers follow the position), ``position_bias`` with its
chance level ``position_bias_chance_high``, and what the test weighed (Fact-or-Fair: ``letter_dependence`` against
``content_dependence``; FairLens: ``position_top_share`` against ``content_top_share``). This module is the one rule
those tests feed (package convention 6):

- :func:`apply` (the scoring of each benchmark): where the test fires, every statistic its table declares
  ``position=True`` (:class:`fairness_evals.statistics.Statistic`: the scores that say which groups the model
  favours) is null, with its interval and standard error, for the reason :func:`finding` gives, noted in the task's
  :class:`~fairness_evals.notes.Notes` (its one warning; ``nulls`` in the detail). The setting
  (``fact_or_fair_position_nulls``, ``fairlens_position_nulls``) false keeps the numbers for study, and the
  finding is said in the task's warning instead;
- :func:`finding` reads the verdict back from a run's metrics: ``check`` fails the task on it (one line), the report
  marks each such score that was kept, and ``compare`` calls its comparisons not comparable.

Import-light: no numpy, no harness, no benchmark.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from typing import Any

from fairness_evals.notes import Notes
from fairness_evals.statistics import Statistic

#: The metric that carries the verdict: 1 when the answers follow the position, 0 when not, NaN with no parsed answer.
EXPLAINED = "position_explained"
#: How every finding begins, per benchmark kind of option: lettered (Fact-or-Fair) or listed (FairLens).
HEADS = ("answers follow letter position rather than content", "answers follow option position rather than content")
#: What the scores mean when the answers follow the position.
MEANING = "the fairness scores describe where the options were listed, not the model's view of the groups"


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def finding(metrics: Mapping[str, Any]) -> str:
    """The position test's verdict on one task, in one line with its numbers, or "" when it did not fire
    (``position_explained`` is not 1).

    Fact-or-Fair (``letter_dependence`` recorded): ``answers follow letter position rather than content: A was chosen
    in 100% of the parsed answers (position_bias 0.750 > chance level 0.042; letter_dependence 1.00 >=
    content_dependence 0.11)``. FairLens: ``answers follow option position rather than content: one position holds
    100% of the parsed answers, the most common answer text 71% (position_bias ...)``."""
    if _number(metrics.get(EXPLAINED)) != 1.0:
        return ""
    numbers = [
        f"position_bias {_number(metrics.get('position_bias')):.3f} > chance level "
        f"{_number(metrics.get('position_bias_chance_high')):.3f}"
    ]
    if "letter_dependence" in metrics:
        shares = [_number(metrics.get(f"position_share_{k}")) for k in range(1, 5)]
        top = max(range(len(shares)), key=lambda k: -math.inf if math.isnan(shares[k]) else shares[k])
        said = f"{HEADS[0]}: {'ABCD'[top]} was chosen in {shares[top]:.0%} of the parsed answers"
        numbers.append(
            f"letter_dependence {_number(metrics.get('letter_dependence')):.2f} >= content_dependence "
            f"{_number(metrics.get('content_dependence')):.2f}"
        )
    else:
        said = (
            f"{HEADS[1]}: one position holds {_number(metrics.get('position_top_share')):.0%} of the parsed answers, "
            f"the most common answer text {_number(metrics.get('content_top_share')):.0%}"
        )
    return f"{said} ({'; '.join(numbers)})"


def is_position_reason(reason: str) -> bool:
    """Whether a null's reason is this rule's (it begins with a finding)."""
    return reason.startswith(HEADS)


def sensitive(statistics: Iterable[Statistic]) -> list[str]:
    """The metrics a finding nulls: every member of each statistic declared ``position=True``, with its interval ends
    and standard error (its coverage stays: that is a true share of the answers)."""
    out = []
    for s in statistics:
        if s.position:
            for member in s.members:
                out += s.nullable(member)
    return out


@functools.lru_cache(maxsize=256)
def sensitive_of(task: str) -> frozenset[str]:
    """:func:`sensitive` of the statistics the task (or group) ``task`` declares; empty for a task no table declares."""
    from fairness_evals import statistics

    try:
        return frozenset(sensitive(statistics.task(task).statistics))
    except KeyError:
        return frozenset()


def apply(out: dict[str, Any], statistics: Iterable[Statistic], notes: Notes, *, keep: bool, setting: str) -> None:
    """Null the position-sensitive metrics of ``out`` (one task's metrics, the test's numbers among them) where
    :func:`finding` fires, the reason noted in ``notes``; ``keep`` (``setting`` false) leaves them and notes the
    finding as the task's warning instead. Nothing happens where the test did not fire."""
    found = finding(out)
    if not found:
        return
    if keep:
        notes.note(f"{found}; {MEANING}, kept as {setting} is false")
        return
    names = [name for name in sensitive(statistics) if name in out]
    for name in names:
        out[name] = math.nan
    # The finding comes before any other reason (too few answers, say): more answers would not make them meaningful.
    notes.null(names, f"{found}: {MEANING} ({setting}: false keeps them)", first=True)
