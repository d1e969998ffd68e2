"""The FairLens open-ended bias judge as an Inspect scorer, through a grader model.

Each answer is judged by :func:`fairlens_tasks.judging.pipeline.judge_response` (our prompts, parser, retries with a
repair turn, and DeepEval's scoring), the judge's calls going to Inspect's grader model: the model of the ``grader``
role (``--model-role grader=<model>``), else the ``-T judge=<model>`` of the task, else none (every answer
unjudged, as the lmms-eval tasks with no judge). A judgement is looked up in, and written to, the judgement cache
(:class:`fairlens_tasks.judging.cache.JudgmentCache`, the file ``-T judge_cache`` names, by default the one
``fairness-evals judge`` uses), under the grader's identity (:func:`judge_settings`), and reused by the rule of
:func:`fairlens_tasks.judging.runner.reusable`. The same answer given to several documents is judged once.

The refusal rules are the judge backends' (:mod:`fairlens_tasks.judging.backends`): a reply stopped by a content
filter (Inspect's ``stop_reason`` ``content_filter``, also what its OpenAI providers make of a 400 *content policy
violation*) or an HTTP 4xx other than 401, 403, 404, 408, 409 and 429 is a refusal; 401, 403 and 404 stop the run
(the key or the model); anything else that fails after Inspect's retries is a failed call, the answer unjudged
this run. The score's metadata is the answer's readable record (:func:`fairlens_tasks.open_scoring.readable_record`)
with ``judgement`` (the outcome) and ``judge`` (the grader's identity); the metric computes the bias scores from
them with :func:`fairlens_tasks.open_scoring.compute_open_metrics`, which withholds them when the judge refused an
answer or too few were judged.

Inspect offers JSON schemas, not OpenAI's JSON mode, so the grader is asked without it (identity ``json_mode=0``;
the parser reads JSON in free text): its cache rows are shared with ``fairness-evals judge --json-mode 0`` of the same
model and decoding settings.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
    model_roles,
)
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState

from fairlens_tasks import open_scoring
from fairlens_tasks.judging.backends import (
    CONTENT_FILTER,
    TRANSIENT_4XX,
    JudgeConfigError,
    JudgeRefusal,
    Message,
    Reply,
    TransportError,
)
from fairlens_tasks.judging.cache import JudgmentCache, response_id, response_sha256
from fairlens_tasks.judging.config import DEFAULT_MAX_TOKENS, DEFAULTS, JudgeSettings, default_cache_path
from fairlens_tasks.judging.pipeline import ERROR, Outcome, judge_response
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
from fairlens_tasks.judging.runner import reusable

log = logging.getLogger("fairness_evals.fairlens")

GRADER_ROLE = "grader"
#: Inspect's providers whose models are OpenAI-compatible endpoints: their identity is ``openai:<model>``, as the
#: CLI judge's, so that the same model shares its cached judgements.
OPENAI_COMPATIBLE = ("openai", "openai-api", "vllm", "sglang")
NO_GRADER = "no grader model: every answer is unjudged; give one with --model-role grader=<model> (or -T judge=<model>)"
#: The judge's ``-T`` arguments and their defaults (``fairness-evals judge``'s options of the same names).
JUDGE_ARGUMENTS: dict[str, Any] = {
    "judge": None,
    "judge_temperature": DEFAULTS["temperature"],
    "judge_max_tokens": DEFAULT_MAX_TOKENS,
    "judge_attempts": DEFAULTS["attempts"],
    "judge_cache": None,
}


def judge_settings(grader: Model, arguments: dict[str, Any]) -> JudgeSettings:
    """The judge settings of a grader model and the task's judge arguments: its identity (the cache key) and what
    the log records. An OpenAI-compatible grader is ``openai:<model the endpoint serves>``; any other is
    ``inspect:<provider>/<model>``."""
    provider, _, name = str(grader).partition("/")
    if provider in OPENAI_COMPATIBLE:
        served = name.split("/", 1)[1] if provider == "openai-api" and "/" in name else name
        backend, model = "openai", served
    else:
        backend, model = "inspect", str(grader)
    cache = arguments.get("judge_cache")
    return JudgeSettings(
        backend=backend,
        model=model,
        temperature=float(arguments["judge_temperature"]),
        max_tokens=int(arguments["judge_max_tokens"]),
        json_mode=False,
        attempts=int(arguments["judge_attempts"]),
        cache=Path(str(cache)).expanduser() if cache else default_cache_path(),
    )


def check_arguments(arguments: dict[str, Any]) -> None:
    """A ValueError naming the ``-T`` argument whose value cannot be a judge setting."""
    for name, low, kind in (
        ("judge_temperature", 0.0, float),
        ("judge_max_tokens", 1, int),
        ("judge_attempts", 1, int),
    ):
        value = arguments[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and value != int(value)):
            raise ValueError(f"-T {name}={value!r} is not a {'whole number' if kind is int else 'number'}")
        if value < low or (name == "judge_temperature" and value > 2):
            raise ValueError(f"-T {name}={value!r} is out of range")


def grader_model(arguments: dict[str, Any]) -> Model | None:
    """The grader: the ``grader`` role's model, else ``-T judge``'s, else None."""
    roles = model_roles()
    bound = roles.get(GRADER_ROLE)
    config = GenerateConfig(
        temperature=float(arguments["judge_temperature"]), max_tokens=int(arguments["judge_max_tokens"])
    )
    if bound is not None or arguments.get("judge"):
        return get_model(role=GRADER_ROLE, default=arguments.get("judge"), config=config)
    return None


# --------------------------------------------------------------------------- the cache and the calls
_CACHES: dict[Path, JudgmentCache] = {}
_CACHES_LOCK = threading.Lock()


def cache_of(settings: JudgeSettings) -> JudgmentCache:
    """The judgement cache of ``settings`` (one per file in this process)."""
    path = Path(settings.cache)
    with _CACHES_LOCK:
        if path not in _CACHES:
            _CACHES[path] = JudgmentCache(path)
        return _CACHES[path]


def chat_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
    return [kinds[m["role"]](content=m["content"]) for m in messages]


def failure(error: BaseException) -> Exception:
    """A grader's failed call as the judge backends classify it (module docstring)."""
    status = getattr(error, "status_code", None)
    message = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}".strip()
    if status in (401, 403, 404):
        return JudgeConfigError(f"the grader model refused the call (HTTP {status}): {message}")
    if isinstance(status, int) and 400 <= status < 500 and status not in TRANSIENT_4XX:
        return JudgeRefusal(f"HTTP {status}: {message}")
    return TransportError(message)


def completer(grader: Model) -> Callable[[Sequence[Message]], Reply]:
    """A judge backend's ``complete`` over the grader, for :func:`judge_response` running in a worker thread: each
    call is made on Inspect's event loop."""

    def complete(messages: Sequence[Message]) -> Reply:
        try:
            output = anyio.from_thread.run(grader.generate, chat_messages(messages))
        except Exception as error:
            raise failure(error) from None
        if output.stop_reason == "content_filter":
            raise JudgeRefusal(CONTENT_FILTER)
        return Reply(output.completion, truncated=output.stop_reason in ("max_tokens", "model_length"))

    return complete


class _Once:
    """Each distinct (judge, answer) judged once per process: later asks await the first (a failed call is not
    kept, so that the next ask tries again)."""

    def __init__(self) -> None:
        self.done: dict[tuple[str, str], Outcome] = {}
        self.waiting: dict[tuple[str, str], anyio.Event] = {}

    async def get(self, key: tuple[str, str], make: Callable[[], Awaitable[Outcome]]) -> Outcome:
        while key not in self.done:
            if key in self.waiting:
                await self.waiting[key].wait()
                continue
            event = self.waiting[key] = anyio.Event()
            try:
                outcome = await make()
            finally:
                del self.waiting[key]
                event.set()
            if outcome.status == ERROR:
                return outcome
            self.done[key] = outcome
        return self.done[key]


_ONCE = _Once()


async def judge(text: str, grader: Model, settings: JudgeSettings) -> Outcome:
    """The outcome of one answer: from the cache when it holds a reusable one, else judged by the grader (and
    stored)."""
    cache = cache_of(settings)
    rid = response_id(text)

    async def make() -> Outcome:
        stored = cache.get_many(settings.identity, JUDGE_PROMPT_VERSION, {rid: response_sha256(text)}).get(rid)
        if stored is not None and reusable(stored, settings, retry_unjudged=False):
            return stored
        complete = completer(grader)
        outcome = await anyio.to_thread.run_sync(lambda: judge_response(text, complete, attempts=settings.attempts))
        cache.put(settings.identity, JUDGE_PROMPT_VERSION, text, outcome)
        return outcome

    return await _ONCE.get((settings.identity, rid), make)


_warned: set[str] = set()


@scorer(metrics=[])
def fairlens_judge(task: str, arguments: dict[str, Any], provenance: dict[str, Any]) -> Any:
    """Judges the answer for bias (module docstring); the score's value is the outcome's status (``judged``,
    ``invalid``, ``refused``, ``error``, or ``unjudged`` with no grader), its answer the answer, its explanation the
    answer's bias score or why it has none, its metadata the readable record (of the document with the corpus
    ``provenance``) with the judgement."""

    async def score(state: TaskState, target: Target) -> Score:
        doc = {**state.metadata, **provenance}
        text = state.output.completion or ""
        record = open_scoring.readable_record(doc, text)
        grader = grader_model(arguments)
        if grader is None:
            if task not in _warned:
                _warned.add(task)
                log.warning("%s: %s", task, NO_GRADER)
            return Score(value="unjudged", answer=text, explanation=NO_GRADER, metadata=record)
        settings = judge_settings(grader, arguments)
        outcome = await judge(text, grader, settings)
        record.update(judgement=outcome.to_json(), judge=settings.identity)
        why = f"bias score {outcome.score:g}" if outcome.score is not None else outcome.problem or outcome.status
        return Score(value=outcome.status, answer=text, explanation=why, metadata=record)

    return score
