"""The size of each install of fairness-evals: the base install (the lm-eval tasks) and the extras.

Builds one fresh virtual environment per install under a temporary folder, with the project's wheel and the CPU
torch wheel in the same pip command (``pip install torch==2.13.0 "<wheel>[extra]"``: without it pip pulls a
multi-GB CUDA build), and prints for each the number of installed distributions (pip itself not counted), the size
of the environment on disk (MB, the files' apparent sizes) and both as a ratio to the base install. Where a row
names an extra, ``pip install "fairness-evals[extra]"`` gives that environment.

    .venv/bin/python bench/install_size.py [--installs base,lmms,inspect,all] [--keep]

Needs the package registry (pip downloads what its cache lacks): one run took 70 minutes of wall time (8 minutes of CPU)
on 2 shared cores busy with other work and a cold pip cache, nearly all of it pip; a warm cache makes a rerun faster.
docs/install.md has its numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The CPU torch wheel that the rest of the project installs (scripts/setup.sh).
TORCH = "torch==2.13.0"


def build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (wheel,) = out.glob("fairness_evals-*.whl")
    return wheel


def environment(root: Path, wheel: Path, extra: str) -> tuple[int, float, float]:
    """(distributions, MB, seconds to install) of a fresh venv with ``wheel[extra]`` (``base``: no extra)."""
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    python = root / "bin" / "python"
    target = str(wheel) if extra == "base" else f"{wheel}[{extra}]"
    start = time.perf_counter()
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", TORCH, target],
        capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"install_size: pip install {target} failed: {proc.stderr.strip().splitlines()[-1:]}")
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    names = {d["name"].lower() for d in json.loads(listed)} - {"pip"}
    size = sum(
        (Path(folder) / name).lstat().st_size for folder, _, files in os.walk(root) for name in files
    ) / 1e6  # fmt: skip
    return len(names), size, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--installs", default="base,lmms,inspect,all", help="comma-separated: base and extra names")
    parser.add_argument("--keep", action="store_true", help="keep the environments (printed) instead of removing them")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="fairness-evals-install-size-"))
    try:
        wheel = build_wheel(root / "dist")
        rows = []
        for install in args.installs.split(","):
            rows.append((install, *environment(root / install, wheel, install)))
            if not args.keep:
                shutil.rmtree(root / install)
        base = next((row for row in rows if row[0] == "base"), rows[0])
        print(f"{'install':<10} {'packages':>8} {'x base':>7} {'MB':>7} {'x base':>7} {'install s':>9}")
        for install, count, size, seconds in rows:
            name = "base" if install == "base" else f"[{install}]"
            print(f"{name:<10} {count:>8} {count / base[1]:>7.2f} {size:>7.0f} {size / base[2]:>7.2f} {seconds:>9.0f}")
        print(f"packages: distributions pip lists (pip not counted); MB: the venv's files; with {TORCH} (CPU)")
    finally:
        if args.keep:
            print(f"environments kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
