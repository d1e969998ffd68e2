"""Running the real harness executables in subprocesses, and reading what they write."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

DEV_BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]


def offline_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The environment for a harness run: offline, caches under ``tmp``, no GPU, quiet telemetry."""
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HOME=str(tmp / "hf-home"),
        HF_DATASETS_CACHE=str(tmp / "hf-datasets"),
        CUDA_VISIBLE_DEVICES="",
        WANDB_MODE="disabled",
        TOKENIZERS_PARALLELISM="false",
        PYTHONWARNINGS="ignore",
    )
    env.pop("FAIRNESS_EVALS_AUTOLOAD", None)
    env.update(extra)
    return env


def own_cache(folder: Path) -> str:
    """``folder`` as a test's own ``FAIRNESS_EVALS_CACHE``, holding a copy of this session's lm-eval task-file cache
    where there is one (the autoload hook's, ``fairness_evals._patch``): an ``lm_eval`` start there indexes as a user's
    second start does (about 1 s), not as the first one after an install (about 12 s)."""
    from fairness_evals.cache import cache_dir

    source = cache_dir() / "task-index"
    if source.is_dir():
        shutil.copytree(source, folder / "task-index", dirs_exist_ok=True)
    return str(folder)


def run(
    args: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 600, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run a command; on ``check`` failure the assertion shows the tail of its output."""
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, args))} exited {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
            f"\n--- stderr\n{proc.stderr[-6000:]}"
        )
    return proc


def run_lmms_eval(
    tmp: Path, model: str, model_args: str, tasks: str, *extra: str, env: dict[str, str], timeout: float = 600
) -> Path:
    """The development environment's ``lmms-eval`` with ``--log_samples`` into ``tmp/out`` (returned), one request
    at a time; fails unless it wrote a results file (lmms-eval exits 0 when a task fails)."""
    out = tmp / "out"
    run(
        [str(DEV_BIN / "lmms-eval"), "--model", model, "--model_args", model_args, "--tasks", tasks,
         *extra, "--batch_size", "1", "--output_path", str(out), "--log_samples"],
        env=env, cwd=tmp, timeout=timeout,
    )  # fmt: skip
    assert list(out.rglob("*_results.json")), "lmms-eval wrote no results"
    return out


def lmms_eval_process(
    args: list[str], tmp: Path, env: dict[str, str] | None = None, *, clear: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """The development environment's ``lmms-eval`` with ``args``, offline, datasets cached under ``tmp``, variables
    starting with a ``clear`` prefix removed and ``env`` added; returns the finished process (not checked)."""
    clean = {k: v for k, v in os.environ.items() if not (clear and k.startswith(clear))}
    clean.update(
        HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_CACHE=str(tmp / "hf-datasets"), **(env or {}),
    )  # fmt: skip
    return subprocess.run(
        [str(DEV_BIN / "lmms-eval"), *args], capture_output=True, text=True, env=clean, timeout=540, check=False
    )


def results_and_samples(folder: Path, tasks: Sequence[str]) -> tuple[dict, dict[str, list[dict]]]:
    """The one results JSON under ``folder`` and each task's logged samples."""
    results = list(folder.rglob("*_results.json"))
    assert len(results) == 1, f"no results JSON under {folder}"
    samples = {}
    for task in tasks:
        (path,) = folder.rglob(f"*_samples_{task}.jsonl")
        samples[task] = [json.loads(line) for line in path.read_text().splitlines()]
    return json.loads(results[0].read_text()), samples


def same_value(a: object, b: object) -> bool:
    """Equal, or both NaN (how a harness number and ours agree)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def results_file(output_dir: Path) -> Path:
    """The single results JSON a harness run wrote under ``output_dir`` (lm-eval or lmms-eval naming)."""
    found = [p for p in output_dir.rglob("*.json") if "results" in p.name]
    assert len(found) == 1, f"expected one results file under {output_dir}, found {found}"
    return found[0]


def load_results(output_dir: Path) -> dict:
    return json.loads(results_file(output_dir).read_text())


def sample_lines(output_dir: Path, task: str) -> list[dict]:
    files = [p for p in output_dir.rglob("*.jsonl") if f"samples_{task}" in p.name]
    assert files, f"no samples file for {task} under {output_dir}"
    lines: list[dict] = []
    for path in files:
        lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines
