"""What the image-generation tasks' document modules share: a document's hash, the hash of a run's documents, and the
shipped prompt file (each generation benchmark's documents module uses them). Import-light."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


def doc_sha(doc: Mapping[str, Any]) -> str:
    """A document's hash: sha256 of its fields as canonical JSON (sorted keys, no spaces), 16 hex digits."""
    canonical = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def documents_sha256(shas: Iterable[Any]) -> str:
    """A hash of the evaluated documents: sha256 over their sorted per-document hashes (16 hex digits)."""
    return hashlib.sha256("\n".join(sorted(str(s) for s in shas)).encode()).hexdigest()[:16]


def prompt_file(provenance: str, data_version: int, documents: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The content of a task's shipped prompt file: how it was built, its data version and the documents."""
    return {"_provenance": provenance, "data_version": data_version, "documents": list(documents)}


def write_prompt_file(path: Path, content: Mapping[str, Any]) -> None:
    """Write a shipped prompt file (``python -m <documents module>``): indented JSON, one trailing newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")
