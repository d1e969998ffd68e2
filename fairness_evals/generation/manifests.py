"""The payload of our ``lmms_eval.models`` entry point: one manifest per backend.

lmms-eval 0.7.3 loads entry points of the group ``lmms_eval.models`` (``models/registry_v2.py``) and
accepts a callable returning :class:`~lmms_eval.models.registry_v2.ModelManifest` objects. The class paths
are imported only when a run asks for that model, so listing them costs nothing.
"""

from __future__ import annotations

from typing import Any

#: model id -> class path (simple models: one request per document, text prompt in, JSON out).
BACKENDS: dict[str, str] = {
    "from_folder": "fairness_evals.generation.from_folder.FromFolder",
    "diffusers_t2i": "fairness_evals.generation.diffusers_t2i.DiffusersT2I",
}


def manifests() -> list[Any]:
    """``[ModelManifest(...)]`` for :data:`BACKENDS` (the entry point's callable)."""
    from lmms_eval.models.registry_v2 import ModelManifest

    return [ModelManifest(model_id=model_id, simple_class_path=path) for model_id, path in BACKENDS.items()]
