"""The one JSON reader and writer of every ``fairness-evals`` command.

Writing: :func:`dumps` is the only encoder. Its output is strict JSON (RFC 8259): NaN and infinities become
``null`` (:func:`strict_json`), numpy scalars and arrays become plain numbers and lists, and anything else that
JSON cannot hold is an error instead of a bare ``NaN`` that JavaScript, Go, Rust or Java parsers reject.
:func:`write_json` (a results document), :func:`write_lines` (JSON lines) and :func:`dumps_line` use it.

Reading: :func:`read_text` reads a file as strict UTF-8 and names the file, line and byte of an invalid one
(never silently replacing it); :func:`numbered_json_lines` and :func:`response_lines` give each non-blank line's
value with ``where`` = ``"<file>:<line>"``, the place every error message names.

Import-light (no numpy): the ``tasks-dir`` command and the autoload hook must stay fast.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def strict_json(value: Any) -> Any:
    """``value`` with NaN/inf floats as None, tuples as lists and numpy scalars/arrays as Python values."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int)):  # bool is an int
        return value
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalar or array (not imported here)
        return strict_json(value.tolist())
    return value  # json.dumps says what it cannot encode


def dumps(value: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """Strict JSON text of ``value`` (see :func:`strict_json`); UTF-8 characters kept, not escaped."""
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(
        strict_json(value), indent=indent, sort_keys=sort_keys, ensure_ascii=False, allow_nan=False,
        separators=separators,
    )  # fmt: skip


def dumps_line(record: dict[str, Any], *, sort_keys: bool = True) -> str:
    """One canonical JSON line: compact, sorted keys by default (byte-identical across runs), strict."""
    return dumps(record, sort_keys=sort_keys)


def write_text(text: str, out: str | Path | None) -> None:
    """Write ``text`` to ``out`` (a path) or, without one, to standard output."""
    if out:
        Path(out).write_text(text, encoding="utf-8", newline="\n")
    else:
        sys.stdout.write(text)


def write_json(value: Any, out: str | Path | None) -> None:
    """A results document (``{task: {metric: value}}``) as indented strict JSON, to ``out`` or standard output."""
    write_text(dumps(value, indent=2) + "\n", out)


def write_lines(records: Iterable[dict[str, Any]], out: str | Path | None, *, sort_keys: bool = True) -> int:
    """Write records as strict JSON lines to ``out`` (a path) or stdout; returns how many were written."""
    count = 0
    handle = open(out, "w", encoding="utf-8", newline="\n") if out else sys.stdout  # noqa: SIM115
    try:
        for record in records:
            handle.write(dumps_line(record, sort_keys=sort_keys) + "\n")
            count += 1
    finally:
        if out:
            handle.close()
    return count


def read_text(path: Path, what: str = "file") -> str:
    """The text of ``path`` as strict UTF-8; an unreadable file or an invalid byte is an error naming the file
    (and, for a bad byte, its line and the byte), never a silently replaced character."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"{path}: cannot read the {what} ({error.strerror or error})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex()
        raise ValueError(
            f"{path}:{line}: not UTF-8 text (byte 0x{byte} at offset {error.start}); save the {what} as UTF-8"
        ) from None


def numbered_json_lines(name: str | Path, lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` for each non-blank line, ``where`` being ``"<name>:<n>"``; bad JSON is an error there.

    ``NaN``/``Infinity`` literals (Python's extension, not JSON) are refused too. Split text on ``"\n"`` only
    (not ``str.splitlines``, which also splits at U+2028 and other characters valid inside a JSON string).
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        try:
            value = json.loads(line, parse_constant=_no_constant)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: not valid JSON ({error.msg})") from None
        except _ConstantError as error:
            raise ValueError(f"{where}: not valid JSON ({error} is not a JSON value)") from None
        except RecursionError:
            raise ValueError(f"{where}: not valid JSON (nested too deeply)") from None
        yield where, value


def response_lines(path: Path) -> Iterator[tuple[str, Any]]:
    """:func:`numbered_json_lines` of a responses or samples file read by :func:`read_text`."""
    yield from numbered_json_lines(path, read_text(path, "responses").split("\n"))


def loads_strict(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``/``Infinity`` (ValueError), as a strict JSON parser does."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except _ConstantError as error:
        raise ValueError(f"{error} is not a JSON value") from None


class _ConstantError(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _ConstantError(name)
