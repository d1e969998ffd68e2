"""The one JSON reader and writer of every ``fairness-evals`` command.

Writing: :func:`dumps` is the only encoder. Its output is strict JSON (RFC 8259): NaN and infinities become
``null`` (:func:`strict_json`), numpy scalars and arrays become plain numbers and lists, and anything else that
JSON cannot hold is an error instead of a bare ``NaN`` that JavaScript, Go, Rust or Java parsers reject.
:func:`write_json` (a results document), :func:`write_lines` (JSON lines) and :func:`dumps_line` use it.

Every ``--out`` file of every command is written by :func:`replacing` (through :func:`write_text`,
:func:`write_json` or :func:`write_lines`): into a temporary file beside it, renamed over it only once the whole
text is written. A full disk, a file-size limit or an error half-way leaves no truncated or empty file and an
existing file as it was, and the error names the path.

No command overwrites what it reads: :func:`refuse_overwriting` refuses, before any work, an output that is a file
the command's arguments name or lies inside a folder they name, and :func:`replacing` refuses a file read through
this module while the command ran (:func:`keeping_inputs`: a file found inside a folder, or recorded in a score
output).

Every JSON value read (a line, or a whole results file) goes through :func:`loads_line`, whose every error names
the file and line: invalid JSON, nesting too deep to read, an integer beyond 64 bits, a number beyond the float range.
:func:`response_lines` reads a responses or samples file a line at a time, so memory follows the longest line.

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
    limit, no such folder, no permission) is a ``ValueError`` naming ``out``, and so is a file this command read
    (:func:`keeping_inputs`), which is left as it was.
    """
    path = Path(out)
    _refuse_read(path)
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


#: The options whose value is a file that a command writes (``-``: standard output).
OUTPUT_OPTIONS = ("out", "details", "json")

#: The files read while a command runs (:func:`keeping_inputs`), by device and inode; None outside a command.
_READ: set[tuple[int, int]] | None = None


@contextlib.contextmanager
def keeping_inputs() -> Iterator[None]:
    """While the ``with`` block runs (one command), every file read through this module is remembered, and
    :func:`replacing` refuses to write over one of them."""
    global _READ
    saved, _READ = _READ, set()
    try:
        yield
    finally:
        _READ = saved


def _note_read(handle_or_path: Any) -> None:
    if _READ is None:
        return
    try:
        info = os.fstat(handle_or_path) if isinstance(handle_or_path, int) else os.stat(handle_or_path)
    except (OSError, ValueError):
        return
    _READ.add((info.st_dev, info.st_ino))


def _refuse_read(path: Path) -> None:
    if not _READ:
        return
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return
    if (info.st_dev, info.st_ino) in _READ:
        raise ValueError(
            f"{path}: this command read it, so it is not written over (nothing was written); give another path"
        )


def refuse_overwriting(outputs: dict[str, str], inputs: Iterable[str]) -> None:
    """A ``ValueError`` naming the first output (``{option: path}``; ``-`` and empty values are standard output)
    that is one of the ``inputs`` (the same file: by path, symbolic link or hard link), lies inside an input folder,
    or is the same file as another output. Called before a command does any work: an input is never overwritten."""
    files: dict[tuple[int, int], str] = {}
    folders: list[tuple[str, str]] = []
    for given in inputs:
        try:
            info = os.stat(given)
        except (OSError, ValueError):  # not a path (a name, JSON text, hf:...), or no such file
            continue
        if stat.S_ISDIR(info.st_mode):
            folders.append((given, os.path.realpath(given)))
        elif stat.S_ISREG(info.st_mode):
            files.setdefault((info.st_dev, info.st_ino), given)
    written: dict[str, str] = {}
    for option, out in outputs.items():
        if not out or out == "-":
            continue
        flag = f"--{option.replace('_', '-')} {out}"
        try:
            info = os.stat(out)
        except (OSError, ValueError):
            info = None
        if info is not None and stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) in files:
            name = files[(info.st_dev, info.st_ino)]
            same = "" if os.path.realpath(name) == os.path.realpath(out) else f" (the same file as {name})"
            raise ValueError(f"{flag}: an input of this command{same}; writing it would destroy it: give another path")
        target = os.path.realpath(out)
        for name, folder in folders:
            if os.path.commonpath([folder, target]) == folder:
                raise ValueError(f"{flag}: inside {name}, a folder this command reads; write it outside the folder")
        if target in written:
            raise ValueError(f"{flag}: the same file as {written[target]}; give each output its own path")
        written[target] = flag


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
    _note_read(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start : error.start + 1].hex()
        raise ValueError(
            f"{path}:{line}: not UTF-8 text (byte 0x{byte} at offset {error.start}); save the {what} as UTF-8"
        ) from None


def numbered_json_lines(name: str | Path, lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` for each non-blank line, ``where`` being ``"<name>:<n>"``; bad JSON is an error there
    (:func:`loads_line`).

    Split text on ``"\n"`` only (not ``str.splitlines``, which also splits at U+2028 and other characters valid
    inside a JSON string).
    """
    for number, line in enumerate(lines, start=1):
        if line and not line.isspace():  # no copy of a long line
            where = f"{name}:{number}"
            yield where, loads_line(line, where)


def response_lines(path: Path, *, allow_nan: bool = False) -> Iterator[tuple[str, Any]]:
    """:func:`numbered_json_lines` of a responses or samples file, read a line at a time (memory: a few times the
    longest line, not the file), as strict UTF-8 (:func:`read_text`'s errors, naming the line and the byte);
    ``allow_nan`` for a harness's samples file, which may hold a bare ``NaN`` (:func:`loads_line`)."""
    try:
        handle = path.open("rb")
    except OSError as error:
        raise ValueError(f"{path}: cannot read the responses ({error.strerror or error})") from None
    with handle:
        _note_read(handle.fileno())
        offset = 0
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                byte = raw[error.start : error.start + 1].hex()
                raise ValueError(
                    f"{path}:{number}: not UTF-8 text (byte 0x{byte} at offset {offset + error.start}); save the "
                    "responses as UTF-8"
                ) from None
            offset += len(raw)
            del raw  # the line's bytes and text are not kept while it is parsed and used
            if line and not line.isspace():
                where = f"{path}:{number}"
                value = loads_line(line, where, allow_nan=allow_nan)
                del line
                yield where, value


#: The range of a JSON integer a reader takes: a 64-bit signed integer (numpy's int64, the records' type).
_INT_RANGE = range(-(1 << 63), 1 << 63)


def _checked_int(text: str) -> int:
    value = int(text)
    if len(text) >= 19 and value not in _INT_RANGE:
        raise _NumberError(f"the integer {text[:12]}... ({len(text.lstrip('-'))} digits) is beyond 64 bits")
    return value


def _checked_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise _NumberError(f"the number {text[:24]} is beyond the floating-point range")
    return value


def loads_line(text: str, where: str, *, allow_nan: bool = False) -> Any:
    """The JSON value of ``text`` (a line, or a whole file), every error a ``ValueError`` that starts with ``where``
    (``"<file>:<line>"``, or the file): not valid JSON, nested too deeply to read, an integer beyond 64 bits (no
    count or record field is one; numpy cannot hold it), a number beyond the floating-point range (``1e400``). The
    ``NaN``/``Infinity`` literals (Python's extension, not JSON) are refused unless ``allow_nan`` (the harnesses write
    a bare ``NaN`` in their results and samples files)."""
    try:
        return (_LENIENT if allow_nan else _STRICT).decode(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: not valid JSON ({error.msg})") from None
    except _ConstantError as error:
        raise ValueError(f"{where}: not valid JSON ({error} is not a JSON value)") from None
    except _NumberError as error:
        raise ValueError(f"{where}: {error}") from None
    except RecursionError:
        raise ValueError(f"{where}: not valid JSON (nested too deeply)") from None
    except ValueError as error:  # an integer of over 4,300 digits (Python's limit)
        raise ValueError(f"{where}: not valid JSON ({error})") from None


def read_json(path: Path, what: str = "file", *, allow_nan: bool = False) -> Any:
    """The JSON value of the file ``path`` (:func:`read_text`, then :func:`loads_line`), every error naming it."""
    return loads_line(read_text(path, what), str(path), allow_nan=allow_nan)


def loads_strict(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``/``Infinity`` (ValueError), as a strict JSON parser does."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except _ConstantError as error:
        raise ValueError(f"{error} is not a JSON value") from None


class _ConstantError(ValueError):
    pass


class _NumberError(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _ConstantError(name)


#: The decoders of :func:`loads_line` (built once: ``json.loads`` with hooks builds one per call).
_STRICT = json.JSONDecoder(parse_int=_checked_int, parse_float=_checked_float, parse_constant=_no_constant)
_LENIENT = json.JSONDecoder(parse_int=_checked_int, parse_float=_checked_float)


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
            if not _well_formed(name, value):  # left to the reader, whose own check names the line and the value
                continue
            first = self.seen.setdefault((task, name), (value, where))
            if not _same(first[0], value):
                raise ValueError(
                    f"{where}: the lines of {task} come from two runs: {name} {_json(value)} here, {_json(first[0])} "
                    f"at {first[1]}; score one run's samples at a time"
                )


def _well_formed(name: str, value: Any) -> bool:
    """A run field's value of the kind the documents hold: a whole-number seed, a share in [0, 1]; any other field
    is compared as logged."""
    if name == "seed":
        return isinstance(value, int) and not isinstance(value, bool)
    if name in ("min_coverage", "sample_fraction"):
        return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
    return True


def _same(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b)  # NaN is NaN here


def _json(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:119] + "…"
