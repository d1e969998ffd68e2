"""How long each harness's ``TaskManager()`` takes to index its tasks, with the autoload hook's reading speed-ups
(lmms-eval: libyaml's C loader; lm-eval: its own unchanged task files from the cache, which a first index fills)
and without them, in fresh processes run alternately; prints the medians and their ratio.

A speed layer stays only where it saves more than 1% of a run against a fast served model: ``bench/speed_layers.py``
assumes 60 s for all of ``--tasks fact_or_fair``. Measured on 2 cores (2026-12-07): lm-eval's index 1.26 s with the
cache, 12.5 s without the hook (5 to 6 s with the shared-include reading it replaced), so every ``lm_eval`` command
saves 4 to 11 s, 7 to 18% of that run; lmms-eval's 0.79 s against 5.66 s, 8%.

    .venv/bin/python bench/task_index.py [--runs 5] [--harness lm-eval lmms-eval]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

PROGRAM = """
import contextlib, sys, time
from fairness_evals import _patch
harness, plain = sys.argv[1], sys.argv[2] == "plain"
if plain:
    _patch._c_yaml = _patch._cached_reads = lambda harness: contextlib.nullcontext()
from importlib import import_module
tasks = import_module({"lm-eval": "lm_eval.tasks", "lmms-eval": "lmms_eval.tasks"}[harness])
_patch.patch_task_manager(tasks, harness)
start = time.perf_counter()
tasks.TaskManager()
print(time.perf_counter() - start)
"""


def timed(harness: str, mode: str) -> float:
    out = subprocess.run([sys.executable, "-c", PROGRAM, harness, mode], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--harness", nargs="+", default=["lm-eval", "lmms-eval"])
    args = parser.parse_args()
    for harness in args.harness:
        times: dict[str, list[float]] = {"hook": [], "plain": []}
        timed(harness, "hook")  # fills the cache, as a machine's first start does
        for _ in range(args.runs):
            for mode in times:
                times[mode].append(timed(harness, mode))
        hook, plain = (statistics.median(times[m]) for m in ("hook", "plain"))
        print(
            f"{harness}: index {hook:.2f} s with the hook's reading, {plain:.2f} s without (ratio {hook / plain:.2f})"
        )


if __name__ == "__main__":
    main()
