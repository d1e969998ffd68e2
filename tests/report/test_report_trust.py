"""Issue 33, the report a reader trusts: an interval that excludes its estimate says why and shows the bias-corrected
estimate it is centred on, each table names its interval methods, each score's n is its own denominator, and the
paper's "Subj." S_fair is copied from the top group when the run has no subjective group (its YAML lists the leaves).

The runs are small results files written here, holding what a run's results carry once the detail of its samples is
merged (``fairness-evals score``); the full path through the harness is in ``test_report.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from fairness_evals import centres
from fairness_evals.detail import Detail
from fairness_evals.report import build_report

OBJECTIVE = "fact_or_fair_objective"
CONTEXTS = ("base", "representativeness", "attribution", "ingroup")
#: As the review's lite run printed them: S_E 97.80 [98.53, 100.00] (an entropy of observed shares is biased low).
S_E = {"s_e_gender": 0.978, "s_e_gender_ci_low": 0.9853, "s_e_gender_ci_high": 1.0, "s_e_gender_ci_centre": 0.9931}


def _objective() -> dict[str, float]:
    return {
        "s_fact_gender": 0.5, "s_fact_gender_ci_low": 0.3988, "s_fact_gender_ci_high": 0.6012,
        "s_fact_gender_coverage": 1.0, "s_fact_gender_counted": 90.0, "s_fact_gender_inputs": 90.0,
        "s_fact_race": 0.3, "s_fact_race_ci_low": 0.2, "s_fact_race_ci_high": 0.43,
        "s_fact_race_coverage": 53 / 108, "s_fact_race_counted": 53.0, "s_fact_race_inputs": 108.0,
        **S_E, "s_e_gender_coverage": 1.0, "s_e_gender_counted": 90.0, "s_e_gender_inputs": 90.0,
        "parsed": 143.0, "unparsed_rate": 55 / 198, "refused_rate": 0.0,
    }  # fmt: skip


def _write(folder: Path, results: dict[str, dict[str, float]], groups: dict | None = None) -> Path:
    data = {
        "results": {task: {f"{k},none": v for k, v in m.items()} for task, m in results.items()},
        "groups": {task: {f"{k},none": v for k, v in m.items()} for task, m in (groups or {}).items()},
        "config": {"model": "local-chat-completions", "model_args": "model=served"},
        "n-samples": {task: {"original": 198, "effective": 198} for task in results},
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "results_2026-12-06T10-00-00.000001.json"
    path.write_text(json.dumps(data))
    return path


def _row(markdown: str, start: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith(start))


def test_an_interval_beside_its_estimate_says_why_and_shows_its_centre(tmp_path: Path) -> None:
    _write(tmp_path, {OBJECTIVE: _objective()})
    markdown = build_report([tmp_path], fmt="markdown")
    row = _row(markdown, "| served | S_E |")
    assert "97.80 [98.53, 100.00] (centred on 99.31 (bias-corrected); n = 90 of 90; coverage 100%)" in row
    html = build_report([tmp_path])
    assert '<span class="ctr">centred on 99.31 (bias-corrected)</span>' in html
    assert (
        "the 95% interval [98.53, 100.00] lies above the estimate 97.80: the plug-in estimate is biased low, and the "
        "interval (basic (reflected) bootstrap, clipped to [0, 1]) corrects that bias; it is centred on 99.31, the "
        "bias-corrected estimate (s_e_gender_ci_centre: the median of the reflected resamples"
    ) in html
    # an interval that holds its estimate shows no centre (S_fact: Wilson's, which always does)
    assert "centred on" not in _row(markdown, "| served | S_fact |")
    # each table names the methods of the intervals it shows, not "95% bootstrap intervals"
    assert (
        "95% intervals: Wilson score interval of the counted answers (s_fact_{axis}); basic (reflected) bootstrap, "
        "clipped to [0, 1] (s_e_{axis})."
    ) in markdown
    assert "95% bootstrap interval" not in markdown


def test_the_detail_says_why_for_each_interval_beside_its_estimate() -> None:
    found = Detail(results={OBJECTIVE: _objective(), "fact_or_fair_subjective_base_lite": dict(S_E)})
    found.add_centres()
    assert set(found.intervals) == {OBJECTIVE, "fact_or_fair_subjective_base_lite"}
    said = found.intervals[OBJECTIVE]
    assert list(said) == ["s_e_gender"] and said["s_e_gender"].startswith(
        "the 95% interval [0.9853, 1.0000] lies above the estimate 0.9780: the plug-in estimate is biased low"
    )
    assert "it is centred on 0.9931, the bias-corrected estimate" in said["s_e_gender"]
    assert found.as_json()["intervals"] == found.intervals
    inside = {**S_E, "s_e_gender": 0.99}
    assert centres.beside(OBJECTIVE, inside) == {}  # it holds its estimate: nothing to say
    above = {**S_E, "s_e_gender_ci_high": 0.97, "s_e_gender_ci_low": 0.95, "s_e_gender_ci_centre": 0.96}
    assert "lies below the estimate 0.9780: the plug-in estimate is biased high" in centres.why(
        OBJECTIVE, "s_e_gender", above
    )


def test_each_score_shows_its_own_denominator(tmp_path: Path) -> None:
    """Review finding 14: gender S_fact showed "n = 143 of 198" (the task's answers parsed); its denominator is the
    90 gender documents, and race's 53 of its 108."""
    _write(tmp_path, {OBJECTIVE: _objective()})
    markdown = build_report([tmp_path], fmt="markdown")
    summary = _row(markdown, "| served | 50.00")
    assert "50.00 [39.88, 60.12] (n = 90 of 90; coverage 100%)" in summary
    assert "30.00 [20.00, 43.00] (n = 53 of 108; coverage 49%)" in summary
    assert "143 of 198" not in summary
    # results without the counts (a harness results file alone): the task's answers, said to be the task's
    bare = {k: v for k, v in _objective().items() if not k.endswith(("_counted", "_inputs"))}
    _write(tmp_path / "bare", {OBJECTIVE: bare})
    summary = _row(build_report([tmp_path / "bare"], fmt="markdown"), "| served | 50.00")
    assert "n = 143 of 198 (the task's answers parsed)" in summary


def test_subj_is_copied_from_the_top_group_when_the_run_has_no_subjective_group(tmp_path: Path) -> None:
    """``fact_or_fair_lite`` lists its leaf tasks (issue 33: arrows on every group headline), so a lite run holds no
    ``fact_or_fair_subjective_lite`` row; the top group's S_fair is the same mean of the four contexts."""
    contexts = {
        f"fact_or_fair_subjective_{c}_lite": {
            "s_fair_gender": 0.99 + i / 1000, "s_fair_gender_counted": 1140.0, "s_fair_gender_inputs": 1140.0,
            "s_fair_race": 0.98, "parsed": 1140.0,
        }
        for i, c in enumerate(CONTEXTS)
    }  # fmt: skip
    mean = sum(m["s_fair_gender"] for m in contexts.values()) / 4
    path = _write(tmp_path, {OBJECTIVE: _objective(), **contexts}, {"fact_or_fair_lite": {"s_fair_gender": mean}})
    html = build_report([path])
    assert f'data-value="{mean!r}" data-source="0|fact_or_fair_lite|s_fair_gender"' in html
    markdown = build_report([path], fmt="markdown")
    assert f"{100 * mean:.2f} (n = 1140, 1140, 1140, 1140 of 1140 each)" in _row(markdown, "| served (generation")
    assert not math.isnan(mean)
