"""Where fairness-evals keeps what it builds once per machine: the converted default model, the lmms-eval task-folder
copy, the Fact-or-Fair documents with their signing key and lm-eval's read task files, each checked on use."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def cache_dir() -> Path:
    """``$FAIRNESS_EVALS_CACHE``, else ``$XDG_CACHE_HOME/fairness-evals``, else ``~/.cache/fairness-evals``."""
    explicit = os.environ.get("FAIRNESS_EVALS_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "fairness-evals"


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (created if missing), held for the ``with`` block.

    Two processes that build the same cache entry at once serialise here; the second finds the
    finished entry and does nothing.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def store(path: Path, *parts: bytes) -> None:
    """Write ``parts`` to ``path`` whole or not at all: a temporary file in its folder (made if missing), renamed over
    ``path`` (``os.replace``: a reader sees the old file or the new one), removed on failure; an OSError is raised."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                out.write(part)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
