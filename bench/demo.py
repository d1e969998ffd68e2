"""Wall time of the README's first command (`scripts/demo.sh`) on this machine, and how much of it is model time.

Runs the demo after set-up (run `scripts/setup.sh` first, or the first run includes the install), parses the
harness's progress bar for the time spent answering requests, and prints the total wall time, the request (model)
time, their ratio, and the table the demo printed. The rest is interpreter start-up, the harness's task index, model
loading, and our document building and aggregation. The README promises a few minutes on an idle two-core machine;
this script is where that is measured (no test asserts a time).

    .venv/bin/python bench/demo.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BAR = re.compile(r"Running (\w+) requests: 100%\|[^|]*\| (\d+)/\d+ \[(?:(\d+):)?(\d+):(\d+)<")


def main() -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        proc = subprocess.run([str(REPO / "scripts/demo.sh"), out], cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
    if proc.returncode:
        sys.exit(proc.stderr[-3000:])
    model_time = 0.0
    for kind, n, hours, minutes, seconds in BAR.findall(proc.stderr):
        model_time += int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)
        print(f"  {kind}: {n} requests")
    print(proc.stdout.strip())
    print(
        f"README demo: wall {wall:.1f} s; model answering requests {model_time:.0f} s ({100 * model_time / wall:.0f}%)"
    )
    print(f"  everything else (start-up, task index, model load, documents, aggregation): {wall - model_time:.1f} s")


if __name__ == "__main__":
    main()
