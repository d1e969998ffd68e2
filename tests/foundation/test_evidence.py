"""The two rules that null a value for the answers behind it (fairness_evals.evidence: too few counted, too little
evidence in its cells), against hand-computed cases."""

from __future__ import annotations

import dataclasses
import logging
import math

import pytest
from warnings_said import task_warnings

from fairness_evals.evidence import (
    coverage_shortfall,
    covered_names,
    design_counts,
    enforce,
    enforce_coverage,
    enforce_estimates,
    shortfall,
)
from fairness_evals.notes import Notes
from fairness_evals.statistics import Coverage, Interval, Minimum, Statistic, Task, explain

CELL = Minimum(1, "cell", "answer", cells=0.5)


def test_a_statistic_of_the_design_needs_its_share_of_the_cells() -> None:
    assert shortfall(CELL, [3, 0, 0, 0]) == (
        "only 1 of the design's 4 cells hold an answer (it needs 2: a statistic of the design's cells is not estimable "
        "from a few of them)"
    )
    assert shortfall(CELL, [3, 1, 0, 0]) is None  # 2 of 4: exactly half
    assert shortfall(CELL, [0, 0, 0]) == "no cell holds an answer"
    assert shortfall(Minimum(1, "cell", "answer", cells=1.0), [1, 1, 0]).startswith("only 2 of the design's 3 cells")


def test_the_smallest_the_harmonic_mean_and_the_total() -> None:
    smallest = Minimum(15, "cell", "parsed answer")
    assert shortfall(smallest, [20, 14, 0]) == "a cell has only 14 parsed answers (fewer than 15 parsed answers)"
    assert shortfall(smallest, [15, 20, 0]) is None  # an empty cell is not the smallest (cells=0: not asked)
    harmonic = Minimum(10, "cell", "parsed answer", over="harmonic mean")
    # 3 / (1/30 + 1/30 + 1/3) = 7.5; 3 / (1/30 + 1/30 + 1/5) = 11.25
    assert shortfall(harmonic, [30, 30, 3]) == (
        "its cells hold 7.5 parsed answers each (harmonic mean over the 3 that hold any), fewer than 10"
    )
    assert shortfall(harmonic, [30, 30, 5]) is None
    assert shortfall(harmonic, [1] * 20 + [0] * 18).startswith("its cells hold 1 parsed answer each")
    total = Minimum(30, "cell", "counted answer", over="total")
    assert shortfall(total, [10, 10, 9]) == "its cells hold only 29 counted answers in all (fewer than 30)"
    assert shortfall(total, [10, 10, 10]) is None


def test_the_outcome_rule_counts_units_with_and_without_it() -> None:
    images = Minimum(30, "group", "image", outcome=10)
    assert shortfall(images, [30, 31], with_outcome=[10, 9], without_outcome=[20, 22]) == (
        "a group has only 9 images with the outcome (fewer than 10 with it)"
    )
    assert shortfall(images, [30, 31], with_outcome=[10, 12], without_outcome=[20, 8]) == (
        "a group has only 8 images without the outcome (fewer than 10 without it)"
    )
    assert shortfall(images, [30, 31], with_outcome=[10, 12], without_outcome=[20, 19]) is None
    assert shortfall(images, [29, 31], with_outcome=[10, 12], without_outcome=[19, 19]).startswith(
        "a group has only 29 images"
    )
    with pytest.raises(ValueError, match="give the counts"):
        shortfall(images, [30, 31])


STATISTIC = Statistic(
    "x_{axis}", "a mean over cells", "metrics.fact_fair:entropy_score_batch", "paper", "higher",
    interval=Interval("basic", "documents", "metrics.intervals:basic_interval", Minimum(15, "cell", "parsed answer")),
    coverage=Coverage("parsed", "m:f"), stderr="metrics.intervals:standard_error", family={"axis": ("a", "b")},
    minimum=Minimum(10, "cell", "parsed answer", over="harmonic mean", cells=0.5, bias=0.1),
)  # fmt: skip


def _out() -> dict[str, float]:
    return {"x_a": 0.5, "x_a_ci_low": 0.4, "x_a_ci_high": 0.6, "x_a_coverage": 0.9, "x_a_stderr": 0.05}


def test_enforce_nulls_the_estimate_or_only_its_interval() -> None:
    out, notes = _out(), Notes("task")
    assert enforce(out, STATISTIC, "x_a", [30, 30], notes) is None
    assert out == _out() and not notes.reasons
    # 12 per cell: the estimate (harmonic mean 12 >= 10) stays, the interval (smallest 12 < 15) and stderr go
    assert enforce(out, STATISTIC, "x_a", [12, 12, 0], notes) == "interval"
    assert out["x_a"] == 0.5 and out["x_a_coverage"] == 0.9
    assert all(math.isnan(out[k]) for k in ("x_a_ci_low", "x_a_ci_high", "x_a_stderr"))
    assert (
        notes.reasons["x_a_ci_low"]
        == "interval withheld: a cell has only 12 parsed answers (fewer than 15 parsed answers)"
    )
    # 3 and 30: harmonic mean 2 / (1/3 + 1/30) = 5.45 < 10: the estimate goes with its interval and stderr
    out, notes = _out(), Notes("task")
    assert enforce(out, STATISTIC, "x_a", [3, 30], notes) == "estimate"
    assert all(math.isnan(out[k]) for k in ("x_a", "x_a_ci_low", "x_a_ci_high", "x_a_stderr"))
    assert out["x_a_coverage"] == 0.9  # the share that counted is still what it is
    assert notes.reasons["x_a"] == (
        "too little evidence: its cells hold 5.5 parsed answers each (harmonic mean over the 2 that hold any), "
        "fewer than 10"
    )
    # already null (a coverage below its threshold): left as it is, its first reason kept
    out, notes = {**_out(), "x_a": math.nan}, Notes("task")
    notes.null("x_a", "coverage below the threshold")
    assert enforce(out, STATISTIC, "x_a", [1], notes) is None
    assert notes.reasons == {"x_a": "coverage below the threshold"} and out["x_a_ci_low"] == 0.4


def test_one_short_warning_per_problem_names_a_few_metrics_and_the_detail_keeps_them_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 33: one line per reason (not one 1,500-character line per task), naming at most three metrics and "N more";
    every null stays in the detail (:attr:`Notes.reasons`)."""
    out = {**_out(), **{k.replace("x_a", "x_b"): v for k, v in _out().items()}}
    notes = Notes("fact_or_fair_subjective_base_lite")
    for member in ("x_a", "x_b"):
        enforce(out, STATISTIC, member, [1] * 20 + [0] * 18, notes)
    for extra in ("y_1", "y_2", "y_3", "y_4", "y_5"):
        notes.null(extra, "no parsed answer")
    notes.note("a limited run")
    with caplog.at_level(logging.WARNING, logger="evidence-test"):
        notes.warn(logging.getLogger("evidence-test"))
    lines = task_warnings(caplog.records, "fact_or_fair_subjective_base_lite")
    assert lines == [
        "fact_or_fair_subjective_base_lite: a limited run",
        "fact_or_fair_subjective_base_lite: x_a (and its interval), x_b (and its interval) null: too little evidence: "
        "its cells hold 1 parsed answer each (harmonic mean over the 20 that hold any), fewer than 10",
        "fact_or_fair_subjective_base_lite: y_1, y_2, y_3 and 2 more null: no parsed answer",
    ]
    assert len(caplog.records) == 3 and len(notes.reasons) == 4 * 2 + 5  # x_a, x_b: estimate, ends, stderr


def test_a_minimum_says_what_it_asks_and_the_bias_it_allows() -> None:
    assert STATISTIC.minimum.describe() == (
        "10 parsed answers per cell (harmonic mean over those that hold any), in at least 50% of the design's cells; "
        "allows a bias within ±0.1 (measured at the minimum)"
    )
    assert CELL.rule() == "an answer in at least 50% of the design's cells"
    assert Minimum(30, "group", "image", outcome=10).rule() == (
        "30 images in every group that holds any; 10 of them with the outcome and 10 without"
    )
    with pytest.raises(ValueError, match="minimum over"):
        Minimum(1, "cell", "answer", over="mode")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cells in"):
        Minimum(1, "cell", "answer", cells=1.5)


def test_the_median_over_every_cell_and_a_minimum_per_placeholder_value() -> None:
    """The text-to-image intervals' minima (issue 33): a median of labelled faces per prompt over the prompts given,
    a prompt without a face counting 0, and another number for the race members of a family."""
    faces = Minimum(20, "prompt", "labelled face", over="median", by=(("race", 80),))
    assert faces.rule() == "20 labelled faces per prompt (median over the prompts); 80 for race"
    assert shortfall(faces, [40, 30, 0, 0, 0]) == "its prompts hold a median of 0 labelled faces, fewer than 20"
    assert shortfall(faces, [40, 0, 0, 25]) == "its prompts hold a median of 12.5 labelled faces, fewer than 20"
    assert shortfall(faces, [40, 30, 20]) is None
    family = Statistic("s_e_{axis}", "d", "metrics.fact_fair:entropy_score_batch", "paper", family={"axis": ("a", "race")},
                       interval=Interval("basic", "images", "metrics.intervals:basic_interval", faces))  # fmt: skip
    assert family.values_of("s_e_race") == {"axis": "race"}
    assert faces.resolved(family.values_of("s_e_race")).answers == 80
    assert faces.resolved(family.values_of("s_e_a")).answers == 20
    with pytest.raises(KeyError):
        family.values_of("s_e_b")
    out = {"s_e_race": 0.5, "s_e_race_ci_low": 0.4, "s_e_race_ci_high": 0.6}
    notes = Notes("t")
    assert enforce(out, family, "s_e_race", [70, 79, 90], notes) == "interval"  # median 79 < 80
    assert out["s_e_race"] == 0.5 and math.isnan(out["s_e_race_ci_low"])
    assert (
        notes.reasons["s_e_race_ci_high"]
        == "interval withheld: its prompts hold a median of 79 labelled faces, fewer than 80"
    )
    assert (
        enforce({"s_e_a": 0.5, "s_e_a_ci_low": 0.4, "s_e_a_ci_high": 0.6}, family, "s_e_a", [70, 79, 90], notes) is None
    )


def test_a_statistic_of_the_whole_design_is_null_from_a_limited_run() -> None:
    """The IRIS and text-to-image scores' minimum: every document of the design answered (design_counts), applied to
    every member that declares it, their intervals' minima left to the caller."""
    design = Minimum(1, "document", "answer", cells=1.0, bias=85.0)
    assert design.rule() == "an answer in every document of the design"
    assert design_counts(20, 4680) == [1.0] * 20 + [0.0] * 4660
    assert design_counts(72, None) == [1.0] * 72  # records scored without their design: they are the design
    assert shortfall(design, design_counts(20, 4680)) == (
        "only 20 of the design's 4680 documents hold an answer (it needs 4680: a statistic of the design's documents "
        "is not estimable from a few of them)"
    )
    faces = Minimum(20, "prompt", "labelled face", over="median")
    score = Statistic("score", "d", "metrics.fact_fair:entropy_score_batch", "paper", minimum=design,
                      interval=Interval("basic", "images", "metrics.intervals:basic_interval", faces))  # fmt: skip
    rate = Statistic("rate", "d", "metrics.fact_fair:entropy_score_batch", "paper")
    full = {"score": 1.0, "score_ci_low": 0.5, "score_ci_high": 1.5, "rate": 0.3}
    notes = Notes("t")
    assert enforce_estimates(dict(full), [score, rate], design_counts(72, 72), notes) == []
    assert not notes.reasons  # a full run: nothing nulled (not the interval either: its cells are the caller's)
    limited = dict(full)
    assert enforce_estimates(limited, [score, rate], design_counts(20, 72), notes) == ["score"]
    assert math.isnan(limited["score"]) and math.isnan(limited["score_ci_low"]) and limited["rate"] == 0.3
    assert notes.reasons["score"].startswith("too little evidence: only 20 of the design's 72 documents")


PARSED = Coverage("answers parsed", "m:share", "k", 0.5)


def test_the_coverage_rule_says_the_counts_the_share_and_the_setting_its_declaration_names() -> None:
    # 3 of 760 = 0.39%: below 0.5
    assert coverage_shortfall(3, 760, 0.5, dataclasses.replace(PARSED, threshold="toy_min_coverage")) == (
        "coverage 3 of 760 answers parsed is 0.4%, below the minimum 0.5 (toy_min_coverage: --metadata, or "
        "TOY_MIN_COVERAGE in an lmms-eval run)"
    )
    assert coverage_shortfall(1, 2, 0.5, PARSED) is None  # exactly the minimum is enough
    assert coverage_shortfall(0, 1, 0.5, PARSED).startswith("coverage 0 of 1 answer parsed is 0.0%")
    assert coverage_shortfall(0, 5, 0.0, PARSED) is None  # a minimum of 0 reports every statistic
    # nothing to compute it from, whatever the minimum
    assert coverage_shortfall(0, 0, 0.0, PARSED) == "no answers parsed: none were evaluated"
    # the declared unit and what made one count, its fields filled in by the scoring
    faces = Coverage("faces", "m:share", "k", 0.5, unit=("image asked for", "images asked for"),
                     what="that show a face labelled for {axis}")  # fmt: skip
    assert coverage_shortfall(1, 4, 0.5, faces, axis="race").startswith(
        "coverage 1 of 4 images asked for that show a face labelled for race is 25.0%"
    )


def test_a_coverage_rule_nulls_what_the_statistics_declare_it_nulls() -> None:
    other = Coverage("other answers parsed", "m:share", "k", 0.5)
    family = {"axis": ("gender", "race")}
    interval = Interval("percentile", "documents", "metrics.intervals:percentile_interval")
    score = Statistic("s_{axis}", "d", "m:f", "p", coverage=PARSED, family=family, interval=interval)
    gap = Statistic("g_{axis}", "d", "m:f", "p", family=family, nulled_by=(PARSED,))
    both = Statistic("m", "d", "m:f", "p", stderr="m:se", nulled_by=(other, PARSED))
    unrelated = Statistic("u", "d", "m:f", "p", coverage=other)
    declared = (score, gap, both, unrelated)
    # the members in declaration order, then their intervals and standard errors
    assert covered_names(declared, PARSED) == [
        "s_gender", "s_race", "g_gender", "g_race", "m", "s_gender_ci_low", "s_gender_ci_high", "s_race_ci_low",
        "s_race_ci_high", "m_stderr",
    ]  # fmt: skip
    assert covered_names(declared, PARSED, axis="race") == ["s_race", "g_race", "m", "s_race_ci_low", "s_race_ci_high",
                                                            "m_stderr"]  # fmt: skip
    assert covered_names(declared, other) == ["m", "u", "m_stderr"]
    # what `fairness-evals metrics` says of a statistic another's coverage nulls
    said = {e.name: e for e in explain([Task("t", "b", declared)])}
    assert said["g_race"].nulled_below == "k (the coverage of: answers parsed)"
    assert said["m"].nulled_below == "k (the coverage of: other answers parsed); k (the coverage of: answers parsed)"
    assert said["s_race"].nulled_below is None and said["s_race"].threshold == "k"


def test_the_coverage_rule_nulls_the_names_given_and_keeps_the_first_reason() -> None:
    out = {"score": 0.8, "score_ci_low": 0.7, "score_ci_high": 0.9, "score_coverage": 0.4}
    notes = Notes("t")
    notes.null("score_ci_low", "noted before")
    names = ["score", "score_ci_low", "score_ci_high"]
    assert enforce_coverage(out, names, PARSED, 4, 10, 0.5, notes)
    assert all(math.isnan(out[name]) for name in names) and out["score_coverage"] == 0.4  # the coverage stays
    assert notes.reasons["score"].startswith("coverage 4 of 10 answers parsed is 40.0%, below the minimum 0.5 (k:")
    assert notes.reasons["score_ci_low"] == "noted before"
    kept = {"score": 0.8}
    assert not enforce_coverage(kept, ["score"], PARSED, 5, 10, 0.5, Notes("t")) and kept == {"score": 0.8}
