"""An *installed* copy of fairness-evals: a wheel built from the checkout, installed into a fresh venv.

The fresh venv reuses the development venv's third-party packages (a path entry in a ``.pth`` file), so
no download is needed, but ``fairness_evals`` and our task packages come only from the wheel, and the
wheel's ``fairness_evals_autoload.pth`` is processed by ``site`` as it is for a user. The harness console
scripts are generated from the harnesses' own ``console_scripts`` entry points, as pip would write them.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from harness import REPO

_LAUNCHER = """#!{python}
import sys
from {module} import {attr}
sys.exit({attr}())
"""


def build_wheel(out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = out.glob("fairness_evals-*.whl")
    return wheel


def make_installed_env(root: Path) -> Path:
    """Create the venv at ``root`` with the wheel installed; return its ``bin`` folder."""
    wheel = build_wheel(root / "dist")
    env = root / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    (site / "_dev_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # pip writes the .pyc files a user's install has (it skips them under PYTHONDONTWRITEBYTECODE, which the
    # start-up measurement must not inherit: the hook module would be compiled at every start).
    pip_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
        text=True,
        env=pip_env,
    )
    for dist in ("lm_eval", "lmms_eval"):
        for ep in importlib.metadata.distribution(dist).entry_points:
            if ep.group != "console_scripts":
                continue
            module, attr = ep.value.split(":")
            script = env / "bin" / ep.name
            script.write_text(_LAUNCHER.format(python=python, module=module, attr=attr))
            script.chmod(0o755)
    return env / "bin"
