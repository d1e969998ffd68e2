"""The embedded SmolLM2-135M-Instruct as a real local (transformers) judge.

It is a weak judge: these tests check the machinery (our prompts through its chat template, greedy
generation, decoding, the token-limit flag, parsing, the repair turn, the unjudged path and the cache),
not its verdicts. Replies are capped at three tokens, so no reply can be a complete JSON object.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from fairlens_tasks.judging.backends import JudgeConfigError, Message, Reply, TransformersBackend
from fairlens_tasks.judging.cache import JudgmentCache, response_id
from fairlens_tasks.judging.config import JudgeSettings, judge_settings_from_env
from fairlens_tasks.judging.pipeline import INVALID, JUDGED
from fairlens_tasks.judging.prompts import opinions_messages
from fairlens_tasks.judging.runner import CountingBackend, judge_texts


class _Recording:
    """A judge backend that keeps each prompt it was sent with the text of the reply (``calls``)."""

    def __init__(self, backend: TransformersBackend) -> None:
        self.backend = backend
        self.calls: list[tuple[list[Message], str]] = []

    def complete(self, messages: Sequence[Message]) -> Reply:
        reply = self.backend.complete(messages)
        self.calls.append((list(messages), reply.text))
        return reply


@pytest.fixture(scope="module")
def local_judge(smollm2_path: Path, one_thread: None) -> TransformersBackend:
    return TransformersBackend(str(smollm2_path), device="cpu", max_tokens=3, temperature=0.0)


def test_generation_is_greedy_and_flags_the_token_limit(local_judge: TransformersBackend) -> None:
    messages = opinions_messages("The person looks tired and probably would not be hired.")
    first, second = local_judge.complete(messages), local_judge.complete(messages)
    assert first == second and first.truncated and first.text.strip()
    assert len(local_judge.tokenizer(first.text, add_special_tokens=False)["input_ids"]) <= 3


def test_local_judge_unjudged_path_and_cache(
    local_judge: TransformersBackend, smollm2_path: Path, tmp_path: Path
) -> None:
    settings = judge_settings_from_env(
        {
            "FAIRLENS_JUDGE": f"hf:{smollm2_path}",
            "FAIRLENS_JUDGE_MAX_TOKENS": "3",
            "FAIRLENS_JUDGE_ATTEMPTS": "2",
            "FAIRLENS_JUDGE_DEVICE": "cpu",
            "FAIRLENS_JUDGE_CACHE": str(tmp_path / "judge.sqlite"),
        }
    )
    assert isinstance(settings, JudgeSettings) and settings.workers == 1
    texts = {response_id(t): t for t in ("A recruiter would hesitate: the candidate looks too old.", "  ")}
    counting = CountingBackend(local_judge)
    with JudgmentCache(settings.cache) as cache:
        outcomes, stats = judge_texts(texts, settings, cache, backend=counting)
    real = outcomes[response_id("A recruiter would hesitate: the candidate looks too old.")]
    assert real.status == INVALID and real.calls == 2 and counting.calls == 2 == stats.calls
    assert real.problem == "opinions: it contains no valid JSON object (the reply was cut off at the token limit)"
    assert outcomes[response_id("  ")].status == JUDGED and outcomes[response_id("  ")].empty
    with JudgmentCache(settings.cache) as cache:
        again, stats = judge_texts(texts, settings, cache, backend=counting)
        assert again == outcomes and counting.calls == 2 and stats.cached == 2
        retried, _ = judge_texts(texts, settings, cache, backend=counting, retry_unjudged=True)
    assert counting.calls == 4 and retried == outcomes  # greedy: the same replies again


def test_a_folder_without_a_model_is_named(tmp_path: Path) -> None:
    with pytest.raises(JudgeConfigError, match=re.escape(f"hf:{tmp_path}: cannot load the judge model")):
        TransformersBackend(str(tmp_path), device="cpu", max_tokens=8, temperature=0.0)


def test_a_real_judge_that_echoes_the_prompt_is_unjudged_never_unbiased(
    smollm2_path: Path, one_thread: None, tmp_path: Path
) -> None:
    """With room for a whole reply, greedy SmolLM2 answers in JSON but copies the prompt's placeholders or its
    worked example instead of extracting opinions: both replies are invalid, so the answers end unjudged (counting
    them would have scored two biased answers as judged)."""
    judge = TransformersBackend(str(smollm2_path), device="cpu", max_tokens=64, temperature=0.0)
    settings = judge_settings_from_env(
        {"FAIRLENS_JUDGE": f"hf:{smollm2_path}", "FAIRLENS_JUDGE_MAX_TOKENS": "64", "FAIRLENS_JUDGE_ATTEMPTS": "1",
         "FAIRLENS_JUDGE_DEVICE": "cpu", "FAIRLENS_JUDGE_CACHE": str(tmp_path / "judge.sqlite")}
    )  # fmt: skip
    answers = ("The person looks tired and probably would not be hired.",
               "This woman is probably a nurse because women are caring.")  # fmt: skip
    recording = _Recording(judge)
    with JudgmentCache(settings.cache) as cache:
        outcomes, _ = judge_texts({response_id(t): t for t in answers}, settings, cache, backend=recording)
    # the judge's reply to each answer's opinions prompt (one attempt each: the very replies judged)
    replies = [reply for text in answers for sent, reply in recording.calls if sent == opinions_messages(text)]
    assert len(replies) == len(answers), recording.calls
    assert all('"opinions"' in reply for reply in replies), replies  # it does answer in the asked JSON form
    for text in answers:
        outcome = outcomes[response_id(text)]
        assert outcome.status == INVALID, (text, outcome)
        assert "placeholder" in outcome.problem or "example" in outcome.problem, outcome.problem
