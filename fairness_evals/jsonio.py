"""JSON-lines reading and writing shared by the ``export`` and ``score`` commands.

Also the pieces of reading lmms-eval ``--log_samples`` replies that the FairLens and IRIS ``score`` commands
(and the FairLens judge command) share: which files to read, their numbered lines, and a sample's reply.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def dumps_line(record: dict[str, Any]) -> str:
    """One canonical JSON line: sorted keys, no NaN, UTF-8 characters kept (byte-identical across runs)."""
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def write_lines(records: Iterable[dict[str, Any]], out: str | None) -> int:
    """Write records to ``out`` (a path) or stdout; returns how many were written."""
    count = 0
    handle = open(out, "w", encoding="utf-8", newline="\n") if out else sys.stdout  # noqa: SIM115
    try:
        for record in records:
            handle.write(dumps_line(record) + "\n")
            count += 1
    finally:
        if out:
            handle.close()
    return count


def read_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)``; a line that is not a JSON object is an error naming the line."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{number}: expected a JSON object, got {type(obj).__name__}")
            yield number, obj


def strict_json(value: Any) -> Any:
    """Replace NaN/inf floats by None (strict JSON has no NaN) recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value


def write_scores(scores: dict[str, dict[str, Any]], out: str | None) -> None:
    """Print the scores as JSON and, with ``out``, write the same JSON there. NaN is written as null."""
    text = json.dumps(strict_json(scores), indent=2, sort_keys=True, allow_nan=False)
    print(text)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")


def harness_sample_files(directory: Path, prefix: str) -> list[Path]:
    """The ``--log_samples`` files of tasks starting with ``prefix`` under an lm-eval/lmms-eval output folder.

    lm-eval names them ``samples_<task>_<date>.jsonl``; lmms-eval ``<date>_samples_<task>.jsonl``.
    """
    files = [p for p in sorted(directory.rglob("*.jsonl")) if f"samples_{prefix}" in p.name]
    return files


def write_text(text: str, out: str | None) -> None:
    """Write ``text`` to ``out`` (a path) or, without one, to standard output."""
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def sample_reply(row: dict[str, Any]) -> Any:
    """The reply of an lmms-eval ``--log_samples`` line: ``filtered_resps`` (else ``resps``), out of its lists."""
    for key in ("filtered_resps", "resps"):
        if key in row:
            value = row[key]
            while isinstance(value, list):
                value = value[0] if value else ""
            return value
    return None


def response_files(names: list[str], prefix: str) -> list[Path]:
    """The files to read: each name as given, or for a folder its lmms-eval ``*_samples_<prefix>*.jsonl`` files."""
    files: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = sorted(path.rglob(f"*_samples_{prefix}*.jsonl"))
            if not found:
                raise ValueError(f"{path}: no lmms-eval samples_{prefix}*.jsonl file in this folder")
            files.extend(found)
        else:
            files.append(path)
    return files


def numbered_json_lines(name: str, lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` for each non-blank line, ``where`` being "<name> line <n>"; bad JSON is an error there."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name} line {number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: not valid JSON ({error.msg})") from None
        yield where, value


def response_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """:func:`numbered_json_lines` of a responses file; a file that cannot be read is an error naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"{path}: cannot read the responses ({error.strerror or error})") from None
    yield from numbered_json_lines(path.name, text.splitlines())
