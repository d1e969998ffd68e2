"""Judge settings from FAIRLENS_JUDGE* variables: backends, defaults, identity, what is recorded, bad values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairlens_tasks.judging.backends import JudgeConfigError
from fairlens_tasks.judging.config import ENV, build_judge_settings, judge_settings_from_env


def test_no_judge_is_none() -> None:
    assert judge_settings_from_env({}) is None
    assert judge_settings_from_env({"FAIRLENS_JUDGE": " none "}) is None


def test_openai_compatible_judge_from_the_environment(tmp_path: Path) -> None:
    env = {
        "FAIRLENS_JUDGE": "openai:Qwen/Qwen2.5-7B-Instruct",
        "FAIRLENS_JUDGE_BASE_URL": "http://127.0.0.1:8000/v1/",
        "FAIRLENS_JUDGE_API_KEY": "secret-key",
        "FAIRLENS_JUDGE_CONCURRENCY": "32",
        "FAIRLENS_JUDGE_CACHE": str(tmp_path / "j.sqlite"),
    }
    s = judge_settings_from_env(env)
    assert s is not None and s.name == "openai:Qwen/Qwen2.5-7B-Instruct"
    assert (s.base_url, s.api_key, s.workers, s.max_tokens, s.temperature) == (
        "http://127.0.0.1:8000/v1", "secret-key", 32, 1024, 0.0,
    )  # fmt: skip
    assert s.identity == "openai:Qwen/Qwen2.5-7B-Instruct;temperature=0;max_tokens=1024;json_mode=1"
    recorded = json.loads(s.recorded_json())
    assert recorded["judge"] == s.name and recorded["prompt_version"] == "fairlens-bias-v1"
    assert "secret-key" not in s.recorded_json() and "secret-key" not in repr(s)
    assert s.cache == tmp_path / "j.sqlite"
    # the URL, key and concurrency do not change the identity; decoding settings do
    other = judge_settings_from_env(
        {**env, "FAIRLENS_JUDGE_BASE_URL": "https://example.org/v1", "FAIRLENS_JUDGE_CONCURRENCY": "1"}
    )
    assert other is not None and other.identity == s.identity
    hotter = judge_settings_from_env({**env, "FAIRLENS_JUDGE_TEMPERATURE": "0.7"})
    assert hotter is not None and hotter.identity != s.identity


def test_the_openai_api_needs_a_key_and_reasoning_models_get_a_larger_budget() -> None:
    with pytest.raises(JudgeConfigError, match="the OpenAI API needs a key: set FAIRLENS_JUDGE_API_KEY"):
        judge_settings_from_env({"FAIRLENS_JUDGE": "openai:gpt-5-mini"})
    s = judge_settings_from_env({"FAIRLENS_JUDGE": "openai:gpt-5-mini", "OPENAI_API_KEY": "k"})
    assert s is not None and s.base_url == "https://api.openai.com/v1" and s.max_tokens == 8192
    local = judge_settings_from_env({"FAIRLENS_JUDGE": "openai:m", "OPENAI_BASE_URL": "http://localhost:9/v1"})
    assert local is not None and local.api_key is None and local.base_url == "http://localhost:9/v1"


def test_local_transformers_judge(tmp_path: Path) -> None:
    s = judge_settings_from_env({"FAIRLENS_JUDGE": f"hf:{tmp_path}", "FAIRLENS_JUDGE_CONCURRENCY": "16"})
    assert s is not None and s.backend == "hf" and s.model == str(tmp_path.resolve())
    assert s.workers == 1 and s.identity == f"hf:{tmp_path.resolve()};temperature=0;max_tokens=1024"
    assert "base_url" not in s.recorded() and s.recorded()["device"] == "auto"
    with pytest.raises(JudgeConfigError, match="cannot load the judge model"):
        s.create_backend()  # an empty folder is no model


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"FAIRLENS_JUDGE": "gpt-5-mini"}, "FAIRLENS_JUDGE='gpt-5-mini': write openai:MODEL"),
        ({"FAIRLENS_JUDGE": "vllm:x"}, "write openai:MODEL"),
        ({"FAIRLENS_JUDGE": "openai:"}, "write openai:MODEL"),
        ({"FAIRLENS_JUDGE_CONCURRENCY": "0"}, "FAIRLENS_JUDGE_CONCURRENCY='0' must be at least 1"),
        ({"FAIRLENS_JUDGE_ATTEMPTS": "two"}, "FAIRLENS_JUDGE_ATTEMPTS='two' is not a whole number"),
        ({"FAIRLENS_JUDGE_TEMPERATURE": "3"}, "FAIRLENS_JUDGE_TEMPERATURE='3' must be at least 0 and at most 2"),
        ({"FAIRLENS_JUDGE_TIMEOUT": "nan"}, "FAIRLENS_JUDGE_TIMEOUT='nan' must be at least"),
        ({"FAIRLENS_JUDGE_JSON_MODE": "maybe"}, "FAIRLENS_JUDGE_JSON_MODE='maybe' must be 1 or 0"),
        ({"FAIRLENS_JUDGE_BASE_URL": "localhost:8000"}, "FAIRLENS_JUDGE_BASE_URL='localhost:8000' is not an http"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], message: str) -> None:
    full = {"FAIRLENS_JUDGE": "openai:m", "FAIRLENS_JUDGE_BASE_URL": "http://127.0.0.1:1/v1", **env}
    with pytest.raises(JudgeConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        judge_settings_from_env(full)


def test_options_are_named_as_options() -> None:
    from fairlens_tasks.judging.config import CLI

    with pytest.raises(JudgeConfigError, match="--attempts='0' must be at least 1"):
        build_judge_settings({"judge": "hf:x", "attempts": "0"}, CLI, {})
    assert set(ENV) == set(CLI)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://alice:hunter2@judge.example.org/v1", "https://***@judge.example.org/v1"),
        ("https://judge.example.org/v1?api_key=hunter2", "https://judge.example.org/v1?api_key=***"),
        (
            "https://judge.example.org/v1?api-version=2024-06-01&token=hunter2",
            "https://judge.example.org/v1?api-version=2024-06-01&token=***",
        ),
        ("http://127.0.0.1:8000/v1?sig=hunter2&X-Api-Key=hunter2", "http://127.0.0.1:8000/v1?sig=***&X-Api-Key=***"),
    ],
)
def test_credentials_in_the_base_url_are_redacted_in_results(url: str, shown: str) -> None:
    """Review item 15: the base URL was copied into every results file (judge_settings)."""
    s = judge_settings_from_env({"FAIRLENS_JUDGE": "openai:m", "FAIRLENS_JUDGE_BASE_URL": url})
    assert s is not None and s.base_url == url  # the client still gets the credentials
    assert json.loads(s.recorded_json())["base_url"] == shown
    assert "hunter2" not in s.recorded_json() and "hunter2" not in repr(s)


def test_credentials_are_redacted_in_errors_and_logs() -> None:
    from fairlens_tasks.judging.backends import _short

    with pytest.raises(JudgeConfigError) as info:
        judge_settings_from_env({"FAIRLENS_JUDGE": "openai:m", "FAIRLENS_JUDGE_BASE_URL": "ftp://bob:hunter2@host/"})
    assert "hunter2" not in str(info.value) and "***@host" in str(info.value)
    message = _short("Connection refused for url 'http://bob:hunter2@127.0.0.1:9/v1/chat/completions?key=hunter2'")
    assert "hunter2" not in message and "http://***@127.0.0.1:9/v1/chat/completions?key=***" in message


def test_the_key_is_masked_in_the_recorded_base_url_wherever_it_appears() -> None:
    """Issue 24, item 8: a key in a query parameter whose name does not look secret is masked as the key."""
    env = {"FAIRLENS_JUDGE": "openai:m", "FAIRLENS_JUDGE_API_KEY": "hunter2-key"}
    s = judge_settings_from_env({**env, "FAIRLENS_JUDGE_BASE_URL": "https://judge.example.org/v1?k=hunter2-key"})
    assert s is not None and json.loads(s.recorded_json())["base_url"] == "https://judge.example.org/v1?k=***"
