"""The installed-wheel fixture (tests/support/installed.py) installs what it built, or fails saying so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from installed import build_wheel, check_installed, make_installed_env


def test_a_normal_install_of_the_same_version_does_not_stand_in_for_the_wheel(tmp_path: Path) -> None:
    """The reused dependencies already hold fairness-evals of the same version (a normal install, not editable): pip
    would say "already installed" and install nothing, and the tests would run that copy. The venv gets the wheel's
    files, its packages import from them, and the other install is left as it was."""
    wheel = build_wheel(tmp_path / "dist")
    other = tmp_path / "dependencies"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(other), str(wheel)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (other / "fairness_evals" / "__init__.py").write_text("STALE = True\n")
    before = sorted(p.relative_to(other) for p in other.rglob("*") if "__pycache__" not in p.parts)
    bin_dir = make_installed_env(tmp_path / "env", dependencies=other)
    code = "import fairness_evals; print(fairness_evals.__file__, hasattr(fairness_evals, 'STALE'))"
    out = subprocess.run([str(bin_dir / "python"), "-I", "-c", code], check=True, capture_output=True, text=True)
    (ours,) = (tmp_path / "env" / "venv").glob("lib/*/site-packages/fairness_evals/__init__.py")
    assert out.stdout.split() == [str(ours), "False"]
    assert sorted(p.relative_to(other) for p in other.rglob("*") if "__pycache__" not in p.parts) == before


def test_a_file_that_is_not_the_wheels_fails_the_fixture(tmp_path: Path) -> None:
    """A package that imports from elsewhere, or a file whose bytes are not the wheel's: one line, naming it."""
    wheel = build_wheel(tmp_path / "dist")
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(site), str(wheel)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    with pytest.raises(RuntimeError, match=r"imports from .*, not from the wheel's copy in"):
        check_installed(wheel, Path(sys.executable), site)  # the right files, but this Python imports another copy
    (site / "metrics" / "__init__.py").write_text("")
    with pytest.raises(RuntimeError, match=r"pip did not install metrics/__init__\.py of fairness_evals-"):
        check_installed(wheel, Path(sys.executable), site)
