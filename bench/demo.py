"""Wall time of the README demo command on this machine, and how much of it is model time (issue 2).

Runs the README's first command after set-up (the `lm_eval ... --tasks fact_or_fair --limit 12` part; run
`scripts/setup.sh` first), parses the harness's own progress bar for the time spent answering requests, and
prints total wall time, request (model) time and their ratio. The rest is interpreter start-up, the harness's
task index (~6 s on two cores), model loading and our document building and aggregation.

    .venv/bin/python bench/demo.py
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BAR = re.compile(r"Running (\w+) requests: 100%\|[^|]*\| (\d+)/\d+ \[(?:(\d+):)?(\d+):(\d+)<")


def demo_command() -> str:
    readme = (REPO / "README.md").read_text()
    line = next(line for line in readme.splitlines() if line.startswith("scripts/setup.sh && .venv/bin/lm_eval"))
    return line.split("&&", 1)[1].strip()


def main() -> None:
    command = demo_command()
    model = subprocess.run([str(REPO / ".venv/bin/fairness-evals"), "model"], capture_output=True, text=True, check=True)
    command = command.replace("$(.venv/bin/fairness-evals model)", model.stdout.strip())
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    start = time.perf_counter()
    proc = subprocess.run(shlex.split(command), cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode:
        sys.exit(proc.stderr[-3000:])
    model_time = 0.0
    for kind, n, hours, minutes, seconds in BAR.findall(proc.stderr):
        model_time += int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)
        print(f"  {kind}: {n} requests")
    print(f"README demo: wall {wall:.1f} s; model answering requests {model_time:.0f} s ({100 * model_time / wall:.0f}%)")
    print(f"  everything else (start-up, task index, model load, documents, aggregation): {wall - model_time:.1f} s")


if __name__ == "__main__":
    main()
