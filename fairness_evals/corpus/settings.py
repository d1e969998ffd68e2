"""Parsers of the corpus settings that FairLens and IRIS share; ``name`` is the variable or option to blame."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

HF_PREFIX = "hf:"


class SettingsError(ValueError):
    """A missing or malformed setting; the message names the variable or option."""


def skip_bad_input(value: Any, name: str) -> bool:
    """``*_ON_BAD_INPUT``: "stop" (the default) or "skip"; a bool (``--skip-bad-input``) is taken as it is."""
    if isinstance(value, bool):
        return value
    mode = str(value or "stop").strip().lower()
    if mode not in ("stop", "skip"):
        raise SettingsError(f"{name}={value!r} must be 'stop' or 'skip'")
    return mode == "skip"


def corpus_location(text: str, name: str) -> str:
    """A corpus as given (stripped, not empty): ``hf:NAME`` as it is, anything else as an absolute path."""
    if text.startswith(HF_PREFIX):
        if not text[len(HF_PREFIX) :].strip():
            raise SettingsError(f"{name}={text!r} names no dataset; write hf:NAME")
        return text
    return str(Path(text).expanduser().resolve())


def hf_columns(raw: str | None, name: str, roles: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``ROLE=COLUMN,...`` over ``roles``; a role not given keeps its own name as its column."""
    columns = {role: role for role in roles}
    for part in (raw or "").split(","):
        if not part.strip():
            continue
        role, sep, column = part.partition("=")
        role, column = role.strip(), column.strip()
        if not sep or role not in roles or not column:
            raise SettingsError(f"{name}={raw!r}: each entry must be ROLE=COLUMN with ROLE one of {', '.join(roles)}")
        columns[role] = column
    return tuple((role, columns[role]) for role in roles)


def label_map(
    raw: str | None, name: str, attributes: Collection[str], *, example: str, use: str
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """A label map (JSON text, or a JSON file) over ``attributes``, as sorted tuples.

    Text that starts like JSON (``{``, ``[``) or parses as JSON is JSON text; anything else names a file.
    ``example`` shows the expected object and ``use`` lists the attributes in the error messages.
    """
    if not raw or not raw.strip():
        return ()
    text = raw.strip()
    where = f"{name}={raw!r}"
    if not text.startswith(("{", "[")) and not _is_json(text):
        path = Path(text).expanduser()
        if not path.is_file():
            raise SettingsError(f"{where} is neither JSON text nor an existing JSON file")
        from fairness_evals import jsonio

        try:
            text = jsonio.read_text(path, "label map")
        except ValueError as error:
            raise SettingsError(f"{name}: {error}") from None
        where = f"{name}={raw!r} ({path})"
    data = json_value(text, name)
    if not isinstance(data, dict):
        raise SettingsError(f"{where} is a JSON {_json_kind(data)}; it must be an object like {example}")
    if not all(isinstance(v, dict) for v in data.values()):
        raise SettingsError(f"{name} must be an object like {example}")
    unknown = sorted(set(data) - set(attributes))
    if unknown:
        raise SettingsError(f"{name}: unknown attribute {unknown[0]!r}; use {use}")
    return tuple((a, tuple(sorted((str(k), str(v)) for k, v in data[a].items()))) for a in sorted(data))


def json_value(text: str, name: str) -> Any:
    """``text`` read as JSON; :class:`SettingsError` naming ``name`` and the line when it is not valid JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsError(f"{name}: not valid JSON ({error.msg} at line {error.lineno})") from None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words ("array", "string", "number", ...)."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"
