"""Shared test set-up: make ``tests/support`` importable and keep every run offline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "support"))

# Tests never reach a model or dataset hub; anything that tries must fail fast, not hang.
for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")
