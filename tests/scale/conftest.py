"""Fixtures for the scale tests: the tiny local models and small corpora the other harness tests build."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_vlm(plumbing_only_vlm: Path) -> Path:
    """The tiny random LLaVA model (``tests/conftest.py``: built once per test session for every test that runs it)."""
    return plumbing_only_vlm


@pytest.fixture(scope="session")
def face_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One synthetic UTKFace-named image per FairLens stratum: 30 images."""
    from faces import make_utkface_folder

    root = tmp_path_factory.mktemp("scale-faces")
    make_utkface_folder(root, 1, seed=5)
    return root


@pytest.fixture(scope="session")
def iris_corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The IRIS tests' synthetic corpora (72 images; 4 counterfactual sets), as the IRIS_* settings naming them."""
    from tests.iris.conftest import CORNERS, image_rows, steer_rows, write_manifest

    root = tmp_path_factory.mktemp("scale-iris")
    occupations = ["doctor", "nurse", "carpenter", "teacher"]
    corpus = write_manifest(root / "images" / "images.csv", image_rows(root / "images", occupations))
    sets = {f"set-{chr(97 + i)}": occupation for i, occupation in enumerate(occupations)}
    steer = write_manifest(root / "steer" / "steer.csv", steer_rows(root / "steer", sets, CORNERS))
    return {"IRIS_CORPUS": str(corpus), "IRIS_STEER_CORPUS": str(steer), "IRIS_PROBE_ROUNDS": "1"}
