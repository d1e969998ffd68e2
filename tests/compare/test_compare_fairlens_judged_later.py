"""``fairness-evals compare`` on FairLens open-ended runs made without a judge and judged afterwards with
``fairness-evals judge --out FILE``: the judge output is the run.

The answers are lmms-eval ``--log_samples`` files written by the task's own ``process_results`` (and, for the route
outside lmms-eval, a responses file answering the exported documents); they are judged by ``fairness-evals judge``
against a loopback OpenAI-compatible server (:class:`openai_server.OpenAIServer`) whose reply follows the judge's
two prompts: each sentence of an answer is one opinion, and an opinion is biased when it mentions a stereotype. So
an answer's score is known from its text, and ``compare`` must find it again from the judge output alone (the files
it recorded and the judgement cache it used).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from faces import make_utkface_folder
from openai_server import OpenAIServer, keyword_judge, running

from fairlens_tasks import open_scoring
from fairlens_tasks.open_documents import open_documents
from fairlens_tasks.settings import ENV, build_settings
from fairness_evals.commands.main import main

TASK = "fairlens_open_hiring"
FAIR = "seems capable for the role"
BIASED = "would be held back by a stereotype about people like them"


fake_judge = keyword_judge("stereotype")  # each sentence an opinion, biased when it mentions a stereotype


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("FAIRLENS_", "OPENAI_")):
            monkeypatch.delenv(name, raising=False)
    open_scoring._MEMO.clear()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two images per stratum: 60 images, enough for the headline intervals (30 images, 10 with a biased answer)."""
    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, 2, seed=5)
    return root


@pytest.fixture(scope="module")
def docs(corpus: Path) -> list[dict]:
    return open_documents(build_settings({"corpus": str(corpus), "sample_fraction": 1}, ENV), "hiring")


@pytest.fixture(scope="module")
def judges() -> Iterator[dict[str, OpenAIServer]]:
    with (
        running(OpenAIServer(fake_judge, model_name="judge-a")) as a,
        running(OpenAIServer(fake_judge, model_name="judge-b")) as b,
    ):
        yield {"judge-a": a, "judge-b": b}


def answers(docs: list[dict], biased_share: float, seed: int) -> list[str]:
    """One answer per document: biased with probability ``biased_share`` (seeded), else fair."""
    rng = np.random.default_rng(seed)
    return [
        f"The person in image {doc['image_unit']} {BIASED if rng.random() < biased_share else FAIR}." for doc in docs
    ]


def write_samples(folder: Path, docs: list[dict], texts: list[str]) -> Path:
    """An lmms-eval ``--log_samples`` file of the hiring task, as the task logs it (no judge during the run)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"20260101_000000_samples_{TASK}.jsonl"
    lines = []
    for i, (doc, text) in enumerate(zip(docs, texts, strict=True)):
        lines.append({"doc_id": i, "target": "", "filtered_resps": text, **open_scoring.process_results(doc, [text])})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return folder


def judge(
    inputs: list[Path], out: Path, server: OpenAIServer, cache: Path, *extra: str, capsys: pytest.CaptureFixture
) -> dict:
    argv = [
        "judge", *map(str, inputs), "--judge", f"openai:{server.model_name}", "--base-url", server.base_url,
        "--api-key", "k", "--cache", str(cache), "--out", str(out), *extra,
    ]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    return json.loads(out.read_text())


def compare(*args: str | Path, capsys: pytest.CaptureFixture) -> tuple[int, dict, str, str]:
    out_json = Path(str(args[0])).parent / "compare.json"
    out_json.unlink(missing_ok=True)
    status = main(["compare", *map(str, args), "--json", str(out_json)])
    captured = capsys.readouterr()
    data = json.loads(out_json.read_text()) if status == 0 else {}
    return status, data, captured.out, captured.err


def rows(data: dict) -> dict[str, dict]:
    return {row["metric"]: row for row in data["comparisons"][0]["rows"] if row["task"] == TASK}


@pytest.fixture
def judged_pair(tmp_path, docs, judges, capsys) -> tuple[Path, Path]:
    """Model A (10% biased answers) and model B (50%), each run without a judge and judged afterwards into its own
    cache."""
    a = write_samples(tmp_path / "run-a" / "model", docs, answers(docs, 0.1, seed=1))
    b = write_samples(tmp_path / "run-b" / "model", docs, answers(docs, 0.5, seed=2))
    judge([a], tmp_path / "judgedA.json", judges["judge-a"], tmp_path / "cache-a.sqlite", capsys=capsys)
    judge([b], tmp_path / "judgedB.json", judges["judge-a"], tmp_path / "cache-b.sqlite", capsys=capsys)
    return tmp_path / "judgedA.json", tmp_path / "judgedB.json"


def test_the_judge_output_records_what_it_judged_and_where_the_judgements_are(judged_pair) -> None:
    output = json.loads(judged_pair[0].read_text())
    recorded = output["score_inputs"]
    assert recorded["benchmark"] == "fairlens_judge"
    (entry,) = recorded["responses"]
    assert entry["path"].endswith(f"_samples_{TASK}.jsonl") and entry["task"] == TASK and len(entry["sha256"]) == 64
    assert recorded["settings"] == {"metadata": {}, "cache": str((judged_pair[0].parent / "cache-a.sqlite").resolve())}
    hiring = output[TASK]
    assert hiring["judge"] == "openai:judge-a" and hiring["judged"] == hiring["answers"] == 540


def test_a_planted_difference_between_runs_judged_later_is_detected(judged_pair, capsys) -> None:
    a, b = judged_pair
    status, data, out, _ = compare(a, b, capsys=capsys)
    assert status == 0, out
    found = rows(data)
    assert set(found) == {"oe_bias_mean", "oe_flag_rate"}
    for row in found.values():
        # each biased answer scores 1 (one opinion, biased), each fair one 0: the difference is near 0.5 - 0.1
        assert row["verdict"] == "A fairer" and row["ci_low"] <= 0.4 <= row["ci_high"], row
        assert row["difference"] == pytest.approx(row["b"] - row["a"])
        assert row["units"] == 60 and row["unit"] == "images" and row["method"] == "paired bootstrap, basic"
    assert data["baseline"] == "judgedA" and "| fairlens_open_hiring | oe_bias_mean | lower is fairer |" in out


def test_the_same_answers_judged_later_on_both_sides_differ_by_exactly_zero(tmp_path, docs, judges, capsys) -> None:
    texts = answers(docs, 0.3, seed=3)
    a = write_samples(tmp_path / "run-a" / "model", docs, texts)
    b = write_samples(tmp_path / "run-b" / "model", docs, texts)
    judge([a], tmp_path / "a.json", judges["judge-a"], tmp_path / "cache-a.sqlite", capsys=capsys)
    judge([b], tmp_path / "b.json", judges["judge-a"], tmp_path / "cache-b.sqlite", capsys=capsys)
    status, data, _, _ = compare(tmp_path / "a.json", tmp_path / "b.json", "--metrics", "*", capsys=capsys)
    assert status == 0
    found = rows(data)
    assert len(found) > 20
    for row in found.values():
        assert (row["difference"], row["p_value"], row["verdict"]) == (0.0, 1.0, "no detectable difference"), row


def test_a_run_judged_later_by_another_judge_is_refused(tmp_path, docs, judges, capsys) -> None:
    texts = answers(docs, 0.3, seed=3)
    a = write_samples(tmp_path / "run-a" / "model", docs, texts)
    judge([a], tmp_path / "a.json", judges["judge-a"], tmp_path / "cache.sqlite", capsys=capsys)
    judge([a], tmp_path / "b.json", judges["judge-b"], tmp_path / "cache.sqlite", capsys=capsys)
    status, _, _, err = compare(tmp_path / "a.json", tmp_path / "b.json", capsys=capsys)
    assert status == 2
    assert (
        "judge differs (openai:judge-a in the baseline, openai:judge-b in the other run)" in err and "--unpaired" in err
    )


def test_missing_judgements_are_not_comparable_with_the_reason(judged_pair, capsys) -> None:
    a, b = judged_pair
    # another cache, holding none of B's own answers (A's cache): B's judgements are missing there
    status, data, out, _ = compare(a, b, "--judge-cache", a.parent / "cache-a.sqlite", capsys=capsys)
    assert status == 0
    for row in rows(data).values():
        assert row["verdict"] == "not comparable" and row["reason"].startswith("judgedB: "), row
        assert "have no judgement in the judge cache" in row["reason"] and "--judge-cache" in row["reason"]
    assert "not comparable: judgedB: " in out
    # the recorded cache is gone
    (a.parent / "cache-b.sqlite").rename(a.parent / "moved.sqlite")
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0
    for row in rows(data).values():
        assert row["verdict"] == "not comparable" and "no judge cache at" in row["reason"], row
        assert "the cache fairness-evals judge recorded" in row["reason"]
    assert not (a.parent / "cache-b.sqlite").exists()  # compare reads a cache, never creates one


def test_the_judge_cache_option_is_where_the_judgements_are_read(judged_pair, judges, monkeypatch, capsys) -> None:
    a, b = judged_pair
    status, before, _, _ = compare(a, b, capsys=capsys)
    assert status == 0 and all(r["verdict"] == "A fairer" for r in rows(before).values())
    # both runs' judgements in one cache elsewhere (the answers of both judged into it), the recorded caches gone
    merged = a.parent / "elsewhere" / "judgments.sqlite"
    for run in ("run-a", "run-b"):
        judge([a.parent / run], a.parent / f"{run}.json", judges["judge-a"], merged, capsys=capsys)
    for name in ("cache-a.sqlite", "cache-b.sqlite"):
        (a.parent / name).unlink()
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0 and all("no judge cache at" in r["reason"] for r in rows(data).values())
    status, data, _, _ = compare(a, b, "--judge-cache", merged, capsys=capsys)
    assert status == 0 and data["comparisons"] == before["comparisons"]
    # FAIRLENS_JUDGE_CACHE stands in for a recorded cache that is gone; --judge-cache overrides it
    monkeypatch.setenv("FAIRLENS_JUDGE_CACHE", str(merged))
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0 and data["comparisons"] == before["comparisons"]
    status, data, _, _ = compare(a, b, "--judge-cache", a.parent / "run-a.json", capsys=capsys)
    assert status == 2  # not a cache file: named
    missing = a.parent / "nowhere.sqlite"
    status, _, _, err = compare(a, b, "--judge-cache", missing, capsys=capsys)
    assert status == 2 and f"--judge-cache {missing}: no such file" in err and not missing.exists()


def test_a_changed_answers_file_and_an_old_judge_output_are_refused_naming_them(judged_pair, capsys) -> None:
    a, b = judged_pair
    samples = next((b.parent / "run-b" / "model").glob("*_samples_*.jsonl"))
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join(lines[:-1]) + "\n")
    status, _, _, err = compare(a, b, capsys=capsys)
    assert status == 2 and str(samples) in err and "no longer matches" in err
    old = b.parent / "old.json"
    data = json.loads(a.read_text())
    del data["score_inputs"]
    old.write_text(json.dumps(data))
    status, _, _, err = compare(a, old, capsys=capsys)
    assert status == 2 and "judge output that does not record the answers it judged" in err


def test_responses_files_judged_later_are_compared_from_the_recorded_corpus(tmp_path, corpus, docs, judges, capsys):
    """The route outside lmms-eval: responses files answering the exported documents, judged with the corpus options;
    compare reads the answers again from the responses and the recorded corpus, and pairs them with a samples run."""
    texts = answers(docs, 0.3, seed=4)
    responses = tmp_path / "answers.jsonl"
    responses.write_text(
        "".join(json.dumps({"id": d["id"], "response": t}) + "\n" for d, t in zip(docs, texts, strict=True))
    )
    corpus_options = ["--corpus", str(corpus), "--sample-fraction", "1", "--domain", "hiring"]
    out = judge([responses], tmp_path / "r.json", judges["judge-a"], tmp_path / "c.sqlite", *corpus_options,
                capsys=capsys)  # fmt: skip
    assert out["score_inputs"]["settings"]["corpus"] == str(corpus.resolve())
    samples = write_samples(tmp_path / "run" / "model", docs, texts)
    judge([samples], tmp_path / "s.json", judges["judge-a"], tmp_path / "c.sqlite", capsys=capsys)
    status, data, _, _ = compare(tmp_path / "r.json", tmp_path / "s.json", "--metrics", "*", capsys=capsys)
    assert status == 0
    for row in rows(data).values():
        assert (row["difference"], row["verdict"]) == (0.0, "no detectable difference"), row


def test_a_run_judged_later_pairs_with_a_run_judged_during_the_harness_run(tmp_path, docs, judges, monkeypatch, capsys):
    """A harness run judged in its aggregation (results with the judge's provenance, judgements in
    FAIRLENS_JUDGE_CACHE) against the judge output of the same answers, and of other answers."""
    from tests.compare.synthetic import _results_file

    cache = tmp_path / "run-cache.sqlite"
    harness = write_samples(tmp_path / "harness" / "model-h", docs, answers(docs, 0.1, seed=1))
    during = judge([harness], tmp_path / "during.json", judges["judge-a"], cache, capsys=capsys)
    # the metrics the harness run reports are the judge's (one code path: compute_open_metrics)
    _results_file(harness, "model-h", {TASK: during[TASK]}, {})
    same = write_samples(tmp_path / "same" / "model", docs, answers(docs, 0.1, seed=1))
    judge([same], tmp_path / "same.json", judges["judge-a"], tmp_path / "later.sqlite", capsys=capsys)
    other = write_samples(tmp_path / "other" / "model", docs, answers(docs, 0.5, seed=2))
    judge([other], tmp_path / "other.json", judges["judge-a"], tmp_path / "later.sqlite", capsys=capsys)
    monkeypatch.setenv("FAIRLENS_JUDGE_CACHE", str(cache))  # the harness run's cache
    status, data, _, _ = compare(harness, tmp_path / "same.json", tmp_path / "other.json", capsys=capsys)
    assert status == 0
    same_rows, other_rows = ({r["metric"]: r for r in c["rows"] if r["task"] == TASK} for c in data["comparisons"])
    assert {r["verdict"] for r in same_rows.values()} == {"no detectable difference"}
    assert all(r["difference"] == 0.0 for r in same_rows.values())
    assert {r["verdict"] for r in other_rows.values()} == {"A fairer"}
