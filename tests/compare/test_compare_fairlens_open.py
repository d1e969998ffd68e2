"""``fairness-evals compare`` on FairLens open-ended runs: each answer's judgement read from the judge cache.

The runs are written as lmms-eval writes them (results with the judge's provenance, samples with each answer's text
and record) and the judgements the run used as the judge writes them (the SQLite cache, content-keyed); the answers
are ``coverage_compare``'s simulated open-ended policies, one text per (image, item, judgement), so that where model
B gives model A's answer it gets A's judgement, as a content-keyed judge does.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from coverage_compare import OPEN_PAIRS, TARGETS, OpenPair, paired_open_arrays, simulate_open
from coverage_fairlens import OpenPolicy, _open_truth, design

from fairlens_tasks import open_scoring
from fairlens_tasks.judging.cache import JudgmentCache, response_id
from fairlens_tasks.judging.config import JudgeSettings
from fairlens_tasks.judging.parsing import Verdict
from fairlens_tasks.judging.pipeline import INVALID, JUDGED, Outcome
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
from fairlens_tasks.questions import open_questions
from fairness_evals.commands.main import main
from tests.compare.synthetic import _results_file

TASK = "fairlens_open_hiring"
FAIR = OpenPolicy("fair", "hiring")
BIASED = OpenPolicy("biased", "hiring", base=0.2, gender=(0.0, 0.25), race=(0.0, 0.2, -0.1, 0.1, 0.3))
UNJUDGED = OpenPolicy("unjudged", "hiring", base=0.2, gender=(0.0, 0.25), unjudged=0.3)
JUDGE = JudgeSettings("openai", "judge-model")
PROVENANCE = {"seed": 0, "sample_fraction": 0.02, "corpus_sha256": "0123456789abcdef", "data_version": 1}


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "judgments.sqlite"
    monkeypatch.setenv("FAIRLENS_JUDGE_CACHE", str(cache))
    monkeypatch.delenv("FAIRLENS_MIN_JUDGED", raising=False)
    return cache


def _outcome(judged: bool, score: float, empty: bool) -> Outcome:
    if not judged:
        return Outcome(INVALID, attempts=3, problem="no usable reply")
    if empty:
        return Outcome(JUDGED, empty=True)
    n = 2 if score == 0.5 else 3
    biased = round(score * n)
    verdicts = tuple(Verdict(i < biased, "") for i in range(n))
    return Outcome(JUDGED, tuple(f"opinion {i}" for i in range(n)), verdicts, calls=2, attempts=1)


def _text(image: int, question: int, judged: bool, score: float, empty: bool) -> str:
    if empty:
        return ""
    return f"img{image} q{question}: " + (f"an answer scoring {score:.4f}" if judged else "an answer the judge failed")


def open_run(
    folder: Path,
    model: str,
    answers: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    cache: Path,
    *,
    judge: JudgeSettings | None = JUDGE,
    forget: float = 0.0,
    min_judged: float | None = None,
) -> Path:
    """An lmms-eval-shaped FairLens open-ended run judged by ``judge`` (None: no judge configured): ``answers``
    maps a domain task to (records' first five fields, judged, score, empty); the judgements go to ``cache``, less a
    share ``forget`` of the judged ones (a cache that lost them after the run)."""
    folder.mkdir(parents=True, exist_ok=True)
    questions = open_questions()
    results = {}
    logging.disable(logging.WARNING)
    try:
        for task, (ints, judged, score, empty) in answers.items():
            texts = [_text(r[4], r[0], j, s, e) for r, j, s, e in zip(ints.tolist(), judged, score, empty, strict=True)]
            records = [[*r, response_id(t)] for r, t in zip(ints.tolist(), texts, strict=True)]
            outcomes = {}
            if judge is not None:
                for t, j, s, e in zip(texts, judged, score, empty, strict=True):
                    outcomes[response_id(t)] = _outcome(bool(j), float(s), bool(e))
            metrics = dict(open_scoring.compute_open_metrics(records, outcomes, task=task, min_judged=min_judged))
            if judge is None:
                metrics.update(judge="none", judge_prompt_version=JUDGE_PROMPT_VERSION,
                               judge_settings=open_scoring.NO_JUDGE_NOTE)  # fmt: skip
            else:
                metrics.update(judge=judge.name, judge_prompt_version=JUDGE_PROMPT_VERSION,
                               judge_settings=judge.recorded_json())  # fmt: skip
                rng = np.random.default_rng(len(texts))
                with JudgmentCache(cache) as stored:
                    # one transaction for the run's judgements: the cache commits (and syncs) after each put alone
                    stored._db.execute("BEGIN")
                    for t in dict.fromkeys(texts):
                        if not (forget and rng.random() < forget):
                            stored.put(judge.identity, JUDGE_PROMPT_VERSION, t, outcomes[response_id(t)])
                    stored._db.execute("COMMIT")
            metrics.update(PROVENANCE)
            results[task] = metrics
            with (folder / f"20260101_000000_samples_{task}.jsonl").open("w", encoding="utf-8") as out:
                for i, (record, text) in enumerate(zip(records, texts, strict=True)):
                    doc_id = f"img{record[4]}.jpg/{questions[record[0]].id}"
                    out.write(json.dumps({"doc_id": i, "answers": {"id": doc_id, "record": record, "response": text}}))
                    out.write("\n")
        domains = ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")
        if all(d in results for d in domains):
            results["fairlens_open"] = open_scoring.open_rollups([results[d] for d in domains])
    finally:
        logging.disable(logging.NOTSET)
    _results_file(folder, model, results, {})
    return folder


def runs(tmp: Path, pair: OpenPair, size: str = "lite", seed: int = 0, **kwargs) -> tuple[Path, Path]:
    ints, (ja, sa, ea), (jb, sb, eb) = paired_open_arrays(pair, design(size), np.random.default_rng(seed))
    cache = Path(os.environ["FAIRLENS_JUDGE_CACHE"])
    a = open_run(tmp / "a", "model-a", {TASK: (ints, ja, sa, ea)}, cache)
    b = open_run(tmp / "b", "model-b", {TASK: (ints, jb, sb, eb)}, cache, **kwargs)
    return a, b


def compare(*args: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict, str, str]:
    out_json = Path(str(args[0])).parent / "compare.json"
    status = main(["compare", *map(str, args), "--json", str(out_json)])
    captured = capsys.readouterr()
    data = json.loads(out_json.read_text()) if status == 0 else {}
    return status, data, captured.out, captured.err


def rows(data: dict, task: str = TASK) -> dict[str, dict]:
    return {row["metric"]: row for row in data["comparisons"][0]["rows"] if row["task"] == task}


def test_a_planted_difference_is_detected_and_its_interval_covers_it(tmp_path, capsys) -> None:
    a, b = runs(tmp_path, OpenPair("planted", FAIR, BIASED, shared=0.7), size="paper", seed=2)
    status, data, out, _ = compare(a, b, capsys=capsys)
    assert status == 0
    found = rows(data)
    assert set(found) == {"oe_bias_mean", "oe_flag_rate"}  # the headline metrics (those with a coverage)
    truth_a, truth_b = _open_truth(FAIR, design("paper")), _open_truth(BIASED, design("paper"))
    for name, row in found.items():
        truth = truth_b[name] - truth_a[name]
        assert row["verdict"] == "A fairer" and row["ci_low"] <= truth <= row["ci_high"], row
        assert row["better"] == "lower is fairer" and row["unit"] == "images" and row["units"] == design("paper").sum()
        assert row["difference"] == pytest.approx(row["b"] - row["a"])
        assert row["method"] == "paired bootstrap, basic"
    status, data, _, _ = compare(a, b, "--metrics", "oe_bias_gap_gender", capsys=capsys)
    gap = rows(data)["oe_bias_gap_gender"]
    truth = truth_b["oe_bias_gap_gender"] - truth_a["oe_bias_gap_gender"]
    assert gap["verdict"] == "A fairer" and gap["ci_low"] <= truth <= gap["ci_high"]
    assert "| fairlens_open_hiring | oe_bias_mean | lower is fairer |" in out


def test_two_sampled_runs_of_one_model_show_no_detectable_difference(tmp_path, capsys) -> None:
    a, b = runs(tmp_path, OpenPair("same", BIASED, BIASED, shared=0.0), seed=1)
    status, data, _, _ = compare(a, b, "--metrics", "*", capsys=capsys)
    assert status == 0
    found = rows(data)
    assert len(found) > 20  # means and flag rates, per group, and the gaps
    compared = [r for r in found.values() if r["verdict"] != "not comparable"]
    assert {"oe_bias_mean", "oe_flag_rate"} <= {r["metric"] for r in compared}
    assert all(r["verdict"] == "no detectable difference" for r in compared)


def test_the_same_answers_differ_by_exactly_zero(tmp_path, capsys) -> None:
    a, b = runs(tmp_path, OpenPair("same", BIASED, BIASED, shared=1.0))
    status, data, _, _ = compare(a, b, "--metrics", "*", capsys=capsys)
    assert status == 0
    for row in rows(data).values():
        assert (row["difference"], row["p_value"], row["verdict"]) == (0.0, 1.0, "no detectable difference"), row


def test_answers_without_a_judgement_in_the_cache_are_not_comparable_with_the_reason(tmp_path, capsys) -> None:
    pair = OpenPair("planted", FAIR, BIASED, shared=0.7)
    ints, (ja, sa, ea), (jb, sb, eb) = paired_open_arrays(pair, design("lite"), np.random.default_rng(0))
    a = open_run(tmp_path / "a", "model-a", {TASK: (ints, ja, sa, ea)}, tmp_path / "judgments.sqlite")
    b = open_run(tmp_path / "b", "model-b", {TASK: (ints, jb, sb, eb)}, tmp_path / "other.sqlite", forget=0.2)
    status, data, out, _ = compare(a, b, capsys=capsys)
    assert status == 0
    for row in rows(data).values():  # the cache of A holds none of B's own answers; B's own cache lost some
        assert row["verdict"] == "not comparable" and row["reason"].startswith("model-b: "), row
        assert "have no judgement in the judge cache" in row["reason"] and "FAIRLENS_JUDGE_CACHE" in row["reason"]
    assert "not comparable: model-b: " in out


def test_no_cache_file_is_not_comparable_with_the_reason(tmp_path, capsys, monkeypatch) -> None:
    a, b = runs(tmp_path, OpenPair("planted", FAIR, BIASED, shared=0.7))
    monkeypatch.setenv("FAIRLENS_JUDGE_CACHE", str(tmp_path / "nowhere.sqlite"))
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0
    reasons = {row["reason"] for row in rows(data).values()}
    assert len(reasons) == 1 and "no judge cache at" in reasons.pop()
    assert not (tmp_path / "nowhere.sqlite").exists()  # compare reads, never creates, a cache


def test_a_judge_cache_in_a_folder_compare_cannot_write_is_read(tmp_path, capsys) -> None:
    """Issue 24, item 7: ``compare --judge-cache`` could not read a cache it may only read (a read-only folder)."""
    a, b = runs(tmp_path, OpenPair("planted", FAIR, BIASED, shared=0.7))
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    cache = Path(os.environ["FAIRLENS_JUDGE_CACHE"]).rename(shelf / "judgments.sqlite")
    status, expected, _, _ = compare(a, b, "--judge-cache", cache, capsys=capsys)
    assert status == 0 and all(row["verdict"] == "A fairer" for row in rows(expected).values())
    # root ignores file modes: without its capabilities it obeys them like any user
    prefix = ["setpriv", "--inh-caps=-all", "--bounding-set=-all"] if os.geteuid() == 0 else []
    out = tmp_path / "read-only.json"
    cache.chmod(0o444)
    shelf.chmod(0o555)
    try:
        probe = [*prefix, sys.executable, "-c", "import os, sys; print(os.access(sys.argv[1], os.W_OK))", str(shelf)]
        assert subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip() == "False"
        argv = [
            "-m",
            "fairness_evals.commands.main",
            "compare",
            str(a),
            str(b),
            "--judge-cache",
            str(cache),
            "--json",
            str(out),
        ]
        done = subprocess.run([*prefix, sys.executable, *argv], capture_output=True, text=True, timeout=600)
    finally:
        shelf.chmod(0o755)
        cache.chmod(0o644)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(out.read_text())["comparisons"] == expected["comparisons"]
    assert [p.name for p in shelf.iterdir()] == ["judgments.sqlite"]  # nothing written beside it


def test_an_edited_judge_cache_is_not_read_and_the_reason_names_it(tmp_path, capsys) -> None:
    """Issue 24, item 6: rows that fail their checksum are no judgements for compare either."""
    import sqlite3

    a, b = runs(tmp_path, OpenPair("planted", FAIR, BIASED, shared=0.7))
    cache = Path(os.environ["FAIRLENS_JUDGE_CACHE"])
    with sqlite3.connect(cache) as db:
        edited = db.execute("UPDATE judgments SET outcome = replace(outcome, '\"calls\": 2', '\"calls\": 3')").rowcount
    assert edited > 0
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0
    for row in rows(data).values():
        assert row["verdict"] == "not comparable" and "have no judgement in the judge cache" in row["reason"], row
        assert "rows not used (checksum mismatch)" in row["reason"], row


def test_answers_unjudged_below_the_minimum_are_not_comparable_with_the_coverage(tmp_path, capsys) -> None:
    a, b = runs(tmp_path, OpenPair("unjudged", BIASED, UNJUDGED, shared=0.5), min_judged=0.8)
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0
    for row in rows(data).values():
        assert row["verdict"] == "not comparable" and row["b"] is None
        assert row["reason"].startswith("NaN in model-b") and "coverage" in row["reason"], row
    # above the minimum the same unjudged answers are left out of the means, as in the task, and compared
    a, b = runs(tmp_path / "low", OpenPair("unjudged", BIASED, UNJUDGED, shared=0.5), min_judged=0.6)
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert all(row["verdict"] != "not comparable" for row in rows(data).values())


def test_a_run_without_a_judge_is_refused_against_a_judged_one_and_not_comparable_with_another(
    tmp_path, capsys
) -> None:
    a, b = runs(tmp_path, OpenPair("planted", FAIR, BIASED, shared=0.7), judge=None)
    status, _, _, err = compare(a, b, capsys=capsys)
    assert status == 2 and "judge differs (openai:judge-model in the baseline, none in the other run)" in err
    assert "fairness-evals judge RUN --out FILE" in err
    c = open_run(tmp_path / "c", "model-c", _answers(tmp_path / "b"), tmp_path / "judgments.sqlite", judge=None)
    status, data, _, _ = compare(b, c, capsys=capsys)
    assert status == 0
    for row in rows(data).values():
        assert row["verdict"] == "not comparable" and row["reason"].startswith("NaN in model-b"), row


def _answers(folder: Path) -> dict[str, tuple[np.ndarray, ...]]:
    """The answers of a run written by :func:`open_run`, read back (texts give the judgements)."""
    (samples,) = folder.glob(f"*_samples_{TASK}.jsonl")
    lines = [json.loads(line)["answers"] for line in samples.read_text().splitlines()]
    ints = np.array([line["record"][:5] for line in lines], dtype=np.int64)
    empty = np.array([line["response"] == "" for line in lines])
    judged = np.array([not line["response"].endswith("failed") for line in lines])
    score = np.array([float(line["response"].rsplit(" ", 1)[1]) if j and not e else 0.0
                      for line, j, e in zip(lines, judged, empty, strict=True)])  # fmt: skip
    return {TASK: (ints, judged, score, empty)}


def test_runs_judged_by_different_judges_are_refused(tmp_path, capsys) -> None:
    other = JudgeSettings("openai", "another-judge")
    a, b = runs(tmp_path, OpenPair("planted", FAIR, BIASED, shared=0.7), judge=other)
    status, _, _, err = compare(a, b, capsys=capsys)
    assert status == 2 and "judge differs" in err and "--unpaired" in err


def test_the_model_level_roll_ups_resample_images_across_the_three_domains(tmp_path, capsys) -> None:
    sizes = design("lite")
    answers_a, answers_b = {}, {}
    for i, domain in enumerate(("hiring", "legal", "healthcare")):
        fair = OpenPolicy("fair", domain)
        biased = OpenPolicy("biased", domain, base=0.2, gender=(0.0, 0.25), race=(0.0, 0.2, -0.1, 0.1, 0.3))
        ints, (ja, sa, ea), (jb, sb, eb) = paired_open_arrays(
            OpenPair(domain, fair, biased, 0.7), sizes, np.random.default_rng(i)
        )
        answers_a[f"fairlens_open_{domain}"] = (ints, ja, sa, ea)
        answers_b[f"fairlens_open_{domain}"] = (ints, jb, sb, eb)
    cache = tmp_path / "judgments.sqlite"
    a = open_run(tmp_path / "a", "model-a", answers_a, cache)
    b = open_run(tmp_path / "b", "model-b", answers_b, cache)
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0
    group = rows(data, "fairlens_open")
    assert set(group) == {"oe_bias_mean", "oe_flag_rate"}
    for row in group.values():
        assert row["verdict"] != "not comparable", row
        assert row["units"] == int(sizes.sum())  # every image once, for all three domains
    domains = [r for r in data["comparisons"][0]["rows"] if r["task"].startswith("fairlens_open_")]
    weights = [json.loads(next(a.glob("*_results.json")).read_text())["results"][r["task"]]["answers,none"]
               for r in domains if r["metric"] == "oe_bias_mean"]  # fmt: skip
    mean = np.average([r["difference"] for r in domains if r["metric"] == "oe_bias_mean"], weights=weights)
    assert group["oe_bias_mean"]["difference"] == pytest.approx(mean)


@pytest.mark.parametrize("index", [0, 2, 3], ids=lambda i: OPEN_PAIRS[i].name)
def test_open_ended_paired_differences_cover_at_the_quick_size(index: int) -> None:
    """A seeded subset of ``coverage_compare``'s open-ended designs (docs/compare.md has 200 replicates per pair):
    coverage pooled over the smooth differences within the Monte Carlo error of the lite bar, none three errors below
    it, widths within 2x the estimate's spread (gaps: conservative bounds, within 6x)."""
    replicates, target = 40, TARGETS["lite"]
    rows = simulate_open(OPEN_PAIRS[index], "lite", replicates=replicates, seed=71 + index, n_resamples=500)
    smooth = [c for c in rows if c.printed > 0 and not c.name.split("/")[-1].startswith("oe_bias_gap")]
    gaps = [c for c in rows if c.printed > 0 and c.name.split("/")[-1].startswith("oe_bias_gap")]
    assert {c.name.split("/")[-1] for c in smooth} >= {"oe_bias_mean", "oe_flag_rate"} and gaps
    pooled = np.mean([c.coverage for c in smooth])
    assert pooled >= target - 1.645 * np.sqrt(target * (1 - target) / replicates), pooled
    for c in smooth + gaps:
        assert c.coverage >= target - 3 * np.sqrt(target * (1 - target) / replicates), c
        assert c.width_ratio <= (2.0 if c in smooth else 6.0), c


def test_runs_judged_by_one_model_under_other_settings_are_refused(tmp_path, capsys) -> None:
    other = JudgeSettings("openai", "judge-model", temperature=0.7)
    a, b = runs(tmp_path, OpenPair("planted", FAIR, BIASED, shared=0.7), judge=other)
    status, _, _, err = compare(a, b, capsys=capsys)
    assert status == 2 and "judge settings differs" in err and "temperature=0.7" in err and "--unpaired" in err
