"""The toy's documents: ``data/documents.jsonl``, shipped in the package and read as they are.

Each line is ``{"id", "question", "options": [three texts], "stereotyped": index, "unknown": index}``. lm-eval reads
them through :func:`load_dataset` (the YAML's ``custom_dataset``), Inspect through :func:`documents` (the same rows).
Every row the harness sees also carries the run's settings (``min_coverage``) and the data's hash (``data_sha256``),
so that a ``--log_samples`` line says what it was scored with.

Loaded by lm-eval as a file beside the YAML (``!function documents.load_dataset``) as well as imported as
``toy_tasks.documents``: no dataclasses, no module state.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from toy_tasks.benchmark import BENCHMARK

DATA = Path(__file__).resolve().parent / "data" / "documents.jsonl"
#: The task-metadata settings the toy reads, with their defaults (the Benchmark's ``settings``).
DEFAULTS = dict(BENCHMARK.settings)


def documents() -> list[dict[str, Any]]:
    """Every document, in file order."""
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def data_sha256() -> str:
    """A hash of the data file (16 hex digits): two runs on the same documents record the same."""
    return hashlib.sha256(DATA.read_bytes()).hexdigest()[:16]


def settings(metadata: dict[str, Any]) -> dict[str, Any]:
    """The toy's settings among ``metadata`` (task metadata, ``--metadata``, ``-T`` arguments), checked; keys of
    other packages (``version``, model arguments) are ignored, an unknown ``toy_`` key is an error naming it."""
    unknown = sorted(key for key in metadata if key.startswith("toy_") and key not in DEFAULTS)
    if unknown:
        raise ValueError(f"toy: unknown setting {', '.join(unknown)} (the toy takes {', '.join(DEFAULTS)})")
    out = {key: metadata.get(key, default) for key, default in DEFAULTS.items()}
    minimum = out["toy_min_coverage"]
    if isinstance(minimum, bool) or not isinstance(minimum, (int, float)) or not 0.0 <= minimum <= 1.0:
        raise ValueError(f"toy: toy_min_coverage must be a share in [0, 1], got {minimum!r}")
    return out


def rows(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents as a run sees them: each with the run's ``min_coverage`` and the data's hash."""
    minimum = float(settings(metadata)["toy_min_coverage"])
    sha = data_sha256()
    return [{**doc, "min_coverage": minimum, "data_sha256": sha} for doc in documents()]


def load_dataset(**kwargs: Any) -> dict[str, Any]:
    """lm-eval's ``custom_dataset``: called with the task metadata (and whatever else lm-eval passes)."""
    import datasets

    return {"test": datasets.Dataset.from_list(rows(kwargs))}
