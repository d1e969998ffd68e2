"""Judging inside the lmms-eval aggregation: once per task, in the ``answers`` aggregation, then memoised.

The aggregation functions are called here as lmms-eval calls them (one list of items per metric), with the
judge configured by FAIRLENS_JUDGE* pointing at the loopback SmolLM2 server (replies of three tokens:
the non-empty answers end unjudged; the empty ones are judged without a call).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from openai_server import OpenAIServer

from fairlens_tasks import open_scoring
from fairlens_tasks.open_scoring import process_results

TEXTS = ("They look friendly.", "They might be too old for this.", "")


def _doc(i: int) -> dict:
    return {
        "id": f"img{i // 3}/LO0{i % 3 + 1}", "question_index": 9 + i % 3, "gender": ("Male", "Female")[i % 2],
        "race": "White", "age_band": "young", "image_unit": i // 3, "seed": 0, "sample_fraction": 1.0,
        "corpus_sha256": "x", "data_version": 1, "images_found": 2, "images_loaded": 2, "images_skipped": 0,
        "images_eligible": 2, "images_sampled": 2, "groups_empty": 0,
    }  # fmt: skip


@pytest.fixture
def judge_env(smollm2_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "judge.sqlite"
    for name, value in {
        "FAIRLENS_JUDGE": "openai:smollm2", "FAIRLENS_JUDGE_BASE_URL": smollm2_server.base_url,
        "FAIRLENS_JUDGE_API_KEY": str(smollm2_server.api_key), "FAIRLENS_JUDGE_MAX_TOKENS": "3",
        "FAIRLENS_JUDGE_ATTEMPTS": "1", "FAIRLENS_JUDGE_CACHE": str(cache),
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    return cache


def _items() -> tuple[list[dict], list[list]]:
    outputs = [process_results(_doc(i), [TEXTS[i % 3]]) for i in range(6)]
    return [o["answers"] for o in outputs], [o["oe_bias_mean"] for o in outputs]


def test_the_answers_aggregation_judges_once_and_the_rest_reuse_it(
    judge_env: Path, smollm2_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    payloads, records = _items()
    before = smollm2_server.requests
    assert open_scoring.agg_answers(payloads) == 6
    assert smollm2_server.requests - before == 2  # two distinct non-empty answers, one attempt each
    assert open_scoring.agg_judged(records) == 2 and open_scoring.agg_unjudged(records) == 4
    # only the two blank answers are judged (score 0 without a call): no headline from them alone (review M1)
    assert math.isnan(open_scoring.agg_oe_bias_mean(records)) and open_scoring.agg_empty_answers(records) == 2
    assert open_scoring.agg_oe_bias_mean_coverage(records) == 0.0
    assert math.isnan(open_scoring.agg_oe_bias_mean_ci_low(records))
    assert open_scoring.agg_unjudged_rate_gender_male(records) == pytest.approx(2 / 3)
    assert open_scoring.agg_judge(records) == "openai:smollm2"
    assert smollm2_server.requests - before == 2  # the other metrics came from the memo
    assert "judge openai:smollm2: 3 distinct answers: 0 from the cache, 1 judged now, 2 invalid" in caplog.text


def test_an_aggregation_before_answers_reads_the_cache_then_answers_judges(
    judge_env: Path, smollm2_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    payloads, records = _items()
    before = smollm2_server.requests
    assert open_scoring.agg_unjudged(records) == 6  # nothing cached yet and no text to judge
    assert smollm2_server.requests == before and "aggregated before `answers`" in caplog.text
    assert open_scoring.agg_answers(payloads) == 6  # judges now
    assert smollm2_server.requests - before == 2
    assert open_scoring.agg_unjudged(records) == 4 and open_scoring.agg_judged(records) == 2
