"""A foreign Inspect log in a harness output folder is skipped without inspect-ai (issue 34; red team finding 11).

Before, one unrelated ``.eval`` log (task ``mmlu``) beside an lm-eval run made ``score``, ``report`` and ``compare``
exit 2 with "reading an Inspect log needs inspect-ai", and ``check`` list it as a problem. The task is now read from
the log's header with the standard library (:func:`fairness_evals.inspect.logs.foreign_task`: an ``.eval`` archive's
``header.json``, Zstandard-compressed as Inspect writes it, or a ``.json`` log's ``eval``), so only logs of our tasks
need inspect-ai. The commands run as the installed ``fairness-evals``, with ``inspect_ai`` unimportable.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from harness import DEV_BIN, REPO, offline_env
from objective_run import objective_run

pytestmark = pytest.mark.harness  # one real `inspect eval` run writes the foreign log

TASK_FILE = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import generate


@task
def mmlu():
    return Task(dataset=[Sample(input="Say A", target="A")], solver=generate(), scorer=match())
"""


def _without_inspect(tmp: Path) -> dict[str, str]:
    """The environment of a user without inspect-ai: ``import inspect_ai`` fails (our code first on the path)."""
    stub = tmp / "blocked" / "inspect_ai"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("inspect_ai is blocked in this test")\n')
    env = offline_env(tmp)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp / "blocked"), str(REPO)])
    return env


def _fairness_evals(env: dict[str, str], cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DEV_BIN / "fairness-evals"), *argv], env=env, cwd=cwd, capture_output=True, text=True, timeout=600
    )


def _table(stdout: str) -> str:
    """What a command printed about the run, without the run's folder name (``run`` or ``plain``)."""
    return re.sub(r"\b(?:run|plain)\b(?=[/ ])", "RUN", stdout)


def _mmlu_log(tmp: Path) -> Path:
    """A log of another task, as ``inspect eval`` writes it (its entries Zstandard-compressed)."""
    (tmp / "mmlu.py").write_text(TASK_FILE)
    done = subprocess.run(
        [str(DEV_BIN / "inspect"), "eval", "mmlu.py", "--model", "mockllm/model", "--log-dir", "logs"],
        cwd=tmp, env=offline_env(tmp), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (log,) = (tmp / "logs").glob("*.eval")
    with zipfile.ZipFile(log) as archive:
        assert archive.getinfo("header.json").compress_type == 93  # Zstandard: not readable by Python 3.11's zipfile
    return log


def test_a_foreign_log_beside_a_run_is_skipped_without_inspect_ai(tmp_path: Path) -> None:
    log = _mmlu_log(tmp_path)
    objective_run(tmp_path / "plain")
    objective_run(tmp_path / "other")
    objective_run(tmp_path / "run")
    shutil.copy(log, tmp_path / "run" / "mmlu.eval")
    with zipfile.ZipFile(tmp_path / "run" / "m" / "old.eval", "w", zipfile.ZIP_DEFLATED) as archive:  # the red team's
        archive.writestr("header.json", json.dumps({"version": 2, "status": "success", "eval": {"task": "mmlu"}}))
    header = {"version": 2, "status": "success", "eval": {"task": "arc", "metadata": None}, "samples": []}
    (tmp_path / "run" / "m" / "arc.json").write_text(json.dumps(header))
    env = _without_inspect(tmp_path)

    for argv in (["score", "{}"], ["check", "{}"], ["compare", "other", "{}"]):
        plain = _fairness_evals(env, tmp_path, *[a.format("plain") for a in argv])
        found = _fairness_evals(env, tmp_path, *[a.format("run") for a in argv])
        assert found.returncode == plain.returncode == 0, (argv, found.stderr[-2000:])
        assert "inspect-ai" not in found.stderr and _table(found.stdout) == _table(plain.stdout), argv
    report = _fairness_evals(env, tmp_path, "report", "run", "--out", "report.html")
    assert report.returncode == 0, report.stderr[-2000:]
    skipped = [line for line in report.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 3 and all("not of a fairness-evals task" in line for line in skipped), report.stderr
    assert "'mmlu'" in skipped[0] + skipped[1] + skipped[2] and "'arc'" in "".join(skipped)

    # Named by itself, a foreign log is an error naming its task; a log of ours still needs inspect-ai.
    named = _fairness_evals(env, tmp_path, "score", "run/mmlu.eval")
    assert named.returncode == 2 and named.stderr == (
        "error: fairness-evals: run/mmlu.eval: an Inspect log of 'mmlu', not of a fairness-evals task\n"
    )
    ours = tmp_path / "ours.eval"
    with zipfile.ZipFile(ours, "w", zipfile.ZIP_DEFLATED) as archive:
        metadata = {"fairness_evals": {"task": "fact_or_fair_objective"}}
        archive.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "x", "metadata": metadata}}))
    own = _fairness_evals(env, tmp_path, "score", "ours.eval")
    assert own.returncode == 2 and "ours.eval: reading an Inspect log needs the inspect-ai package" in own.stderr, (
        own.stderr
    )
