"""Judging many answers: cache first, then the judge, with bounded concurrency; resumable.

:func:`judge_texts` takes the distinct answers of a run (``response_id -> text``) and returns an outcome for
each:

1. outcomes in the cache for this judge identity and prompt version are reused (no call); a cached
   ``invalid`` outcome is reused only if it had at least as many attempts as now, and a cached ``refused`` one
   always, unless ``retry_unjudged``; a cached ``error`` row (never written by this package) is never reused, nor
   is a row that fails its checksum (:class:`~fairlens_tasks.judging.cache.JudgmentCache`);
2. the rest go to the judge, ``settings.workers`` at a time (a thread pool: HTTP judges overlap their
   requests; a local model runs one generation at a time). Each finished outcome is written to the cache
   at once, so an interrupted run loses only the answers in flight;
3. a failed call (``error``) is not cached: the next run tries that answer again. After
   ``max(10, 2 x workers)`` consecutive failed answers the run stops early (the endpoint is down or
   rejects every request) and reports why; what it judged so far is cached. A refusal is the judge's answer about
   one answer, not a failure of the endpoint: it is cached and never stops the run.

:class:`RunStats` counts what happened and the reasons (the problem of every unjudged outcome, counted), which
its :meth:`RunStats.summary` prints.

A :class:`~fairlens_tasks.judging.backends.JudgeConfigError` (key refused, model unknown) stops the run
at once and is raised.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from fairlens_tasks.judging.backends import Backend, Message, Reply
from fairlens_tasks.judging.cache import JudgmentCache, response_sha256
from fairlens_tasks.judging.config import JudgeSettings
from fairlens_tasks.judging.pipeline import ERROR, INVALID, JUDGED, REFUSED, Outcome, judge_response
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION

log = logging.getLogger("fairness_evals.fairlens")


#: How many distinct reasons :meth:`RunStats.summary` names (the rest are counted together).
SHOWN_REASONS = 5


@dataclass
class RunStats:
    """What one :func:`judge_texts` call did: answers by outcome, ``problems`` (reason -> answers, for the outcomes
    of this run) and ``rejected`` (cached rows not used: reason -> rows)."""

    distinct: int = 0
    cached: int = 0
    judged: int = 0
    invalid: int = 0
    refused: int = 0
    errors: int = 0
    calls: int = 0
    seconds: float = 0.0
    stopped: str = ""
    problems: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, int] = field(default_factory=dict)

    @property
    def done(self) -> int:
        return self.cached + self.judged + self.invalid + self.refused + self.errors

    def summary(self) -> str:
        text = (
            f"{self.distinct} distinct answers: {self.cached} from the cache, {self.judged} judged now, "
            f"{self.invalid} invalid after all attempts, {self.refused} refused by the judge, {self.errors} failed "
            f"calls; {self.calls} judge calls in {self.seconds:.1f} s"
        )
        if self.rejected:
            text += "; cached rows not used: " + counted(self.rejected)
        if self.problems:
            text += "; reasons: " + counted(self.problems)
        return text + (f"; stopped early: {self.stopped}" if self.stopped else "")


def counted(reasons: Mapping[str, int], shown: int = SHOWN_REASONS) -> str:
    """``reason (n), ...``, the most frequent first, at most ``shown`` of them and the rest counted together."""
    ranked = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    text = ", ".join(f"{reason} ({n})" for reason, n in ranked[:shown])
    rest = ranked[shown:]
    return text + (f", {len(rest)} other reasons ({sum(n for _, n in rest)})" if rest else "")


class CountingBackend:
    """Wraps a backend and counts completed calls (thread-safe)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.calls = 0
        self._lock = threading.Lock()

    def complete(self, messages: Sequence[Message]) -> Reply:
        reply = self.backend.complete(messages)
        with self._lock:
            self.calls += 1
        return reply


def reusable(outcome: Outcome, settings: JudgeSettings, retry_unjudged: bool) -> bool:
    """Whether a cached outcome stands: a judgement does; an ``invalid`` one unless ``retry_unjudged`` or it had
    fewer attempts than now; a refusal unless ``retry_unjudged``; an ``error`` (a failed call) never does, whatever
    wrote it (:meth:`JudgmentCache.put` never stores one, so such a row comes from another tool or a damaged cache) and
    is judged again."""
    if outcome.status == ERROR:
        return False
    if outcome.status == JUDGED:
        return True
    if outcome.status == REFUSED:
        return not retry_unjudged
    return not retry_unjudged and outcome.attempts >= settings.attempts


def judge_texts(
    texts: Mapping[str, str],
    settings: JudgeSettings,
    cache: JudgmentCache,
    *,
    backend: Backend | None = None,
    retry_unjudged: bool = False,
    progress: Callable[[RunStats], None] | None = None,
) -> tuple[dict[str, Outcome], RunStats]:
    """Outcomes for ``texts`` (``response_id -> answer``), and what was done to get them.

    ``backend`` defaults to ``settings.create_backend()``, created only if something needs judging (and
    closed afterwards); pass one to reuse a loaded model.
    """
    start = time.perf_counter()
    stats = RunStats(distinct=len(texts))
    shas = {rid: response_sha256(text) for rid, text in texts.items()}
    rejected = Counter(cache.rejected)
    stored = cache.get_many(settings.identity, JUDGE_PROMPT_VERSION, shas)
    stats.rejected = dict(cache.rejected - rejected)  # the rows this lookup refused
    outcomes: dict[str, Outcome] = {rid: o for rid, o in stored.items() if reusable(o, settings, retry_unjudged)}
    stats.cached = len(outcomes)
    pending = [rid for rid in texts if rid not in outcomes]
    if not pending:
        stats.seconds = time.perf_counter() - start
        return outcomes, stats
    own_backend = backend is None
    counting = CountingBackend(settings.create_backend() if backend is None else backend)
    limit = max(10, 2 * settings.workers)
    consecutive = 0
    try:
        with ThreadPoolExecutor(max_workers=settings.workers, thread_name_prefix="fairlens-judge") as pool:
            queue = iter(pending)
            running: dict[Future[Outcome], str] = {}

            def submit() -> bool:
                rid = next(queue, None)
                if rid is None:
                    return False
                running[pool.submit(judge_response, texts[rid], counting.complete, attempts=settings.attempts)] = rid
                return True

            for _ in range(2 * settings.workers):  # a bounded queue: at most 2 x workers answers in memory
                if not submit():
                    break
            try:
                while running:
                    done, _ = wait(tuple(running), return_when=FIRST_COMPLETED)
                    # every finished answer is kept before an interruption or a failure of another is raised
                    for future in sorted(done, key=lambda f: f.exception() is not None):
                        rid = running.pop(future)
                        outcome = future.result()  # JudgeConfigError propagates
                        outcomes[rid] = outcome
                        cache.put(settings.identity, JUDGE_PROMPT_VERSION, texts[rid], outcome)
                        if outcome.status == ERROR:
                            stats.errors += 1
                            consecutive += 1
                        else:
                            consecutive = 0
                            if outcome.status == INVALID:
                                stats.invalid += 1
                            elif outcome.status == REFUSED:
                                stats.refused += 1
                            else:
                                stats.judged += 1
                        if outcome.problem:
                            key = outcome.problem.split(":", 1)[0] if outcome.status == INVALID else outcome.problem
                            stats.problems[key] = stats.problems.get(key, 0) + 1
                        stats.calls = counting.calls
                        if progress is not None:
                            progress(stats)
                        if consecutive >= limit and not stats.stopped:
                            stats.stopped = f"{consecutive} answers in a row failed, the last with: {outcome.problem}"
                            log.error("fairlens judge: stopping early: %s", stats.stopped)
                        if not stats.stopped:
                            submit()
            except BaseException:
                for future in running:
                    future.cancel()
                # the answers already being judged finish anyway (the pool waits for them): keep what they give
                for future, rid in running.items():
                    if not future.cancelled() and future.exception() is None:
                        cache.put(settings.identity, JUDGE_PROMPT_VERSION, texts[rid], future.result())
                raise
    finally:
        stats.calls = counting.calls
        stats.seconds = time.perf_counter() - start
        if own_backend:
            counting.backend.close()
    return outcomes, stats
