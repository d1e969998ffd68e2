"""lm-eval 0.4.11, the oldest version we declare, finds and runs our tasks with no flags.

0.4.11 differs from 0.4.12+ in the two places the package depends on: ``TaskManager`` lives in
``lm_eval/tasks/__init__.py`` (no ``lm_eval.tasks.manager`` for the hook to watch), and ``!function module.name``
resolves only to a file beside the YAML (hence ``fact_fair_tasks/llm/scoring.py``). The wheel is downloaded by
``scripts/setup.sh test``; the test unpacks it and puts it ahead of the installed lm-eval on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from harness import DEV_BIN, load_results, offline_env, run
from models import smollm2

from fairness_evals import statistics


def _env(tmp: Path, lm_eval_root: Path, **extra: str) -> dict[str, str]:
    return offline_env(tmp, PYTHONPATH=str(lm_eval_root), **extra)


def test_the_hook_registers_our_tasks_with_0_4_11(lm_eval_0411: Path, tmp_path: Path) -> None:
    script = (
        "import json, lm_eval, lm_eval.tasks as t; print(json.dumps([lm_eval.__file__, t.TaskManager().all_tasks]))"
    )
    proc = run([str(DEV_BIN / "python"), "-c", script], env=_env(tmp_path, lm_eval_0411), cwd=tmp_path)
    origin, names = json.loads(proc.stdout.strip().splitlines()[-1])
    assert origin.startswith(str(lm_eval_0411)), origin  # the 0.4.11 copy, not the installed version
    for name in ("fact_or_fair", "fact_or_fair_objective", "fact_or_fair_subjective_ingroup_lite", "fact_or_fair_mc"):
        assert name in names
    off = run(
        [str(DEV_BIN / "python"), "-c", script],
        env=_env(tmp_path, lm_eval_0411, FAIRNESS_EVALS_AUTOLOAD="0"), cwd=tmp_path,
    )  # fmt: skip
    assert "fact_or_fair" not in json.loads(off.stdout.strip().splitlines()[-1])[1]


def test_a_generation_and_a_loglikelihood_task_run_under_0_4_11(lm_eval_0411: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(
        [str(DEV_BIN / "python"), "-m", "lm_eval", "--model", "hf",
         "--model_args", f"pretrained={smollm2()},dtype=float32", "--device", "cpu",
         "--tasks", "fact_or_fair_objective,fact_or_fair_objective_mc", "--limit", "4", "--batch_size", "8",
         "--apply_chat_template", "--output_path", str(out)],
        env=_env(tmp_path, lm_eval_0411), cwd=tmp_path, timeout=900,
    )  # fmt: skip
    results = load_results(out)
    assert results["lm_eval_version"].startswith("0.4.11"), results["lm_eval_version"]
    generated, scored = results["results"]["fact_or_fair_objective"], results["results"]["fact_or_fair_objective_mc"]
    for task, metrics in (("fact_or_fair_objective", generated), ("fact_or_fair_objective_mc", scored)):
        listed = {key.split(",")[0] for key in metrics if key.endswith(",none")}
        assert {name for name, _ in statistics.task(task).harness_metrics()} <= listed, task  # the headlines
        assert 0.0 <= metrics["unparsed_rate,none"] + metrics["refused_rate,none"] <= 1.0
    assert generated["unparsed_rate,none"] + generated["refused_rate,none"] < 1.0  # greedy SmolLM2 answers some
    assert scored["unparsed_rate,none"] == 0.0 and scored["refused_rate,none"] == 0.0  # one forward pass per option
    for axis in ("gender", "race"):  # 4 documents hold a few of the design's cells: too little evidence (issue 33)
        assert math.isnan(scored[f"s_fact_{axis},none"]) and math.isnan(generated[f"s_fact_{axis},none"]), axis


def test_the_lite_group_headlines_print_their_arrows_under_0_4_11(sweep_0411: tuple[Path, str, list[dict]]) -> None:
    """Issue 33: the top groups list their leaf tasks, so lm-eval gives the group rows s_fair_* their direction in
    0.4.11 as in 0.4.13 (test_fact_or_fair_readable.py runs the whole lite group under the installed version). Read
    from the zero-shot sweep of ``fact_or_fair_lite`` under 0.4.11 (``tests/foundation/conftest.py``)."""
    from readable import printed_arrows

    out, printed, _ = sweep_0411
    assert load_results(out)["lm_eval_version"].startswith("0.4.11")
    arrows = printed_arrows(printed)
    expected = {f"s_{score}_{axis}": "↑" for score in ("fact", "fair") for axis in ("gender", "race")}
    assert arrows[("Groups", "fact_or_fair_lite")] == expected, arrows
