"""End to end through the real ``lmms-eval`` command line (slow: each run starts the harness).

``--model dummy`` answers every question with the same sentence (no comma: it is a --model_args value), so a run has one distinct answer and the
judge (SmolLM2 behind the loopback server of ``conftest.py``) has at most one answer to judge. lmms-eval
exits 0 even when evaluation fails, so the tests read the results JSON and the samples files.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from harness import lmms_eval_process, same_value
from openai_server import OpenAIServer

from fairlens_tasks import open_scoring
from fairlens_tasks.judging.cache import JudgmentCache
from fairlens_tasks.judging.config import judge_settings_from_env
from fairlens_tasks.judging.parsing import Verdict
from fairlens_tasks.judging.pipeline import JUDGED, Outcome
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
from fairness_evals.cli import main

pytestmark = pytest.mark.harness

TASKS = ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")
ANSWER = "The person looks calm but a recruiter might think they are too old for the role."


def _nan(value: object) -> object:
    """``fairness-evals`` writes strict JSON (null for NaN); the harness's results JSON keeps NaN."""
    return math.nan if value is None else value


def _lmms_eval(out: Path, tmp_path: Path, env: dict[str, str]) -> str:
    args = [
        "--model", "dummy", "--model_args", f"response={ANSWER}", "--tasks", "fairlens_open", "--limit", "2",
        "--batch_size", "1", "--output_path", str(out), "--log_samples",
    ]  # fmt: skip
    run = lmms_eval_process(args, tmp_path, {"OMP_NUM_THREADS": "1", **env}, clear=("FAIRLENS_", "OPENAI_"))
    return run.stdout + run.stderr


def _results(out: Path) -> dict:
    (path,) = out.rglob("*_results.json")
    return json.loads(path.read_text())["results"]


def _judge_env(server: OpenAIServer, cache: Path) -> dict[str, str]:
    return {
        "FAIRLENS_JUDGE": "openai:smollm2", "FAIRLENS_JUDGE_BASE_URL": server.base_url,
        "FAIRLENS_JUDGE_API_KEY": str(server.api_key), "FAIRLENS_JUDGE_MAX_TOKENS": "3",
        "FAIRLENS_JUDGE_ATTEMPTS": "1", "FAIRLENS_JUDGE_CACHE": str(cache),
    }  # fmt: skip


def test_without_a_judge_every_answer_is_logged_then_judged_by_the_cli(
    open_corpus: Path, smollm2_server: OpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    log = _lmms_eval(out, tmp_path, {"FAIRLENS_CORPUS": str(open_corpus)})
    results = _results(out)
    for task in TASKS:
        r = results[task]
        assert (r["answers,none"], r["judged,none"], r["unjudged,none"], r["unjudged_rate,none"]) == (2, 0, 2, 1.0), (
            log[-3000:]
        )
        assert math.isnan(r["oe_bias_mean,none"]) and r["judge,none"] == "none"
        assert "fairness-evals judge <this output folder>" in r["judge_settings,none"]
        assert r["judge_prompt_version,none"] == "fairlens-bias-v1" and r["sample_fraction,none"] == 0.1
        (samples,) = out.rglob(f"*_samples_{task}.jsonl")
        lines = [json.loads(line) for line in samples.read_text().splitlines()]
        assert [line["answers"]["response"] for line in lines] == [ANSWER, ANSWER]  # every answer reaches the log
        assert lines[0]["input"].endswith("\n\nAnswer the question as best as you can.")
    assert results["fairlens_open"]["unjudged_rate,none"] == 1.0
    assert "no judge configured" in log
    before = smollm2_server.requests
    judged = tmp_path / "judged.json"
    args = [
        "--judge", "openai:smollm2", "--base-url", smollm2_server.base_url, "--api-key", str(smollm2_server.api_key),
        "--max-tokens", "3", "--attempts", "1", "--cache", str(tmp_path / "judge.sqlite"), "--out", str(judged),
    ]  # fmt: skip
    assert main(["judge", str(out), *args]) == 0
    assert smollm2_server.requests - before == 1  # one distinct answer, one three-token attempt: unjudged
    scores = json.loads(judged.read_text())
    for task in TASKS:
        harness_names = {key.split(",")[0] for key in results[task] if key.endswith(",none") and "_stderr" not in key}
        assert set(scores[task]) == harness_names == set(open_scoring.ALL_METRICS)
        assert (scores[task]["answers"], scores[task]["unjudged"], scores[task]["judge"]) == (2, 2, "openai:smollm2")
        for name in open_scoring.PROVENANCE:
            assert same_value(scores[task][name], results[task][f"{name},none"]), name


def test_with_a_judge_the_harness_and_the_cli_agree_from_one_cache(
    open_corpus: Path, smollm2_server: OpenAIServer, tmp_path: Path
) -> None:
    cache_path = tmp_path / "judge.sqlite"
    env = _judge_env(smollm2_server, cache_path)
    settings = judge_settings_from_env(env)
    assert settings is not None
    known = Outcome(
        JUDGED,
        opinions=("The person looks calm.", "They are too old for the role.", "A recruiter might hesitate."),
        verdicts=(Verdict(False, ""), Verdict(True, "age stereotype"), Verdict(True, "assumes age matters")),
    )
    with JudgmentCache(cache_path) as cache:
        cache.put(settings.identity, JUDGE_PROMPT_VERSION, ANSWER, known)
    before = smollm2_server.requests
    out = tmp_path / "out"
    log = _lmms_eval(out, tmp_path, {"FAIRLENS_CORPUS": str(open_corpus), "FAIRLENS_SEED": "4", **env})
    results = _results(out)
    assert smollm2_server.requests == before  # judged from the cache inside the harness
    for task in TASKS:
        r = results[task]
        assert r["oe_bias_mean,none"] == pytest.approx(2 / 3), log[-3000:]
        assert (r["oe_flag_rate,none"], r["judged,none"], r["unjudged,none"], r["opinions,none"]) == (1.0, 2, 0, 6)
        assert r["judge,none"] == "openai:smollm2" and r["seed,none"] == 4
        recorded = json.loads(r["judge_settings,none"])
        assert recorded["base_url"] == smollm2_server.base_url and recorded["max_tokens"] == 3
        assert str(smollm2_server.api_key) not in r["judge_settings,none"]
    assert results["fairlens_open"]["oe_bias_mean,none"] == pytest.approx(2 / 3)
    # `answers` was aggregated first in every task: had another metric come first, it would have filled the memo
    # from the cache and `answers` would not have judged (nor logged its summary)
    for task in TASKS:
        assert f"{task}: judge openai:smollm2: 1 distinct answers: 1 from the cache, 0 judged now" in log
    assert "aggregated before `answers`" not in log
    judged = tmp_path / "judged.json"
    args = [
        "--judge", "openai:smollm2", "--base-url", smollm2_server.base_url, "--api-key", str(smollm2_server.api_key),
        "--max-tokens", "3", "--attempts", "1", "--cache", str(cache_path), "--out", str(judged),
    ]  # fmt: skip
    assert main(["judge", str(out), *args]) == 0
    assert smollm2_server.requests == before
    scores = json.loads(judged.read_text())
    for task in (*TASKS, "fairlens_open"):
        for name, value in scores[task].items():
            assert same_value(_nan(value), results[task][f"{name},none"]), (task, name)
