"""The embedded default model for end-to-end tests (SmolLM2-135M-Instruct, converted once per machine)."""

from __future__ import annotations

from pathlib import Path

from fairness_evals.model import ensure_default_model


def smollm2() -> Path:
    return ensure_default_model()
