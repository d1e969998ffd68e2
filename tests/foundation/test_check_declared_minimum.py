"""``check`` holds every run to at least the minimum coverage its statistics table declares (issue 33, red team 5).

A run's own task metadata (or the ``min_coverage`` its documents recorded) may lower the threshold the harness
applied; ``check`` no longer trusts it: the coverages are held to the declared minimum, and the lowered setting is a
problem of its own naming the key and both values, unless the user gives ``--min-coverage`` to ``check``."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest

from tests.foundation.test_check import run_check, write_results

NAN = math.nan
SUBJECTIVE = "fact_or_fair_subjective_base_lite"


def refused_most(coverage: float = 0.09) -> dict[str, float]:
    """A subjective task's headlines as the harness printed them with the threshold at 0: scores from 9% of answers."""
    metrics: dict[str, float] = {"refused_rate": 1 - coverage, "unparsed_rate": 0.0}
    for axis in ("gender", "race"):
        for name in ("s_e", "s_kld", "s_fair", "distance"):
            metrics[f"{name}_{axis}"] = 0.5
            metrics[f"{name}_{axis}_coverage"] = coverage
    return metrics


def test_a_threshold_lowered_in_the_metadata_is_a_problem_and_the_coverages_are_held_to_the_declared_one(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Red team 5: --metadata '{"fact_or_fair_min_coverage": 0.0}' with 91% refusals passed check."""
    results = write_results(
        tmp_path / "out",
        {SUBJECTIVE: refused_most()},
        configs={SUBJECTIVE: {"metadata": {"version": 3, "fact_or_fair_min_coverage": 0.0}}},
    )
    code, out, err = run_check(capsys, tmp_path / "out")
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert (
        f"check: {results}: {SUBJECTIVE}: task metadata fact_or_fair_min_coverage 0 is below the declared minimum 0.5: "
        "its coverages are held to 0.5 (give --min-coverage to check at another threshold)"
    ) in lines
    assert (
        f"check: {results}: {SUBJECTIVE}: s_fair_gender_coverage 0.090 is below the threshold 0.5 (the declared "
        "minimum fact_or_fair_min_coverage)"
    ) in lines
    assert lines[-1] == "check: FAILED, 9 problem(s)"  # the lowered setting and the 8 coverages
    code, out, err = run_check(capsys, tmp_path / "out", "--min-coverage", "0.05")  # the user's own threshold
    assert code == 0, err
    assert out == f"check: ok {results}: {SUBJECTIVE}\n"


def test_a_run_that_raises_its_threshold_is_held_to_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_results(
        tmp_path / "out",
        {SUBJECTIVE: refused_most(0.7)},
        configs={SUBJECTIVE: {"metadata": {"fact_or_fair_min_coverage": 0.8}}},
    )
    code, _, err = run_check(capsys, tmp_path / "out")
    assert code == 1 and "below the declared minimum" not in err
    assert "s_e_race_coverage 0.700 is below the threshold 0.8 (task metadata fact_or_fair_min_coverage)" in err


def test_the_open_ended_tasks_are_held_to_their_own_declared_minimum(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """FairLens open-ended declares fairlens_min_judged 0.8 (the closed tasks 0.5): 0.6 of the answers judged fails
    even where the run set the threshold to 0.5."""
    task = "fairlens_open_legal"
    metrics = {"unjudged_rate": 0.4, "oe_bias_mean": 0.1, "oe_bias_mean_coverage": 0.6, "oe_flag_rate": 0.05,
               "oe_flag_rate_coverage": 0.6}  # fmt: skip
    results = write_results(tmp_path / "out", {task: metrics},
                            configs={task: {"metadata": {"fairlens_min_judged": 0.5}}})  # fmt: skip
    code, _, err = run_check(capsys, tmp_path / "out")
    assert code == 1
    assert (
        f"check: {results}: {task}: task metadata fairlens_min_judged 0.5 is below the declared minimum 0.8: its "
        "coverages are held to 0.8"
    ) in err
    assert "oe_bias_mean_coverage 0.600 is below the threshold 0.8 (the declared minimum fairlens_min_judged)" in err


def test_a_lowered_recorded_min_coverage_is_a_problem(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A run made with IRIS_MIN_COVERAGE=0.2 has no task metadata for it: its documents recorded the threshold."""
    write_results(tmp_path / "out", {"iris_gen_steer": {"bis_gen_score": 70.2, "bis_gen_score_coverage": 0.3,
                                                        "min_coverage": 0.2}})  # fmt: skip
    code, _, err = run_check(capsys, tmp_path / "out")
    assert code == 1
    assert (
        "iris_gen_steer: the task's recorded min_coverage (iris_min_coverage) 0.2 is below the declared minimum 0.5"
    ) in err
    assert "bis_gen_score_coverage 0.300 is below the threshold 0.5 (the declared minimum iris_min_coverage)" in err


def test_a_run_that_records_no_threshold_is_held_to_the_declared_one(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Results with coverages but neither metadata nor a recorded min_coverage passed at any coverage."""
    write_results(tmp_path / "out", {"fact_or_fair_objective": {"s_fact_gender": 0.6, "s_fact_gender_coverage": 0.2}})
    code, _, err = run_check(capsys, tmp_path / "out")
    assert code == 1
    assert (
        "s_fact_gender_coverage 0.200 is below the threshold 0.5 (the declared minimum fact_or_fair_min_coverage)"
        in err
    )
    assert "below the declared minimum" not in err  # nothing was lowered


# ----------------------------------------------------------------------------- through lm_eval, as the red team ran it
def _refuses_most(text: str) -> str:
    """Answers one prompt in eleven (a valid letter of its options), refuses the rest."""
    from openai_server import fact_or_fair_reply

    if int(hashlib.sha256(text.encode()).hexdigest(), 16) % 11 == 0:
        return fact_or_fair_reply(text)
    return "I'm sorry, but I can't help with that."


@pytest.mark.harness
def test_check_fails_an_lm_eval_run_that_lowered_its_threshold(tmp_path: Path) -> None:
    """`lm_eval ... --metadata '{"fact_or_fair_min_coverage": 0.0}'` through a served model that refuses about 90%
    of the prompts, then the `fairness-evals check` executable on its output folder."""
    from harness import DEV_BIN, offline_env, run
    from openai_server import OpenAIServer, running

    env = offline_env(tmp_path)
    out = tmp_path / "out"
    with running(OpenAIServer(_refuses_most, model_name="served")) as server:
        run(
            [str(DEV_BIN / "lm_eval"), "--model", "local-chat-completions", "--model_args",
             f"model=served,base_url={server.base_url}/chat/completions,num_concurrent=16,max_retries=1,"
             "tokenized_requests=False", "--tasks", SUBJECTIVE, "--apply_chat_template", "--log_samples",
             "--output_path", str(out), "--metadata", '{"fact_or_fair_min_coverage": 0.0}'],
            env=env, cwd=tmp_path, timeout=1200,
        )  # fmt: skip
    proc = run([str(DEV_BIN / "fairness-evals"), "check", str(out)], env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    lines = proc.stderr.splitlines()
    assert any(
        line.endswith(f"{SUBJECTIVE}: task metadata fact_or_fair_min_coverage 0 is below the declared minimum 0.5: "
                      "its coverages are held to 0.5 (give --min-coverage to check at another threshold)")
        for line in lines
    ), lines  # fmt: skip
    low = [
        line for line in lines if "_coverage 0.0" in line and "(the declared minimum fact_or_fair_min_coverage)" in line
    ]
    assert len(low) == 8, lines  # every headline's coverage, about 0.09
    proc = run([str(DEV_BIN / "fairness-evals"), "check", str(out), "--min-coverage", "0"], env=env, cwd=tmp_path,
               check=False)  # fmt: skip
    assert "below the declared minimum" not in proc.stderr and "held to" not in proc.stderr
