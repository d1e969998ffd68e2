"""What a person reads after `lm_eval --tasks fact_or_fair_lite` through a served model: a short table in lm-eval's
conventions, numbers and no strings in the results, compact sample logs, and W&B logging that works.

The served model is a loopback OpenAI-compatible server that answers every prompt with a valid answer (a letter of
the prompt's options, chosen by a hash of the prompt): it is not a model, so the numbers mean nothing, but every
document counts, so every headline row must be a finite number.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import DEV_BIN, load_results, offline_env, run
from openai_server import OpenAIServer, fact_or_fair_reply, running
from readable import finite, metric_values, printed_arrows, printed_rows, sample_bytes, string_values

from fairness_evals import statistics

pytestmark = pytest.mark.harness

GROUP = "fact_or_fair_lite"


@pytest.fixture(scope="module")
def lite_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    tmp = tmp_path_factory.mktemp("readable")
    out = tmp / "out"
    env = offline_env(tmp, WANDB_MODE="offline", WANDB_DIR=str(tmp / "wandb"), WANDB_SILENT="true")
    with running(OpenAIServer(fact_or_fair_reply, model_name="served")) as server:
        proc = run(
            [str(DEV_BIN / "lm_eval"), "--model", "local-chat-completions", "--model_args",
             f"model=served,base_url={server.base_url}/chat/completions,num_concurrent=16,max_retries=1",
             "--tasks", GROUP, "--apply_chat_template", "--log_samples", "--output_path", str(out),
             "--wandb_args", "project=fairness-evals-test,mode=offline"],
            env=env, cwd=tmp, timeout=1200,
        )  # fmt: skip
    return out, proc.stdout, proc.stderr


def _declared(name: str) -> statistics.Task:
    return statistics.task(name)


def _tasks_of(name: str) -> list[str]:
    """What the harness prints for ``--tasks name``: the group and the tasks its YAML lists, its leaf tasks (the
    nested subjective group is not listed: issue 33, arrows on every group headline)."""
    return [name, *statistics.leaves(name)] if _declared(name).group else [name]


def test_the_table_is_short_and_holds_the_headlines(lite_run: tuple[Path, str, str]) -> None:
    _, stdout, _ = lite_run
    rows = printed_rows(stdout)
    names = _tasks_of(GROUP)
    assert {name for _, name in rows} == set(names), sorted(rows)
    for name in names:
        metrics = [metric for metric, _, _ in rows[("Tasks", name)]]
        expected = [m for m, _ in _declared(name).harness_metrics() if not m.endswith("_stderr")]
        assert sorted(metrics) == sorted(expected), name
        assert len(metrics) <= 12, name
        if _declared(name).group:
            assert rows[("Groups", name)] == rows[("Tasks", name)], name
        assert all(finite(value) for _, value, _ in rows[("Tasks", name)]), (name, rows[("Tasks", name)])
    assert sum(len(r) for r in rows.values()) <= 60


def test_every_printed_row_with_a_direction_shows_its_arrow(lite_run: tuple[Path, str, str]) -> None:
    """Issue 33: the group's s_fair_gender and s_fair_race (the paper's Table 2 "Subj.") printed without an arrow, as
    lm-eval 0.4.13 gives a group the directions of its direct members only, and the nested subjective group had none
    yet. Every printed row of a metric with a direction shows it, in both tables."""
    _, stdout, _ = lite_run
    arrows = printed_arrows(stdout)
    shown = {"higher": "↑", "lower": "↓", "neither": ""}
    for (table, name), rows in arrows.items():
        directions = dict(_declared(name).harness_metrics())
        for metric, arrow in rows.items():
            assert arrow == shown[directions[metric]], (table, name, metric, arrow)
    expected = {f"s_{score}_{axis}": "↑" for score in ("fact", "fair") for axis in ("gender", "race")}
    assert arrows[("Groups", GROUP)] == arrows[("Tasks", GROUP)] == expected


def test_results_hold_numbers_and_finite_headlines(lite_run: tuple[Path, str, str]) -> None:
    out, _, _ = lite_run
    results = load_results(out)
    assert not string_values(results)
    for name in _tasks_of(GROUP):
        section = "groups" if _declared(name).group else "results"
        values = metric_values(results[section][name])
        headline = [m for m, _ in _declared(name).harness_metrics() if not m.endswith("_stderr")]
        assert all(isinstance(values[m], float) and values[m] == values[m] for m in headline), (name, values)
    assert isinstance(results["versions"][GROUP], (int, float, str))


def test_sample_lines_hold_one_record_and_no_more_than_lm_evals_bytes(lite_run: tuple[Path, str, str]) -> None:
    out, _, _ = lite_run
    files = sorted(out.rglob("samples_*.jsonl"))
    assert len(files) == 5
    for path in files:
        lines, ours, theirs = sample_bytes(path)
        assert lines > 0 and ours <= theirs, (path.name, ours / lines, theirs / lines)


def test_wandb_logging_works(lite_run: tuple[Path, str, str]) -> None:
    out, stdout, stderr = lite_run
    text = stdout + stderr
    assert "Logging to W&B failed" not in text and "wandb: ERROR" not in text
    assert list((out.parent / "wandb").rglob("*.wandb")), "no offline W&B run was written"
