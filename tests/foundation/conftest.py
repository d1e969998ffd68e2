from __future__ import annotations

from pathlib import Path

import pytest
from installed import make_installed_env

from tests.conftest import shared_run


@pytest.fixture(scope="session")
def installed_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``bin`` of a fresh venv where fairness-evals is installed from a wheel (see support/installed.py), built once
    per test session across xdist workers."""
    return shared_run(tmp_path_factory, "installed", make_installed_env)
