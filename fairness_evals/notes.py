"""Why metrics are null: the one collector every benchmark's scoring uses.

While a task is scored, each decision to report a metric as null (a coverage below its threshold, no input, an
interval no simulation backs) is noted with its reason. :meth:`Notes.warn` then logs **one short warning per
problem**: one line per reason, naming the task and at most :data:`SHOWN_NAMES` of the metrics it nulls ("and N
more"), and one line per general note. :attr:`Notes.reasons` keeps every ``{metric: reason}`` for the
machine-readable detail (``fairness-evals score`` writes it under ``"nulls"``), so that the reason for every null is
in the output, not only in a log line.

Import-light: no numpy, no harness.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

#: The most metric names one warning line names; the others are counted ("and 4 more"), and listed in the detail.
SHOWN_NAMES = 3


def plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 answer"``, ``"2 answers"``: ``n`` and the word, singular for exactly one."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def indefinite(word: str) -> str:
    """``"a parsed answer"``, ``"an image"``: the word with its indefinite article."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


#: The names said with the metric they belong to: its interval (ends and centre) and its standard error.
_PARTS = ("_ci_low", "_ci_high", "_ci_centre", "_stderr")


def _base(name: str) -> str | None:
    return next((name.removesuffix(part) for part in _PARTS if name.endswith(part)), None)


def _with_intervals(names: list[str]) -> list[str]:
    """The names as a warning says them: ``x`` with its interval ends, centre and standard error as ``x (and its
    interval)``; the interval (and standard error) alone as ``the interval of x``; the other names as they are."""
    listed = set(names)
    out: list[str] = []
    for name in names:
        base = _base(name)
        if base is not None and base in listed:
            continue  # said with its metric
        if base is not None and f"{base}_ci_low" in listed and f"{base}_ci_high" in listed:
            if f"the interval of {base}" not in out:
                out.append(f"the interval of {base}")
            continue
        whole = f"{name}_ci_low" in listed and f"{name}_ci_high" in listed
        out.append(f"{name} (and its interval)" if whole else name)
    return out


class Notes:
    """The reasons the metrics of one task are null (or their intervals withheld), in the order noted."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.reasons: dict[str, str] = {}
        self.general: list[str] = []

    def null(self, names: str | Iterable[str], reason: str, *, first: bool = False) -> None:
        """Note that each metric of ``names`` is null because of ``reason``. The first reason noted stays, unless
        ``first`` puts this one before any other (a finding that no amount of evidence would cure)."""
        for name in [names] if isinstance(names, str) else names:
            if first:
                self.reasons[name] = reason
            else:
                self.reasons.setdefault(name, reason)

    def note(self, reason: str) -> None:
        """A reason that concerns the task as a whole rather than named metrics (said once in the warning)."""
        if reason not in self.general:
            self.general.append(reason)

    def __contains__(self, name: str) -> bool:
        return name in self.reasons

    def messages(self) -> list[str]:
        """The task's warnings, one short line per problem: each general note, then each reason with the metrics it
        nulls (at most :data:`SHOWN_NAMES` named, ``and N more``: the full list is :attr:`reasons`); empty when
        nothing was noted."""
        by_reason: dict[str, list[str]] = {}
        for name, reason in self.reasons.items():
            by_reason.setdefault(reason, []).append(name)
        lines = [f"{self.task}: {reason}" for reason in self.general]
        for reason, names in by_reason.items():
            said = _with_intervals(names)
            shown = ", ".join(said[:SHOWN_NAMES]) + (
                f" and {len(said) - SHOWN_NAMES} more" if len(said) > SHOWN_NAMES else ""
            )
            lines.append(f"{self.task}: {shown} null: {reason}")
        return lines

    def message(self) -> str | None:
        """Every warning of :meth:`messages` on its own line, or None when nothing was noted."""
        return "\n".join(self.messages()) or None

    def warn(self, logger: logging.Logger) -> None:
        """Log the task's warnings, one per problem (:meth:`messages`; nothing when nothing was noted)."""
        for line in self.messages():
            logger.warning("%s", line)
