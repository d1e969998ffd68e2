"""Resuming after a crash with the harnesses' own response caches (slow: real harness runs).

The model is :class:`openai_server.OpenAIServer` answering with ``fact_or_fair_reply`` (a valid answer at once, chosen by a hash of the prompt), one
server at one address for all the runs of a test. It counts every prompt it is asked, and holds requests after a
set number of answers so that the client can be killed (SIGKILL, no clean-up) at a known point.

* lm-eval ``--use_cache`` stores each response as it arrives (``CacheHook.add_partial``, SQLite with autocommit):
  a killed run restarted with the same cache asks only what was never answered, and gives the numbers and
  samples of a run that was never interrupted.
* lmms-eval 0.7.3 ``--use_cache`` stores responses only after the model returns *all* requests of a type
  (``ResponseCache.execute`` calls ``lm.generate_until`` once with every uncached request): a killed run's answers are
  lost and are asked again. What a *completed* run cached is reused, so a long run can be made resumable by running
  it in chunks (``--limit``/``--offset``) with the cache, then the whole command.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import DEV_BIN, run
from openai_server import OpenAIServer, fact_or_fair_reply, hashed_choice

from tests.scale.runs import compare_runs, scale_env

pytestmark = pytest.mark.harness


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    instant = OpenAIServer(fact_or_fair_reply).start()
    yield instant
    instant.stop()


def _killed_midway(args: list[str], server: OpenAIServer, answers: int, env: dict[str, str], cwd: Path) -> set[str]:
    """Run ``args`` until the server has answered ``answers`` requests, SIGKILL it; the prompts answered. Its
    output goes to ``cwd/killed.log``."""
    server.reset(hold_after=answers)
    with open(cwd / "killed.log", "wb") as log:
        proc = subprocess.Popen(args, env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        assert server.holding.wait(300), "the run never reached the point where it is killed"
        time.sleep(1.0)  # let the client store the answers it has received: what a crash a moment later would leave
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    answered = set(server.answered_prompts)
    assert len(server.answered_prompts) == answers
    server.release()
    return answered


def test_lm_eval_killed_run_resumes_from_its_cache(tmp_path: Path, server: OpenAIServer) -> None:
    env = scale_env(tmp_path)

    def command(out: str, *extra: str) -> list[str]:
        return [
            str(DEV_BIN / "lm_eval"), "--model", "local-chat-completions", "--model_args",
            f"model=instant,base_url={server.base_url}/chat/completions,num_concurrent=4,max_retries=1",
            "--tasks", "fact_or_fair_objective", "--apply_chat_template", "--log_samples",
            "--output_path", str(tmp_path / out), *extra,
        ]  # fmt: skip

    run(command("whole"), env=env, cwd=tmp_path)
    asked_whole = dict(server.prompts)
    assert server.requests == 198

    cache = ["--use_cache", str(tmp_path / "cache" / "responses")]
    answered = _killed_midway(command("killed", *cache), server, 120, env, tmp_path)
    assert not list((tmp_path / "killed").rglob("*.json")), "the killed run must not have finished"

    server.reset()
    run(command("resumed", *cache), env=env, cwd=tmp_path)
    asked = set(server.prompts)
    assert asked == set(asked_whole) - answered, "the resumed run asked again what was answered before the crash"
    assert server.requests == sum(asked_whole[key] for key in asked)
    values, samples, differences = compare_runs(tmp_path / "whole", tmp_path / "resumed")
    assert not differences, "\n".join(differences[:20])
    assert samples == 198 and values > 0


def test_lmms_eval_cache_keeps_completed_runs_only(tmp_path: Path, server: OpenAIServer, face_corpus: Path) -> None:
    server.reply = lambda text: hashed_choice(text, ["Yes", "No", "Cannot tell"])
    env = scale_env(tmp_path, FAIRLENS_CORPUS=str(face_corpus), FAIRLENS_SAMPLE_FRACTION="1", OPENAI_API_KEY="-")

    def command(out: str, limit: int, *extra: str) -> list[str]:
        return [
            str(DEV_BIN / "lmms-eval"), "--model", "openai", "--model_args",
            f"model=instant,base_url={server.base_url},num_concurrent=4,max_retries=1", "--tasks", "fairlens",
            "--limit", str(limit), "--batch_size", "1", "--log_samples", "--output_path", str(tmp_path / out), *extra,
        ]  # fmt: skip

    run(command("whole", 60), env=env, cwd=tmp_path)
    asked_whole = set(server.prompts)
    assert server.requests == len(asked_whole) == 3 * 60

    cache = ["--use_cache", str(tmp_path / "cache")]
    server.reset()
    run(command("chunk", 20, *cache), env=env, cwd=tmp_path)  # a first chunk that completes
    chunk = set(server.prompts)
    assert len(chunk) == 3 * 20

    answered = _killed_midway(command("killed", 60, *cache), server, 50, env, tmp_path)
    assert not answered & chunk, (tmp_path / "killed.log").read_text()[-3000:]

    server.reset()
    run(command("resumed", 60, *cache), env=env, cwd=tmp_path)
    asked = set(server.prompts)
    assert asked == asked_whole - chunk  # the chunk's answers are reused ...
    assert answered <= asked  # ... the killed run's 50 were lost and asked again
    # lmms-eval does not cache the token counts the backend reported: a cached answer logs [null]
    values, samples, differences = compare_runs(tmp_path / "whole", tmp_path / "resumed", skip=("token_counts",))
    assert not differences, "\n".join(differences[:20])
    assert samples == 3 * 60 and values > 0
