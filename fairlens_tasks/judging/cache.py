"""The on-disk judgement cache: one SQLite file, keyed by judge, prompt version and answer.

A row per ``(judge, prompt_version, response_id)``:

* ``judge`` is :attr:`fairlens_tasks.judging.config.JudgeSettings.identity`: backend, model and the decoding
  settings that change replies (temperature, token limit, JSON mode); not the URL, key, timeouts or
  concurrency, so the same model behind another URL shares its judgements;
* ``prompt_version`` is :data:`fairlens_tasks.judging.prompts.JUDGE_PROMPT_VERSION`;
* ``response_id`` is the first 16 hex digits of the answer's sha256 (what the lmms-eval records carry);
  the full sha256 is stored beside it and checked whenever the text is at hand.

Only ``judged`` and ``invalid`` outcomes are stored (an ``error`` is a failed call, retried by the next
run). Each outcome is committed as soon as it exists, so an interrupted run loses nothing it finished.
SQLite's WAL mode lets a harness run and a ``fairness-evals judge`` share the file; one connection per
cache object, guarded by a lock, so worker threads may call it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from fairlens_tasks.judging.backends import JudgeConfigError
from fairlens_tasks.judging.pipeline import ERROR, Outcome

RESPONSE_ID_HEX = 16
_CHUNK = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    judge TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    response_id TEXT NOT NULL,
    response_sha256 TEXT NOT NULL,
    outcome TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (judge, prompt_version, response_id)
)
"""


def response_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def response_id(text: str) -> str:
    """The answer's identity in records and in the cache: 16 hex digits of its sha256."""
    return response_sha256(text)[:RESPONSE_ID_HEX]


class JudgmentCache:
    """Stored outcomes of one cache file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as error:
            raise JudgeConfigError(f"{self.path}: cannot open the judgement cache ({error})") from None
        self._lock = threading.Lock()

    def get_many(self, judge: str, prompt_version: str, shas: Mapping[str, str | None]) -> dict[str, Outcome]:
        """Stored outcomes for the ``response_id -> full sha256 (or None when unknown)`` in ``shas``."""
        ids = list(shas)
        found: dict[str, Outcome] = {}
        with self._lock:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT response_id, response_sha256, outcome FROM judgments "
                    f"WHERE judge = ? AND prompt_version = ? AND response_id IN ({marks})",
                    (judge, prompt_version, *chunk),
                ).fetchall()
                for rid, sha, text in rows:
                    expected = shas[rid]
                    if expected is not None and expected != sha:  # a 64-bit prefix collision: not ours
                        continue
                    try:
                        found[rid] = Outcome.from_json(json.loads(text))
                    except (ValueError, KeyError, TypeError):
                        continue  # an unreadable row is a miss; the next put replaces it
        return found

    def put(self, judge: str, prompt_version: str, text: str, outcome: Outcome) -> None:
        if outcome.status == ERROR:
            return
        sha = response_sha256(text)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?, ?, ?)",
                (judge, prompt_version, sha[:RESPONSE_ID_HEX], sha, json.dumps(outcome.to_json()), time.time()),
            )

    def count(self, judge: str | None = None) -> int:
        with self._lock:
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
