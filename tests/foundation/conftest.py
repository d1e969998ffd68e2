from __future__ import annotations

from pathlib import Path

import pytest
from installed import make_installed_env


@pytest.fixture(scope="session")
def installed_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``bin`` of a fresh venv where fairness-evals is installed from a wheel (see support/installed.py)."""
    return make_installed_env(tmp_path_factory.mktemp("installed"))
