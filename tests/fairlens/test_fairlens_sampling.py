"""UTKFace file names, label values, age bands, and the seeded stratified sample."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairlens_tasks.labels import (
    AGE_BANDS,
    GENDERS,
    RACES,
    Demographics,
    LabelError,
    age_band,
    parse_demographics,
    parse_utkface_name,
)
from fairlens_tasks.sampling import INTERLEAVED, STRATA, allocate, stratified_sample, stratum


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("25_0_0_20170113210319717.jpg.chip.jpg", ("Male", "White", 25)),
        ("61_1_3_20170109142408075.jpg.chip.jpg", ("Female", "Indian", 61)),
        ("30_1_4_20170116000000000.jpg", ("Female", "Other", 30)),
        ("101_0_2_20170112213001988.jpg.chip.jpg", ("Male", "Asian", 101)),
    ],
)
def test_utkface_names_parse(name: str, expected: tuple[str, str, int]) -> None:
    d = parse_utkface_name(name)
    assert (d.gender, d.race, d.age) == expected


@pytest.mark.parametrize(
    "name",
    [
        "39_1_20170116174525125.jpg.chip.jpg",  # the race field is missing (UTKFace has a few)
        "61_1_20170109142408075.jpg.chip.jpg",
        "25_2_0_20170113210319717.jpg",  # gender 2
        "25_0_5_20170113210319717.jpg",  # race 5
        "face.jpg",
        "25_0_0_.jpg",
    ],
)
def test_bad_utkface_names_are_rejected(name: str) -> None:
    with pytest.raises(LabelError, match="does not parse"):
        parse_utkface_name(name)


def test_age_bands_follow_the_released_thresholds() -> None:
    assert [age_band(a) for a in (25, 29, 30, 59, 60, 65)] == ["young", "young", "middle", "middle", "senior", "senior"]


@pytest.mark.parametrize(
    ("gender", "race", "age", "expected"),
    [
        ("male", "white", "34", ("Male", "White", 34)),
        ("F", "Black", 61.0, ("Female", "Black", 61)),
        (0, 2, 25, ("Male", "Asian", 25)),
        ("1", "4", 40, ("Female", "Other", 40)),
        (" Woman ", "INDIAN", 59, ("Female", "Indian", 59)),
    ],
)
def test_manifest_label_values(gender: object, race: object, age: object, expected: tuple) -> None:
    d = parse_demographics(gender, race, age)
    assert (d.gender, d.race, d.age) == expected


def test_label_errors_name_every_bad_field() -> None:
    with pytest.raises(LabelError) as info:
        parse_demographics(None, "Martian", "forty")
    message = str(info.value)
    assert "missing gender" in message and "Martian" in message and "forty" in message


def test_label_map_renames_values_first() -> None:
    mapping = {"race": {"East Asian": "Asian", "Latino_Hispanic": "Other"}}
    assert parse_demographics("male", "east asian", 30, mapping).race == "Asian"
    assert parse_demographics("male", "Latino_Hispanic", 30, mapping).race == "Other"


# --------------------------------------------------------------------------- allocation
def test_allocation_by_hand() -> None:
    # quotas 2.5, 0.3, 1.9, 5.3 with f = 0.1 -> floors 2, 1 (at least one), 1, 5 = 9; target round(10.0) = 10;
    # the largest remainder (1.9 -> .9) gets the extra image.
    assert allocate([25, 3, 19, 53], 0.1) == [2, 1, 2, 5]
    assert allocate([0, 7, 0], 0.1) == [0, 1, 0]  # a lone small stratum is still represented
    assert allocate([10, 10], 1.0) == [10, 10]
    assert allocate([1, 1, 1, 1, 1, 1], 0.1) == [1] * 6  # over the target: every stratum keeps one


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=30), st.floats(0.01, 1.0))
def test_allocation_properties(sizes: list[int], fraction: float) -> None:
    counts = allocate(sizes, fraction)
    assert all(0 <= c <= n for c, n in zip(counts, sizes, strict=True))
    assert all(c >= 1 for c, n in zip(counts, sizes, strict=True) if n > 0)  # every stratum represented
    target = min(sum(sizes), math.floor(fraction * sum(sizes) + 0.5))
    floors = sum(max(1, math.floor(fraction * n + 1e-9)) for n in sizes if n > 0)
    assert sum(counts) == max(target, floors)
    for c, n in zip(counts, sizes, strict=True):  # proportions hold to within one image per stratum
        if n and c > 1:
            assert abs(c - fraction * n) < 1 + 1e-9


# --------------------------------------------------------------------------- the sample itself
def _population(seed: int = 7, size: int = 15_050) -> list[tuple[str, Demographics]]:
    rng = random.Random(seed)
    weights_race = [622, 353, 171, 276, 83]  # paper Table 1 composition, to mimic UTKFace's imbalance
    people = []
    for i in range(size):
        gender = rng.choices(GENDERS, [855, 650])[0]
        race = rng.choices(RACES, weights_race)[0]
        age = rng.choices([rng.randint(25, 29), rng.randint(30, 59), rng.randint(60, 65)], [519, 876, 110])[0]
        people.append((f"img{i:05d}", Demographics(gender, race, age)))
    return people


def _sample(people: list, fraction: float = 0.1, seed: int = 0) -> list:
    return stratified_sample(people, lambda p: p[1], lambda p: p[0], fraction, seed)


def test_sample_is_seeded_and_order_independent() -> None:
    people = _population()
    first = _sample(people)
    assert first == _sample(list(reversed(people)))  # file-system order does not matter
    assert first == _sample(people, seed=0)
    assert first != _sample(people, seed=1)
    assert len(first) == 1505


def test_sample_proportions_hold() -> None:
    people = _population()
    sample = _sample(people)
    by_stratum_pop = {s: 0 for s in STRATA}
    by_stratum_sample = {s: 0 for s in STRATA}
    for _, d in people:
        by_stratum_pop[stratum(d)] += 1
    for _, d in sample:
        by_stratum_sample[stratum(d)] += 1
    for s in STRATA:
        assert abs(by_stratum_sample[s] - 0.1 * by_stratum_pop[s]) <= 1, s
        assert by_stratum_sample[s] >= 1
    for attribute in ("gender", "race", "age_band"):
        population = Counter(getattr(d, attribute) for _, d in people)
        drawn = Counter(getattr(d, attribute) for _, d in sample)
        for group, count in population.items():
            assert abs(drawn[group] / len(sample) - count / len(people)) < 0.005, (attribute, group)


def test_every_stratum_is_represented_when_possible() -> None:
    people = [
        (f"p{i}", Demographics(g, r, {"young": 26, "middle": 40, "senior": 62}[b]))
        for i, (g, r, b) in enumerate(STRATA)
    ]
    sample = _sample(people, 0.1)
    assert len(sample) == 30
    assert {stratum(d) for _, d in sample} == set(STRATA)


def test_sample_is_round_robin_over_interleaved_strata() -> None:
    sample = _sample(_population(), 0.1)
    first = [stratum(d) for _, d in sample[: len(STRATA)]]
    assert first == list(INTERLEAVED) and set(first) == set(STRATA)  # the first 30 images cover all 30 strata
    assert [stratum(d) for _, d in sample[len(STRATA) : 2 * len(STRATA)]] == list(INTERLEAVED)  # then again


@pytest.mark.parametrize("prefix", range(2, 31))
def test_every_prefix_is_balanced_over_each_attribute(prefix: int) -> None:
    """A --limit prefix of k images alternates the genders and cycles races and bands (review m3: the first 13
    images used to be all male)."""
    first = [stratum(d) for _, d in _sample(_population(), 0.1)[:prefix]]
    for position, values in ((0, GENDERS), (1, RACES), (2, AGE_BANDS)):
        counts = [sum(s[position] == v for s in first) for v in values]
        assert max(counts) - min(counts) <= 1, (prefix, counts)


def test_full_fraction_keeps_everyone() -> None:
    people = _population(size=300)
    assert sorted(p[0] for p in _sample(people, 1.0)) == sorted(p[0] for p in people)
    assert set(AGE_BANDS) == {"young", "middle", "senior"}
