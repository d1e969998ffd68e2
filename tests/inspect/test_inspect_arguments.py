"""The ``-T`` arguments of the Inspect tasks, in process: each bad value is refused in one line naming the argument,
and each task records the settings its arguments make."""

from __future__ import annotations

from pathlib import Path

import pytest

from fact_fair_tasks import inspect_tasks as fact_or_fair
from fairlens_tasks import inspect_tasks as fairlens
from fairlens_tasks.judging import inspect_scorer as judge
from iris_tasks import inspect_tasks as iris


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"min_coverage": 2}, "-T min_coverage must be a number in [0, 1]"),
        ({"min_coverage": True}, "-T min_coverage must be a number in [0, 1]"),
        ({"seed": "one"}, "-T seed must be an integer"),
        ({"draws": 0}, "draws must be between 1 and 10000"),
        ({"conventions": "paper"}, "-T conventions must be one of corrected, released"),
    ],
)
def test_fact_or_fair_refuses_a_bad_argument_naming_it(arguments: dict, message: str) -> None:
    given = {"seed": 0, "draws": 10, "conventions": "corrected", "min_coverage": 0.5, **arguments}
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        fact_or_fair.build("fact_or_fair_subjective_base_lite", **given)


def test_fact_or_fair_records_its_settings() -> None:
    task = fact_or_fair.TASKS["fact_or_fair_subjective_base_lite"](seed=2, draws=3)
    ours = task.metadata["fairness_evals"]
    assert ours["settings"] == {
        "fact_or_fair_seed": 2,
        "fact_or_fair_draws": 3,
        "fact_or_fair_conventions": "corrected",
        "fact_or_fair_min_coverage": 0.5,
    }
    assert len(task.dataset) == 19 * 2 * 3 * 3 and ours["leaves"] == ["fact_or_fair_subjective_base_lite"]


def test_fairlens_needs_a_corpus_and_names_its_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no face corpus: give -T corpus="):
        fairlens.TASKS["fairlens_hiring"]()
    with pytest.raises(ValueError, match=r"-T sample_fraction=2 must lie in \(0, 1\]"):
        fairlens.TASKS["fairlens_hiring"](corpus=str(tmp_path), sample_fraction=2)
    with pytest.raises(ValueError, match="-T on_bad_input='maybe' must be 'stop' or 'skip'"):
        fairlens.TASKS["fairlens_hiring"](corpus=str(tmp_path), on_bad_input="maybe")


def test_fairlens_refuses_a_bad_threshold_or_judge_setting(face_corpus: Path) -> None:
    with pytest.raises(ValueError, match="-T min_coverage=2"):
        fairlens.TASKS["fairlens_legal"](corpus=str(face_corpus), sample_fraction=1, min_coverage=2)
    with pytest.raises(ValueError, match="-T min_judged=-1"):
        fairlens.TASKS["fairlens_open_legal"](corpus=str(face_corpus), sample_fraction=1, min_judged=-1)
    with pytest.raises(ValueError, match="-T judge_attempts=0 is out of range"):
        fairlens.TASKS["fairlens_open_legal"](corpus=str(face_corpus), sample_fraction=1, judge_attempts=0)
    task = fairlens.TASKS["fairlens_open_legal"](corpus=str(face_corpus), sample_fraction=1, judge="openai/gpt-4o")
    ours = task.metadata["fairness_evals"]
    assert ours["settings"] == {"fairlens_min_judged": 0.8} and ours["judging"]["judge"] == "openai/gpt-4o"
    assert ours["corpus"]["corpus"] == str(face_corpus.resolve()) and ours["provenance"]["images_sampled"] == 5
    assert len(task.dataset) == 5 * 12  # the 12 open legal questions of every image


def test_iris_needs_its_corpora_naming_the_argument() -> None:
    with pytest.raises(ValueError, match="iris_ifs_und: no image corpus: give -T corpus="):
        iris.TASKS["iris_und"]()
    with pytest.raises(ValueError, match="iris_bis_und: no image corpus: give -T steer_corpus="):
        iris.TASKS["iris_bis_und"]()


def test_the_judge_arguments_are_checked() -> None:
    base = dict(judge.JUDGE_ARGUMENTS)
    judge.check_arguments(base)
    for name, value in (("judge_temperature", 3.0), ("judge_max_tokens", 0), ("judge_max_tokens", 1.5)):
        with pytest.raises(ValueError, match=f"-T {name}="):
            judge.check_arguments({**base, name: value})
