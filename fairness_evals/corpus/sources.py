"""Reading corpus items that FairLens and IRIS share: a bad item, JSON manifests, Hugging Face label columns.

A reader names every bad item with a :class:`Problem` instead of stopping at the first; unless told to skip
them, a run with bad items stops with one message that lists them (:func:`bad_input_message`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairness_evals.corpus.settings import SettingsError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
MANIFEST_SUFFIXES = (".csv", ".jsonl", ".json")
MAX_LISTED_PROBLEMS = 8


@dataclass(frozen=True)
class Problem:
    """A bad item: ``item`` names it (file, manifest line, dataset row), ``message`` says what is wrong."""

    item: str
    message: str

    def __str__(self) -> str:
        return f"{self.item}: {self.message}"


def bad_input_message(corpus: str, problems: list[str], skip: str) -> str:
    """The error that stops a run on bad input: ``corpus`` names it ("FairLens corpus /data/x"), the first
    :data:`MAX_LISTED_PROBLEMS` problems are listed, and ``skip`` is the setting that skips them instead."""
    shown = "; ".join(f"({i}) {p}" for i, p in enumerate(problems[:MAX_LISTED_PROBLEMS], start=1))
    more = f"; and {len(problems) - MAX_LISTED_PROBLEMS} more" if len(problems) > MAX_LISTED_PROBLEMS else ""
    return (
        f"{corpus}: {len(problems)} bad input item(s); nothing was sent to the model. "
        f"Fix them, or set {skip} to skip and count them: {shown}{more}"
    )


def json_manifest_rows(path: Path) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """(item name, row or None, error) for each row of a JSON list (``.json``) or JSON-lines manifest.

    A ``.json`` file that is not a list of rows stops the run (:class:`SettingsError`); a row that is not a
    JSON object, or a line that is not JSON, is a bad item.
    """
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise SettingsError(f"manifest {path}: not valid JSON ({error.msg} at line {error.lineno})") from None
        if not isinstance(data, list):
            raise SettingsError(f"manifest {path}: a .json manifest must hold a list of objects (use .jsonl for lines)")
        for number, row in enumerate(data, start=1):
            if isinstance(row, dict):
                yield f"{path.name} item {number}", row, None
            else:
                yield f"{path.name} item {number}", None, "not a JSON object"
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            yield f"{path.name} line {number}", None, f"not valid JSON ({error.msg})"
            continue
        if isinstance(row, dict):
            yield f"{path.name} line {number}", row, None
        else:
            yield f"{path.name} line {number}", None, "not a JSON object"


def require_hf_columns(dataset: Any, name: str, columns: Mapping[str, str], option: str) -> None:
    """:class:`SettingsError` unless ``hf:name`` has every column of ``columns`` (role -> column name)."""
    missing = [f"{role}={col}" for role, col in columns.items() if col not in dataset.column_names]
    if missing:
        raise SettingsError(
            f"hf:{name} lacks the column(s) {', '.join(missing)} (it has {', '.join(dataset.column_names)}); "
            f"map them with {option}"
        )


def decoded_labels(dataset: Any, table: Mapping[str, list[Any]], columns: Mapping[str, str]) -> dict[str, list[Any]]:
    """Per role, the values of its column in ``table``; a ``ClassLabel`` column's integers become their names
    (``None`` for an integer outside the class range)."""
    import datasets

    decoded: dict[str, list[Any]] = {}
    for role, column in columns.items():
        values = table[column]
        feature = dataset.features[column]
        if isinstance(feature, datasets.ClassLabel):
            values = [
                feature.int2str(v) if isinstance(v, int) and 0 <= v < feature.num_classes else None for v in values
            ]
        decoded[role] = values
    return decoded
