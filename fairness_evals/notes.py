"""Why metrics are null: the one collector every benchmark's scoring uses.

While a task is scored, each decision to report a metric as null (a coverage below its threshold, no input, an
interval no simulation backs) is noted with its reason. :meth:`Notes.warn` then logs **one** warning for the task,
grouping the metrics by reason, and :attr:`Notes.reasons` keeps ``{metric: reason}`` for the machine-readable detail
(``fairness-evals score`` writes it under ``"nulls"``), so that the reason for every null is in the output, not only
in a log line.

Import-light: no numpy, no harness.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable


def plural(n: int, word: str, words: str | None = None) -> str:
    """``"1 answer"``, ``"2 answers"``: ``n`` and the word, singular for exactly one."""
    return f"{n} {word if n == 1 else (words or word + 's')}"


def indefinite(word: str) -> str:
    """``"a parsed answer"``, ``"an image"``: the word with its indefinite article."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _with_intervals(names: list[str]) -> list[str]:
    """``x, x_ci_low, x_ci_high`` said as ``x (and its interval)``; the other names as they are."""
    listed = set(names)
    out = []
    for name in names:
        if name.endswith(("_ci_low", "_ci_high")):
            base = name.rsplit("_ci_", 1)[0]
            if base in listed:
                continue
            if name.endswith("_ci_low") and f"{base}_ci_high" in listed:
                out.append(f"the interval of {base}")
                continue
            if name.endswith("_ci_high") and f"{base}_ci_low" in listed:
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

    def null(self, names: str | Iterable[str], reason: str) -> None:
        """Note that each metric of ``names`` is null because of ``reason`` (the first reason noted stays)."""
        for name in [names] if isinstance(names, str) else names:
            self.reasons.setdefault(name, reason)

    def note(self, reason: str) -> None:
        """A reason that concerns the task as a whole rather than named metrics (said once in the warning)."""
        if reason not in self.general:
            self.general.append(reason)

    def __contains__(self, name: str) -> bool:
        return name in self.reasons

    def message(self) -> str | None:
        """The task's one warning, or None when nothing was noted."""
        if not self.reasons and not self.general:
            return None
        by_reason: dict[str, list[str]] = {}
        for name, reason in self.reasons.items():
            by_reason.setdefault(reason, []).append(name)
        parts = [f"{', '.join(_with_intervals(names))}: {reason}" for reason, names in by_reason.items()]
        head = f"{plural(len(self.reasons), 'metric')} null" if self.reasons else ""
        body = "; ".join([*self.general, *parts])
        return f"{self.task}: {head}. {body}" if head else f"{self.task}: {body}"

    def warn(self, logger: logging.Logger) -> None:
        """Log the task's one warning (nothing when nothing was noted)."""
        message = self.message()
        if message:
            logger.warning("%s", message)
