"""What the scale tests share: launching a harness on several CPU processes, and comparing two runs value by value.

Every run here pins ``OMP_NUM_THREADS=1``: the same matrix products then reduce in the same order in every process,
so a 1-process and a 2-process run of the same model can be compared for equality rather than closeness.
"""

from __future__ import annotations

import json
import math
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import DEV_BIN, offline_env

#: lm-eval names samples ``samples_<task>_<time>.jsonl``; lmms-eval ``<time>_samples_<task>.jsonl``.
_LM_EVAL_SAMPLES = re.compile(r"^samples_(?P<task>.+)_\d{4}-\d\d-\d\dT[\d\-.]+\.jsonl$")
_LMMS_EVAL_SAMPLES = re.compile(r"^\d{8}_\d{6}_samples_(?P<task>.+)\.jsonl$")


def free_port() -> int:
    """A TCP port nobody listens on now (for a launcher's rendezvous; xdist runs tests side by side)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def scale_env(tmp: Path, **extra: str) -> dict[str, str]:
    """``offline_env`` with one thread per process and CPU data parallelism for accelerate (gloo). lmms-eval keys its
    response cache on ``git describe`` of the working folder, ours when the venv sits inside the checkout: a fixed
    commit keeps the cache keys of a run and its restart equal whatever is committed meanwhile."""
    return offline_env(
        tmp, OMP_NUM_THREADS="1", ACCELERATE_USE_CPU="1", GIT_DIR="/nonexistent", LMMS_EVAL_GIT_COMMIT="test", **extra
    )


def accelerate_launch(processes: int) -> list[str]:
    """``accelerate launch`` as a user types it, on CPU: ``--multi_gpu`` selects accelerate's torchrun-style
    launcher (``--cpu`` alone would need MPI for more than one process) and ``ACCELERATE_USE_CPU=1`` in the
    environment makes every process a gloo rank on the CPU."""
    return [
        str(DEV_BIN / "accelerate"), "launch", "--multi_gpu", "--num_processes", str(processes),
        "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
        "--main_process_port", str(free_port()),
    ]  # fmt: skip


def torchrun(processes: int) -> list[str]:
    return [str(DEV_BIN / "torchrun"), "--nproc_per_node", str(processes), "--master_port", str(free_port())]


def samples_by_task(folder: Path) -> dict[str, list[dict]]:
    """Every logged sample under ``folder``, by task, in either harness's file naming."""
    out: dict[str, list[dict]] = {}
    for path in sorted(folder.rglob("*.jsonl")):
        match = _LM_EVAL_SAMPLES.match(path.name) or _LMMS_EVAL_SAMPLES.match(path.name)
        if match:
            lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            out.setdefault(match["task"], []).extend(lines)
    return out


def results_of(folder: Path) -> dict:
    found = [p for p in folder.rglob("*.json") if "results" in p.name]
    assert len(found) == 1, f"expected one results file under {folder}, found {found}"
    return json.loads(found[0].read_text())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def compare_runs(
    one: Path, many: Path, *, normalise: Callable[[str], str] = lambda text: text, skip: tuple[str, ...] = ()
) -> tuple[int, int, list[str]]:
    """Compare every result value (``results`` and ``groups``) and every logged sample of two output folders.

    Samples are matched by (task, ``doc_id``) whatever order the ranks wrote them in; ``normalise`` maps each
    sample's JSON text first (e.g. to replace a run-specific output folder) and the sample fields in ``skip`` are
    not compared. Returns the number of values and samples compared and a list of differences (empty when the
    runs agree)."""
    differences: list[str] = []
    values = 0
    a, b = results_of(one), results_of(many)
    for section in ("results", "groups"):
        left, right = a.get(section, {}), b.get(section, {})
        if sorted(left) != sorted(right):
            differences.append(f"{section}: tasks {sorted(left)} != {sorted(right)}")
        for task in sorted(set(left) & set(right)):
            for key in sorted(set(left[task]) | set(right[task])):
                values += 1
                x, y = left[task].get(key, "<missing>"), right[task].get(key, "<missing>")
                if not _same(x, y):
                    differences.append(f"{section}[{task}][{key}]: {x!r} != {y!r}")
    samples = 0
    left_samples, right_samples = samples_by_task(one), samples_by_task(many)
    if sorted(left_samples) != sorted(right_samples):
        differences.append(f"sample files: {sorted(left_samples)} != {sorted(right_samples)}")
    for task in sorted(set(left_samples) & set(right_samples)):
        by_doc = [
            {s["doc_id"]: json.loads(normalise(json.dumps(s, sort_keys=True))) for s in side[task]}
            for side in (left_samples, right_samples)
        ]
        for side, name in ((left_samples, "one"), (right_samples, "many")):
            if len(side[task]) != len({s["doc_id"] for s in side[task]}):
                differences.append(f"{task}: a document logged twice in the {name}-process run")
        if sorted(by_doc[0]) != sorted(by_doc[1]):
            differences.append(f"{task}: documents {sorted(by_doc[0])} != {sorted(by_doc[1])}")
        for doc_id in sorted(set(by_doc[0]) & set(by_doc[1])):
            samples += 1
            x, y = by_doc[0][doc_id], by_doc[1][doc_id]
            for key in sorted((set(x) | set(y)) - set(skip)):
                if not _same(x.get(key, "<missing>"), y.get(key, "<missing>")):
                    differences.append(f"{task} doc {doc_id} [{key}]: {x.get(key)!r} != {y.get(key)!r}"[:400])
    return values, samples, differences


def ranks_that_built(log: str, task: str) -> set[int]:
    """The ranks whose harness logged building ``task``'s requests (both harnesses log this line per rank)."""
    return {int(m) for m in re.findall(rf"Building contexts for {re.escape(task)} on rank (\d+)", log)}
