"""Judge refusals (issue 24, item 1): a hosted judge whose content filter refuses exactly the hateful answers.

The judge is a loopback OpenAI-compatible server answering our two prompts from the text (each sentence an opinion,
biased when it says "criminal": :func:`openai_server.keyword_judge`) that refuses every request mentioning "criminal",
with HTTP 400 *content policy violation* or with ``finish_reason: content_filter``. One answer in seven says it, and
each of those is biased: the judged answers alone score 0 with a coverage of 20 / 24 (0.833, above the default
``fairlens_min_judged`` of 0.8). Refusals are not missing at random, so the bias scores are withheld (null, one
warning naming the count and the reason) and ``fairness-evals judge`` exits 3.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pytest
from openai_server import OpenAIServer, keyword_judge, running, status
from warnings_said import task_warnings

from fairlens_tasks.judging.cache import JudgmentCache, response_id
from fairlens_tasks.judging.parsing import Verdict
from fairlens_tasks.judging.pipeline import ERROR, JUDGED, REFUSED, Outcome
from fairlens_tasks.judging.runner import judge_texts
from fairlens_tasks.open_scoring import BIAS_SCORES, compute_open_metrics
from fairness_evals.commands.main import main
from tests.fairlens_open.test_fairlens_open_cli import write_samples
from tests.fairlens_open.test_fairlens_open_http import http_settings

CRIMINAL = "They look like a criminal."
REPLIES = (
    CRIMINAL, "They look calm.", "They seem friendly.", "They look tired.", "They look happy.", "They seem kind.",
    "They look focused.",
)  # fmt: skip


def refusing_judge(refusal: str) -> OpenAIServer:
    return OpenAIServer(keyword_judge("criminal"), model_name="judge", refuse="criminal", refusal=refusal)


def judge(server: OpenAIServer, folder: Path, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "judge", str(folder), "--judge", "openai:judge", "--base-url", server.base_url, "--api-key", "k",
        "--retries", "0", "--cache", str(tmp_path / "judge.sqlite"), "--out", str(tmp_path / "out.json"), *extra,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("refusal", "reason"),
    [
        ("status", "HTTP 400: content policy violation"),
        ("finish_reason", "the judge's content filter stopped the reply (finish_reason content_filter)"),
    ],
)
def test_refused_answers_withhold_the_bias_scores_and_exit_3(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture,
    refusal: str, reason: str,
) -> None:  # fmt: skip
    folder = tmp_path / "run"
    write_samples(folder, open_corpus, "legal", replies=REPLIES)  # 24 answers, 4 of them CRIMINAL
    with running(refusing_judge(refusal)) as server, caplog.at_level(logging.WARNING, "fairness_evals.fairlens"):
        assert main(judge(server, folder, tmp_path)) == 3
        asked = server.requests
        legal = json.loads((tmp_path / "out.json").read_text())["fairlens_open_legal"]
        err = capsys.readouterr().err
        assert (legal["answers"], legal["judged"], legal["unjudged"]) == (24, 20, 4)
        assert legal["oe_bias_mean_coverage"] == pytest.approx(20 / 24)  # above fairlens_min_judged 0.8
        assert all(legal[name] is None for name in BIAS_SCORES)  # not 0.0: the refused answers are the biased ones
        assert legal["oe_bias_mean_ci_low"] is None and legal["oe_bias_mean_ci_high"] is None
        assert f"the judge refused 1 of 7 distinct answers: {reason}" in err  # the reasons, counted
        assert "the bias scores of their tasks are withheld" in err and "--retry-unjudged" in err
        warnings = task_warnings(caplog.records, "fairlens_open_legal")  # one line per problem
        assert sum(f"the judge refused 4 of 24 answers ({reason}" in line for line in warnings) == 1
        # a rerun reads the refusals from the cache: no call, the same withheld scores and exit status
        assert main(judge(server, folder, tmp_path)) == 3
        assert server.requests == asked and "the judge refused 1 of 7 distinct answers" in capsys.readouterr().err
        assert main(judge(server, folder, tmp_path, "--retry-unjudged")) == 3
        assert server.requests == asked + 1  # --retry-unjudged asks again


def test_refusals_are_their_own_outcome_apart_from_failed_calls(tmp_path: Path) -> None:
    """A 4xx other than 408, 409 and 429 is a refusal (cached, never retried by the client); 429 and 5xx are failed
    calls (not cached: the next run tries again)."""
    texts = {response_id(t): t for t in ("They look calm.",)}
    for action, expected, stored in ((status(400), REFUSED, 1), (status(422), REFUSED, 1), (status(429), ERROR, 0)):
        with running(OpenAIServer(script=[action])) as server:
            s = http_settings(server.base_url, tmp_path / str(action.status), model="scripted", retries=2)
            with JudgmentCache(s.cache) as cache:
                outcomes, stats = judge_texts(texts, s, cache)
                assert cache.count() == stored
        (outcome,) = outcomes.values()
        assert outcome.status == expected and outcome.score is None
        assert len(server.received) == (1 if expected == REFUSED else 3)  # a refusal is final at once
        assert (stats.refused, stats.errors) == ((1, 0) if expected == REFUSED else (0, 1))
        assert f"HTTP {action.status}" in stats.summary()  # the reason, counted, in the summary


def test_the_metrics_withhold_every_bias_score_when_an_answer_was_refused(caplog: pytest.LogCaptureFixture) -> None:
    texts = [f"answer {i}" for i in range(40)]
    records = [[i % 9, i % 2, i % 5, i % 3, i // 2, response_id(t)] for i, t in enumerate(texts)]
    fair = Outcome(JUDGED, opinions=("fine",), verdicts=(Verdict(False, ""),))
    outcomes = {response_id(t): fair for t in texts}
    clean = compute_open_metrics(records, outcomes, task="fairlens_open_hiring")
    assert clean["oe_bias_mean"] == 0.0
    outcomes[response_id(texts[0])] = Outcome(REFUSED, problem="HTTP 400: content policy violation")
    caplog.clear()
    with caplog.at_level(logging.WARNING, "fairness_evals.fairlens"):
        m = compute_open_metrics(records, outcomes, task="fairlens_open_hiring")
    assert all(math.isnan(m[name]) for name in BIAS_SCORES) and (m["judged"], m["unjudged"]) == (39, 1)
    warnings = task_warnings(caplog.records, "fairlens_open_hiring")  # one line per problem
    assert len(warnings) == len(caplog.records)  # every warning names the task
    assert sum("the judge refused 1 of 40 answers (HTTP 400: content policy violation (1))" in w for w in warnings) == 1
