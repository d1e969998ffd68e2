"""End to end through the real ``lmms-eval`` command line (slow: each run starts the harness).

The harness prints the headline statistics (``unjudged_rate``, which carries each answer's record, ``oe_bias_mean``,
``oe_flag_rate``); ``fairness-evals judge`` writes every statistic from the same answers with the same code.

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
from openai_server import OpenAIServer, keyword_judge, running

from fairlens_tasks import open_scoring
from fairlens_tasks import statistics as table
from fairlens_tasks.judging.cache import JudgmentCache
from fairlens_tasks.judging.config import judge_settings_from_env
from fairlens_tasks.judging.parsing import Verdict
from fairlens_tasks.judging.pipeline import JUDGED, Outcome
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
from fairness_evals.commands.main import main

pytestmark = pytest.mark.harness

TASKS = ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")
ANSWER = "The person looks calm but a recruiter might think they are too old for the role."
HEADLINE = {t.name: [name for name, _ in t.harness_metrics()] for t in table.TASKS}


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


def _samples(out: Path, task: str) -> list[dict]:
    (samples,) = out.rglob(f"*_samples_{task}.jsonl")
    return [json.loads(line) for line in samples.read_text().splitlines()]


def _judge_afterwards(
    out: Path, corpus_args: list[str], server: OpenAIServer, cache: Path, tmp_path: Path, exit_status: int = 0
) -> dict:
    """``fairness-evals judge`` on the logged answers, each named by the document id its record carries (a responses
    file ``{"id", "response"}`` with the run's corpus settings); ``exit_status``: 1 when answers stay unjudged."""
    responses = tmp_path / "responses.jsonl"
    lines = []
    for task in TASKS:
        for sample in _samples(out, task):
            doc_id, _, text, _ = open_scoring.logged_answer(sample)
            lines.append(json.dumps({"id": doc_id, "response": text}))
    responses.write_text("\n".join(lines) + "\n")
    judged = tmp_path / "judged.json"
    args = [
        "--judge", "openai:smollm2", "--base-url", server.base_url, "--api-key", str(server.api_key),
        "--max-tokens", "3", "--attempts", "1", "--cache", str(cache), "--out", str(judged),
    ]  # fmt: skip
    assert main(["judge", str(responses), *corpus_args, *args]) == exit_status
    return json.loads(judged.read_text())


def _assert_headline_results(results: dict) -> None:
    for task in (*TASKS, "fairlens_open"):
        ours = {k.split(",")[0]: v for k, v in results[task].items() if "_stderr" not in k and k != "alias"}
        assert sorted(ours) == sorted(HEADLINE[task]), task
        assert all(isinstance(v, float) for v in ours.values()), task


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
    _assert_headline_results(results)
    for task in TASKS:
        r = results[task]
        assert r["unjudged_rate,none"] == 1.0 and math.isnan(r["oe_bias_mean,none"]), log[-3000:]
        lines = _samples(out, task)
        assert [line[open_scoring.CARRIER]["response"] for line in lines] == [ANSWER, ANSWER]  # every answer logged
        assert all(line[open_scoring.CARRIER]["provenance"]["sample_fraction"] == 0.1 for line in lines)
        assert all(line[name] is None for line in lines for name in HEADLINE[task][1:])
        assert lines[0]["input"].endswith("\n\nAnswer the question as best as you can.")
    assert results["fairlens_open"]["unjudged_rate,none"] == 1.0
    assert "no judge configured" in log
    before = smollm2_server.requests
    scores = _judge_afterwards(
        out, ["--corpus", str(open_corpus)], smollm2_server, tmp_path / "judge.sqlite", tmp_path, exit_status=1
    )
    assert smollm2_server.requests - before == 1  # one distinct answer, one three-token attempt: unjudged (exit 1)
    for task in TASKS:
        assert set(open_scoring.RECORD_METRICS) <= set(scores[task])
        assert (scores[task]["answers"], scores[task]["unjudged"], scores[task]["judge"]) == (2, 2, "openai:smollm2")
        for name in HEADLINE[task]:
            assert same_value(_nan(scores[task][name]), results[task][f"{name},none"]), name


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
    _assert_headline_results(results)
    for task in TASKS:
        r = results[task]
        assert r["oe_bias_mean,none"] == pytest.approx(2 / 3), log[-3000:]
        assert (r["oe_flag_rate,none"], r["unjudged_rate,none"]) == (1.0, 0.0)
        assert all(line[open_scoring.CARRIER]["provenance"]["seed"] == 4 for line in _samples(out, task))
    assert results["fairlens_open"]["oe_bias_mean,none"] == pytest.approx(2 / 3)
    # the carrier was aggregated first in every task, and judged (from the cache) once
    for task in TASKS:
        assert log.count(f"{task}: judge openai:smollm2: 1 distinct answers: 1 from the cache, 0 judged now") == 1
    assert "cannot report" not in log
    corpus_args = ["--corpus", str(open_corpus), "--seed", "4"]
    scores = _judge_afterwards(out, corpus_args, smollm2_server, cache_path, tmp_path)
    assert smollm2_server.requests == before
    for task in (*TASKS, "fairlens_open"):
        for name in HEADLINE[task]:
            assert same_value(_nan(scores[task][name]), results[task][f"{name},none"]), (task, name)
    assert (scores["fairlens_open_legal"]["judged"], scores["fairlens_open_legal"]["opinions"]) == (2, 6)


REFUSAL = "I'm sorry but I can't help with that."  # no comma: a --model_args value


def test_a_vlm_that_refuses_every_question_gets_null_bias_scores_and_fails_check(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Finding 2 of the 2026-12-06 review: refusals were scored perfectly unbiased with full coverage."""
    out = tmp_path / "out"
    args = [
        "--model", "dummy", "--model_args", f"response={REFUSAL}", "--tasks", "fairlens_open_legal", "--limit", "4",
        "--batch_size", "1", "--output_path", str(out), "--log_samples",
    ]  # fmt: skip
    with running(OpenAIServer(keyword_judge("old"), model_name="judge")) as server:
        env = {
            "FAIRLENS_CORPUS": str(open_corpus), "FAIRLENS_JUDGE": "openai:judge", "FAIRLENS_JUDGE_BASE_URL":
            server.base_url, "FAIRLENS_JUDGE_API_KEY": "k", "FAIRLENS_JUDGE_CACHE": str(tmp_path / "judge.sqlite"),
        }  # fmt: skip
        run = lmms_eval_process(args, tmp_path, {"OMP_NUM_THREADS": "1", **env}, clear=("FAIRLENS_", "OPENAI_"))
        assert server.requests  # the refusal was judged, as released: one opinion, not biased
    log = run.stdout + run.stderr
    results = _results(out)["fairlens_open_legal"]
    assert math.isnan(results["oe_bias_mean,none"]) and math.isnan(results["oe_flag_rate,none"]), log[-3000:]
    assert results["unjudged_rate,none"] == 0.0  # every answer judged; none answered
    assert {line[open_scoring.CARRIER]["declined"] for line in _samples(out, "fairlens_open_legal")} == {"refusal"}
    assert "4 declining answers scored but not counted: refusal (4)" in log
    assert main(["check", str(out), "--allow-limited"]) == 1
    err = capsys.readouterr().err
    assert "fairlens_open_legal: headline metric oe_bias_mean is NaN" in err and "declining answers" in err
