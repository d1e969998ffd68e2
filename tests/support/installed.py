"""An *installed* copy of fairness-evals: a wheel built from the checkout, installed into a fresh venv.

The fresh venv reuses the development venv's third-party packages (a path entry in a ``.pth`` file), so
no download is needed, but ``fairness_evals`` and our task packages come only from the wheel, and the
wheel's ``fairness_evals_autoload.pth`` is processed by ``site`` as it is for a user. The harness console
scripts are generated from the harnesses' own ``console_scripts`` entry points, as pip would write them.

pip installs the wheel with ``--ignore-installed``: the development environment may hold a normal install of the same
version (pip would then install nothing, and the tests would run those files), and that install must not be
uninstalled either. Then :func:`check_installed` compares every file of the wheel with the venv's copy and asks the
venv's Python where each package imports from; any difference fails the fixture with one line naming the file.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import os
import subprocess
import sys
import sysconfig
import venv
import zipfile
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


def _record_hash(algorithm: str, data: bytes) -> str:
    """A file's hash as a wheel's RECORD writes it (urlsafe base64, no padding)."""
    return base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=").decode()


def check_installed(wheel: Path, python: Path, site: Path) -> None:
    """Fail (RuntimeError, one line) unless every file of ``wheel`` is in ``site`` with the wheel's bytes (its RECORD
    hash) and each of its top-level packages imports, for ``python``, from ``site``."""
    with zipfile.ZipFile(wheel) as archive:
        (record,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        rows = list(csv.reader(io.StringIO(archive.read(record).decode())))
    modules = set()
    for path, digest, _size in rows:
        if not digest:
            continue  # the RECORD itself
        algorithm, _, expected = digest.partition("=")
        target = site / path
        if not target.is_file() or _record_hash(algorithm, target.read_bytes()) != expected:
            raise RuntimeError(f"installed.py: pip did not install {path} of {wheel.name} into {site}")
        top = path.split("/")[0]
        if "/" in path and not top.endswith(".dist-info"):
            modules.add(top)
        elif path.endswith(".py"):
            modules.add(path.removesuffix(".py"))
    code = "import importlib.util, sys; print('\\n'.join(importlib.util.find_spec(n).origin for n in sys.argv[1:]))"
    found = subprocess.run(
        [str(python), "-I", "-c", code, *sorted(modules)], check=True, capture_output=True, text=True
    ).stdout.split()  # -I: the venv alone (no PYTHONPATH, no current folder), as a user has it
    for package, origin in zip(sorted(modules), found, strict=True):
        if not Path(origin).resolve().is_relative_to(site.resolve()):
            raise RuntimeError(f"installed.py: {package} imports from {origin}, not from the wheel's copy in {site}")


def make_installed_env(root: Path, dependencies: Path | None = None) -> Path:
    """Create the venv at ``root`` with the wheel installed and checked (:func:`check_installed`); return its ``bin``
    folder. ``dependencies``: the site folder whose packages it reuses (default: this interpreter's)."""
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
    (site / "_dev_dependencies.pth").write_text(str(dependencies or sysconfig.get_paths()["purelib"]) + "\n")
    # pip writes the .pyc files a user's install has (it skips them under PYTHONDONTWRITEBYTECODE, which the
    # start-up measurement must not inherit: the hook module would be compiled at every start).
    pip_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "--ignore-installed",
         "-q", str(wheel)],
        check=True, capture_output=True, text=True, env=pip_env,
    )  # fmt: skip
    check_installed(wheel, python, site)
    for dist in ("lm_eval", "lmms_eval"):
        for ep in importlib.metadata.distribution(dist).entry_points:
            if ep.group != "console_scripts":
                continue
            module, attr = ep.value.split(":")
            script = env / "bin" / ep.name
            script.write_text(_LAUNCHER.format(python=python, module=module, attr=attr))
            script.chmod(0o755)
    return env / "bin"
