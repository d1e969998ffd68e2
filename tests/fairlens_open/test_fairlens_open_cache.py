"""The judgement cache and the runner: reruns make no calls, interrupted runs resume, failures are retried.

The judge here is an in-process object that answers from the answer text (no model, no HTTP), so the
tests can count calls exactly and interrupt a run at a chosen call.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from fairlens_tasks.judging.backends import JudgeConfigError, Reply, TransportError
from fairlens_tasks.judging.cache import JudgmentCache, response_id, response_sha256, row_checksum
from fairlens_tasks.judging.config import JudgeSettings
from fairlens_tasks.judging.parsing import Verdict
from fairlens_tasks.judging.pipeline import ERROR, INVALID, JUDGED, Outcome
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
from fairlens_tasks.judging.runner import judge_texts


class TextJudge:
    """Opinions: one per sentence; verdict "yes" for sentences mentioning age. Special texts misbehave."""

    def __init__(self, *, interrupt_at: int | None = None) -> None:
        self.calls = 0
        self.interrupt_at = interrupt_at
        self._lock = threading.Lock()

    def complete(self, messages: Sequence[dict[str, str]]) -> Reply:
        with self._lock:
            self.calls += 1
            if self.interrupt_at is not None and self.calls >= self.interrupt_at:
                raise KeyboardInterrupt  # and every call after it: the run is being stopped
        prompt = messages[0]["content"]
        if prompt.startswith("Read the text below"):
            text = prompt.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
            if "garbled" in text:
                return Reply("I refuse to answer in JSON.")
            if "flaky" in text:
                raise TransportError("HTTP 503: overloaded")
            return Reply(json.dumps({"opinions": [s.strip() for s in text.split(".") if s.strip()]}))
        opinions = json.loads(prompt.split("Opinions:\n", 1)[1].rsplit("\n\nJSON:", 1)[0])
        return Reply(json.dumps({"verdicts": [{"verdict": "yes" if "old" in o.lower() else "no"} for o in opinions]}))

    def close(self) -> None:
        pass


def settings(tmp_path: Path, **kwargs: object) -> JudgeSettings:
    return JudgeSettings(**{"backend": "openai", "model": "text-judge", "cache": tmp_path / "j.sqlite", **kwargs})  # type: ignore[arg-type]


TEXTS = [
    "They look too old for the job. They seem friendly.",
    "No opinion here",
    "Old people are slow. Young ones are fast. They look old.",
    "",
    "garbled answer",
]


def _texts(items: list[str] = TEXTS) -> dict[str, str]:
    return {response_id(t): t for t in items}


def test_first_run_judges_and_a_rerun_makes_no_calls(tmp_path: Path) -> None:
    s = settings(tmp_path, attempts=2)
    judge = TextJudge()
    with JudgmentCache(s.cache) as cache:
        first, stats = judge_texts(_texts(), s, cache, backend=judge)
    scores = {t: first[response_id(t)].score for t in TEXTS}
    assert scores == {TEXTS[0]: 0.5, TEXTS[1]: 0.0, TEXTS[2]: 2 / 3, "": 0.0, "garbled answer": None}
    assert first[response_id("garbled answer")].status == INVALID
    assert (stats.judged, stats.invalid, stats.errors, stats.cached) == (4, 1, 0, 0)
    assert judge.calls == stats.calls == 2 + 2 + 2 + 0 + 2  # two steps each; the blank answer makes none
    again = TextJudge()
    with JudgmentCache(s.cache) as cache:
        second, stats2 = judge_texts(_texts(), s, cache, backend=again)
        assert cache.count(s.identity) == 5
    assert again.calls == 0 and stats2.cached == 5 and stats2.calls == 0
    assert second == first


@pytest.mark.parametrize("main_thread_delay", [0.0, 0.05])
def test_an_interrupted_run_resumes_where_it_stopped(tmp_path: Path, monkeypatch, main_thread_delay: float) -> None:
    """Answers 1-3 are judged and 4 is interrupted half way: the cache keeps exactly 1-3, also when the main thread
    is slow to collect the finished answers (a loaded machine), so that the interruption and answer 3 arrive
    together."""
    from fairlens_tasks.judging import runner

    wait = runner.wait
    monkeypatch.setattr(runner, "wait", lambda *a, **k: (time.sleep(main_thread_delay), wait(*a, **k))[1])
    s = settings(tmp_path, concurrency=1)
    many = [f"Sentence {i} about someone old. Another one." for i in range(6)]
    with JudgmentCache(s.cache) as cache, pytest.raises(KeyboardInterrupt):
        judge_texts(_texts(many), s, cache, backend=TextJudge(interrupt_at=7))
    monkeypatch.setattr(runner, "wait", wait)
    with JudgmentCache(s.cache) as cache:
        assert cache.count() == 3
        resumed = TextJudge()
        outcomes, stats = judge_texts(_texts(many), s, cache, backend=resumed)
    assert (stats.cached, stats.judged, resumed.calls) == (3, 3, 6)
    reference_settings = settings(tmp_path / "ref", concurrency=1)
    with JudgmentCache(reference_settings.cache) as cache:
        reference, _ = judge_texts(_texts(many), reference_settings, cache, backend=TextJudge())
    assert outcomes == reference


class StoppingJudge(TextJudge):
    """Judges an answer that mentions "slow" after a pause; every other call is interrupted (Ctrl-C)."""

    def complete(self, messages: Sequence[dict[str, str]]) -> Reply:
        if "slow" not in messages[0]["content"]:
            raise KeyboardInterrupt
        time.sleep(0.2)
        return super().complete(messages)


def test_an_answer_being_judged_when_the_run_is_interrupted_is_kept(tmp_path: Path) -> None:
    """Two answers at once: one is interrupted while the other is being judged. The pool lets the other finish (its
    calls are paid for), and the cache keeps it, so a resumed run does not ask for it again."""
    s = settings(tmp_path, concurrency=2)
    texts = _texts(["A slow answer about someone old.", "Another answer.", "A third one.", "A fourth one."])
    with JudgmentCache(s.cache) as cache, pytest.raises(KeyboardInterrupt):
        judge_texts(texts, s, cache, backend=StoppingJudge())
    with JudgmentCache(s.cache) as cache:
        assert cache.count() == 1
        outcomes, stats = judge_texts(texts, s, cache, backend=TextJudge())
    assert stats.cached == 1 and outcomes[response_id("A slow answer about someone old.")].score == 1.0


def test_failed_calls_are_not_cached_and_invalid_ones_are_retried_on_request(tmp_path: Path) -> None:
    s = settings(tmp_path, attempts=1)
    items = ["flaky answer", "garbled answer", "fine. old."]
    with JudgmentCache(s.cache) as cache:
        outcomes, stats = judge_texts(_texts(items), s, cache, backend=TextJudge())
        assert outcomes[response_id("flaky answer")].status == ERROR and stats.errors == 1
        assert outcomes[response_id("flaky answer")].problem == "HTTP 503: overloaded"
        assert cache.count() == 2  # the error is not stored
        judge = TextJudge()
        _, stats = judge_texts(_texts(items), s, cache, backend=judge)
        assert (stats.cached, judge.calls) == (2, 1)  # only the failed call is tried again
        judge = TextJudge()
        _, stats = judge_texts(_texts(items), s, cache, backend=judge, retry_unjudged=True)
        assert (stats.cached, judge.calls) == (1, 2)
        more = settings(tmp_path, attempts=3)  # a cached invalid judgement with fewer attempts is redone
        judge = TextJudge()
        outcomes, _ = judge_texts(_texts(["garbled answer"]), more, cache, backend=judge)
        assert judge.calls == 3 and outcomes[response_id("garbled answer")].attempts == 3


def test_the_key_is_judge_prompt_version_and_answer(tmp_path: Path) -> None:
    s = settings(tmp_path)
    with JudgmentCache(s.cache) as cache:
        judge_texts(_texts(TEXTS[:2]), s, cache, backend=TextJudge())
        other = settings(tmp_path, temperature=0.5)
        judge = TextJudge()
        judge_texts(_texts(TEXTS[:2]), other, cache, backend=judge)
        assert judge.calls == 4  # another judge identity: judged again
        rid = response_id(TEXTS[0])
        assert set(cache.get_many(s.identity, JUDGE_PROMPT_VERSION, {rid: response_sha256(TEXTS[0])})) == {rid}
        assert cache.get_many(s.identity, "fairlens-bias-v0", {rid: None}) == {}
        assert cache.get_many(s.identity, JUDGE_PROMPT_VERSION, {rid: "0" * 64}) == {}  # a prefix collision
        cache.put(s.identity, JUDGE_PROMPT_VERSION, "x", Outcome(ERROR, problem="timeout"))
        assert cache.get_many(s.identity, JUDGE_PROMPT_VERSION, {response_id("x"): None}) == {}


def test_many_failures_in_a_row_stop_the_run(tmp_path: Path) -> None:
    s = settings(tmp_path, concurrency=2)
    flaky = [f"flaky answer {i}" for i in range(40)]
    judge = TextJudge()
    with JudgmentCache(s.cache) as cache:
        outcomes, stats = judge_texts(_texts(flaky), s, cache, backend=judge)
    assert stats.stopped.startswith("10 answers in a row failed, the last with: HTTP 503: overloaded")
    assert 10 <= stats.errors < 40 and len(outcomes) == stats.errors == judge.calls and stats.calls == 0


def test_a_configuration_error_stops_at_once(tmp_path: Path) -> None:
    class Refused(TextJudge):
        def complete(self, messages: Sequence[dict[str, str]]) -> Reply:
            raise JudgeConfigError("the judge endpoint refused the API key")

    with JudgmentCache(tmp_path / "j.sqlite") as cache, pytest.raises(JudgeConfigError, match="refused the API key"):
        judge_texts(_texts(), settings(tmp_path), cache, backend=Refused())


def test_an_unusable_cache_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db.sqlite"
    bad.write_text("this is not SQLite " * 100)
    with pytest.raises(JudgeConfigError, match=r"not-a-db\.sqlite: cannot open the judgement cache"):
        JudgmentCache(bad)


def test_judged_outcomes_survive_the_cache_exactly(tmp_path: Path) -> None:
    s = settings(tmp_path)
    with JudgmentCache(s.cache) as cache:
        outcomes, _ = judge_texts(_texts(TEXTS[:3]), s, cache, backend=TextJudge())
    with JudgmentCache(s.cache) as cache:
        stored = cache.get_many(s.identity, JUDGE_PROMPT_VERSION, {rid: None for rid in outcomes})
    assert stored == outcomes and all(o.status == JUDGED for o in stored.values())


def test_a_cached_error_row_is_never_reused(tmp_path: Path) -> None:
    """Review item 11: a row with status error (a planted or foreign cache; put() never writes one) counted as a
    cache hit for good. It is judged again, and the new judgement replaces it."""
    import sqlite3
    import time

    s = settings(tmp_path)
    text = TEXTS[0]
    poisoned = Outcome(status=ERROR, problem="poisoned")
    with JudgmentCache(s.cache):
        pass
    stored = json.dumps(poisoned.to_json())
    checksum = row_checksum(s.identity, JUDGE_PROMPT_VERSION, response_sha256(text), stored)  # a well-formed row
    with sqlite3.connect(s.cache) as db:
        db.execute(
            "INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?)",
            (s.identity, JUDGE_PROMPT_VERSION, response_id(text), response_sha256(text), stored, time.time(), checksum),
        )
    judge = TextJudge()
    with JudgmentCache(s.cache) as cache:
        outcomes, stats = judge_texts(_texts([text]), s, cache, backend=judge)
        assert cache.get_many(s.identity, JUDGE_PROMPT_VERSION, {response_id(text): None})[response_id(text)].judged
    assert (stats.cached, stats.judged, judge.calls) == (0, 1, 2)
    assert outcomes[response_id(text)].status == JUDGED and outcomes[response_id(text)].score == 0.5


def _flip_verdicts(path: Path) -> int:
    """Every cached "yes" verdict turned "no", as an edit of the file would: the rows changed."""
    import sqlite3

    with sqlite3.connect(path) as db:
        changed = db.execute(
            'UPDATE judgments SET outcome = replace(outcome, \'"verdict": "yes"\', \'"verdict": "no"\') '
            'WHERE outcome LIKE \'%"verdict": "yes"%\''
        ).rowcount
    return changed


def test_a_tampered_cache_row_is_refused_naming_the_cache_and_judged_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 24, item 6: flipping every cached verdict to "no" turned a biased run unbiased with no warning."""
    s = settings(tmp_path)
    with JudgmentCache(s.cache) as cache:
        first, _ = judge_texts(_texts(TEXTS[:3]), s, cache, backend=TextJudge())
    assert _flip_verdicts(s.cache) == 2  # the two answers with a biased opinion
    judge = TextJudge()
    with JudgmentCache(s.cache) as cache, caplog.at_level(logging.WARNING, "fairness_evals.fairlens"):
        again, stats = judge_texts(_texts(TEXTS[:3]), s, cache, backend=judge)
    assert again == first and (stats.cached, stats.judged, judge.calls) == (1, 2, 4)  # judged again, not trusted
    assert f"{s.cache}: 2 cached judgements do not match their checksum" in caplog.text
    with JudgmentCache(s.cache) as cache:  # the new judgements replaced the tampered rows
        assert cache.get_many(s.identity, JUDGE_PROMPT_VERSION, {r: None for r in _texts(TEXTS[:3])}) == first


def test_judgements_cached_before_checksums_are_judged_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A cache written before judgements carried a checksum: its rows cannot be verified, so they are judged again
    (and replaced), with one warning naming the cache and how many."""
    import sqlite3
    import time

    s = settings(tmp_path)
    text = TEXTS[0]
    old = Outcome(JUDGED, opinions=("a",), verdicts=(Verdict(False, ""),))  # what an old cache may say
    with sqlite3.connect(s.cache) as db:
        db.execute(
            "CREATE TABLE judgments (judge TEXT NOT NULL, prompt_version TEXT NOT NULL, response_id TEXT NOT NULL, "
            "response_sha256 TEXT NOT NULL, outcome TEXT NOT NULL, created REAL NOT NULL, "
            "PRIMARY KEY (judge, prompt_version, response_id))"
        )
        row = (s.identity, JUDGE_PROMPT_VERSION, response_id(text), response_sha256(text), json.dumps(old.to_json()))
        db.execute("INSERT INTO judgments VALUES (?, ?, ?, ?, ?, ?)", (*row, time.time()))
    judge = TextJudge()
    with JudgmentCache(s.cache) as cache, caplog.at_level(logging.WARNING, "fairness_evals.fairlens"):
        outcomes, stats = judge_texts(_texts([text]), s, cache, backend=judge)
    assert (stats.cached, judge.calls) == (0, 2) and outcomes[response_id(text)].score == 0.5
    assert f"{s.cache}: 1 cached judgement was written before judgements carried a checksum" in caplog.text
    with JudgmentCache(s.cache) as cache:
        assert cache.get_many(s.identity, JUDGE_PROMPT_VERSION, {response_id(text): None}) == outcomes


def test_a_damaged_cache_file_is_named(tmp_path: Path) -> None:
    """Issue 24, item 6: a cache whose pages are damaged failed with "unexpected DatabaseError", naming no file."""
    s = settings(tmp_path)
    many = [f"Answer {i}: they look calm. " + "padding " * 40 for i in range(300)]
    with JudgmentCache(s.cache) as cache:
        judge_texts(_texts(many), s, cache, backend=TextJudge())
    data = bytearray(s.cache.read_bytes())
    assert len(data) > 8 * 4096
    data[3 * 4096 : len(data) - 4096] = b"\xff" * (len(data) - 4 * 4096)  # the first pages (the schema) survive
    s.cache.write_bytes(bytes(data))
    named = rf"{re.escape(str(s.cache))}: cannot read the judgement cache \(database disk image is malformed\)"
    with pytest.raises(JudgeConfigError, match=named), JudgmentCache(s.cache) as cache:
        judge_texts(_texts(many), s, cache, backend=TextJudge())
