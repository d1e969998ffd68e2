"""The evaluated face corpus: read, filter to adults 25-65, sample, check every sampled image, account.

Steps (each bad item is named; see :class:`CorpusError`):

1. read the corpus (:mod:`fairlens_tasks.sources`): entries with labels, and problems (file names that
   do not parse, manifest rows with a missing or invalid label, list entries with no file or outside the
   corpus folder, file links out of the corpus folder);
2. keep ages 25-65 (paper section 3), unless an ``images_metadata.json`` list gives the exact images;
3. decode every remaining image once (:func:`fairness_evals.corpus.integrity.check_source`, memoised per file
   version): unreadable or corrupt images, images over the pixel limit or under the minimum face size
   (:mod:`fairness_evals.corpus.integrity`) are problems, **whatever the seed**, and the sample is drawn from
   the readable ones only, so a corrupt image never leaves a hole: its stratum's seeded draw takes another
   image of the stratum instead;
4. drop **duplicates by content** (the sha256 of the bytes, which step 3 computes): the same image under two
   paths (the UTKFace download ships ``UTKFace/`` and ``crop_part1/``, which overlap) is evaluated once, under
   its first path (sorted paths; file order for manifests and lists), and counted in ``images_duplicate``;
   identical bytes with *different* labels are a problem (the labels cannot both be right);
5. draw the seeded stratified sample (:mod:`fairlens_tasks.sampling`), unless a list is given;
6. every group of every attribute (2 genders, 5 races, 3 age bands) must keep at least one image.

By default any problem stops the run before the model is called, with a message listing the items;
with ``FAIRLENS_ON_BAD_INPUT=skip`` (``--skip-bad-input``) bad items are skipped and counted and empty
groups are reported. Accounting: ``images_found = images_loaded + images_skipped + images_duplicate``;
``images_loaded`` are the distinct entries whose labels were read (and, in the age range, whose image
decoded); ``images_eligible`` are the loaded ones in the age range; ``images_sampled`` are evaluated.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from fairlens_tasks import images
from fairlens_tasks.labels import GROUPS, MAX_AGE, MIN_AGE
from fairlens_tasks.sampling import stratified_sample
from fairlens_tasks.settings import Settings
from fairlens_tasks.sources import Entry, scan
from fairness_evals.corpus.evaluated import (
    CorpusError,
    CorpusImage,
    EvaluatedCorpus,
    check_entry,
    empty_groups,
    stop_or_skip,
)
from fairness_evals.corpus.sources import MAX_LISTED_PROBLEMS, Problem

__all__ = ["Corpus", "CorpusError", "CorpusImage", "load_corpus"]

log = logging.getLogger("fairness_evals.fairlens")


@dataclass(frozen=True, kw_only=True)
class Corpus(EvaluatedCorpus):
    """The evaluated FairLens corpus; ``duplicates`` copies were set aside, ``from_list`` says an image list gave
    exactly its images."""

    duplicates: int
    from_list: bool

    def provenance(self) -> dict[str, object]:
        """What the results record about the corpus (provenance metrics)."""
        from fairlens_tasks.questions import data_version

        return {
            "seed": self.settings.seed,
            "sample_fraction": 1.0 if self.from_list else self.settings.sample_fraction,
            "corpus_sha256": self.fingerprint,
            "data_version": data_version(),
            **self.image_counts(images_duplicate=self.duplicates),
        }


def _check(entry: Entry, settings: Settings) -> str:
    """The sha256 of ``entry``'s image after its integrity check (memoised per file version: the tasks share a
    corpus); ``ValueError`` when it is bad."""
    hf = (settings.hf_name, settings.hf_split, settings.column("image")) if settings.is_hf else None
    return check_entry(entry, hf, images.image_cache().stats, images.SPLIT_SETTING).sha256


def _item_name(settings: Settings, entry: Entry) -> str:
    return f"hf:{settings.hf_name} {entry.image_id}" if entry.index is not None else entry.image_id


def _fingerprint(kept: list[CorpusImage]) -> str:
    digest = hashlib.sha256()
    for image in kept:
        d = image.entry.demographics
        digest.update(f"{image.entry.image_id}\t{image.sha256}\t{d.gender}\t{d.race}\t{d.age}\n".encode())
    return digest.hexdigest()[:16]


def _readable(settings: Settings, entries: list[Entry], problems: list[Problem]) -> dict[str, str]:
    """sha256 of each readable entry's bytes (by image id); unreadable entries become problems."""
    hashes: dict[str, str] = {}
    for entry in entries:
        try:
            hashes[entry.image_id] = _check(entry, settings)
        except ValueError as error:
            problems.append(Problem(_item_name(settings, entry), str(error)))
    return hashes


def _distinct(
    settings: Settings, entries: list[Entry], hashes: dict[str, str], problems: list[Problem]
) -> tuple[list[Entry], list[tuple[str, str]]]:
    """The readable entries with the first of each set of identical images; the (dropped, kept) pairs."""
    first: dict[str, Entry] = {}
    kept: list[Entry] = []
    dropped: list[tuple[str, str]] = []
    for entry in entries:
        sha = hashes.get(entry.image_id)
        if sha is None:
            continue
        original = first.get(sha)
        if original is None:
            first[sha] = entry
            kept.append(entry)
        elif original.demographics != entry.demographics:
            problems.append(
                Problem(
                    _item_name(settings, entry),
                    f"the same image as {original.image_id} with other labels ({_labels(entry)} vs {_labels(original)})",
                )
            )
        else:
            dropped.append((entry.image_id, original.image_id))
    return kept, dropped


def _labels(entry: Entry) -> str:
    d = entry.demographics
    return f"{d.gender}, {d.race}, {d.age}"


def load_corpus(settings: Settings) -> Corpus:
    """Read, filter, check, deduplicate and sample the corpus of ``settings``; raise :class:`CorpusError` on bad
    input."""
    found = scan(settings)
    problems: list[Problem] = list(found.problems)
    if found.from_list:
        candidates = list(found.entries)
    else:
        candidates = [e for e in found.entries if MIN_AGE <= e.demographics.age <= MAX_AGE]
    hashes = _readable(settings, candidates, problems)
    eligible, duplicates = _distinct(settings, candidates, hashes, problems)
    if found.from_list:
        sampled = eligible
    else:
        sampled = stratified_sample(
            eligible, lambda e: e.demographics, lambda e: e.image_id, settings.sample_fraction, settings.seed
        )
    kept = [CorpusImage(entry=entry, unit=unit, sha256=hashes[entry.image_id]) for unit, entry in enumerate(sampled)]
    groups_empty = empty_groups(
        (image.entry.demographics for image in kept),
        GROUPS,
        lambda demographics, attribute: demographics.group(attribute),
        lambda attribute, n: f"FairLens compares all {n} {attribute} groups",
    )
    messages = stop_or_skip(log, f"FairLens corpus {settings.corpus}", settings, problems, groups_empty)
    if duplicates:
        shown = "; ".join(f"{dup} = {original}" for dup, original in duplicates[:MAX_LISTED_PROBLEMS])
        more = f"; and {len(duplicates) - MAX_LISTED_PROBLEMS} more" if len(duplicates) > MAX_LISTED_PROBLEMS else ""
        log.warning(
            "FairLens corpus %s: %d image(s) are copies of another image (same bytes, same labels) and are "
            "evaluated once, under the first path (images_duplicate): %s%s",
            settings.corpus, len(duplicates), shown, more,
        )  # fmt: skip
    skipped = len(problems)
    corpus = Corpus(
        settings=settings,
        kind=found.kind,
        images=tuple(kept),
        found=found.found,
        loaded=found.found - skipped - len(duplicates),
        skipped=skipped,
        duplicates=len(duplicates),
        eligible=len(eligible),
        groups_empty=len(groups_empty),
        problems=tuple(messages),
        fingerprint=_fingerprint(kept),
        from_list=found.from_list,
    )
    if not kept:
        raise CorpusError(f"FairLens corpus {settings.corpus}: no image left to evaluate ({corpus.found} found)")
    return corpus
