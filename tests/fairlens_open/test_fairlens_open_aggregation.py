"""Judging inside the lmms-eval aggregation: once per task, in the carrier's (``unjudged_rate``) aggregation.

The aggregation is called here as lmms-eval calls it (one list of items per metric, the carrier first), with the
judge configured by FAIRLENS_JUDGE* pointing at the loopback SmolLM2 server (replies of three tokens:
the non-empty answers end unjudged; the empty ones are judged without a call).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from openai_server import OpenAIServer

from fairlens_tasks import open_scoring
from fairlens_tasks.open_scoring import CARRIER, HEADLINE_METRICS, process_results
from fairness_evals import aggregation

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


def _items() -> dict[str, list]:
    """Each headline metric's items, as lmms-eval collects them from ``process_results``."""
    outputs = [process_results(_doc(i), [TEXTS[i % 3]]) for i in range(6)]
    return {name: [o[name] for o in outputs] for name in HEADLINE_METRICS}


def test_the_carrier_aggregation_judges_once_and_the_rest_reuse_it(
    judge_env: Path, smollm2_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    items = _items()
    before = smollm2_server.requests
    # 4 of the 6 answers unjudged: the two non-blank distinct answers fail their one three-token attempt
    assert open_scoring.aggregate_unjudged_rate(items[CARRIER]) == pytest.approx(4 / 6)
    assert smollm2_server.requests - before == 2  # two distinct non-empty answers, one attempt each
    # only the two blank answers are judged (score 0 without a call): no headline from them alone (review M1)
    assert math.isnan(open_scoring.aggregate_oe_bias_mean(items["oe_bias_mean"])) and math.isnan(
        open_scoring.aggregate_oe_flag_rate(items["oe_flag_rate"])
    )
    assert smollm2_server.requests - before == 2  # the other metrics came from the carrier's run
    assert "judge openai:smollm2: 3 distinct answers: 0 from the cache, 1 judged now, 2 invalid" in caplog.text
    values = open_scoring.results_for(items[CARRIER])  # every statistic of that run, with the judge's provenance
    assert values["judged"] == 2 and values["empty_answers"] == 2 and values["oe_bias_mean_coverage"] == 0.0
    assert values["unjudged_rate_gender_male"] == pytest.approx(2 / 3) and values["judge"] == "openai:smollm2"
    assert smollm2_server.requests - before == 2


def test_a_metric_aggregated_before_its_carrier_is_nan_and_judges_nothing(
    judge_env: Path, smollm2_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    aggregation.clear()
    items = _items()
    before = smollm2_server.requests
    with caplog.at_level("ERROR", logger="fairness_evals"):
        assert math.isnan(open_scoring.aggregate_oe_bias_mean(items["oe_bias_mean"]))
    assert smollm2_server.requests == before and "cannot report oe_bias_mean" in caplog.text
    assert open_scoring.aggregate_unjudged_rate(items[CARRIER]) == pytest.approx(4 / 6)  # judges now
    assert smollm2_server.requests - before == 2
