"""Our Inspect tasks where Inspect looks for tasks in files: one literal ``@task`` per declared task, generated from
the modules' ``TASKS`` (fairness_evals/inspect/task_files.py), listed by ``inspect list tasks`` and run by
``inspect eval <file>.py@<task>`` as by ``inspect eval fairness_evals/<task>``."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from harness import REPO, offline_env
from inspect_ai._util.decorator import parse_decorators
from openai_server import OpenAIServer, running

from fact_fair_tasks import inspect_tasks as fact_or_fair
from fairlens_tasks import inspect_tasks as fairlens
from fairness_evals.inspect import task_files
from fairness_evals.inspect.logs import read_logs
from iris_tasks import inspect_tasks as iris
from tests.inspect.conftest import LIMITED
from tests.inspect.runs import INSPECT, MODEL, loopback_env, mixed_reply

FILES = {"fact_fair_tasks": fact_or_fair, "fairlens_tasks": fairlens, "iris_tasks": iris}
DECLARED = {package: module.TASKS for package, module in FILES.items()}


def test_each_module_holds_one_literal_task_per_declared_task() -> None:
    """What Inspect's file scan reads (its own parser) is every task of ``TASKS``, and the blocks are as the generator
    writes them (``python -m fairness_evals.inspect.task_files`` after a change to a declaration)."""
    assert task_files.main(["--check"]) == 0
    for module, tasks in DECLARED.items():
        assert [name for name, _ in parse_decorators(REPO / module / "inspect_tasks.py", "task")] == list(tasks), module


@pytest.mark.harness
def test_inspect_list_tasks_lists_every_task_by_file(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(INSPECT), "list", "tasks", *(f"{package}/inspect_tasks.py" for package in FILES)],
        env=offline_env(tmp_path), cwd=REPO, capture_output=True, text=True, timeout=300, check=True,
    ).stdout.split()  # fmt: skip
    expected = [f"{package}/inspect_tasks.py@{name}" for package, tasks in DECLARED.items() for name in tasks]
    assert sorted(out) == sorted(expected)


@pytest.mark.harness
def test_a_task_by_its_file_runs_as_by_its_registered_name(limited_objective_run: Path, tmp_path: Path) -> None:
    """``inspect eval fact_fair_tasks/inspect_tasks.py@fact_or_fair_objective`` and ``inspect eval
    fairness_evals/fact_or_fair_objective``, with the same ``-T`` argument and replies: the same samples and metrics."""
    args = LIMITED
    by_file = tmp_path / "by_file"
    with running(OpenAIServer(mixed_reply, model_name=MODEL)) as server:
        proc = subprocess.run(
            [str(INSPECT), "eval", f"{REPO / 'fact_fair_tasks' / 'inspect_tasks.py'}@fact_or_fair_objective", "--model",
             f"openai-api/local/{MODEL}", "--log-dir", str(by_file / "logs"), "--display", "plain", *args],
            env=offline_env(tmp_path, **loopback_env(server)), cwd=tmp_path, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (named,) = read_logs([limited_objective_run])
    (filed,) = read_logs([by_file / "logs"])
    assert filed.name == named.name == "fact_or_fair_objective"
    assert sorted((s.id, s.reply) for s in filed.samples) == sorted((s.id, s.reply) for s in named.samples)
    assert len(filed.samples) == 12 and filed.samples[0].id.startswith("objective/")
    assert filed.metrics == named.metrics and filed.task_args == named.task_args and filed.task_args["seed"] == 3
