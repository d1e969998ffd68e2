"""Real lm-eval runs with its weight-free ``dummy`` model (it answers "lol": nothing parses), for the ``check`` and
``report`` tests: a ``fact_or_fair_lite`` run on a ``--samples`` subset, and a ``--predict_only`` run. Each is built
once per test session (:func:`tests.conftest.shared_run`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import shared_run

#: The tasks of the ``fact_or_fair_lite`` group, each asked its first four documents (``--samples``).
LITE_TASKS = (
    "fact_or_fair_objective",
    *(f"fact_or_fair_subjective_{c}_lite" for c in ("base", "representativeness", "attribution", "ingroup")),
)
SUBSET = {task: [0, 1, 2, 3] for task in LITE_TASKS}


def _lm_eval_dummy(tmp: Path, *args: str) -> Path:
    from harness import DEV_BIN, offline_env, run

    out = tmp / "out"
    run(
        [str(DEV_BIN / "lm_eval"), "--model", "dummy", *args, "--output_path", str(out), "--log_samples"],
        env=offline_env(tmp),
        cwd=tmp,
    )
    return out


def lite_subset_run(factory: pytest.TempPathFactory) -> Path:
    """``lm_eval --model dummy --tasks fact_or_fair_lite --samples <the first four documents of each task>``."""
    return shared_run(
        factory,
        "lm-eval-dummy-lite-subset",
        lambda tmp: _lm_eval_dummy(tmp, "--tasks", "fact_or_fair_lite", "--samples", json.dumps(SUBSET)),
    )


def predict_only_run(factory: pytest.TempPathFactory) -> Path:
    """``lm_eval --model dummy --tasks fact_or_fair_objective --predict_only``: every document, no metric but
    lm-eval's ``bypass``."""
    return shared_run(
        factory,
        "lm-eval-dummy-predict-only",
        lambda tmp: _lm_eval_dummy(tmp, "--tasks", "fact_or_fair_objective", "--predict_only"),
    )
