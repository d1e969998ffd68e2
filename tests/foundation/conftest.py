from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from harness import REPO
from installed import make_installed_env

from tests.conftest import shared_run


@pytest.fixture(scope="session")
def installed_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``bin`` of a fresh venv where fairness-evals is installed from a wheel (see support/installed.py), built once
    per test session across xdist workers."""
    return shared_run(tmp_path_factory, "installed", make_installed_env)


@pytest.fixture(scope="session")
def lm_eval_0411(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lm-eval 0.4.11, the oldest version we declare, unpacked once per test session from the wheel
    ``scripts/setup.sh test`` downloads: the folder to put first on ``PYTHONPATH``."""

    def unpack(root: Path) -> Path:
        wheels = sorted((REPO / ".venv" / "test-wheels").glob("lm_eval-0.4.11-*.whl"))
        assert wheels, "no lm_eval 0.4.11 wheel under .venv/test-wheels: run scripts/setup.sh test"
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(root)
        return root

    return shared_run(tmp_path_factory, "lm-eval-0.4.11", unpack)


Sweep = tuple[Path, str, list[dict]]


def _shared_sweep(tmp_path_factory: pytest.TempPathFactory, version: str, oldest: Path) -> Sweep:
    """``tests/foundation/test_zero_shot.py``'s sweep under lm-eval ``version``, once per test session: the output
    folder, what the harness printed and every request body the server got."""
    from tests.foundation.test_zero_shot import _sweep

    def build(tmp: Path) -> Path:
        out, printed, received = _sweep(tmp, version, oldest)
        (tmp / "printed.txt").write_text(printed, encoding="utf-8")
        (tmp / "received.json").write_text(json.dumps(received), encoding="utf-8")
        return out

    out = shared_run(tmp_path_factory, f"zero-shot-sweep-{version}", build)
    printed = (out.parent / "printed.txt").read_text(encoding="utf-8")
    return out, printed, json.loads((out.parent / "received.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def sweep(tmp_path_factory: pytest.TempPathFactory, lm_eval_0411: Path) -> Sweep:
    """The zero-shot sweep with the installed lm-eval (0.4.13)."""
    return _shared_sweep(tmp_path_factory, "0.4.13", lm_eval_0411)


@pytest.fixture(scope="session")
def sweep_0411(tmp_path_factory: pytest.TempPathFactory, lm_eval_0411: Path) -> Sweep:
    """The zero-shot sweep with lm-eval 0.4.11 (also read by the oldest lm-eval's test of the group rows' arrows)."""
    return _shared_sweep(tmp_path_factory, "0.4.11", lm_eval_0411)
