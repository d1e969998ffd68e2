"""Fixtures for the FairLens tests: small synthetic corpora, clean FAIRLENS_* settings, a fresh decode cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from faces import make_utkface_folder

from fairlens_tasks import images


@pytest.fixture(autouse=True)
def _clean_fairlens_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees a FAIRLENS_* variable it did not set itself."""
    for name in list(os.environ):
        if name.startswith("FAIRLENS_"):
            monkeypatch.delenv(name, raising=False)
    images.reset_image_cache(images.DEFAULT_CACHE_SIZE)


@pytest.fixture(scope="session")
def utk_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 images in each of the 30 strata (ages 25-65) plus a 20- and a 70-year-old: 62 files."""
    root = tmp_path_factory.mktemp("utkface")
    make_utkface_folder(root, 2, extra_ages=(20, 70))
    return root
