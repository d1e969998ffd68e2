"""Running the real harness executables in subprocesses, and reading what they write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
