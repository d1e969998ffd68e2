"""Label vocabularies and the mappings onto the benchmarks' groups."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairness_evals.faces import labels
from fairness_evals.faces.labels import (
    FAIRFACE_RACES,
    age_group_from_years,
    fairface_race_to_benchmark,
    skin_group_from_mst,
)


def test_vocabularies_match_the_benchmark_code() -> None:
    """One vocabulary: the labels a Face carries are exactly the ones the scorers of both benchmarks use."""
    from fact_fair_tasks.items import classes
    from metrics import iris

    assert classes("gender") == labels.GENDERS
    assert set(labels.RACES) == set(classes("race"))
    assert labels.GENDERS == iris.GENDERS
    assert labels.AGE_GROUPS == iris.AGES
    assert labels.SKIN_GROUPS == iris.SKIN_TONES


@pytest.mark.parametrize(
    ("years", "group"),
    [
        (0, "young"),
        (0.25, "young"),
        (39, "young"),
        (39.999, "young"),
        (40, "middle"),
        (59.99, "middle"),
        (60, "older"),
        (80, "older"),
        (104, "older"),
    ],
)
def test_age_group_from_years_uses_the_us_table_bands(years: float, group: str) -> None:
    assert age_group_from_years(years) == group


@pytest.mark.parametrize("bad", [-1, -0.01, math.nan, math.inf])
def test_age_group_from_years_rejects_impossible_ages(bad: float) -> None:
    with pytest.raises(ValueError, match="finite and non-negative"):
        age_group_from_years(bad)


def test_fairface_bins_nest_inside_the_iris_groups() -> None:
    """Every FairFace bin's lowest and highest age fall in the group the table gives it."""
    for age_bin, group in labels.FAIRFACE_BIN_TO_AGE_GROUP.items():
        low, _, high = age_bin.partition("-")
        low_years = float(low.rstrip("+"))
        high_years = float(high) if high else 120.0
        assert age_group_from_years(low_years) == group == age_group_from_years(high_years + 0.99)
    assert tuple(labels.FAIRFACE_BIN_TO_AGE_GROUP) == labels.FAIRFACE_AGE_BINS


def test_skin_groups_of_the_ten_monk_levels() -> None:
    assert [skin_group_from_mst(m) for m in range(1, 11)] == ["light"] * 5 + ["middle"] * 2 + ["dark"] * 3


def test_skin_groups_follow_the_swatches_own_ita_category() -> None:
    """The documented rule: a swatch is light if its ITA > 41 deg, dark if < -30 deg (Chardon et al.)."""
    from mst_swatches import swatch_ita

    for level, ita in enumerate(swatch_ita(), start=1):
        expected = "light" if ita > 41 else "dark" if ita < -30 else "middle"
        assert skin_group_from_mst(level) == expected, (level, ita)


@pytest.mark.parametrize("bad", [0, 11, 2.5, True, -3])
def test_skin_group_rejects_levels_outside_1_to_10(bad: object) -> None:
    with pytest.raises(ValueError, match=r"1\.\.10"):
        skin_group_from_mst(bad)  # type: ignore[arg-type]


def _probabilities(**named: float) -> list[float]:
    key = {name.replace(" ", "_"): name for name in FAIRFACE_RACES}
    p = [0.0] * 7
    for name, value in named.items():
        p[FAIRFACE_RACES.index(key[name])] = value
    return p


@pytest.mark.parametrize(
    ("probs", "expected", "chosen"),
    [
        (_probabilities(White=0.9, Black=0.1), "White", "White"),
        (_probabilities(Black=0.6, White=0.4), "Black", "Black"),
        (_probabilities(Latino_Hispanic=0.5, White=0.3), "Hispanic", "Latino_Hispanic"),
        (_probabilities(East_Asian=0.7), "Asian", "East Asian"),
        (_probabilities(Southeast_Asian=0.4, East_Asian=0.3), "Asian", "Southeast Asian"),
        # Indian and Middle Eastern have no Fact-or-Fair class: skip to the next best.
        (_probabilities(Indian=0.8, Black=0.15, White=0.05), "Black", "Black"),
        (
            _probabilities(Middle_Eastern=0.5, Indian=0.3, Latino_Hispanic=0.15, White=0.05),
            "Hispanic",
            "Latino_Hispanic",
        ),
        (_probabilities(Middle_Eastern=0.9, Indian=0.09, Southeast_Asian=0.01), "Asian", "Southeast Asian"),
    ],
)
def test_fairface_seven_races_map_to_four_as_the_released_code(probs: list[float], expected: str, chosen: str) -> None:
    label, index = fairface_race_to_benchmark(probs)
    assert label == expected
    assert FAIRFACE_RACES[index] == chosen


def test_fairface_mapping_ties_keep_the_model_label_order() -> None:
    assert fairface_race_to_benchmark([0.2, 0.2, 0.2, 0.2, 0.2, 0.0, 0.0]) == ("White", 0)
    assert fairface_race_to_benchmark([0.0, 0.3, 0.0, 0.0, 0.0, 0.35, 0.35]) == ("Black", 1)


def test_fairface_mapping_rejects_wrong_length() -> None:
    with pytest.raises(ValueError, match="7 race probabilities"):
        fairface_race_to_benchmark([0.5, 0.5])


@given(st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=7, max_size=7))
def test_fairface_mapping_is_the_most_probable_mappable_label(probs: list[float]) -> None:
    label, index = fairface_race_to_benchmark(probs)
    mappable = [i for i, name in enumerate(FAIRFACE_RACES) if name in labels.FAIRFACE_TO_BENCHMARK_RACE]
    best = max(probs[i] for i in mappable)
    assert index in mappable
    assert probs[index] == best
    assert index == min(i for i in mappable if probs[i] == best)
    assert label == labels.FAIRFACE_TO_BENCHMARK_RACE[FAIRFACE_RACES[index]]
    assert label in labels.RACES
