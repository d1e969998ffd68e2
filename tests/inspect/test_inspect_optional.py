"""Without the ``inspect`` extra: with ``inspect_ai`` unimportable, every module of ours outside the Inspect tasks
imports, lmms-eval runs our tasks (the command line and lm-eval: ``tests/foundation/test_extras.py``), and reading
an Inspect log is a one-line error that names the extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from harness import DEV_BIN, REPO, offline_env

pytestmark = pytest.mark.harness

PACKAGES = ("fairness_evals", "metrics", "fact_fair_tasks", "fairlens_tasks", "iris_tasks")
#: The modules of fairness_evals.inspect that import without inspect_ai; the others (the metric, the registry), and
#: each benchmark's Inspect tasks and the FairLens judge's scorer (:data:`INSPECT_ONLY`), are imported by Inspect alone.
INSPECT_FREE = (
    "fairness_evals.inspect.headline",
    "fairness_evals.inspect.logs",
    "fairness_evals.inspect.plans",
    "fairness_evals.inspect.task_files",  # imports the task modules only when it writes or checks the task files
)
INSPECT_ONLY = ("fact_fair_tasks.inspect_tasks", "fairlens_tasks.inspect_tasks", "fairlens_tasks.judging.inspect_scorer",
                "iris_tasks.inspect_tasks")  # fmt: skip


def blocked_env(tmp: Path, **extra: str) -> dict[str, str]:
    """An environment in which ``import inspect_ai`` fails: a package of that name first on the path raises."""
    stub = tmp / "blocked" / "inspect_ai"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("inspect_ai is blocked in this test")\n')
    env = offline_env(tmp, **extra)
    env["PYTHONPATH"] = str(tmp / "blocked")
    return env


def test_every_module_but_the_inspect_tasks_imports_without_inspect(tmp_path: Path) -> None:
    log = tmp_path / "task.eval"
    log.write_bytes(b"")  # the reader needs inspect_ai before it looks inside
    code = f"""
import importlib, pkgutil, sys
try:
    import inspect_ai
except ImportError:
    pass
else:
    raise SystemExit("inspect_ai imported")
names = []
for package in {PACKAGES!r}:
    module = importlib.import_module(package)
    names += [m.name for m in pkgutil.walk_packages(module.__path__, package + ".")]
free = {INSPECT_FREE!r}
skipped = [n for n in names if n.startswith("fairness_evals.inspect.") and n not in free or n in {INSPECT_ONLY!r}]
for name in names:
    if name not in skipped and not name.endswith(".__main__"):  # __main__ runs the command line
        importlib.import_module(name)
from fairness_evals.inspect.logs import read_log
try:
    read_log({str(log)!r})
except ValueError as error:
    print(error)
print(len(names), len(skipped), all(name in names for name in free))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=blocked_env(tmp_path), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    message, counts = proc.stdout.strip().splitlines()[-2:]
    assert message == (
        f"{log}: reading an Inspect log needs the inspect-ai package, which is not installed: "
        "pip install 'fairness-evals[inspect]'"
    )
    walked, skipped, free_found = counts.split()
    assert int(walked) > 100 and int(skipped) == 6 and free_found == "True"  # the tasks, metric, judge, registry


def test_lmms_eval_runs_our_tasks_without_inspect(tmp_path: Path) -> None:
    """lmms-eval's side. The command line and lm-eval without inspect-ai are run by ``tests/foundation/test_extras.py``,
    whose environment blocks inspect-ai with the other extras."""
    from faces import make_utkface_folder

    env = blocked_env(tmp_path)
    corpus = tmp_path / "faces"
    make_utkface_folder(corpus, 1, seed=3)
    images = {"FAIRLENS_CORPUS": str(corpus), "FAIRLENS_SAMPLE_FRACTION": "1"}
    command = [str(DEV_BIN / "lmms-eval"), "--model", "dummy", "--model_args", "response=Yes"]
    command += ["--tasks", "fairlens_hiring", "--limit", "2", "--batch_size", "1"]
    lmms = subprocess.run(
        [*command, "--output_path", str(tmp_path / "lmms")],
        env={**env, **images},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert lmms.returncode == 0, lmms.stderr[-3000:]
    (results,) = (tmp_path / "lmms").rglob("*_results.json")
    assert json.loads(results.read_text())["results"]["fairlens_hiring"]["unparsed_rate,none"] == 0.0
