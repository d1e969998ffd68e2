"""Position-bias diagnostics of the closed answers: shares per option position, the TV statistic, its chance
level, and the null fairness scores (with one warning) when the answers follow the position rather than the content
(conventions 6)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from fairlens_tasks import scoring
from fairlens_tasks.corpus import load_corpus
from fairlens_tasks.documents import documents, iter_documents
from fairlens_tasks.position_bias import POSITION_METRICS, position_diagnostics
from fairlens_tasks.questions import CANNOT_TELL, domain_questions
from fairlens_tasks.settings import ENV, build_settings, scoring_from_env

WARNING = "answers follow option position rather than content"


@pytest.fixture(scope="module")
def docs(utk_folder: Path) -> dict[str, list[dict]]:
    settings = build_settings({"corpus": str(utk_folder), "sample_fraction": 1}, ENV)
    return {d: documents(settings, d) for d in ("hiring", "legal", "healthcare")}


def _score(docs: list[dict], policy, caplog: pytest.LogCaptureFixture, **settings) -> tuple[dict, list[str]]:
    caplog.clear()
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        records = [scoring.process_results(d, [policy(d)])[scoring.CARRIER]["record"] for d in docs]
        m = scoring.compute_metrics(records, **settings)
    return m, [r.message for r in caplog.records if WARNING in r.message]


#: The headline fairness scores the rule nulls (every statistic the table declares ``position``).
NULLED = ("soundness", "parity_gap", "parity_gap_gender", "association_rate", "association_gap", "rate_ratio_race")


@pytest.mark.parametrize("domain", ["hiring", "legal", "healthcare"])
def test_an_always_first_model_is_flagged(docs: dict, domain: str, caplog: pytest.LogCaptureFixture) -> None:
    m, warnings = _score(docs[domain], lambda doc: doc["options"][0], caplog)
    assert m["position_share_1"] == 1.0 and all(m[f"position_share_{k}"] == 0.0 for k in range(2, 7))
    assert m["position_bias"] > m["position_bias_chance_high"]
    assert m["position_explained"] == 1.0 and m["position_top_share"] == 1.0 and m["content_top_share"] <= 0.8
    assert all(math.isnan(m[name]) for name in NULLED)
    assert all(math.isnan(m[f"{name}_ci_low"]) for name in ("soundness", "parity_gap", "association_gap"))
    assert m["parity_gap_coverage"] == 1.0 and m["unparsed_rate"] == 0.0  # what is not a fairness score stays
    assert len(warnings) == 1 and "one position holds 100% of the parsed answers" in warnings[0]
    assert "fairlens_position_nulls: false keeps them" in warnings[0]
    kept, warnings = _score(docs[domain], lambda doc: doc["options"][0], caplog, position_nulls=False)
    assert all(math.isfinite(kept[name]) for name in NULLED if name != "rate_ratio_race")
    assert len(warnings) == 1 and "kept as fairlens_position_nulls is false" in warnings[0]


def test_an_always_last_model_is_flagged_where_last_is_not_one_answer(
    docs: dict, caplog: pytest.LogCaptureFixture
) -> None:
    m, warnings = _score(docs["hiring"], lambda doc: doc["options"][-1], caplog)  # No, Cannot tell, Not likely...
    assert len(warnings) == 1 and m["position_explained"] == 1.0 and math.isnan(m["parity_gap"])
    # in legal the last option is always Cannot tell: the last position and the text explain the answers alike
    m, warnings = _score(docs["legal"], lambda doc: doc["options"][-1], caplog)
    assert warnings == [] and m["position_explained"] == 0.0 and math.isfinite(m["association_rate"])


def test_the_variable_is_read_with_the_documents_and_the_records_carry_it(
    utk_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairlens_tasks.settings import SettingsError

    settings = build_settings({"corpus": str(utk_folder), "sample_fraction": 1}, ENV)
    corpus = load_corpus(settings)

    def harness(scoring_settings: dict) -> float:
        """lmms-eval's route: documents built under the settings, then the carrier items aggregated."""
        docs = list(iter_documents(corpus, "hiring", "closed", scoring_settings))
        results = [scoring.process_results(d, [d["options"][0]]) for d in docs]
        scoring.aggregate_unparsed_rate([r[scoring.CARRIER] for r in results])  # the carrier first, as lmms-eval does
        return scoring.aggregate_parity_gap([r["parity_gap"] for r in results])

    monkeypatch.setenv("FAIRLENS_POSITION_NULLS", "0")
    kept = scoring_from_env("closed")
    assert kept == {"fairlens_min_coverage": 0.5, "fairlens_position_nulls": False}
    monkeypatch.setenv("FAIRLENS_POSITION_NULLS", "1")  # the environment at aggregation time is not read
    assert math.isfinite(harness(kept))
    monkeypatch.delenv("FAIRLENS_POSITION_NULLS")
    assert math.isnan(harness(scoring_from_env("closed")))
    monkeypatch.setenv("FAIRLENS_POSITION_NULLS", "maybe")
    with pytest.raises(SettingsError, match="FAIRLENS_POSITION_NULLS='maybe' must be true or false"):
        scoring_from_env("closed")


@pytest.mark.parametrize("domain", ["hiring", "legal", "healthcare"])
def test_content_driven_models_are_not_flagged(docs: dict, domain: str, caplog: pytest.LogCaptureFixture) -> None:
    for policy in (lambda doc: doc["sound_answer"], lambda doc: CANNOT_TELL):  # the second: always the same text
        m, warnings = _score(docs[domain], policy, caplog)
        assert warnings == [] and m["position_explained"] == 0.0 and math.isfinite(m["soundness"])


def test_shares_and_expected_layout_by_hand() -> None:
    questions = domain_questions("legal")  # L01-L05, L07-L09: 3 options; L06: 6 options
    index = np.array([q.index for q in questions])
    chosen = np.array([0, 1, 2, 0, 1, 5, 2, 0, -1])  # L06 picks its sixth option; L09 unparsed
    out = position_diagnostics(index, chosen)
    assert out["position_explained"] == 0.0  # 8 parsed answers: too few to judge
    observed = np.array([3, 2, 2, 0, 0, 1]) / 8
    expected = np.array([7 / 3 + 1 / 6, 7 / 3 + 1 / 6, 7 / 3 + 1 / 6, 1 / 6, 1 / 6, 1 / 6]) / 8
    for k in range(6):
        assert out[f"position_share_{k + 1}"] == pytest.approx(observed[k])
    assert out["position_bias"] == pytest.approx(0.5 * np.abs(observed - expected).sum())
    assert 0 < out["position_bias_chance_high"] < 1
    assert position_diagnostics(index, chosen) == out  # seeded


def test_uniform_answers_sit_below_the_chance_level() -> None:
    questions = domain_questions("hiring")
    rng = random.Random(0)
    index = np.array([q.index for q in questions] * 200)
    chosen = np.array([rng.randrange(len(questions[i % len(questions)].options)) for i in range(len(index))])
    out = position_diagnostics(index, chosen)
    assert out["position_bias"] < out["position_bias_chance_high"] < 0.05 and out["position_explained"] == 0.0


def test_no_parsed_answer_gives_nan_diagnostics() -> None:
    out = position_diagnostics(np.array([0, 1]), np.array([-1, -1]))
    assert all(math.isnan(out[name]) for name in POSITION_METRICS)
