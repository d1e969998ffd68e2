"""The OpenAI-compatible backend: against a real server serving SmolLM2, and scripted failure paths.

The real server (``tests/support/openai_server.py``) runs the embedded SmolLM2-135M-Instruct on loopback.
Replies are limited to three tokens, which no complete JSON object fits in: every answer takes the retry
path and ends unjudged, deterministically. The scripted server is used only for failures a real server
does not produce on demand: 500s, rate limits, timeouts, bodies that are not JSON.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openai_server import Action, OpenAIServer, reply, running, status

from fairlens_tasks.judging.backends import JudgeConfigError
from fairlens_tasks.judging.cache import JudgmentCache, response_id
from fairlens_tasks.judging.config import JudgeSettings
from fairlens_tasks.judging.pipeline import ERROR, INVALID, JUDGED
from fairlens_tasks.judging.runner import judge_texts

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

ANSWERS = [
    "The candidate looks young, so a recruiter might doubt their experience.",
    "He seems calm; nothing in the photo suggests a threat.",
    "",
]


def http_settings(base_url: str, tmp_path: Path, **kwargs: object) -> JudgeSettings:
    values = {
        "backend": "openai", "model": "smollm2", "base_url": base_url, "api_key": "sk-none", "max_tokens": 3,
        "attempts": 2, "concurrency": 2, "timeout": 120.0, "retries": 1, "cache": tmp_path / "judge.sqlite",
    }  # fmt: skip
    values.update(kwargs)
    return JudgeSettings(**values)  # type: ignore[arg-type]


def _texts(items: list[str]) -> dict[str, str]:
    return {response_id(t): t for t in items}


def test_real_server_prompt_parse_retry_loop_then_cache(smollm2_server: OpenAIServer, tmp_path: Path) -> None:
    s = http_settings(smollm2_server.base_url, tmp_path, api_key=smollm2_server.api_key)
    before = smollm2_server.requests
    with JudgmentCache(s.cache) as cache:
        outcomes, stats = judge_texts(_texts(ANSWERS), s, cache)
    assert smollm2_server.requests - before == stats.calls == 4  # two attempts for each non-empty answer
    for text in ANSWERS[:2]:
        outcome = outcomes[response_id(text)]
        assert outcome.status == INVALID and outcome.calls == 2 and len(outcome.replies) == 2
        assert outcome.problem.endswith("(the reply was cut off at the token limit)")
        assert all(r.strip() for r in outcome.replies)  # the model did reply; three tokens are not enough
    assert outcomes[response_id("")].status == JUDGED and outcomes[response_id("")].score == 0.0
    bodies = smollm2_server.received[before:]
    assert all(b["model"] == "smollm2" and b["max_tokens"] == 3 and b["temperature"] == 0 for b in bodies)
    assert all(b["response_format"] == {"type": "json_object"} for b in bodies)
    retries = [b for b in bodies if len(b["messages"]) == 3]
    assert len(retries) == 2 and [m["role"] for m in retries[0]["messages"]] == ["user", "assistant", "user"]
    assert "Your reply could not be used: it contains no valid JSON object" in retries[0]["messages"][2]["content"]
    with JudgmentCache(s.cache) as cache:  # a rerun: everything from the cache, no request
        again, stats = judge_texts(_texts(ANSWERS), s, cache)
    assert smollm2_server.requests - before == 4 and stats.cached == 3 and again == outcomes


def test_real_server_rejects_a_wrong_key_and_an_unknown_model(smollm2_server: OpenAIServer, tmp_path: Path) -> None:
    with JudgmentCache(tmp_path / "j.sqlite") as cache:
        with pytest.raises(JudgeConfigError, match=r"refused the API key \(HTTP 401"):
            judge_texts(_texts(ANSWERS[:1]), http_settings(smollm2_server.base_url, tmp_path, api_key="wrong"), cache)
        with pytest.raises(JudgeConfigError, match="does not serve model 'gpt-9'"):
            unknown = http_settings(smollm2_server.base_url, tmp_path, model="gpt-9", api_key=smollm2_server.api_key)
            judge_texts(_texts(ANSWERS[:1]), unknown, cache)
        assert cache.count() == 0


NO_OPINIONS = '{"opinions": []}'


def _judge_one(server: OpenAIServer, tmp_path: Path, **kwargs: object) -> tuple:
    s = http_settings(server.base_url, tmp_path, model="scripted", **kwargs)
    with JudgmentCache(s.cache) as cache:
        outcomes, stats = judge_texts(_texts(["They look calm."]), s, cache)
        stored = cache.count()
    return outcomes[response_id("They look calm.")], stats, stored


def test_server_errors_are_retried_with_backoff(tmp_path: Path) -> None:
    with running(OpenAIServer(script=[status(500), status(502), reply(NO_OPINIONS)])) as server:
        outcome, _, stored = _judge_one(server, tmp_path, retries=2)
    assert outcome.status == JUDGED and outcome.calls == 1 and stored == 1
    gaps = [b - a for a, b in zip(server.times, server.times[1:], strict=False)]
    assert len(server.received) == 3 and min(gaps) >= 0.3  # 0.5 s then 1 s, less up to 25% jitter


def test_rate_limits_honour_retry_after(tmp_path: Path) -> None:
    limited = status(429, headers=(("retry-after-ms", "300"),))
    with running(OpenAIServer(script=[limited, reply(NO_OPINIONS)])) as server:
        outcome, _, _ = _judge_one(server, tmp_path, retries=3)
    assert outcome.status == JUDGED and len(server.received) == 2
    assert server.times[1] - server.times[0] >= 0.29


@pytest.mark.parametrize(
    ("actions", "kwargs", "requests", "problem"),
    [
        ([status(500)], {"retries": 1}, 2, "HTTP 500"),
        ([status(429)], {"retries": 0}, 1, "HTTP 429"),
        (
            [Action(content=NO_OPINIONS, delay=1.5)],
            {"retries": 1, "timeout": 0.3},
            2,
            "timed out (after the client's retries)",
        ),
        ([Action(body="<html>upstream error</html>")], {}, 1, "unusable response: the body is not JSON"),
        ([Action(body='{"object": "chat.completion", "choices": []}')], {}, 1, "unusable response: no choices"),
    ],
)
def test_failed_calls_leave_the_answer_unjudged_and_uncached(
    tmp_path: Path, actions: list[Action], kwargs: dict, requests: int, problem: str
) -> None:
    with running(OpenAIServer(script=actions)) as server:
        outcome, stats, stored = _judge_one(server, tmp_path, **kwargs)
    assert outcome.status == ERROR and outcome.score is None and outcome.problem.startswith(problem)
    assert len(server.received) == requests and stats.errors == 1 and stored == 0


def test_garbage_replies_are_retried_then_unjudged_and_cached(tmp_path: Path) -> None:
    with running(
        OpenAIServer(script=[reply("Sure, the person looks kind!"), reply('```json\n{"opinions": ')])
    ) as server:
        outcome, _, stored = _judge_one(server, tmp_path, attempts=2)
    assert outcome.status == INVALID and outcome.calls == 2 and stored == 1
    assert outcome.replies == ("Sure, the person looks kind!", '```json\n{"opinions": ')


def test_concurrency_is_bounded(tmp_path: Path) -> None:
    texts = [f"Answer number {i}." for i in range(8)]
    with running(OpenAIServer(script=[Action(content=NO_OPINIONS, delay=0.3)])) as server:
        s = http_settings(server.base_url, tmp_path, model="scripted", concurrency=3)
        with JudgmentCache(s.cache) as cache:
            outcomes, stats = judge_texts(_texts(texts), s, cache)
    assert stats.judged == 8 and len(server.received) == 8 and len(outcomes) == 8
    assert server.max_in_flight == 3
