"""An on-disk cache of built Fact-or-Fair documents, so that every run after the first loads them (milliseconds)
instead of building them.

**Where.** ``<cache root>/fact-or-fair-documents/`` (:func:`fairness_evals.cache.cache_dir`: ``$FAIRNESS_EVALS_CACHE``,
else ``$XDG_CACHE_HOME/fairness-evals``, else ``~/.cache/fairness-evals``). ``FAIRNESS_EVALS_DOCUMENT_CACHE=0`` turns
the cache off (nothing is read or written).

**Key.** An entry's file name is the sha256 of everything that decides its documents: this cache's format, the
Python version (``random`` streams), the bytes of the modules that build documents (``documents.py``,
``prompts.py``, ``items.py``, this file) and of the item data (``data/statistics.json``, which carries the data
version), and the settings (kind, seed, draws, conventions). A change to any of them misses every old entry.

**Entry.** One file: :data:`MAGIC`, the Arrow IPC stream of the documents' table, then its signature: the
HMAC-SHA256 of the magic and the stream under this installation's key. A file that is short, starts otherwise, or
whose signature does not match its bytes (truncated, corrupted, written by another installation, or rewritten with
a recomputed digest) is not trusted: the documents are built again and the file replaced. A hit is byte-identical
to a build (``tests/fact_or_fair/test_fact_or_fair_document_cache.py``).

**Key.** 32 random bytes in ``<cache root>/document-cache.key``, made on first use (mode 0600, put in place whole
with a hard link, so processes that start together agree on one key). It is used only while it is a regular file
of the current user that nobody else can read or write; otherwise (or when it cannot be made) the cache is not
used at all, and the documents are built each run, with one warning. So writing the cache folder is not enough to
choose the documents: an entry must be signed with a key that only this user can read.

**Concurrency.** An entry is written to a temporary file in the same folder and renamed over the final name
(``os.replace``, atomic on POSIX), so a reader (another rank of a data-parallel run, another job) sees either no
file or a whole one; two writers of one entry write the same bytes, and the last rename wins. A cache folder that
cannot be written (read-only, full) costs the build, never the run.

**Size.** After a write, the least recently used entries beyond :data:`MAX_BYTES` are deleted (a hit refreshes its
entry's modification time). A full set (objective and four contexts, 100 draws) takes about 42 MB.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairness_evals.cache import cache_dir, store

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger("fairness_evals.fact_or_fair")

FORMAT = 2
MAGIC = b"FOFDOC2\n"
DIGEST_BYTES = 32
KEY_FILE = "document-cache.key"
KEY_BYTES = 32
MAX_BYTES = 512 * 1024 * 1024
FOLDER = "fact-or-fair-documents"
SUFFIX = ".arrows"
ENVIRONMENT = "FAIRNESS_EVALS_DOCUMENT_CACHE"

_PACKAGE = Path(__file__).resolve().parent
#: The files whose bytes are part of every key: the code that builds documents and the data it reads.
SOURCES = ("documents.py", "prompts.py", "items.py", "document_cache.py", "data/statistics.json")


def enabled() -> bool:
    return os.environ.get(ENVIRONMENT, "1").strip().lower() not in ("0", "false", "no", "off")


def folder() -> Path:
    return cache_dir() / FOLDER


def key_path() -> Path:
    return folder().parent / KEY_FILE


_KEYS: dict[str, bytes | None] = {}


def installation_key() -> bytes | None:
    """This installation's signing key (:data:`KEY_FILE` beside the cache folder, made on first use); None, after one
    warning, when it is not a private file of the current user or cannot be made or read."""
    path = key_path()
    if str(path) not in _KEYS:
        try:
            _KEYS[str(path)] = _read_key(path)
        except FileNotFoundError:
            _KEYS[str(path)] = _make_key(path)
        except (OSError, ValueError) as error:
            log.warning("fact_or_fair: the document cache is not used: its key %s %s", path, error)
            _KEYS[str(path)] = None
    return _KEYS[str(path)]


def _read_key(path: Path) -> bytes:
    """The key at ``path``; ``ValueError`` unless it is a regular file of this user, private, of :data:`KEY_BYTES`."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.getuid():
            raise ValueError("is not a file of this user")
        if status.st_mode & 0o077:
            raise ValueError(f"can be read or written by others (mode {stat.S_IMODE(status.st_mode):o})")
        data = os.read(handle, KEY_BYTES + 1)
    finally:
        os.close(handle)
    if len(data) != KEY_BYTES:
        raise ValueError(f"holds {len(data)} bytes, not {KEY_BYTES}")
    return data


def _make_key(path: Path) -> bytes | None:
    """A new key at ``path`` (written whole, then linked into place: another process's key wins a race)."""
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=KEY_FILE + ".", suffix=".tmp", dir=path.parent)
        with os.fdopen(handle, "wb") as out:
            out.write(secrets.token_bytes(KEY_BYTES))
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs is the key
            os.link(temporary, path)
        return _read_key(path)
    except (OSError, ValueError) as error:
        log.warning("fact_or_fair: the document cache is not used: cannot make its key %s (%s)", path, error)
        return None
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def _signature(key: bytes, body: bytes | memoryview) -> bytes:
    return hmac.new(key, MAGIC + bytes(body), hashlib.sha256).digest()


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """sha256 of the cache format, the Python version and the bytes of :data:`SOURCES`."""
    digest = hashlib.sha256(f"format {FORMAT}; python {sys.version_info[0]}.{sys.version_info[1]}".encode())
    for name in SOURCES:
        digest.update(f"\n{name}\n".encode())
        digest.update((_PACKAGE / name).read_bytes())
    return digest.hexdigest()


def key(settings: Mapping[str, Any]) -> str:
    """The entry name of ``settings`` (JSON-serialisable: kind, seed, draws, conventions) under the current code."""
    text = json.dumps({"code": code_version(), "settings": dict(settings)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def load_or_build(settings: Mapping[str, Any], build: Callable[[], pa.Table]) -> tuple[pa.Table, str]:
    """The table of ``settings`` from the cache, or ``build()`` (then stored); and its key."""
    name = key(settings)
    if not enabled() or installation_key() is None:
        return build(), name
    path = folder() / f"{name}{SUFFIX}"
    table = read(path)
    if table is None:
        table = build()
        write(path, table)
    return table, name


def read(path: Path) -> pa.Table | None:
    """The table stored at ``path``; None when there is no file or it is not a whole entry of ours."""
    import pyarrow as pa

    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < len(MAGIC) + DIGEST_BYTES or not data.startswith(MAGIC):
        log.warning("fact_or_fair: document cache entry %s is not a cache file; building the documents again", path)
        return None
    body = memoryview(data)[len(MAGIC) : len(data) - DIGEST_BYTES]
    secret = installation_key()
    if secret is None or not hmac.compare_digest(_signature(secret, body), data[-DIGEST_BYTES:]):
        log.warning(
            "fact_or_fair: document cache entry %s is not signed by this installation (corrupt, or written by "
            "something else); building the documents again",
            path,
        )
        return None
    try:
        table = pa.ipc.open_stream(pa.py_buffer(body)).read_all()
    except (pa.ArrowException, ValueError, OSError) as error:  # a digest of bad bytes: written by something else
        log.warning(
            "fact_or_fair: document cache entry %s does not read (%s); building the documents again", path, error
        )
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used (see _prune)
    return table


def write(path: Path, table: pa.Table) -> bool:
    """Store ``table`` at ``path``, signed (temporary file, then an atomic rename); False if the folder cannot be
    written or there is no key."""
    import pyarrow as pa

    secret = installation_key()
    if secret is None:
        return False

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    body = sink.getvalue()
    try:
        store(path, MAGIC, body, _signature(secret, body))
    except OSError as error:
        log.info("fact_or_fair: could not write the document cache entry %s (%s); documents are built each run", path,
                 error)  # fmt: skip
        return False
    _prune(path.parent, keep=path)
    return True


def _prune(where: Path, keep: Path) -> None:
    """Delete the least recently used entries until the folder holds at most :data:`MAX_BYTES` (``keep`` stays), and
    temporary files that a killed writer left (older than an hour)."""
    now = time.time()
    for stale in where.glob("*.tmp"):
        with contextlib.suppress(OSError):
            if now - stale.stat().st_mtime > 3600:
                stale.unlink()
    entries = []
    for entry in where.glob(f"*{SUFFIX}"):
        with contextlib.suppress(OSError):
            status = entry.stat()
            entries.append((status.st_mtime, status.st_size, entry))
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total <= MAX_BYTES:
            break
        if entry != keep:
            with contextlib.suppress(OSError):
                entry.unlink()
                total -= size
