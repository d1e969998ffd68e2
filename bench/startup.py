"""Interpreter start-up cost of the autoload hook (issue 2): ``python -c pass`` with and without the package.

Builds two fresh virtual environments over the development environment's dependencies (see
tests/support/installed.py): A has fairness-evals installed from a wheel (so its ``.pth`` hook runs at
start-up), B does not. Runs ``python -c pass`` alternately in each, many times, and prints the medians
and the ratio A/B. Also times ``import lm_eval.tasks`` with and without the hook (the hook's work when a
harness *is* imported: the TaskManager patch, not the index build).

    .venv/bin/python bench/startup.py [--runs 300]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from installed import make_installed_env


def plain_env(root: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "_dev_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root / "bin"


def wall(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def paired(a: list[str], b: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, float, float]:
    for _ in range(3):  # warm-up: page cache, pyc files
        wall(a, env), wall(b, env)
    times_a, times_b, ratios = [], [], []
    for _ in range(runs):
        ta, tb = wall(a, env), wall(b, env)
        times_a.append(ta), times_b.append(tb), ratios.append(ta / tb)
    return statistics.median(times_a), statistics.median(times_b), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with_hook = make_installed_env(Path(tmp) / "with") / "python"
        without = plain_env(Path(tmp) / "without") / "python"
        control = plain_env(Path(tmp) / "control") / "python"
        site_dir = subprocess.run(
            [str(control), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        (Path(site_dir) / "zz_noop.pth").write_text("import sys\n")  # any .pth with an import line: the floor
        c, b, rc = paired([str(control), "-c", "pass"], [str(without), "-c", "pass"], args.runs)
        print(f"control, a no-op .pth ('import sys'): {c * 1e3:.2f} ms vs {b * 1e3:.2f} ms, ratio {rc:.4f}")
        # The floor of any hook that lives in a module: a .pth importing an empty module from site-packages.
        empty = plain_env(Path(tmp) / "empty") / "python"
        empty_site = Path(str(site_dir).replace(str(Path(tmp) / "control"), str(Path(tmp) / "empty")))
        (empty_site / "_empty_hook.py").write_text("")
        (empty_site / "zz_empty.pth").write_text("import _empty_hook\n")
        subprocess.run([str(empty), "-c", "import compileall, sys; compileall.compile_file(sys.argv[1], quiet=1)",
                        str(empty_site / "_empty_hook.py")], check=True)  # fmt: skip
        e, b, re_ = paired([str(empty), "-c", "pass"], [str(without), "-c", "pass"], args.runs)
        print(f"control, a .pth importing an empty module: {e * 1e3:.2f} ms vs {b * 1e3:.2f} ms, ratio {re_:.4f}")
        a, b, r = paired([str(with_hook), "-c", "pass"], [str(without), "-c", "pass"], args.runs)
        print(
            f"python -c pass: with fairness-evals {a * 1e3:.2f} ms, without {b * 1e3:.2f} ms (medians of {args.runs})"
        )
        print(f"  ratio with/without (median of paired ratios): {r:.4f}  -> start-up overhead {100 * (r - 1):+.2f}%")
        hook = [str(with_hook), "-c", "import lm_eval.tasks"]
        nohook = [str(without), "-c", "import lm_eval.tasks"]
        a, b, r = paired(hook, nohook, max(10, args.runs // 20))
        print(f"import lm_eval.tasks: with {a:.3f} s, without {b:.3f} s, ratio {r:.4f}")


if __name__ == "__main__":
    main()
