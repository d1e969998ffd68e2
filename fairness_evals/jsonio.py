"""The one JSON reader and writer of every ``fairness-evals`` command.

Writing: :func:`dumps` is the only encoder. Its output is strict JSON (RFC 8259): NaN and infinities become
``null`` (:func:`strict_json`), numpy scalars and arrays become plain numbers and lists, and anything else that
JSON cannot hold is an error instead of a bare ``NaN`` that JavaScript, Go, Rust or Java parsers reject.
:func:`write_json` (a results document), :func:`write_lines` (JSON lines) and :func:`dumps_line` use it.

Every ``--out`` file of every command is written by :func:`replacing` (through :func:`write_text`,
:func:`write_json` or :func:`write_lines`): into a temporary file beside it, renamed over it only once the whole
text is written. A full disk, a file-size limit or an error half-way leaves no truncated or empty file and an
existing file as it was, and the error names the path.

Reading: :func:`read_text` reads a file as strict UTF-8 and names the file, line and byte of an invalid one
(never silently replacing it); :func:`numbered_json_lines` and :func:`response_lines` give each non-blank line's
value with ``where`` = ``"<file>:<line>"``, the place every error message names; :class:`Answers` keeps one reply
per document and names every second one; :class:`OneRun` keeps one run per task and names two lines that differ.

Import-light (no numpy): the ``tasks-dir`` command and the autoload hook must stay fast.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO


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


@contextlib.contextmanager
def replacing(out: str | Path) -> Iterator[Output]:
    """A text output (:class:`Output`) whose content becomes the file ``out`` only when the ``with`` block ends
    without error.

    The text goes to a temporary file in ``out``'s folder (same file system), which is flushed to disk and renamed
    over ``out`` at the end (``os.replace``: readers see the old file or the new one, never a part); on any error it
    is removed and ``out`` is left as it was. The new file keeps an existing file's permissions, else the usual
    ones (0666 less the umask); a symbolic link is followed (its target is replaced). A path that exists but is not
    a regular file (``/dev/stdout``, a named pipe) is written in place. A failure to write (full disk, file-size
    limit, no such folder, no permission) is a ``ValueError`` naming ``out``.
    """
    path = Path(out)
    if path.exists() and not path.is_file():
        with _naming(path, False):
            special = path.open("w", encoding="utf-8", newline="\n")
        try:
            yield Output(special, path, False)
            with _naming(path, False):
                special.close()
        finally:
            _close_quietly(special)
        return
    target = Path(os.path.realpath(path))
    existed = target.is_file()
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    with _naming(path, existed):
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    handle = os.fdopen(descriptor, "w", encoding="utf-8", newline="\n")
    try:
        yield Output(handle, path, existed)
        with _naming(path, existed):
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
            if existed:
                os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
            os.replace(temporary, target)
    except BaseException:
        _close_quietly(handle)
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _close_quietly(handle: TextIO) -> None:
    """Close ``handle`` after a failure: flushing what it still holds may fail again (a full disk), and the error
    already raised says why."""
    with contextlib.suppress(OSError):
        handle.close()


class Output:
    """The text handle of :func:`replacing`: ``write`` only, its failures a ``ValueError`` naming the file (an
    ``OSError`` of the caller's own work inside the ``with`` block stays what it is)."""

    def __init__(self, handle: TextIO, path: Path, existed: bool) -> None:
        self._handle, self._path, self._existed = handle, path, existed

    def write(self, text: str) -> int:
        with _naming(self._path, self._existed):
            return self._handle.write(text)


@contextlib.contextmanager
def _naming(path: Path, existed: bool) -> Iterator[None]:
    """``OSError`` inside as a one-line ``ValueError`` naming ``path`` and what became of it."""
    try:
        yield
    except OSError as error:
        kept = "the existing file is unchanged" if existed else "nothing was written"
        raise ValueError(f"{path}: cannot write it ({error.strerror or error}); {kept}") from None


def write_text(text: str, out: str | Path | None) -> None:
    """Write ``text`` to the file ``out`` (whole or not at all: :func:`replacing`) or, without one, to standard
    output."""
    if out:
        with replacing(out) as handle:
            handle.write(text)
    else:
        sys.stdout.write(text)


def write_json(value: Any, out: str | Path | None) -> None:
    """A results document (``{task: {metric: value}}``) as indented strict JSON, to ``out`` or standard output."""
    write_text(dumps(value, indent=2) + "\n", out)


def write_lines(records: Iterable[dict[str, Any]], out: str | Path | None, *, sort_keys: bool = True) -> int:
    """Write records as strict JSON lines to the file ``out`` (whole or not at all, even when ``records`` raises
    half-way: :func:`replacing`) or to standard output; returns how many were written."""
    count = 0
    with replacing(out) if out else contextlib.nullcontext(sys.stdout) as handle:
        for record in records:
            handle.write(dumps_line(record, sort_keys=sort_keys) + "\n")
            count += 1
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


@dataclass
class Answers:
    """One reply per key (e.g. ``(task, document id)``), remembering where each came from.

    A second reply for a key is kept aside; :meth:`check` raises once for all of them, naming the first
    duplicate's two places and how many there are (so a user fixes every duplicate at once).
    """

    replies: dict[Any, Any] = field(default_factory=dict)
    where: dict[Any, str] = field(default_factory=dict)
    duplicates: list[tuple[Any, str, str]] = field(default_factory=list)  # (label, where, first where)

    def add(self, key: Any, reply: Any, where: str, label: str | None = None) -> None:
        if key in self.replies:
            self.duplicates.append((label if label is not None else repr(key), where, self.where[key]))
            return
        self.replies[key] = reply
        self.where[key] = where

    def check(self) -> None:
        if self.duplicates:
            label, where, first = self.duplicates[0]
            raise ValueError(
                f"{where}: a second response for {label} (first at {first}); duplicate ids are an error "
                f"({len(self.duplicates)} in all)"
            )

    def __len__(self) -> int:
        return len(self.replies)


#: What a ``--log_samples`` line says about the run it belongs to (:func:`run_identity`): the document seed, data
#: version, conventions and minimum coverage, the corpus and its sample; a generation record's classifier and settings.
RUN_FIELDS = ("seed", "data_version", "conventions", "min_coverage", "corpus_sha256", "sample_fraction")


def run_identity(row: Any) -> dict[str, Any]:
    """The values of :data:`RUN_FIELDS` a ``--log_samples`` line carries: in the document lm-eval logs (``doc``),
    and in the ``provenance`` of the readable record our tasks log (lmms-eval logs no document); a generation record's
    ``classifier`` and ``settings`` (its ``record.metadata``). Empty for any other line (a responses line)."""
    found: dict[str, Any] = {}
    if not isinstance(row, Mapping):
        return found
    doc = row.get("doc")
    if isinstance(doc, Mapping):
        found.update({name: doc[name] for name in RUN_FIELDS if name in doc})
    for value in row.values():
        if not isinstance(value, Mapping):
            continue
        carried, record = value.get("provenance"), value.get("record")
        if isinstance(carried, Mapping):
            found.update({name: carried[name] for name in RUN_FIELDS if name in carried})
        if isinstance(record, Mapping) and isinstance(record.get("metadata"), Mapping):
            found["settings"] = record["metadata"]
            if isinstance(value.get("classifier"), str):
                found["classifier"] = value["classifier"]
    return found


@dataclass
class OneRun:
    """The lines of one task come from one run: the first value of each :func:`run_identity` field per task and the
    line that gave it. A later line of the task with another value is an error naming both lines and both values,
    as a document answered twice is (:class:`Answers`): the statistics of one task never pool
    two seeds, data versions, conventions or thresholds."""

    seen: dict[tuple[str, str], tuple[Any, str]] = field(default_factory=dict)

    def add(self, task: str, row: Any, where: str) -> None:
        for name, value in run_identity(row).items():
            first = self.seen.setdefault((task, name), (value, where))
            if not _same(first[0], value):
                raise ValueError(
                    f"{where}: the lines of {task} come from two runs: {name} {_json(value)} here, {_json(first[0])} "
                    f"at {first[1]}; score one run's samples at a time"
                )


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)  # NaN is NaN here


def _json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:119] + "…"
