"""The shipped IRIS vocabulary: the 52 occupations, our alias table, the questions, the label sets.

Data files (``iris_tasks/data``, provenance in each file and in the README):

- ``occupations.json``: the 52 FACET occupation classes (ids ``disk_jockey``, names ``disk jockey``);
- ``occupation_aliases.json``: our alias table, which replaces the released mapper's WordNet stage;
- ``questions.json``: every prompt the three tasks send, with the paper's wording beside ours;
- ``real_world_distributions.json``: the U.S. (CPS) and E.U. (LFS) reference tables.

Labels are the IRIS label sets of :mod:`metrics.iris` (gender male/female, age young/middle/older,
skin tone light/middle/dark). :func:`parse_label` reads the spellings corpora use.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairness_evals.corpus.labels import is_missing, label_text, mapped_label
from metrics.iris import AGES, GENDERS, SKIN_TONES

DATA_DIR = Path(__file__).resolve().parent / "data"

ATTRIBUTES: tuple[str, ...] = ("gender", "age", "skin_tone")
CATEGORIES: dict[str, tuple[str, ...]] = {"gender": GENDERS, "age": AGES, "skin_tone": SKIN_TONES}
#: The 18 attribute combinations (gender-major), the cells of the triple level and of the probe.
COMBINATIONS: tuple[tuple[str, str, str], ...] = tuple((g, a, s) for g in GENDERS for a in AGES for s in SKIN_TONES)

#: Each label spelling and the category it means. What the codes mean: IRIS's annotations.csv (gender_label 0 male /
#: 1 female, age_label 0 young / 1 middle-aged / 2 older, skin_label 0 light / 1 middle / 2 dark).
_LABEL_WORDS: dict[str, dict[str, str]] = {
    "gender": {
        "male": "male", "m": "male", "man": "male", "men": "male", "masculine": "male", "masc": "male", "0": "male",
        "female": "female", "f": "female", "woman": "female", "women": "female", "feminine": "female",
        "fem": "female", "1": "female",
    },
    "age": {
        "young": "young", "younger": "young", "0": "young",
        "middle": "middle", "middle-aged": "middle", "middle aged": "middle", "middle_aged": "middle", "1": "middle",
        "older": "older", "old": "older", "elderly": "older", "senior": "older", "2": "older",
    },
    "skin_tone": {
        "light": "light", "lighter": "light", "0": "light",
        "middle": "middle", "medium": "middle", "1": "middle",
        "dark": "dark", "darker": "dark", "2": "dark",
    },
}  # fmt: skip


class LabelError(ValueError):
    """A label that is missing or not one of the accepted spellings."""


def _raw(path: str) -> dict[str, Any]:
    with open(DATA_DIR / path, encoding="utf-8") as handle:
        return json.load(handle)


@functools.cache
def occupations_data() -> dict[str, Any]:
    return _raw("occupations.json")


@functools.cache
def aliases_data() -> dict[str, Any]:
    return _raw("occupation_aliases.json")


@functools.cache
def questions_data() -> dict[str, Any]:
    return _raw("questions.json")


@functools.cache
def real_world() -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """``{"US": {occupation: {attribute: {category: share}}}, "EU": {...}}`` (shares as published)."""
    data = _raw("real_world_distributions.json")
    out: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for region, key in (("US", "US_CPS"), ("EU", "EU_LFS")):
        out[region] = {
            occupation: {a: dict(row[a]) for a in ATTRIBUTES if a in row} for occupation, row in data[key].items()
        }
    return out


def data_version() -> int:
    """The data version of the shipped files (all four carry the same number)."""
    versions = {occupations_data()["data_version"], aliases_data()["data_version"], questions_data()["data_version"]}
    if len(versions) != 1:
        raise RuntimeError(f"iris_tasks data files disagree on data_version: {sorted(versions)}")
    return int(next(iter(versions)))


@functools.cache
def occupation_ids() -> tuple[str, ...]:
    """The 52 occupation ids in paper Table 20 order (FACET keys: ``basketball_player``)."""
    return tuple(o["id"] for o in occupations_data()["occupations"])


@functools.cache
def occupation_names() -> dict[str, str]:
    """Occupation id -> display name (``disk_jockey`` -> ``disk jockey``)."""
    return {o["id"]: o["name"] for o in occupations_data()["occupations"]}


#: Index of "unmappable" in the predicted-class axis (after the 52 occupations).
UNMAPPABLE_INDEX = 52


def with_article(phrase: str) -> str:
    """``"a doctor"``, ``"an astronaut"`` (by the first letter: every occupation name is regular)."""
    return f"{'an' if phrase[:1].lower() in 'aeiou' else 'a'} {phrase}"


def _key(text: str) -> str:
    return re.sub(r"[\s_\-]+", " ", text.strip().lower())


@functools.cache
def _occupation_lookup() -> dict[str, str]:
    table = {}
    for occupation, name in occupation_names().items():
        table[_key(occupation)] = occupation
        table[_key(name)] = occupation
    return table


def parse_occupation(value: object) -> str:
    """An occupation id from ``"disk jockey"``, ``"Disk_Jockey"``, ``"disk-jockey"``; LabelError otherwise."""
    if is_missing(value):
        raise LabelError("missing occupation")
    found = _occupation_lookup().get(_key(str(value)))
    if found is None:
        raise LabelError(f"occupation {value!r} is not one of the 52 IRIS/FACET occupations")
    return found


def parse_label(attribute: str, value: object, label_map: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """The IRIS label of ``attribute`` for a corpus value, after the user's label map.

    Accepted (case-insensitive): gender ``male/m/man/masculine/0``, ``female/f/woman/feminine/1``; age
    ``young/0``, ``middle/middle-aged/1``, ``older/old/elderly/senior/2``; skin tone ``light/0``,
    ``middle/medium/1``, ``dark/2``. The codes are IRIS's ``annotations.csv`` codes.
    """
    value = mapped_label(attribute, value, label_map)
    if is_missing(value):
        raise LabelError(f"missing {attribute}")
    found = _LABEL_WORDS[attribute].get(label_text(value).lower())
    if found is None:
        allowed = "/".join(CATEGORIES[attribute])
        raise LabelError(
            f"{attribute} {value!r} is not one of {allowed} (or the codes 0-{len(CATEGORIES[attribute]) - 1})"
        )
    return found


@dataclass(frozen=True)
class Person:
    """The labels of one image: occupation id and the three IRIS attributes."""

    occupation: str
    gender: str
    age: str
    skin_tone: str

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.gender, self.age, self.skin_tone)

    def combination_index(self) -> int:
        return COMBINATIONS.index(self.triple)


def parse_person(
    occupation: object,
    gender: object,
    age: object,
    skin_tone: object,
    label_map: Mapping[str, Mapping[str, str]] | None = None,
) -> Person:
    """All four labels, or :class:`LabelError` naming every missing or invalid one."""
    errors, parsed = [], {}
    try:
        parsed["occupation"] = parse_occupation(mapped_label("occupation", occupation, label_map))
    except LabelError as error:
        errors.append(str(error))
    for attribute, value in (("gender", gender), ("age", age), ("skin_tone", skin_tone)):
        try:
            parsed[attribute] = parse_label(attribute, value, label_map)
        except LabelError as error:
            errors.append(str(error))
    if errors:
        raise LabelError("; ".join(errors))
    return Person(**parsed)


@dataclass(frozen=True)
class Question:
    id: str
    task: str
    type: str
    category: str
    key: str
    text: str
    paper_text: str
    source: str
    index: int

    @property
    def ours(self) -> bool:
        return self.source.startswith("fairness-evals")


@functools.cache
def questions() -> tuple[Question, ...]:
    return tuple(Question(index=i, **q) for i, q in enumerate(questions_data()["questions"]))


def question(question_id: str) -> Question:
    for q in questions():
        if q.id == question_id:
            return q
    raise KeyError(f"no IRIS question {question_id!r}")


def task_questions(task: str, kind: str | None = None) -> tuple[Question, ...]:
    return tuple(q for q in questions() if q.task == task and (kind is None or q.type == kind))


def probe_wording() -> dict[str, dict[str, str]]:
    return questions_data()["probe_wording"]
