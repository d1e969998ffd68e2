"""The released-conventions switch reproduces the released code's numbers on the same answers.

``data/released_reference.json`` holds the result tables that the released scripts (uclanlp/fact-or-fair
@945ec6b, run by ``tests/support/released_fact_or_fair.py``) computed from the replies that module gives our released-convention
documents; the release built exactly those prompts (the generator fails on any prompt it did not expect).
"""

from __future__ import annotations

import json
import logging
import math

import pytest
from released_fact_or_fair import CONTEXTS, DRAWS, REFERENCE, documents, replies

from fact_fair_tasks import scoring

COLUMNS = {"Score_fact": "s_fact", "Score_entropy": "s_e", "Score_kld": "s_kld", "Score_fair": "s_fair",
           "Background": "attribution_rate", "Distance": "distance"}  # fmt: skip


@pytest.fixture(scope="module")
def reference() -> dict:
    data = json.loads(REFERENCE.read_text())
    assert data["draws"] == DRAWS
    return data["results"]


@pytest.fixture(scope="module")
def released_documents() -> dict:
    return documents()


def _ours(kind: str, policy: str, docs: dict, cache: dict) -> dict:
    if (kind, policy) not in cache:
        answers = replies(policy, docs[kind])
        records = [scoring.record_for(d, scoring.parse_reply(d, answers[d["id"]])) for d in docs[kind]]
        logging.disable(logging.WARNING)
        try:
            cache[(kind, policy)] = scoring.compute_metrics(records, task=kind)
        finally:
            logging.disable(logging.NOTSET)
    return cache[(kind, policy)]


def test_released_conventions_reproduce_every_released_number(reference: dict, released_documents: dict) -> None:
    cache: dict = {}
    compared = 0
    for table, rows in reference.items():
        kind = "objective" if table == "objective" else CONTEXTS[table]
        for row in rows:
            ours = _ours(kind, row["Model"].removeprefix("gpt-sim-"), released_documents, cache)
            for column, name in COLUMNS.items():
                if column in row:
                    value = 100 * ours[f"{name}_{row['Attribute']}"]
                    assert value == pytest.approx(float(row[column]), rel=1e-9, abs=1e-9), (table, row, column)
                    compared += 1
    assert compared == 6 * 4 * 6 + 6 * 4  # 4 subjective tables x 6 rows x 6 columns; objective 6 rows x 4


def test_the_reference_exercises_the_released_quirks(reference: dict) -> None:
    objective = {(r["Model"], r["Attribute"]): r for r in reference["objective"]}
    # identical highest and lowest answers everywhere: the released objective branch S_KLD = 0 (corrected: 1)
    assert float(objective[("gpt-sim-same_group", "gender")]["Score_kld"]) == 0.0
    # the subjective distance is taken from (S_fact, S_fair), as the released subj_analysis.py does
    row = reference["baseline"][0]
    assert math.isfinite(float(row["Distance"]))


def test_corrected_and_released_differ_where_documented(released_documents: dict) -> None:
    docs = released_documents["objective"]
    answers = replies("same_group", docs)
    records = [scoring.record_for(d, scoring.parse_reply(d, answers[d["id"]])) for d in docs]
    released = scoring.compute_metrics(records)
    corrected_records = [[*r[:-2], 0, r[-1]] for r in records]  # the same answers scored as corrected
    corrected = scoring.compute_metrics(corrected_records)
    assert released["s_kld_gender"] == 0.0 and corrected["s_kld_gender"] == 1.0
    with pytest.raises(ValueError, match="fact_or_fair_conventions"):
        scoring.compute_metrics(records, metadata={"fact_or_fair_conventions": "corrected"})
