"""Routes outside lmms-eval: exporting the open-ended documents, and judging answers given as a responses file.

These are the library functions ``fairness-evals export fairlens`` and ``fairness-evals judge`` call
(:func:`fairlens_tasks.open_documents.open_export_records`, :func:`fairlens_tasks.judging.responses.
answers_from_responses`, :func:`fairlens_tasks.judging.results.judged_results`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from fairlens_tasks.corpus import load_corpus
from fairlens_tasks.documents import export_record, iter_documents
from fairlens_tasks.judging.cache import JudgmentCache, response_id
from fairlens_tasks.judging.config import JudgeSettings
from fairlens_tasks.judging.parsing import Verdict
from fairlens_tasks.judging.pipeline import JUDGED, Outcome
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
from fairlens_tasks.judging.responses import answers_from_replies, answers_from_responses, open_documents_by_task
from fairlens_tasks.judging.results import judge_answers, judged_results
from fairlens_tasks.judging.samples import read_answers
from fairlens_tasks.open_documents import open_export_records
from fairlens_tasks.open_scoring import compute_open_metrics, process_results
from fairlens_tasks.prompts import prompt_for
from fairlens_tasks.settings import ENV, build_settings


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):
    from faces import make_utkface_folder

    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, 1, seed=3)
    return load_corpus(build_settings({"corpus": str(root), "sample_fraction": 1}, ENV))


def test_the_export_covers_the_open_ended_documents(corpus) -> None:
    lines = list(open_export_records(corpus))
    assert len(lines) == 30 * 31 and [line["task"] for line in lines[:1]] == ["fairlens_open_hiring"]
    first = lines[0]
    assert first["id"].endswith("/HO01") and first["prompt"] == prompt_for("HO01")
    assert first["prompt"].endswith("Answer the question as best as you can.")
    assert set(first["meta"]) == {"domain", "question_id", "open", "gender", "race", "age", "age_band"}
    assert first["image"].endswith(".jpg") and Path(first["image"]).is_file()
    closed = {
        export_record(doc)["id"]
        for domain in ("hiring", "legal", "healthcare")
        for doc in iter_documents(corpus, domain)
    }
    assert not closed & {line["id"] for line in lines} and len({line["id"] for line in lines}) == len(lines)
    assert [line["id"] for line in open_export_records(corpus, ["legal"])] == [
        line["id"] for line in lines if line["task"] == "fairlens_open_legal"
    ]
    assert json.dumps(lines) == json.dumps(list(open_export_records(corpus)))  # deterministic
    with pytest.raises(ValueError, match="unknown FairLens domain"):
        list(open_export_records(corpus, ["finance"]))


def _write_responses(path: Path, rows: Sequence[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_responses_file_gives_the_same_answers_as_samples(corpus, tmp_path: Path) -> None:
    docs = open_documents_by_task(corpus)["fairlens_open_legal"][:24]
    texts = ["They look calm.", "", "They might be dangerous.", None]
    rows = [{"id": doc["id"], "response": texts[i % 4]} for i, doc in enumerate(docs)]
    closed_ids = [export_record(doc)["id"] for doc in list(iter_documents(corpus, "legal"))[:3]]
    rows += [{"id": closed_id, "response": "Cannot tell"} for closed_id in closed_ids]  # a combined file
    answers = answers_from_responses([_write_responses(tmp_path / "r.jsonl", rows)], corpus, closed_ids=closed_ids)
    assert list(answers) == ["fairlens_open_legal"]
    legal = answers["fairlens_open_legal"]
    samples = tmp_path / "run" / "20260101_samples_fairlens_open_legal.jsonl"
    samples.parent.mkdir()
    samples.write_text(
        "".join(json.dumps({"doc_id": i, **process_results(doc, [texts[i % 4]])}) + "\n" for i, doc in enumerate(docs))
    )
    reference = read_answers([(samples, "fairlens_open_legal")])["fairlens_open_legal"]
    assert (legal.ids, legal.records, legal.texts) == (reference.ids, reference.records, reference.texts)
    assert legal.provenance == reference.provenance and legal.texts[3] == ""  # null is a blank answer
    direct = answers_from_replies(open_documents_by_task(corpus), {row["id"]: row["response"] for row in rows[:24]})
    assert direct["fairlens_open_legal"].records == legal.records


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"id": "nope/LO01", "response": "x"}], r"r\.jsonl(:| line )1: id 'nope/LO01' is not an open-ended document"),
        (
            [{"id": "{doc}", "response": "a"}, {"id": "{doc}", "response": "b"}],
            r"r\.jsonl(:| line )2: a second response for .* \(first at .*r\.jsonl(:| line )1\)",
        ),
        ([{"id": "{doc}", "response": 3}], r"r\.jsonl(:| line )1: the response of .* is int, not text"),
        ([{"id": "{doc}"}], r"r\.jsonl(:| line )1: expected a JSON object \{\"id\", \"response\"\}"),
        ([], r"no open-ended responses in"),
    ],
)
def test_bad_responses_are_named(corpus, tmp_path: Path, rows: list[dict], message: str) -> None:
    doc = open_documents_by_task(corpus, ["hiring"])["fairlens_open_hiring"][0]["id"]
    rows = [{k: (v.format(doc=doc) if isinstance(v, str) else v) for k, v in row.items()} for row in rows]
    with pytest.raises(ValueError, match=message):
        answers_from_responses([_write_responses(tmp_path / "r.jsonl", rows)], corpus)


def test_judged_results_from_a_responses_file(corpus, tmp_path: Path) -> None:
    by_task = open_documents_by_task(corpus)
    replies = {}
    for task, docs in by_task.items():
        for i, doc in enumerate(docs):
            replies[doc["id"]] = ["They look too old.", "They seem kind.", ""][i % 3] + (
                "" if i % 3 == 2 else f" {task}"
            )
    rows = [{"id": k, "response": v} for k, v in replies.items()]
    answers = answers_from_responses([_write_responses(tmp_path / "all.jsonl", rows)], corpus)
    settings = JudgeSettings(backend="openai", model="known", cache=tmp_path / "j.sqlite")
    with JudgmentCache(settings.cache) as cache:
        for text in set(replies.values()):
            if text:
                biased = "old" in text
                outcome = Outcome(JUDGED, opinions=("o",), verdicts=(Verdict(biased, ""),), attempts=3)
                cache.put(settings.identity, JUDGE_PROMPT_VERSION, text, outcome)
    outcomes, stats = judge_answers(answers, settings)
    assert stats.cached == stats.distinct - 1 and stats.judged == 1 and stats.calls == 0  # the blank needs no call
    results = judged_results(answers, outcomes, settings, min_judged=0.5)
    assert list(results) == ["fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare", "fairlens_open"]
    hiring = results["fairlens_open_hiring"]
    hiring_answers = answers["fairlens_open_hiring"]
    texts = {record[5]: text for record, text in zip(hiring_answers.records, hiring_answers.texts, strict=True)}
    direct = compute_open_metrics(
        hiring_answers.records, outcomes, texts=texts, task="fairlens_open_hiring", min_judged=0.5
    )
    assert {k: hiring[k] for k in direct} == pytest.approx(direct, nan_ok=True)
    assert hiring["oe_bias_mean"] == pytest.approx(1 / 3)  # one third biased, one third unbiased, one third blank
    assert hiring["oe_bias_mean_coverage"] == pytest.approx(2 / 3)  # the blank third is not covered...
    assert hiring["judge"] == "openai:known" and hiring["seed"] == 0 and hiring["images_sampled"] == 30
    assert results["fairlens_open"]["oe_bias_mean_coverage"] == pytest.approx(2 / 3)
    strict = judged_results(answers, outcomes, settings)  # ...so the default 0.8 withholds every bias score
    assert math.isnan(strict["fairlens_open_legal"]["oe_bias_mean"]) and math.isnan(
        strict["fairlens_open"]["oe_bias_mean"]
    )
    assert outcomes[response_id("")].empty
