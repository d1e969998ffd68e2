"""A ``--limit`` smoke run, as an lm-eval user runs it first: ``lm_eval --tasks fact_or_fair_lite --limit 20`` (in a
sweep: the zero-shot tests' run, with a task of the user's and ``--num_fewshot 5``) through a served model prints no
score of the design's cells from cells under their declared minimum (issue 33).

The served model is a loopback OpenAI-compatible server that answers every prompt with a valid letter chosen by a hash
of the prompt (a random model: S_fair 0.9989 on the full lite run). Twenty documents per task put one answer in each
of 20 of a subjective task's 38 (statistic, target) cells, and 10 answers in 10 of the objective task's 30 and 36:
before the declared minima these printed S_E = S_KLD = S_fair = 0.0000 ("maximally unfair").
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from harness import load_results
from readable import metric_values

from fairness_evals import statistics

pytestmark = pytest.mark.harness

GROUP = "fact_or_fair_lite"
#: The scores of the design's cells each task prints (its headlines): none may be a number after --limit 20.
CELL_SCORES = ("s_fact", "s_e", "s_kld", "s_fair", "distance")


@pytest.fixture(scope="module")
def limited_run(sweep: tuple[Path, str, list[dict]]) -> tuple[Path, str]:
    """The output and the printed log of the zero-shot tests' sweep (``tests/conftest.py``: ``sweep``), which runs
    ``fact_or_fair_lite`` with ``--limit 20`` (beside a few-shot task of the user's, with ``--num_fewshot 5``)."""
    out, printed, _ = sweep
    return out, printed


def _tasks(name: str) -> list[str]:
    """The group and the tasks its YAML lists: its leaf tasks."""
    return [name, *statistics.leaves(name)] if statistics.task(name).group else [name]


def test_a_limit_20_run_prints_no_score_of_too_few_cells(limited_run: tuple[Path, str]) -> None:
    out, _ = limited_run
    results = load_results(out)
    checked = 0
    for name in _tasks(GROUP):
        section = "groups" if statistics.task(name).group else "results"
        values = metric_values(results[section][name])
        for metric, value in values.items():
            if metric.rsplit("_", 1)[0] in CELL_SCORES:
                assert value is None or math.isnan(value), (name, metric, value)
                checked += 1
        assert statistics.task(name).group or values["unparsed_rate"] == 0.0  # every answer counted, none printed
    assert checked >= 4 * 8 + 6  # each subjective task's S_E, S_KLD, S_fair, distance per axis; the objective's


def test_short_lines_one_per_problem_name_each_task_as_the_harness_does(limited_run: tuple[Path, str]) -> None:
    """Each task says why its scores are null in short lines, one per problem (issue 33: a task's one warning was a
    900-1,500 character line), under the name the harness prints: ``fact_or_fair_subjective_base_lite``, not the
    name of its documents' kind (``fact_or_fair_subjective_base``)."""
    _, log = limited_run
    lines = [line for line in log.splitlines() if "too little evidence" in line]
    leaves = [t for t in _tasks(GROUP) if not statistics.task(t).group]
    said = {leaf: [line for line in lines if f" {leaf}: " in line] for leaf in leaves}
    assert all(said.values()) and sum(map(len, said.values())) == len(lines), lines
    for mine in said.values():
        reasons = [line.split(" null: ", 1)[1] for line in mine]
        assert len(set(reasons)) == len(reasons) and all(len(line) < 600 for line in mine), mine
    for context in ("base", "representativeness", "attribution", "ingroup"):
        assert f"fact_or_fair_subjective_{context}: " not in log  # every warning names the _lite task
    subjective = [line for line in lines if "parsed answer each (harmonic mean over the 20 that hold any)" in line]
    assert len(subjective) == 4 and all("s_e_gender (and its interval)" in line for line in subjective), lines
    objective = [line for line in lines if "fact_or_fair_objective" in line]
    # one line per reason: the gender design has 30 cells, the race design 36
    assert len(objective) == 2 and "of the design's 30 (statistic, target) cells hold a parsed answer" in objective[0]
    assert "of the design's 36 (statistic, target) cells hold a parsed answer" in objective[1]
