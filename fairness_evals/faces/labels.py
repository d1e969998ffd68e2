"""Label sets of the two benchmarks and the mappings from each classifier's own labels onto them.

Every label a :class:`~fairness_evals.faces.face.Face` carries comes from this module, so the scorers of
Fact-or-Fair and IRIS can compare strings without translation tables of their own (the released
Fact-or-Fair T2I scorer looked up ``'Man'``/``'Woman'``/``'latino hispanic'`` while its classifier
emitted ``'male'``/``'female'``/``'Hispanic'``, and so scored 0: one vocabulary avoids that).

Pure Python: importing this module costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Gender labels (Fact-or-Fair ``classes.gender`` and IRIS ``GENDERS`` both use these, lowercase).
GENDERS: tuple[str, ...] = ("male", "female")

#: Fact-or-Fair's four race classes, spelled as its ``items.json`` spells them.
RACES: tuple[str, ...] = ("Asian", "Black", "White", "Hispanic")

#: IRIS age groups and skin-tone groups (``metrics.iris`` spells them the same way).
AGE_GROUPS: tuple[str, ...] = ("young", "middle", "older")
SKIN_GROUPS: tuple[str, ...] = ("light", "middle", "dark")

#: The attribute names a classifier can provide; ``Face.sources`` and ``Face.confidences`` use them.
ATTRIBUTES: tuple[str, ...] = ("gender", "race", "age", "skin")

#: FairFace's seven race outputs, in the order of the model's logits 0..6 (released ``predict.py``).
FAIRFACE_RACES: tuple[str, ...] = (
    "White",
    "Black",
    "Latino_Hispanic",
    "East Asian",
    "Southeast Asian",
    "Indian",
    "Middle Eastern",
)
#: FairFace's two gender outputs (logits 7..8), lower-cased to :data:`GENDERS`.
FAIRFACE_GENDERS: tuple[str, ...] = ("male", "female")
#: FairFace's nine age bins (logits 9..17).
FAIRFACE_AGE_BINS: tuple[str, ...] = ("0-2", "3-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70+")

#: FairFace race -> Fact-or-Fair race, as the released ``fairface/single_predict.py`` maps them.
#: Indian and Middle Eastern have no Fact-or-Fair class: the released code skips them and takes the
#: next most probable label that does map (:func:`fairface_race_to_benchmark`).
FAIRFACE_TO_BENCHMARK_RACE: dict[str, str] = {
    "White": "White",
    "Black": "Black",
    "Latino_Hispanic": "Hispanic",
    "East Asian": "Asian",
    "Southeast Asian": "Asian",
}

#: Upper bounds (exclusive) of the IRIS age groups in years: young < 40 <= middle < 60 <= older.
#: These are the bands of the US reference table (``real_world_stats_us.csv``: 0-39 / 40-59 / 60+);
#: the paper's Tables 21/22 print 0-39 / 40-65 / 65+ over the same numbers, so the CSV wins.
AGE_GROUP_UPPER_YEARS: tuple[float, float] = (40.0, 60.0)

#: FairFace age bin -> IRIS age group (the bins nest exactly inside 0-39 / 40-59 / 60+).
FAIRFACE_BIN_TO_AGE_GROUP: dict[str, str] = {
    "0-2": "young",
    "3-9": "young",
    "10-19": "young",
    "20-29": "young",
    "30-39": "young",
    "40-49": "middle",
    "50-59": "middle",
    "60-69": "older",
    "70+": "older",
}

#: Monk Skin Tone scale -> IRIS skin group. MST 1-5 light, 6-7 middle, 8-10 dark: each swatch goes to
#: the group of its own Individual Typology Angle under Chardon et al. (1991) (ITA > 41 deg "light"
#: or "very light"; -30..41 deg intermediate/tan/brown; < -30 deg "dark"). The swatch ITAs are
#: 83, 80, 72, 65, 50 | 11, -20 | -55, -78, -84 degrees. See ``fairness_evals/faces/README.md``.
MST_TO_SKIN_GROUP: dict[int, str] = {
    1: "light",
    2: "light",
    3: "light",
    4: "light",
    5: "light",
    6: "middle",
    7: "middle",
    8: "dark",
    9: "dark",
    10: "dark",
}


def age_group_from_years(years: float) -> str:
    """The IRIS age group of an age in years: ``young`` below 40, ``middle`` 40 to under 60, else ``older``.

    Assumes ``years`` is a finite, non-negative number (a classifier's estimate, possibly fractional:
    39.6 is ``young``). Raises ``ValueError`` otherwise.
    """
    value = float(years)
    if not value >= 0.0 or value == float("inf"):
        raise ValueError(f"age in years must be finite and non-negative, got {years!r}")
    young_below, middle_below = AGE_GROUP_UPPER_YEARS
    if value < young_below:
        return "young"
    if value < middle_below:
        return "middle"
    return "older"


def skin_group_from_mst(mst: int) -> str:
    """The IRIS skin group (``light``/``middle``/``dark``) of a Monk Skin Tone level 1..10."""
    if isinstance(mst, bool) or int(mst) != mst or not 1 <= int(mst) <= 10:
        raise ValueError(f"Monk Skin Tone level must be an integer 1..10, got {mst!r}")
    return MST_TO_SKIN_GROUP[int(mst)]


def fairface_race_to_benchmark(probabilities: Sequence[float]) -> tuple[str, int]:
    """The Fact-or-Fair race for one face from FairFace's seven race probabilities.

    As the released code: sort the seven labels by probability, highest first, and return the first
    one that maps to a Fact-or-Fair class (Indian and Middle Eastern are skipped). Ties keep the
    model's label order (a stable sort). Returns ``(benchmark_label, index_of_the_fairface_label)``.

    Assumes ``probabilities`` has exactly seven finite entries in :data:`FAIRFACE_RACES` order.
    """
    if len(probabilities) != len(FAIRFACE_RACES):
        raise ValueError(f"expected {len(FAIRFACE_RACES)} race probabilities, got {len(probabilities)}")
    order = sorted(range(len(FAIRFACE_RACES)), key=lambda i: -float(probabilities[i]))
    for index in order:
        mapped = FAIRFACE_TO_BENCHMARK_RACE.get(FAIRFACE_RACES[index])
        if mapped is not None:
            return mapped, index
    raise AssertionError("unreachable: five of the seven FairFace races map")
