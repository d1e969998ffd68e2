"""What the empty few-shot pool of the Fact-or-Fair templates saves (issue 33). Prints times and their ratio.

Without a pool of its own, lm-eval makes one when it builds a task: a list of every test document (0.4.11-0.4.13
``ConfigurableTask.__init__``: ``list(self.fewshot_docs())``), though our tasks never draw from it (zero-shot by
design). ``fewshot_config: {samples: []}`` in ``fact_fair_tasks/llm/_default_template_yaml`` gives it an empty one.
This builds the ``fact_or_fair`` group (45,798 documents) with the task folder as shipped (A) and with that block
removed (B), each in a fresh process (``TaskManager(include_path=..., include_defaults=False).load``), alternately,
and prints the medians and the median ratio B/A.

    .venv/bin/python bench/fewshot_pool.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BLOCK_START, BLOCK_END = "# No pool", "  samples: []\n"
LOAD = """
import logging, sys, time
logging.disable(logging.WARNING)
from lm_eval.tasks import TaskManager
manager = TaskManager(include_path=sys.argv[1], include_defaults=False)
start = time.perf_counter()
tasks = manager.load(["fact_or_fair"])["tasks"]
assert len(tasks) == 5, tasks
print(time.perf_counter() - start)
"""


def folders(root: Path) -> tuple[Path, Path]:
    """The task folder as shipped, and a copy without the empty pool."""
    shipped, without = root / "shipped", root / "without"
    for folder in (shipped, without):
        shutil.copytree(REPO / "fact_fair_tasks" / "llm", folder)
    template = without / "_default_template_yaml"
    text = template.read_text()
    start, end = text.index(BLOCK_START), text.index(BLOCK_END) + len(BLOCK_END)
    template.write_text(text[:start] + text[end:])
    return shipped, without


def seconds(folder: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", LOAD, str(folder)], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        shipped, without = folders(Path(tmp))
        seconds(shipped), seconds(without)  # warm-up: the document cache, pyc files
        a, b = [], []
        for _ in range(args.runs):
            a.append(seconds(shipped))
            b.append(seconds(without))
    ratios = [y / x for x, y in zip(a, b, strict=True)]
    print(f"build fact_or_fair, empty pool (A):  median {statistics.median(a):.2f} s over {args.runs} runs")
    print(f"build fact_or_fair, test docs (B):   median {statistics.median(b):.2f} s")
    print(f"B/A: {statistics.median(ratios):.1f}x")


if __name__ == "__main__":
    main()
