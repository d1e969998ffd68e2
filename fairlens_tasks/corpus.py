"""The evaluated face corpus: read, filter to adults 25-65, sample, check every sampled image, account.

Steps (each bad item is named; see :class:`CorpusError`):

1. read the corpus (:mod:`fairlens_tasks.sources`): entries with labels, and problems (file names that
   do not parse, manifest rows with a missing or invalid label, list entries with no file);
2. keep ages 25-65 (paper section 3), unless an ``images_metadata.json`` list gives the exact images;
3. draw the seeded stratified sample (:mod:`fairlens_tasks.sampling`), unless a list is given;
4. decode every sampled image once (:func:`fairlens_tasks.images.check_image_bytes`): unreadable or
   corrupt images are problems;
5. every group of every attribute (2 genders, 5 races, 3 age bands) must keep at least one image.

By default any problem stops the run before the model is called, with a message listing the items;
with ``FAIRLENS_ON_BAD_INPUT=skip`` (``--skip-bad-input``) bad items are skipped and counted and empty
groups are reported. Accounting: ``images_found = images_loaded + images_skipped``; ``images_loaded``
are the entries whose labels were read and, for sampled ones, whose image decoded;
``images_eligible`` are the loaded ones in the age range; ``images_sampled`` are evaluated.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass

from fairlens_tasks import images
from fairlens_tasks.labels import GROUPS, MAX_AGE, MIN_AGE
from fairlens_tasks.sampling import stratified_sample
from fairlens_tasks.settings import Settings
from fairlens_tasks.sources import Entry, Problem, scan
from image_corpus.images import file_version
from image_corpus.sources import MAX_LISTED_PROBLEMS, bad_input_message

log = logging.getLogger("fairness_evals.fairlens")


class CorpusError(ValueError):
    """Bad input in the corpus; the message names the items and how to skip them."""


@dataclass(frozen=True)
class CorpusImage:
    """One evaluated image: its entry, its position (the bootstrap unit) and the sha256 of its bytes."""

    entry: Entry
    unit: int
    sha256: str


@dataclass(frozen=True)
class Corpus:
    settings: Settings
    kind: str
    images: tuple[CorpusImage, ...]
    found: int
    loaded: int
    skipped: int
    eligible: int
    groups_empty: int
    problems: tuple[str, ...]
    fingerprint: str
    from_list: bool

    @property
    def sampled(self) -> int:
        return len(self.images)

    def provenance(self) -> dict[str, object]:
        """What the results record about the corpus (provenance metrics)."""
        from fairlens_tasks.questions import data_version

        return {
            "seed": self.settings.seed,
            "sample_fraction": 1.0 if self.from_list else self.settings.sample_fraction,
            "corpus_sha256": self.fingerprint,
            "data_version": data_version(),
            "images_found": self.found,
            "images_loaded": self.loaded,
            "images_skipped": self.skipped,
            "images_eligible": self.eligible,
            "images_sampled": self.sampled,
            "groups_empty": self.groups_empty,
        }


_CHECKED: dict[tuple, images.Checked] = {}
_CHECKED_LOCK = threading.Lock()


def _check(entry: Entry, settings: Settings) -> images.Checked:
    """Decode ``entry``'s image once per process and file version (memoised: the tasks share a corpus)."""
    if entry.path is not None:
        key: tuple = ("file", entry.path, *file_version(entry.path))
    else:
        dataset = images.hf_dataset(settings.hf_name, settings.hf_split)
        key = ("hf", settings.hf_name, settings.hf_split, settings.column("image"), entry.index, dataset._fingerprint)
    with _CHECKED_LOCK:
        found = _CHECKED.get(key)
    if found is not None:
        return found
    if entry.path is not None:
        checked = images.check_image_file(entry.path)
    else:
        data = images.hf_image_bytes(settings.hf_name, settings.hf_split, settings.column("image"), entry.index or 0)
        checked = images.check_image_bytes(data)
    with _CHECKED_LOCK:
        _CHECKED[key] = checked
    return checked


def _item_name(settings: Settings, entry: Entry) -> str:
    return f"hf:{settings.hf_name} {entry.image_id}" if entry.index is not None else entry.image_id


def _fingerprint(kept: list[CorpusImage]) -> str:
    digest = hashlib.sha256()
    for image in kept:
        d = image.entry.demographics
        digest.update(f"{image.entry.image_id}\t{image.sha256}\t{d.gender}\t{d.race}\t{d.age}\n".encode())
    return digest.hexdigest()[:16]


def describe_problems(settings: Settings, problems: list[str]) -> str:
    skip = (
        "FAIRLENS_ON_BAD_INPUT=skip"
        if settings.names.get("on_bad_input", "").startswith("FAIRLENS")
        else "--skip-bad-input"
    )
    return bad_input_message(f"FairLens corpus {settings.corpus}", problems, skip)


def load_corpus(settings: Settings) -> Corpus:
    """Read, filter, sample and check the corpus of ``settings``; raise :class:`CorpusError` on bad input."""
    found = scan(settings)
    problems: list[Problem] = list(found.problems)
    if found.from_list:
        eligible = list(found.entries)
        sampled = eligible
    else:
        eligible = [e for e in found.entries if MIN_AGE <= e.demographics.age <= MAX_AGE]
        sampled = stratified_sample(
            eligible, lambda e: e.demographics, lambda e: e.image_id, settings.sample_fraction, settings.seed
        )
    kept: list[CorpusImage] = []
    unreadable = 0
    for entry in sampled:
        try:
            checked = _check(entry, settings)
        except ValueError as error:
            problems.append(Problem(_item_name(settings, entry), str(error)))
            unreadable += 1
            continue
        kept.append(CorpusImage(entry=entry, unit=len(kept), sha256=checked.sha256))
    group_problems = []
    for attribute, groups in GROUPS.items():
        present = {image.entry.demographics.group(attribute) for image in kept}
        for group in groups:
            if group not in present:
                group_problems.append(
                    f"{attribute} group {group!r} has no image after sampling "
                    f"(FairLens compares all {len(groups)} {attribute} groups)"
                )
    messages = [str(p) for p in problems] + group_problems
    if messages and not settings.skip_bad_input:
        raise CorpusError(describe_problems(settings, messages))
    if messages:
        log.warning(
            "FairLens corpus %s: skipped %d bad item(s) and found %d empty group(s): %s",
            settings.corpus, len(problems), len(group_problems), "; ".join(messages[:MAX_LISTED_PROBLEMS]),
        )  # fmt: skip
    skipped = len(problems)
    corpus = Corpus(
        settings=settings,
        kind=found.kind,
        images=tuple(kept),
        found=found.found,
        loaded=found.found - skipped,
        skipped=skipped,
        eligible=len(eligible) - unreadable,
        groups_empty=len(group_problems),
        problems=tuple(messages),
        fingerprint=_fingerprint(kept),
        from_list=found.from_list,
    )
    if not kept:
        raise CorpusError(f"FairLens corpus {settings.corpus}: no image left to evaluate ({corpus.found} found)")
    return corpus
