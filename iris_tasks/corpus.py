"""The evaluated corpora: read, keep IRIS's labels, sample (seeded), check every sampled image, account.

**Image corpus** (``IRIS_CORPUS``; ``iris_ifs_und`` and the SDS half of ``iris_rfs_und``):

1. read it (:mod:`iris_tasks.sources`); FACET persons outside IRIS's label sets are *excluded*;
2. balance (optional): at most ``IRIS_MAX_PER_CELL`` images per occupation x gender x age x skin cell;
3. sample a stratified fraction ``IRIS_SAMPLE_FRACTION`` over the same cells (FairLens's allocation:
   :func:`fairness_evals.corpus.sampling.allocate`, at least one image per non-empty cell, largest remainders);
   within a cell ``random.Random("iris/sample/seed-<seed>/<occupation>/<gender>/<age>/<skin>")`` draws from
   the images sorted by id; images come round-robin over the cells, so a ``--limit`` prefix spans groups;
4. decode every sampled image once (unreadable or corrupt images, images over the pixel limit, boxes outside
   the image, and images or crops under the minimum face size are bad: :mod:`fairness_evals.corpus.integrity`);
5. each of the 8 single-attribute groups (2 genders, 3 ages, 3 skin tones) must keep an image.

**Counterfactual sets** (``IRIS_STEER_CORPUS``; ``iris_bis_und``): images are grouped by ``pair_id``; a
set must show one occupation and at least two different attribute triples (else it has no pair); a
stratified fraction of the sets per occupation is drawn with ``random.Random("iris/sets/seed-<seed>/
<occupation>")``; every image of a drawn set is decoded once; an objective question whose truth column
is filled for some image must be filled for every image.

By default any bad item stops the run before the model is called, with one message naming the items;
with ``IRIS_ON_BAD_INPUT=skip`` bad items (and sets left without a pair) are skipped and counted.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fairness_evals.corpus.evaluated import CorpusError, CorpusImage, EvaluatedCorpus, empty_groups, stop_or_skip
from fairness_evals.corpus.integrity import clear_checked
from fairness_evals.corpus.sampling import allocate, round_robin
from fairness_evals.corpus.sources import Problem
from iris_tasks import images
from iris_tasks.settings import HF_PREFIX, Settings
from iris_tasks.sources import Entry, objective_keys, scan
from iris_tasks.vocabulary import ATTRIBUTES, CATEGORIES, COMBINATIONS, occupation_ids

log = logging.getLogger("fairness_evals.iris")


def _hf_parts(settings: Settings, corpus: str, steer: bool) -> tuple[str, str | None, str]:
    columns = dict(settings.steer_hf_columns if steer else settings.hf_columns)
    return corpus[len(HF_PREFIX) :], (settings.steer_hf_split if steer else settings.hf_split), columns["image"]


def image_source(entry: Entry, settings: Settings, corpus: str, steer: bool) -> dict:
    """Keyword arguments of :func:`iris_tasks.images.load_image` for ``entry``."""
    if entry.path is not None:
        return {"path": entry.path, "box": entry.box}
    name, split, column = _hf_parts(settings, corpus, steer)
    return {"hf": (name, split, column, int(entry.index or 0)), "box": entry.box}


def _check(entry: Entry, settings: Settings, corpus: str, steer: bool) -> str:
    """The sha256 of ``entry``'s image after its integrity check (and its crop's); ``ValueError`` when it is bad."""
    return images.check_image(**image_source(entry, settings, corpus, steer))[0]


# --------------------------------------------------------------------------- image corpus
@dataclass(frozen=True, kw_only=True)
class ImageCorpus(EvaluatedCorpus):
    """The evaluated IRIS image corpus (``corpus`` as given); ``excluded`` persons fell outside IRIS's label sets."""

    corpus: str
    excluded: int

    def provenance(self) -> dict[str, object]:
        return {
            "seed": self.settings.seed,
            "sample_fraction": self.settings.sample_fraction,
            "max_per_cell": self.settings.max_per_cell or 0,
            "corpus_sha256": self.fingerprint,
            **self.image_counts(images_excluded=self.excluded),
        }


def cell_of(entry: Entry) -> tuple[str, str, str, str]:
    p = entry.person
    return (p.occupation, p.gender, p.age, p.skin_tone)


CELLS: tuple[tuple[str, str, str, str], ...] = ()


def cells() -> tuple[tuple[str, str, str, str], ...]:
    global CELLS
    if not CELLS:
        CELLS = tuple((o, *c) for o in occupation_ids() for c in COMBINATIONS)
    return CELLS


def balanced_sample(entries: list[Entry], fraction: float, cap: int | None, seed: int) -> list[Entry]:
    """Steps 2-3 of the module docstring: cap per cell, then the stratified fraction, round-robin."""
    by_cell: dict[tuple[str, str, str, str], list[Entry]] = {c: [] for c in cells()}
    for entry in entries:
        by_cell[cell_of(entry)].append(entry)
    drawn: list[list[Entry]] = []
    order = cells()
    pools = []
    for cell in order:
        members = sorted(by_cell[cell], key=lambda e: e.image_id)
        rng = random.Random(f"iris/sample/seed-{seed}/{'/'.join(cell)}")
        if cap is not None and len(members) > cap:
            members = rng.sample(members, cap)
        pools.append((members, rng))
    counts = allocate([len(m) for m, _ in pools], fraction)
    for (members, rng), count in zip(pools, counts, strict=True):
        drawn.append(rng.sample(members, count) if count < len(members) else list(members))
    return round_robin(drawn)


def _fingerprint(kept: list[CorpusImage]) -> str:
    digest = hashlib.sha256()
    for image in kept:
        p = image.entry.person
        digest.update(
            f"{image.entry.image_id}\t{image.sha256}\t{image.entry.box}\t{p.occupation}\t{p.gender}\t{p.age}\t"
            f"{p.skin_tone}\t{image.entry.pair_id}\t{image.entry.truths}\n".encode()
        )
    return digest.hexdigest()[:16]


_LOADED: dict[tuple[str, Settings], Any] = {}
_LOADED_LOCK = threading.Lock()


def _memoised(kind: str, settings: Settings, which: str, load: Callable[[Settings, str], Any]) -> Any:
    """``load(settings, corpus)`` of the corpus setting ``which``, once per ``kind`` and settings."""
    corpus = settings.require(which)
    with _LOADED_LOCK:
        found = _LOADED.get((kind, settings))
    if found is not None:
        return found
    result = load(settings, corpus)
    with _LOADED_LOCK:
        _LOADED[(kind, settings)] = result
    return result


def load_image_corpus(settings: Settings) -> ImageCorpus:
    """Read, sample and check ``IRIS_CORPUS``; raise :class:`CorpusError` on bad input (memoised per settings)."""
    return _memoised("image", settings, "corpus", _load_image_corpus)


def _load_image_corpus(settings: Settings, corpus: str) -> ImageCorpus:
    read = scan(corpus, settings, steer=False)
    problems: list[Problem] = list(read.problems)
    sampled = balanced_sample(read.entries, settings.sample_fraction, settings.max_per_cell, settings.seed)
    kept: list[CorpusImage] = []
    unreadable = 0
    for entry in sampled:
        try:
            sha = _check(entry, settings, corpus, steer=False)
        except ValueError as error:
            problems.append(Problem(entry.image_id, str(error)))
            unreadable += 1
            continue
        kept.append(CorpusImage(entry=entry, unit=len(kept), sha256=sha))
    groups_empty = empty_groups(
        (image.entry.person for image in kept),
        {attribute: CATEGORIES[attribute] for attribute in ATTRIBUTES},
        getattr,
    )
    messages = stop_or_skip(log, f"IRIS corpus {corpus}", settings, problems, groups_empty)
    if read.excluded:
        log.info(
            "IRIS corpus %s: %d person(s) outside IRIS's label sets left out: %s",
            corpus, sum(read.excluded.values()), dict(read.excluded),
        )  # fmt: skip
    if not kept:
        raise CorpusError(f"IRIS corpus {corpus}: no image left to evaluate ({read.found} found)")
    skipped = len(problems)
    excluded = sum(read.excluded.values())
    return ImageCorpus(
        settings=settings,
        corpus=corpus,
        kind=read.kind,
        images=tuple(kept),
        found=read.found,
        loaded=read.found - skipped,
        skipped=skipped,
        excluded=excluded,
        eligible=len(read.entries) - unreadable,
        groups_empty=len(groups_empty),
        problems=tuple(messages),
        fingerprint=_fingerprint(kept),
    )


# --------------------------------------------------------------------------- counterfactual sets
@dataclass(frozen=True)
class SteerSet:
    pair_id: str
    occupation: str
    unit: int
    images: tuple[CorpusImage, ...]


@dataclass(frozen=True)
class SteerCorpus:
    settings: Settings
    corpus: str
    kind: str
    sets: tuple[SteerSet, ...]
    found: int
    loaded: int
    skipped: int
    sets_found: int
    sets_skipped: int
    truth_keys: tuple[str, ...]
    problems: tuple[str, ...]
    fingerprint: str

    @property
    def images(self) -> tuple[CorpusImage, ...]:
        return tuple(image for s in self.sets for image in s.images)

    def provenance(self) -> dict[str, object]:
        return {
            "seed": self.settings.seed,
            "sample_fraction": self.settings.sample_fraction,
            "corpus_sha256": self.fingerprint,
            "images_found": self.found,
            "images_loaded": self.loaded,
            "images_skipped": self.skipped,
            "images_sampled": len(self.images),
            "sets_found": self.sets_found,
            "sets_skipped": self.sets_skipped,
            "sets_sampled": len(self.sets),
            "dhr_truth_questions": len(self.truth_keys),
        }


def _set_problem(pair_id: str, members: list[Entry]) -> str | None:
    occupations = sorted({e.person.occupation for e in members})
    if len(occupations) > 1:
        return f"set {pair_id!r} mixes occupations ({', '.join(occupations)}); a counterfactual set shows one"
    if len({e.person.triple for e in members}) < 2:
        return (
            f"set {pair_id!r} has no pair: its {len(members)} image(s) share one gender, age and skin tone "
            "(a counterfactual set needs images that differ in at least one)"
        )
    return None


def load_steer_corpus(settings: Settings) -> SteerCorpus:
    """Read, sample and check ``IRIS_STEER_CORPUS``; raise :class:`CorpusError` on bad input (memoised)."""
    return _memoised("steer", settings, "steer_corpus", _load_steer_corpus)


def _load_steer_corpus(settings: Settings, corpus: str) -> SteerCorpus:
    read = scan(corpus, settings, steer=True)
    problems: list[str] = [str(p) for p in read.problems]
    skipped_images = len(read.problems)
    by_set: dict[str, list[Entry]] = defaultdict(list)
    for entry in read.entries:
        by_set[entry.pair_id].append(entry)
    sets_skipped = 0
    by_occupation: dict[str, list[tuple[str, list[Entry]]]] = defaultdict(list)
    for pair_id in sorted(by_set):
        members = sorted(by_set[pair_id], key=lambda e: e.image_id)
        problem = _set_problem(pair_id, members)
        if problem:
            problems.append(problem)
            sets_skipped += 1
            skipped_images += len(members)
            continue
        by_occupation[members[0].person.occupation].append((pair_id, members))
    occupations = [o for o in occupation_ids() if by_occupation[o]]
    counts = allocate([len(by_occupation[o]) for o in occupations], settings.sample_fraction) if occupations else []
    chosen: list[tuple[str, list[Entry]]] = []
    for occupation, count in zip(occupations, counts, strict=True):
        pool = by_occupation[occupation]
        rng = random.Random(f"iris/sets/seed-{settings.seed}/{occupation}")
        chosen.extend(rng.sample(pool, count) if count < len(pool) else pool)
    chosen.sort(key=lambda item: item[0])
    truth_keys = tuple(k for k in objective_keys() if any(k in dict(e.truths) for _, m in chosen for e in m))
    sets: list[SteerSet] = []
    unit = 0
    for pair_id, members in chosen:
        kept_entries = []
        for entry in members:
            missing = [k for k in truth_keys if k not in dict(entry.truths)]
            if missing:
                problems.append(
                    f"{entry.image_id}: no {', '.join(missing)} annotation (other images of the corpus have one)"
                )
                skipped_images += 1
                continue
            try:
                sha = _check(entry, settings, corpus, steer=True)
            except ValueError as error:
                problems.append(f"{entry.image_id}: {error}")
                skipped_images += 1
                continue
            kept_entries.append((entry, sha))
        problem = (
            _set_problem(pair_id, [e for e, _ in kept_entries]) if kept_entries else f"set {pair_id!r} lost every image"
        )
        if problem:
            if kept_entries:
                problems.append(problem)
            sets_skipped += 1
            skipped_images += len(kept_entries)
            continue
        start = sum(len(s.images) for s in sets)
        kept = tuple(CorpusImage(entry=e, unit=start + i, sha256=sha) for i, (e, sha) in enumerate(kept_entries))
        sets.append(SteerSet(pair_id=pair_id, occupation=members[0].person.occupation, unit=unit, images=kept))
        unit += 1
    stop_or_skip(log, f"IRIS counterfactual sets {corpus}", settings, problems)
    if not sets:
        raise CorpusError(f"IRIS counterfactual sets {corpus}: no set left to evaluate ({read.found} images found)")
    all_images = [image for s in sets for image in s.images]
    return SteerCorpus(
        settings=settings,
        corpus=corpus,
        kind=read.kind,
        sets=tuple(sets),
        found=read.found,
        loaded=read.found - skipped_images,
        skipped=skipped_images,
        sets_found=len(by_set),
        sets_skipped=sets_skipped,
        truth_keys=truth_keys,
        problems=tuple(problems),
        fingerprint=_fingerprint(all_images),
    )


def clear() -> None:
    """Forget loaded corpora and checked images (tests)."""
    with _LOADED_LOCK:
        _LOADED.clear()
    clear_checked()


__all__ = [
    "CorpusError",
    "CorpusImage",
    "ImageCorpus",
    "SteerCorpus",
    "SteerSet",
    "balanced_sample",
    "load_image_corpus",
    "load_steer_corpus",
]
