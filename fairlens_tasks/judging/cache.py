"""The on-disk judgement cache: one SQLite file, keyed by judge, prompt version and answer.

A row per ``(judge, prompt_version, response_id)``:

* ``judge`` is :attr:`fairlens_tasks.judging.config.JudgeSettings.identity`: backend, model and the decoding
  settings that change replies (temperature, token limit, JSON mode); not the URL, key, timeouts or
  concurrency, so the same model behind another URL shares its judgements;
* ``prompt_version`` is :data:`fairlens_tasks.judging.prompts.JUDGE_PROMPT_VERSION`;
* ``response_id`` is the first 16 hex digits of the answer's sha256 (what the lmms-eval records carry);
  the full sha256 is stored beside it and checked whenever the text is at hand;
* ``checksum`` is the sha256 of the judge identity, the prompt version, the answer's full sha256 and the outcome
  as stored (status, opinions, verdicts, ...): :func:`row_checksum`. A row whose checksum does not match (the file
  was edited, or damaged) is refused, and so is a row without one (written before checksums existed): neither is
  used as a judgement, a warning names the cache file and how many, and a judge run judges those answers again
  and replaces the rows. A checksum detects edits and damage; it is no signature, so whoever recomputes it can
  still forge a row.

Only ``judged``, ``invalid`` and ``refused`` outcomes are stored (an ``error`` is a failed call, retried by the next
run). Each outcome is committed as soon as it exists, so an interrupted run loses nothing it finished.
SQLite's WAL mode lets a harness run and a ``fairness-evals judge`` share the file; one connection per
cache object, guarded by a lock, so worker threads may call it. ``read_only=True`` (``fairness-evals compare``)
opens the file read-only, creating nothing, even in a folder it cannot write. Every SQLite error (a file that is
not a cache, a damaged page) is a :class:`~fairlens_tasks.judging.backends.JudgeConfigError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from fairlens_tasks.judging.backends import JudgeConfigError
from fairlens_tasks.judging.pipeline import ERROR, Outcome

log = logging.getLogger("fairness_evals.fairlens")

RESPONSE_ID_HEX = 16
_CHUNK = 500
#: Why a stored row was not used: its checksum differs, or it has none.
TAMPERED, UNVERIFIED = "checksum mismatch", "no checksum"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    judge TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    response_id TEXT NOT NULL,
    response_sha256 TEXT NOT NULL,
    outcome TEXT NOT NULL,
    created REAL NOT NULL,
    checksum TEXT,
    PRIMARY KEY (judge, prompt_version, response_id)
)
"""


def response_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def response_id(text: str) -> str:
    """The answer's identity in records and in the cache: 16 hex digits of its sha256."""
    return response_sha256(text)[:RESPONSE_ID_HEX]


def row_checksum(judge: str, prompt_version: str, sha256: str, outcome: str) -> str:
    """The checksum of one stored judgement: sha256 over the judge identity, the prompt version, the answer's full
    sha256 and the outcome JSON exactly as stored."""
    return hashlib.sha256(json.dumps([judge, prompt_version, sha256, outcome]).encode("utf-8")).hexdigest()


class JudgmentCache:
    """Stored outcomes of one cache file. ``rejected`` counts the stored rows refused so far, by reason
    (:data:`TAMPERED`, :data:`UNVERIFIED`)."""

    def __init__(self, path: Path | str, *, read_only: bool = False) -> None:
        self.path = Path(path).expanduser()
        self.read_only = read_only
        self.rejected: Counter[str] = Counter()
        self._lock = threading.Lock()
        with self._errors("open"):
            self._db = self._read_only() if read_only else self._writable()
            self._columns = {row[1] for row in self._db.execute("PRAGMA table_info(judgments)")}

    def _writable(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(_SCHEMA)
        if "checksum" not in {row[1] for row in db.execute("PRAGMA table_info(judgments)")}:
            try:  # a cache from before checksums: its rows stay, unverified, until judged again
                db.execute("ALTER TABLE judgments ADD COLUMN checksum TEXT")
            except sqlite3.OperationalError:  # another process added it first
                if "checksum" not in {row[1] for row in db.execute("PRAGMA table_info(judgments)")}:
                    raise
        return db

    def _read_only(self) -> sqlite3.Connection:
        """A read-only connection that writes nothing beside the file. With no ``-wal`` file beside it no connection
        is writing (SQLite removes it when the last one closes), so the file is read as immutable, without the
        shared-memory index a WAL-mode reader would create. With one (a writer at work), a plain read-only connection
        sees the writer's committed rows; where the folder cannot hold its index, the file is read as immutable."""
        uri = self.path.resolve().as_uri()
        writing = self.path.with_name(self.path.name + "-wal").exists()
        db = sqlite3.connect(
            f"{uri}?mode=ro{'' if writing else '&immutable=1'}", uri=True, timeout=60, check_same_thread=False
        )
        try:
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:
            if not writing:
                raise
            db.close()
            db = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, check_same_thread=False)
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Every SQLite (or file) error as one line naming the cache file."""
        try:
            yield
        except (OSError, sqlite3.Error) as error:
            raise JudgeConfigError(f"{self.path}: cannot {doing} the judgement cache ({error})") from None

    def get_many(self, judge: str, prompt_version: str, shas: Mapping[str, str | None]) -> dict[str, Outcome]:
        """Stored outcomes for the ``response_id -> full sha256 (or None when unknown)`` in ``shas``; rows that fail
        their checksum, or have none, are left out with one warning per reason naming the cache."""
        ids = list(shas)
        found: dict[str, Outcome] = {}
        rejected: Counter[str] = Counter()
        if "judge" not in self._columns:  # an empty file opened read-only: no table yet
            return found
        checked = "checksum" in self._columns
        with self._lock, self._errors("read"):
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT response_id, response_sha256, outcome, {'checksum' if checked else 'NULL'} "
                    f"FROM judgments WHERE judge = ? AND prompt_version = ? AND response_id IN ({marks})",
                    (judge, prompt_version, *chunk),
                ).fetchall()
                for rid, sha, text, checksum in rows:
                    expected = shas[rid]
                    if expected is not None and expected != sha:  # a 64-bit prefix collision: not ours
                        continue
                    if checksum is None:
                        rejected[UNVERIFIED] += 1
                        continue
                    if sha[:RESPONSE_ID_HEX] != rid or checksum != row_checksum(judge, prompt_version, sha, text):
                        rejected[TAMPERED] += 1
                        continue
                    try:
                        found[rid] = Outcome.from_json(json.loads(text))
                    except (ValueError, KeyError, TypeError):
                        rejected[TAMPERED] += 1
        self._warn(rejected)
        return found

    def _warn(self, rejected: Counter[str]) -> None:
        self.rejected.update(rejected)
        again = "not used: a judge run judges those answers again and replaces them"
        if n := rejected[TAMPERED]:
            edited = (
                f"{n} cached judgements do not match their checksum (the file was edited or damaged after they were "
                "written)"
                if n > 1
                else "1 cached judgement does not match its checksum (the file was edited or damaged after it was "
                "written)"
            )
            log.warning("%s: %s; %s", self.path, edited, again)
        if n := rejected[UNVERIFIED]:
            old = f"{n} cached judgements were" if n > 1 else "1 cached judgement was"
            log.warning(
                "%s: %s written before judgements carried a checksum and cannot be verified; %s", self.path, old, again
            )

    def put(self, judge: str, prompt_version: str, text: str, outcome: Outcome) -> None:
        if outcome.status == ERROR:
            return
        if self.read_only:
            raise JudgeConfigError(f"{self.path}: the judgement cache is open read-only")
        sha = response_sha256(text)
        stored = json.dumps(outcome.to_json())
        with self._lock, self._errors("write"):
            self._db.execute(
                "INSERT OR REPLACE INTO judgments (judge, prompt_version, response_id, response_sha256, outcome, "
                "created, checksum) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    judge,
                    prompt_version,
                    sha[:RESPONSE_ID_HEX],
                    sha,
                    stored,
                    time.time(),
                    row_checksum(judge, prompt_version, sha, stored),
                ),
            )

    def count(self, judge: str | None = None) -> int:
        if "judge" not in self._columns:
            return 0
        with self._lock, self._errors("read"):
            if judge is None:
                return int(self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])
            return int(self._db.execute("SELECT COUNT(*) FROM judgments WHERE judge = ?", (judge,)).fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> JudgmentCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ids_and_shas(texts: Iterable[str]) -> dict[str, str]:
    return {response_sha256(t)[:RESPONSE_ID_HEX]: response_sha256(t) for t in texts}
