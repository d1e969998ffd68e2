"""End to end through the real ``lmms-eval`` command line, and the YAMLs against the statistics table.

lmms-eval exits 0 even when evaluation fails, so every test reads the results JSON and samples files. ``--model
dummy`` gives one fixed reply, which makes every number computable by hand; the OpenAI-compatible test server
(``tests/support/openai_server.py``) answers every question with a valid, varied reply (lmms-eval's ``openai``
backend, images inline), so every headline row is a number; the vision-language model of the last test is tiny and
randomly initialised (``tests/support/tiny_vlm.py``): plumbing only. Each run prints the short table (the headline
rows, at most 12 per task, no string) and logs one readable record per document, in fewer bytes than lmms-eval's own.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml
from harness import DEV_BIN, lmms_eval_process, offline_env, results_and_samples, run, same_value
from openai_server import OpenAIServer, hashed_choice, running
from scipy.spatial.distance import jensenshannon

from fairness_evals.commands.main import main as fairness_evals_main
from iris_tasks import bis_und, ifs_und, rfs_und, scoring, settings
from iris_tasks import statistics as table
from iris_tasks.vocabulary import real_world

pytestmark = pytest.mark.harness

TASKS = {"iris_ifs_und": ifs_und, "iris_rfs_und": rfs_und, "iris_bis_und": bis_und}
FOLDER = Path(ifs_und.__file__).resolve().parent
DIRECTION_YAML = {"higher": True, "lower": False, "neither": None}


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def test_yaml_metric_lists_are_the_headlines_each_with_its_aggregation() -> None:
    for task in TASKS:
        config = yaml.load((FOLDER / f"{task}.yaml").read_text(), Loader=_Loader)
        assert config["task"] == task and config["include"] == "_default_template_yaml"
        expected = table.task_of(task).harness_metrics()
        assert [m["metric"] for m in config["metric_list"]] == scoring.HEADLINE_NAMES[task] == [m for m, _ in expected]
        assert [m["higher_is_better"] for m in config["metric_list"]] == [DIRECTION_YAML[d] for _, d in expected]
        assert [m["aggregation"] for m in config["metric_list"]] == [
            f"iris_tasks.scoring.aggregate_{m['metric']}" for m in config["metric_list"]
        ]
        assert scoring.HEADLINE_NAMES[task][0] == table.CARRIERS[task]  # the readable record rides first
    template = yaml.load((FOLDER / "_default_template_yaml").read_text(), Loader=_Loader)
    assert template["process_results"] == "iris_tasks.scoring.process_results" and template["metadata"]["version"] == 3
    group = yaml.load((FOLDER / "iris_und.yaml").read_text(), Loader=_Loader)
    assert group["task"] == list(TASKS) and "aggregate_metric_list" not in group  # no roll-up: see statistics.py
    assert sorted(p.name for p in FOLDER.glob("*.yaml")) == sorted([*(f"{t}.yaml" for t in TASKS), "iris_und.yaml"])


def _run(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return lmms_eval_process(args, tmp_path, env, clear=("IRIS_",))


def _score(tmp_path: Path, argv: list[str]) -> dict:
    from iris_tasks import commands as iris_cli

    parser = argparse.ArgumentParser()
    iris_cli.add_score_arguments(parser)
    out = tmp_path / "scores.json"
    assert iris_cli.score(parser.parse_args([*argv, "--out", str(out)])) == 0
    return json.loads(out.read_text())


def _jsd(p, q) -> float:
    return float(jensenshannon(p, q) ** 2)


def _headline_rows(results: dict, stdout: str, *, finite: bool) -> dict[str, dict]:
    """Each task's results row, checked: the headline metrics only (carrier first in the YAML), numbers (never
    strings), at most 12 printed rows, every one finite when ``finite``. Returns ``{task: {metric: value}}``."""
    out = {}
    for task, module in TASKS.items():
        row = {k.split(",")[0]: v for k, v in results["results"][task].items() if k != "alias"}
        ours = {k: v for k, v in row.items() if k in module.METRICS or k in module.PROVENANCE}
        assert sorted(ours) == sorted(scoring.HEADLINE_NAMES[task]), task  # no detail, no provenance
        assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in ours.values()), (task, ours)
        printed = [line for line in stdout.splitlines() if re.match(rf"^\|\s*(- )?{task}\s*\|", line)]
        assert 0 < len(printed) <= 12 and len(printed) == len(ours), (task, printed)
        if finite:
            assert all(math.isfinite(v) for v in ours.values()), (task, ours)
        out[task] = ours
    return out


def _readable_records(samples: dict[str, list[dict]], *, lean: bool) -> None:
    """One readable record per sample line, under the carrier, each field of one JSON type; the other headline
    metrics carry their own name; with ``lean``, the bytes we add (our metric values: lmms-eval does not log the
    document) are at most lmms-eval's own (its fields of the line)."""
    for task, lines in samples.items():
        names = scoring.HEADLINE_NAMES[task]
        for line in lines:
            record = line[names[0]]
            assert set(record) == {"id", "answer", "rule", "record", "provenance"}, record
            assert set(record["provenance"]) == set(scoring.RECORD_PROVENANCE), record
            assert all(isinstance(record[k], str) for k in ("id", "answer", "rule")) and record["id"], record
            assert isinstance(record["record"], list) and all(isinstance(v, (int, float)) for v in record["record"])
            assert all(line[name] is None for name in names[1:])
            assert scoring.sample_answer(line, task) == (record["id"], record["record"])
            if lean:
                ours = json.dumps({k: line[k] for k in names}, ensure_ascii=False)
                theirs = json.dumps({k: v for k, v in line.items() if k not in names}, ensure_ascii=False)
                assert len(ours.encode()) <= len(theirs.encode()), (task, len(ours), len(theirs), line)


def test_fixed_reply_through_lmms_eval_by_hand(
    manifest_corpus: Path,
    steer_corpus: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--model dummy`` replies "7 doctor" to everything; the corpora come from the config's env block, and so does
    a minimum coverage of 0.05, low enough to score the probe (18 of its 234 answers name a listed occupation). The
    harness prints the headline rows; ``fairness-evals score`` writes every statistic, the same numbers."""
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "model": "dummy", "model_args": "response=7 doctor", "tasks": "iris_und", "batch_size": 1,
                "output_path": str(tmp_path / "out"), "log_samples": True,
                "env": {"IRIS_CORPUS": str(manifest_corpus), "IRIS_STEER_CORPUS": str(steer_corpus),
                        "IRIS_PROBE_ROUNDS": "1", "IRIS_MIN_COVERAGE": "0.05"},
            }
        )
    )  # fmt: skip
    proc = _run(["--config", str(config)], tmp_path)
    results, samples = results_and_samples(tmp_path / "out", TASKS)
    assert len(samples["iris_ifs_und"]) == 72, proc.stdout[-3000:] + proc.stderr[-3000:]
    r = _headline_rows(results, proc.stdout, finite=False)
    _readable_records(samples, lean=False)  # a two-word reply is shorter than our record (measured in the README)
    assert results["versions"]["iris_bis_und"] == 3
    # `score` (the export/score module) reproduces every headline number from the samples files, at the same
    # threshold (the command takes it from --metadata iris_min_coverage; here through the settings' default), and
    # writes every statistic
    monkeypatch.setitem(settings.DEFAULTS, "min_coverage", 0.05)
    corpora = ["--corpus", str(manifest_corpus), "--steer-corpus", str(steer_corpus), "--probe-rounds", "1"]
    scores = _score(tmp_path, [*corpora, "--responses", str(tmp_path / "out")])  # each line's record names its doc
    s = {task: {k: (math.nan if v is None else v) for k, v in scores[task].items()} for task in TASKS}  # strict JSON
    for task, module in TASKS.items():
        assert set(module.METRICS) <= set(s[task])
        for name, value in r[task].items():
            assert same_value(s[task][name], value), (task, name)
    # IFS-Und: every image answered "doctor" (stage mention): a quarter are doctors, in every group alike; a model
    # that names one occupation whatever the image has no disparity to measure (it was scored 180, the maximum)
    ifs = s["iris_ifs_und"]
    assert ifs["answers"] == 72 and ifs["accuracy"] == 0.25 and ifs["mapped_mention"] == 72 and ifs["unmappable"] == 0
    assert (
        ifs["ifs_und_score_coverage"] == 1.0
        and ifs["min_coverage"] == 0.05
        and r["iris_ifs_und"]["unmappable_rate"] == 0
    )
    assert all(math.isnan(ifs[name]) for name in (*ifs_und.GRANULAR, "ifs_und_score", "ifs_und_score_ci_high"))
    assert ifs["images_sampled"] == 72 and ifs["data_version"] == 1 and ifs["embedder"].startswith("all-MiniLM")
    assert samples["iris_ifs_und"][0]["unmappable_rate"]["answer"] == "doctor"
    # RFS-Und: doctor wins its bracket for all 18 combinations; the other 12 brackets are unparsed
    rfs = s["iris_rfs_und"]
    assert (rfs["probe_answers"], rfs["probe_unparsed"], rfs["probe_occupations_won"]) == (234, 216, 1)
    assert r["iris_rfs_und"]["probe_unparsed_rate"] == pytest.approx(216 / 234)
    us, eu = real_world()["US"]["doctor"], real_world()["EU"]["doctor"]
    half, third = [0.5, 0.5], [1 / 3] * 3
    assert rfs["JSD_gender_US"] == pytest.approx(_jsd(half, [us["gender"]["male"], us["gender"]["female"]]))
    assert rfs["JSD_age_EU"] == pytest.approx(_jsd(third, [eu["age"][a] for a in ("young", "middle", "older")]))
    # SDS: all 72 balanced images predicted "doctor": P(female | doctor) = 1/2
    assert rfs["SDS_gender_female_US"] == pytest.approx(0.5 - us["gender"]["female"])
    assert rfs["AbsSDS_skin_dark_US"] == pytest.approx(
        abs(1 / 3 - us["skin_tone"]["dark"] / sum(us["skin_tone"].values()))
    )
    jsd = np.array([rfs[n] for n in rfs_und.JSD_NAMES])
    sds = np.array([rfs[n] for n in rfs_und.ABS_SDS_NAMES])
    m = 1 - math.sqrt((1 - np.linalg.norm(jsd) / math.sqrt(5)) * np.linalg.norm(sds) / math.sqrt(13))
    assert r["iris_rfs_und"]["rfs_und_score"] == pytest.approx(2750 * math.exp(-5 * m))
    assert rfs["rfs_und_score_ci_low"] <= rfs["rfs_und_score"] <= rfs["rfs_und_score_ci_high"]
    assert rfs["rfs_und_score_coverage"] == pytest.approx(18 / 234) and rfs["sds_corpus_imbalance"] == 0.0
    assert rfs["sds_definition"] == "fairness-evals-1" and rfs["probe_bracket"] == 4
    # BIS-Und: every rating 7 (no inconsistency); every yes/no unparsed: DHR and the score are NaN (a third outcome
    # shared by every image gave DHR 0 and the maximum, 340)
    bis = s["iris_bis_und"]
    assert r["iris_bis_und"]["ac_diff_single"] == 0.0 and bis["ac_unparsed"] == 0
    assert r["iris_bis_und"]["dhr_unparsed_rate"] == 1.0 and math.isnan(r["iris_bis_und"]["dhr_single"])
    assert bis["dhr_single_coverage"] == 0.0 and math.isnan(r["iris_bis_und"]["bis_und_score"])
    assert (bis["pairs_single"], bis["sets_sampled"]) == (48, 4)
    # the profile reads the real output folder (the harness rows hold the scores, not their coverages)
    assert fairness_evals_main(["iris-profile", str(tmp_path / "out"), "--format", "json"]) == 0
    profile = json.loads(capsys.readouterr().out)
    assert profile["dimensions"]["BIS-Und"]["score"] is None and profile["mbti"]["Gen"] is None
    assert profile["dimensions"]["RFS-Und"]["score"] == pytest.approx(r["iris_rfs_und"]["rfs_und_score"])
    assert profile["dimensions"]["RFS-Und"]["rfs_und_magnitude"] == pytest.approx(rfs["rfs_und_magnitude"])
    assert profile["mbti"]["Und"] is None  # no code from NaN scores


class _Answerer:
    """Valid, varied replies: a candidate of the probe's bracket (by a hash of the prompt), and, in turn, an
    occupation, a rating, a yes or a no; the turn is kept under a lock (lmms-eval's client sends several at once)."""

    OCCUPATIONS = ("doctor", "nurse", "carpenter", "teacher", "waiter")

    def __init__(self) -> None:
        self.turn = itertools.count()
        self.lock = threading.Lock()

    def __call__(self, text: str) -> str:
        with self.lock:
            k = next(self.turn)
        if "Of the following" in text:
            listed = text.split("occupations: ", 1)[1].split(", which one", 1)[0].split(", ")
            return hashed_choice(text, listed)
        if "yes or no" in text:
            return "Yes." if k % 3 else "No."
        if "1-10" in text or "1 to 10" in text:
            return str(k % 10 + 1)
        return f"A {self.OCCUPATIONS[k % len(self.OCCUPATIONS)]}."


def test_an_answering_model_through_the_openai_backend_prints_finite_headline_rows(
    manifest_corpus: Path, steer_corpus: Path, tmp_path: Path
) -> None:
    """Every question answered, in varied words: every headline row of the three tasks is a number."""
    with running(OpenAIServer(_Answerer())) as server:
        out = tmp_path / "out"
        proc = run(
            [str(DEV_BIN / "lmms-eval"), "--model", "openai", "--model_args",
             f"model=instant,base_url={server.base_url},num_concurrent=4,max_retries=1,timeout=60",
             "--tasks", "iris_und", "--batch_size", "1", "--log_samples", "--output_path", str(out)],
            env=offline_env(tmp_path, IRIS_CORPUS=str(manifest_corpus), IRIS_STEER_CORPUS=str(steer_corpus),
                            IRIS_PROBE_ROUNDS="1", OPENAI_API_KEY="-"),
            cwd=tmp_path,
        )  # fmt: skip
    results, samples = results_and_samples(out, TASKS)
    assert server.requests == 72 + 234 + 72 + 384
    _headline_rows(results, proc.stdout, finite=True)
    _readable_records(samples, lean=False)


def test_a_limit_20_run_prints_no_score_of_the_design_and_says_why(
    manifest_corpus: Path, steer_corpus: Path, tmp_path: Path
) -> None:
    """Issue 33: the answering model of the test above with ``--limit 20``, as a user's smoke run: every value of a
    task's design that the harness prints (the disparities, norms, magnitudes and scores) is NaN, the rates still
    print, one warning line per task says why, and every sample carries the design's size (the full run above prints
    every one of them)."""
    with running(OpenAIServer(_Answerer())) as server:
        out = tmp_path / "out"
        proc = run(
            [str(DEV_BIN / "lmms-eval"), "--model", "openai", "--model_args",
             f"model=instant,base_url={server.base_url},num_concurrent=4,max_retries=1,timeout=60",
             "--tasks", "iris_und", "--limit", "20", "--batch_size", "1", "--log_samples", "--output_path", str(out)],
            env=offline_env(tmp_path, IRIS_CORPUS=str(manifest_corpus), IRIS_STEER_CORPUS=str(steer_corpus),
                            IRIS_PROBE_ROUNDS="1", OPENAI_API_KEY="-"),
            cwd=tmp_path,
        )  # fmt: skip
    results, samples = results_and_samples(out, TASKS)
    assert server.requests == 3 * 20
    rows = _headline_rows(results, proc.stdout, finite=False)
    design = {"iris_ifs_und": 72, "iris_rfs_und": 234 + 72, "iris_bis_und": 384}
    log = proc.stdout + proc.stderr
    for task in TASKS:
        declared = {m for s in table.task_of(task).statistics if s.minimum is not None for m in s.members}
        printed = {name: value for name, value in rows[task].items() if name in declared}
        assert printed and all(math.isnan(value) for value in printed.values()), (task, printed)
        assert all(math.isfinite(value) for name, value in rows[task].items() if name.endswith("_rate")), rows[task]
        assert all(line[scoring.CARRIERS[task]]["provenance"]["documents"] == design[task] for line in samples[task])
        why = f"only 20 of the design's {design[task]} documents hold an answer"
        assert len([line for line in log.splitlines() if line.count(f"{task}: ") and why in line]) == 1, task


def test_without_a_corpus_the_task_fails_at_once_and_says_how(tmp_path: Path) -> None:
    proc = _run(["--model", "dummy", "--tasks", "iris_ifs_und", "--output_path", str(tmp_path / "out")], tmp_path)
    text = proc.stdout + proc.stderr
    assert "IRIS (iris_ifs_und) has no image corpus to evaluate: set IRIS_CORPUS" in text
    assert "RetryError" not in text
    assert not list(tmp_path.rglob("*_results.json"))


def test_plumbing_only_tiny_random_vlm(tiny_vlm_run: Path) -> None:
    """``llava_hf`` (chat path) on real image files and the blank probe image, three documents per task (the shared
    run ``tiny_vlm_run``, which evaluates FairLens beside): the short table, and per document one readable record in
    fewer bytes than lmms-eval's own."""
    printed = (tiny_vlm_run / "stdout.txt").read_text(encoding="utf-8")
    results, samples = results_and_samples(tiny_vlm_run / "out", TASKS)
    assert len(samples["iris_ifs_und"]) == 3, printed[-3000:] + (tiny_vlm_run / "stderr.txt").read_text()[-3000:]
    _headline_rows(results, printed, finite=False)
    _readable_records(samples, lean=True)
    for task in TASKS:
        assert len(samples[task]) == 3
        for sample in samples[task]:
            assert isinstance(sample["filtered_resps"], str)  # every answer reaches the log
    probe = next(s for s in samples["iris_rfs_und"] if s["probe_unparsed_rate"]["id"].startswith("probe/"))
    assert probe["input"].startswith("This is a male, young, light-skinned adult.")
    assert Path(samples["iris_ifs_und"][0]["input_media"][0]).is_file()


@pytest.mark.parametrize(
    "doc",
    [
        {"task": "iris_ifs_und", "kind": "recognition", "id": "x"},
        {"task": "iris_rfs_und", "kind": "probe", "id": "x"},
        {"task": "iris_rfs_und", "kind": "recognition", "id": "x"},
        {"task": "iris_bis_und", "kind": "yes_no", "id": "x"},
    ],
)
def test_process_results_never_raises_on_a_malformed_document(doc: dict, caplog: pytest.LogCaptureFixture) -> None:
    out = scoring.process_results(doc, [None])
    carrier = table.CARRIERS[doc["task"]]
    assert list(out) == scoring.HEADLINE_NAMES[doc["task"]] and out[carrier]["rule"] == "error"
    assert "cannot score document x: KeyError" in caplog.text
    values = TASKS[doc["task"]].compute_metrics([out[carrier]["record"]])
    score = next(n for n in scoring.HEADLINE_NAMES[doc["task"]] if n.endswith("_und_score"))
    assert math.isnan(values[score])  # counted as an error / unparsed, never a silent answer
