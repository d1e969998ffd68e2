"""Demographic labels: the paper's groups, UTKFace file names, and label values from manifests.

Groups (paper section 3 / Appendix A): gender {Male, Female}, race {White, Black, Asian, Indian,
Other}, age band {young (< 30), middle (30-59), senior (>= 60)}. Metric names use the lower-case group
names (``adverse_rate_race_white``, ``adverse_rate_age_senior``).

Accepted label values, case-insensitive, after an optional user label map:

- gender: ``Male``/``M``/``man``/``0`` and ``Female``/``F``/``woman``/``1`` (0 = male, 1 = female as in
  UTKFace);
- race: ``White``, ``Black``, ``Asian``, ``Indian``, ``Other`` or the UTKFace codes ``0``-``4``;
- age: a whole number of years (``"34"``, ``34``, ``34.0``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from fairness_evals.corpus.labels import is_missing, label_text, mapped_label

GENDERS = ("Male", "Female")
RACES = ("White", "Black", "Asian", "Indian", "Other")
AGE_BANDS = ("young", "middle", "senior")
ATTRIBUTES = ("gender", "race", "age")
GROUPS: dict[str, tuple[str, ...]] = {"gender": GENDERS, "race": RACES, "age": AGE_BANDS}

MIN_AGE, MAX_AGE = 25, 65  # paper: adults aged 25 to 65 (inclusive)

_GENDER_WORDS = {
    "male": "Male", "m": "Male", "man": "Male", "0": "Male",
    "female": "Female", "f": "Female", "woman": "Female", "1": "Female",
}  # fmt: skip
_RACE_WORDS = {name.lower(): name for name in RACES} | {str(code): name for code, name in enumerate(RACES)}

# [age]_[gender]_[race]_[date&time].jpg, optionally followed by ".chip.jpg" (aligned & cropped faces).
UTKFACE_NAME = re.compile(r"^(\d{1,3})_([01])_([0-4])_(\d{8,})(?:\.[^.]+)*$")


class LabelError(ValueError):
    """A label that is missing or not one of the accepted values."""


@dataclass(frozen=True)
class Demographics:
    gender: str
    race: str
    age: int

    @property
    def age_band(self) -> str:
        return age_band(self.age)

    def group(self, attribute: str) -> str:
        return self.age_band if attribute == "age" else getattr(self, attribute)

    def codes(self) -> tuple[int, int, int]:
        """(gender, race, age band) as indices into :data:`GENDERS`, :data:`RACES`, :data:`AGE_BANDS`."""
        return GENDERS.index(self.gender), RACES.index(self.race), AGE_BANDS.index(self.age_band)


def age_band(age: int) -> str:
    """young < 30 <= middle < 60 <= senior (the released statistical evaluation's three bands)."""
    if age < 30:
        return "young"
    if age < 60:
        return "middle"
    return "senior"


def metric_group(group: str) -> str:
    """The group's spelling in metric names: lower case."""
    return group.lower()


def parse_gender(value: object, label_map: Mapping[str, Mapping[str, str]] | None = None) -> str:
    value = mapped_label("gender", value, label_map)
    if is_missing(value):
        raise LabelError("missing gender")
    found = _GENDER_WORDS.get(label_text(value).lower())
    if found is None:
        raise LabelError(f"gender {value!r} is not one of Male/Female (or 0/1)")
    return found


def parse_race(value: object, label_map: Mapping[str, Mapping[str, str]] | None = None) -> str:
    value = mapped_label("race", value, label_map)
    if is_missing(value):
        raise LabelError("missing race")
    found = _RACE_WORDS.get(label_text(value).lower())
    if found is None:
        raise LabelError(f"race {value!r} is not one of {'/'.join(RACES)} (or 0-4)")
    return found


def parse_age(value: object, label_map: Mapping[str, Mapping[str, str]] | None = None) -> int:
    value = mapped_label("age", value, label_map)
    if is_missing(value):
        raise LabelError("missing age")
    text = label_text(value)
    if not re.fullmatch(r"\d{1,3}", text):
        raise LabelError(f"age {value!r} is not a whole number of years")
    age = int(text)
    if age > 130:
        raise LabelError(f"age {age} is not a plausible age")
    return age


def parse_demographics(
    gender: object, race: object, age: object, label_map: Mapping[str, Mapping[str, str]] | None = None
) -> Demographics:
    """All three labels, or :class:`LabelError` naming every missing or invalid one."""
    errors = []
    parsed: dict[str, object] = {}
    for name, parser, value in (("gender", parse_gender, gender), ("race", parse_race, race), ("age", parse_age, age)):
        try:
            parsed[name] = parser(value, label_map)
        except LabelError as error:
            errors.append(str(error))
    if errors:
        raise LabelError("; ".join(errors))
    return Demographics(gender=parsed["gender"], race=parsed["race"], age=parsed["age"])  # type: ignore[arg-type]


def parse_utkface_name(name: str) -> Demographics:
    """Labels from a UTKFace file name ``[age]_[gender]_[race]_[date&time].jpg[.chip.jpg]``.

    Raises :class:`LabelError` for names that do not follow the pattern (UTKFace has a few without the
    race field, e.g. ``39_1_20170116174525125.jpg.chip.jpg``).
    """
    match = UTKFACE_NAME.match(name)
    if not match:
        raise LabelError("file name does not parse as [age]_[gender]_[race]_[date&time].jpg")
    age, gender, race, _ = match.groups()
    return Demographics(gender=GENDERS[int(gender)], race=RACES[int(race)], age=int(age))
