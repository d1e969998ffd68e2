"""The evaluated images of a corpus, and the one decision FairLens and IRIS make alike: stop on bad input or skip it.

A corpus scan (:mod:`fairness_evals.corpus.sources`) yields entries and problems; each benchmark filters and
samples its entries its own way, checks the images it keeps (:func:`check_entry`), and turns them into
:class:`CorpusImage` objects numbered by their bootstrap unit. :func:`stop_or_skip` then stops the run with one
message naming the bad items (:class:`CorpusError`), or, when told to skip them, logs one warning that names them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fairness_evals.corpus.images import DecodeStats
from fairness_evals.corpus.integrity import Checked, check_source
from fairness_evals.corpus.sources import MAX_LISTED_PROBLEMS, Entry, bad_input_message

__all__ = [
    "CorpusError",
    "CorpusImage",
    "EvaluatedCorpus",
    "check_entry",
    "empty_groups",
    "skip_setting",
    "stop_or_skip",
]


class CorpusError(ValueError):
    """Bad input in a corpus; the message names the items and how to skip them."""


@dataclass(frozen=True)
class CorpusImage:
    """One evaluated image: its entry, its unit number (the bootstrap unit) and the sha256 of its bytes."""

    entry: Any
    unit: int
    sha256: str


@dataclass(frozen=True, kw_only=True)
class EvaluatedCorpus:
    """What both benchmarks know of an evaluated image corpus, and its image counts.

    ``found`` items were read, ``loaded`` of them labelled (and readable), ``skipped`` were bad input, ``eligible``
    could be sampled, ``images`` are evaluated, and ``groups_empty`` groups have no image; ``problems`` are the
    messages of the bad items and empty groups, and ``fingerprint`` is the corpus hash the results record.
    """

    settings: Any
    kind: str
    images: tuple[CorpusImage, ...]
    found: int
    loaded: int
    skipped: int
    eligible: int
    groups_empty: int
    problems: tuple[str, ...]
    fingerprint: str

    @property
    def sampled(self) -> int:
        return len(self.images)

    def image_counts(self, **between: int) -> dict[str, int]:
        """The counts the results record (``images_found`` ... ``groups_empty``), with a benchmark's own counts
        (``between``, e.g. ``images_duplicate``) after ``images_skipped``."""
        return {
            "images_found": self.found,
            "images_loaded": self.loaded,
            "images_skipped": self.skipped,
            **between,
            "images_eligible": self.eligible,
            "images_sampled": self.sampled,
            "groups_empty": self.groups_empty,
        }


def check_entry(
    entry: Entry, hf: tuple[str, str | None, str] | None, stats: DecodeStats, split_setting: str
) -> Checked:
    """The integrity check of ``entry``'s image (memoised per file version or dataset row): its file, or row
    ``entry.index`` of the dataset ``hf`` = (name, split, image column); ``ValueError`` when it is bad."""
    if entry.path is not None or hf is None:
        return check_source(path=entry.path, stats=stats)
    return check_source(hf=(*hf, int(entry.index or 0)), stats=stats, split_setting=split_setting)


def empty_groups(
    entries: Iterable[Any],
    groups: Mapping[str, Sequence[str]],
    group_of: Callable[[Any, str], str],
    note: Callable[[str, int], str] | None = None,
) -> list[str]:
    """A message for each group of each attribute (``groups``: attribute -> its groups) that no entry of ``entries``
    belongs to (``group_of(entry, attribute)``), with ``note(attribute, number of groups)`` in brackets."""
    entries = list(entries)
    messages = []
    for attribute, names in groups.items():
        present = {group_of(entry, attribute) for entry in entries}
        for group in names:
            if group not in present:
                why = f" ({note(attribute, len(names))})" if note else ""
                messages.append(f"{attribute} group {group!r} has no image after sampling{why}")
    return messages


def skip_setting(on_bad_input: str) -> str:
    """How the user skips bad items, in the terms they used: ``X_ON_BAD_INPUT=skip`` for an environment variable,
    the option itself (``--skip-bad-input``) on a command line."""
    return on_bad_input if on_bad_input.startswith("-") else f"{on_bad_input}=skip"


class BadInputSettings(Protocol):
    """What :func:`stop_or_skip` reads of a benchmark's settings."""

    skip_bad_input: bool
    names: Mapping[str, str]


def stop_or_skip(
    log: logging.Logger,
    corpus: str,
    settings: BadInputSettings,
    problems: Sequence[object],
    groups_empty: Sequence[str] = (),
) -> list[str]:
    """Every message of ``problems`` (:class:`~fairness_evals.corpus.sources.Problem` objects or text) and
    ``groups_empty``; :class:`CorpusError` naming them (``corpus`` names the corpus: "FairLens corpus /data/x")
    unless ``settings.skip_bad_input``, else one warning that names the first few."""
    messages = [*map(str, problems), *groups_empty]
    if messages and not settings.skip_bad_input:
        raise CorpusError(bad_input_message(corpus, messages, skip_setting(settings.names["on_bad_input"])))
    if messages:
        empty = f" and found {len(groups_empty)} empty group(s)" if groups_empty else ""
        shown = "; ".join(messages[:MAX_LISTED_PROBLEMS])
        log.warning("%s: skipped %d bad item(s)%s: %s", corpus, len(problems), empty, shown)
    return messages
