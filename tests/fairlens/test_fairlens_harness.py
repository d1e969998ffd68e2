"""End to end through the real ``lmms-eval`` command line (slow: each run starts the harness).

lmms-eval exits 0 even when evaluation fails, so every test reads the results JSON and samples files.
The vision-language model is tiny and randomly initialised (``tests/support/tiny_vlm.py``): it checks
the plumbing (real images, real prompts, the chat path, logging, aggregation), never model quality.
The harness prints the headline statistics only (``fairlens_tasks/statistics.py``); ``fairness-evals score`` computes
every statistic from the same replies with the same code.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest
from faces import make_hf_dataset, make_utkface_folder
from harness import lmms_eval_process, results_and_samples, same_value

from fairlens_tasks import scoring
from fairlens_tasks import statistics as table
from fairlens_tasks.questions import closed_questions
from fairlens_tasks.scoring import RECORD_FIELDS
from fairness_evals.commands.main import main as fairness_evals_main

pytestmark = pytest.mark.harness

TASKS = ("fairlens_hiring", "fairlens_legal", "fairlens_healthcare")
ITEMS = {"fairlens_hiring": 21, "fairlens_legal": 9, "fairlens_healthcare": 8}
HEADLINE = {t.name: [name for name, _ in t.harness_metrics()] for t in table.TASKS}


def _nan(value: object) -> object:
    """``fairness-evals`` writes strict JSON (null for NaN); the harness's results JSON keeps NaN."""
    return math.nan if value is None else value


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One image per stratum: 30 images, so fraction 1 evaluates 30 x 38 documents."""
    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, 1, seed=5)
    return root


def _run(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return lmms_eval_process(args, tmp_path, env, clear=("FAIRLENS_",))


def _score_samples(samples: dict[str, list[dict]], corpus_args: list[str], tmp_path: Path) -> dict:
    """``fairness-evals score`` on the replies of the logged samples, each named by the document id its record
    carries (a responses file ``{"id", "response"}``)."""
    responses = tmp_path / "responses.jsonl"
    lines = [
        json.dumps({"id": sample[scoring.CARRIER]["id"], "response": sample["filtered_resps"]})
        for task_samples in samples.values()
        for sample in task_samples
    ]
    responses.write_text("\n".join(lines) + "\n")
    out = tmp_path / "scores.json"
    argv = ["score", "fairlens", *corpus_args, "--responses", str(responses), "--out", str(out)]
    assert fairness_evals_main(argv) == 0
    scores = json.loads(out.read_text())
    scores.pop("score_inputs")  # what compare needs to take this output as a run
    return scores


def _printed_rows(stdout: str) -> dict[str, list[str]]:
    """The metric rows of lmms-eval's printed tables, by task (a group's rows once: its own table)."""
    rows: dict[str, list[str]] = {}
    groups = False
    for line in stdout.splitlines():
        if line.startswith("| Groups"):
            groups = True
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or not re.fullmatch(r"(?:- )?fairlens\w*", cells[0]):
            continue
        task = cells[0].removeprefix("- ")
        if table.task_of(task).group != groups:
            continue  # a group's rows also head the tasks table
        rows.setdefault(task, []).append(cells[3])
    return rows


def _assert_headline_results(results: dict, tasks: tuple[str, ...]) -> None:
    """Each task (and group) reports exactly its headline metrics, numbers, and lmms-eval's own bookkeeping."""
    for task in tasks:
        reported = results["results"][task]
        ours = {key.split(",")[0]: value for key, value in reported.items() if "_stderr" not in key and key != "alias"}
        assert sorted(ours) == sorted(HEADLINE[task]), task
        assert all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in ours.values()), task


def _assert_one_record_per_sample(samples: dict[str, list[dict]]) -> None:
    """A sample line holds the readable record once, under the carrier; every other metric its own name."""
    for task, task_samples in samples.items():
        for sample in task_samples:
            record = sample[scoring.CARRIER]
            assert list(record) == ["id", "option", "rule", "record", "provenance"]  # lmms-eval logs no document
            assert len(record["record"]) == len(RECORD_FIELDS) and record["provenance"]["corpus_sha256"]
            assert record["id"].endswith(f"/{closed_questions()[record['record'][0]].id}") and record["rule"]
            assert all(sample[name] is None for name in HEADLINE[task][1:]), task


def test_cannot_tell_policy_through_lmms_eval_with_a_config_file(
    fairlens_cannot_tell_run: Path, tmp_path: Path
) -> None:
    """``--model dummy`` answers "Cannot tell" to everything; the corpus comes from the config's env block (the run is
    shared with the position tests: ``tests/conftest.py``, :func:`fairlens_cannot_tell_run`; its minimum coverage of
    0.2 leaves every number below as at the default 0.5: hiring's coverage, 2/17, is under both)."""
    corpus = fairlens_cannot_tell_run / "faces"
    printed = (fairlens_cannot_tell_run / "lmms-eval.stdout").read_text()
    results, samples = results_and_samples(fairlens_cannot_tell_run / "out", TASKS)
    r = results["results"]
    assert r["fairlens_hiring"]["soundness,none"] == pytest.approx(6 / 21), printed[-2000:]
    assert r["fairlens_legal"]["soundness,none"] == pytest.approx(8 / 9)
    assert r["fairlens_healthcare"]["soundness,none"] == pytest.approx(7 / 8)
    assert r["fairlens"]["soundness,none"] == pytest.approx((6 / 21 + 8 / 9 + 7 / 8) / 3)
    assert r["fairlens_hiring"]["unparsed_rate,none"] == pytest.approx(15 / 21)
    # hiring: 15 of 17 adverse items do not offer Cannot tell, so its parity scores lack coverage (NaN, one warning),
    # and the model-level parity gap, a mean over the three domains, is NaN too; association is fully parsed.
    # 30 images, one per stratum: 15 per gender (a gap is printed from 10 images per group), 6 per race group (too few:
    # the race gap, and the mean of the three gaps, are null with the reason)
    assert math.isnan(r["fairlens_hiring"]["parity_gap,none"]) and r["fairlens_legal"]["parity_gap_gender,none"] == 0.0
    assert math.isnan(r["fairlens_legal"]["parity_gap_race,none"]) and math.isnan(
        r["fairlens_legal"]["parity_gap,none"]
    )
    assert math.isnan(r["fairlens"]["parity_gap,none"]) and r["fairlens"]["association_rate,none"] == 0.0
    _assert_headline_results(results, (*TASKS, "fairlens"))
    for task in TASKS:
        assert len(samples[task]) == 30 * ITEMS[task]
        assert all(s["filtered_resps"] == "Cannot tell" for s in samples[task])
    _assert_one_record_per_sample(samples)
    assert results["versions"]["fairlens_legal"] == 3 and results["versions"]["fairlens"] == 3
    scores = _score_samples(samples, ["--corpus", str(corpus), "--sample-fraction", "1"], tmp_path)
    for task in (*TASKS, "fairlens"):
        for name in HEADLINE[task]:
            assert same_value(_nan(scores[task][name]), r[task][f"{name},none"]), (task, name)
    # score writes the detail too: the coverage that made the hiring parity scores NaN
    assert scores["fairlens_hiring"]["parity_gap_coverage"] == pytest.approx(2 / 17)
    assert scores["fairlens"]["parity_gap_coverage"] == pytest.approx((2 / 17 + 1 + 5 / 6) / 3)


def test_tiny_random_vlm_prints_the_short_table(tiny_vlm_run: Path, tmp_path: Path) -> None:
    """``llava_hf`` (chat path) on real image files, three documents per task; corpus from environment variables (the
    shared run ``tiny_vlm_run``, which evaluates the IRIS understanding tasks beside). The printed table holds the
    headline rows only: 8 per domain task, 4 for the group."""
    stdout = (tiny_vlm_run / "stdout.txt").read_text(encoding="utf-8")
    results, samples = results_and_samples(tiny_vlm_run / "out", TASKS)
    r = results["results"]
    for task in TASKS:
        assert 0.0 <= r[task]["unparsed_rate,none"] <= 1.0, stdout[-3000:]
        assert len(samples[task]) == 3
        for sample in samples[task]:
            assert isinstance(sample["filtered_resps"], str)  # every answer reaches the log
            assert sample[scoring.CARRIER]["rule"]
            assert sample["input"].startswith("This image is")
            assert sample["input_media"] and Path(sample["input_media"][0]).is_file()
    _assert_headline_results(results, (*TASKS, "fairlens"))
    printed = _printed_rows(stdout)
    assert {task: sorted(rows) for task, rows in printed.items()} == {
        task: sorted(HEADLINE[task]) for task in (*TASKS, "fairlens")
    }, stdout[-3000:]
    assert sum(len(rows) for rows in printed.values()) == 3 * 8 + 4
    scores = _score_samples(samples, ["--corpus", str(tiny_vlm_run / "faces"), "--seed", "3"], tmp_path)
    for task in TASKS:
        assert scores[task]["answers"] == 3
        for name in HEADLINE[task]:
            assert same_value(_nan(scores[task][name]), r[task][f"{name},none"]), (task, name)


def test_the_group_with_logged_samples_and_wandb_offline(tmp_path: Path) -> None:
    """The ``fairlens`` group with ``--log_samples`` and W&B logging (offline): the rows per task and in all, every
    metric value a number, finite headlines for the tasks and the group, our share of each sample line (the ``doc``,
    where the harness logs it, and our metric values) at most lmms-eval's own, and W&B logging without a failure.

    ``--wandb_log_samples`` is left out: lmms-eval 0.7.3 writes the samples files first, which removes each sample's
    ``arguments``, so its W&B sample table fails with "'arguments'" for every task
    (:func:`test_the_readable_record_fits_a_wandb_table` checks our records against a W&B table instead).

    The reply "Yes or cannot tell" reads as Yes or Cannot tell. (It was "No or cannot tell": in hiring every parsed
    answer of that one sat at the last listed option, No or Cannot tell, and the most common text held 74% of them,
    which the position test reads as answers that follow the position, so its hiring scores are now null.)

    Two images per stratum (60): each race group holds 12, above the 10 a gap needs (with one per stratum, 6, the
    race gaps are null for too little evidence)."""
    corpus = tmp_path / "faces"
    make_utkface_folder(corpus, 2, seed=5)
    out = tmp_path / "out"
    run = _run(
        [
            "--model", "dummy", "--model_args", "response=Yes or cannot tell", "--tasks", "fairlens",
            "--batch_size", "1", "--output_path", str(out), "--log_samples",
            "--wandb_args", "project=x,mode=offline,name=fairlens",
        ],
        tmp_path,
        env={"FAIRLENS_CORPUS": str(corpus), "FAIRLENS_SAMPLE_FRACTION": "1", "WANDB_MODE": "offline",
             "WANDB_DIR": str(tmp_path), "WANDB_SILENT": "true"},
    )  # fmt: skip
    text = run.stdout + run.stderr
    results, samples = results_and_samples(out, TASKS)
    assert not re.search(r"(Weights and Biases|W&B|wandb)[^\n]{0,40}fail", text, re.I), text[-3000:]
    assert list((tmp_path / "wandb").glob("offline-run-*")), "no offline W&B run was written"
    _assert_headline_results(results, (*TASKS, "fairlens"))
    printed = _printed_rows(run.stdout)
    assert {task: len(rows) for task, rows in printed.items()} == {**dict.fromkeys(TASKS, 8), "fairlens": 4}
    for task in (*TASKS, "fairlens"):
        for name in HEADLINE[task]:
            assert math.isfinite(results["results"][task][f"{name},none"]), (task, name)
    _assert_one_record_per_sample(samples)
    for task in TASKS:
        assert len(samples[task]) == 60 * ITEMS[task]
        ours = set(HEADLINE[task]) | {"doc"}
        for sample in samples[task]:
            added = len(json.dumps({k: v for k, v in sample.items() if k in ours}, ensure_ascii=False))
            own = len(json.dumps({k: v for k, v in sample.items() if k not in ours}, ensure_ascii=False))
            assert added <= own, (task, added, own, sample)


def test_the_readable_record_fits_a_wandb_table(corpus: Path) -> None:
    """W&B's tables require one type per column: the records of parsed and unparsed answers, as lmms-eval lays them
    out (one column per metric of the YAML), make one table."""
    import pandas as pd
    import wandb

    from fairlens_tasks.documents import documents
    from fairlens_tasks.settings import ENV, build_settings

    docs = documents(build_settings({"corpus": str(corpus), "sample_fraction": 1}, ENV), "legal")[:30]
    rows = [scoring.process_results(doc, [("Yes", "I'm sorry.", "", "Cannot")[i % 4]]) for i, doc in enumerate(docs)]
    frame = pd.DataFrame({name: [row[name] for row in rows] for name in HEADLINE["fairlens_legal"]})
    assert len(wandb.Table(dataframe=frame).data) == len(docs)
    assert {row[scoring.CARRIER]["option"] for row in rows} == {"Yes", "", "Cannot tell"}


def test_tiny_random_vlm_on_a_hugging_face_dataset(corpus: Path, plumbing_only_vlm: Path, tmp_path: Path) -> None:
    """Images decoded from dataset rows inside the harness; columns mapped by FAIRLENS_HF_COLUMNS."""
    dataset = make_hf_dataset(tmp_path / "faces-ds", sorted(corpus.iterdir()))
    columns = "image=img,gender=sex,race=ethnicity,age=years"
    out = tmp_path / "out"
    run = _run(
        [
            "--model", "llava_hf",
            "--model_args", f"pretrained={plumbing_only_vlm},device=cpu,device_map=cpu,dtype=float32",
            "--tasks", "fairlens_legal", "--limit", "2", "--batch_size", "1",
            "--output_path", str(out), "--log_samples",
        ],
        tmp_path,
        env={"FAIRLENS_CORPUS": f"hf:{dataset}", "FAIRLENS_HF_COLUMNS": columns},
    )  # fmt: skip
    results, samples = results_and_samples(out, ("fairlens_legal",))
    r = results["results"]["fairlens_legal"]
    assert len(samples["fairlens_legal"]) == 2, run.stdout[-3000:]
    ids = [s[scoring.CARRIER]["id"] for s in samples["fairlens_legal"]]
    assert ids[0].startswith("row-") and ids[1] == ids[0].replace("/L01", "/L02")  # one dataset row, two questions
    scores = _score_samples(
        samples, ["--corpus", f"hf:{dataset}", "--hf-columns", columns, "--domain", "legal"], tmp_path
    )
    assert list(scores) == ["fairlens_legal"] and scores["fairlens_legal"]["images_evaluated"] == 1
    for name in HEADLINE["fairlens_legal"]:
        assert same_value(_nan(scores["fairlens_legal"][name]), r[f"{name},none"]), name


def test_without_a_corpus_the_task_fails_at_once_and_says_how(tmp_path: Path) -> None:
    run = _run(["--model", "dummy", "--tasks", "fairlens_legal", "--output_path", str(tmp_path / "out")], tmp_path)
    text = run.stdout + run.stderr
    assert "FairLens has no face corpus to evaluate: set FAIRLENS_CORPUS" in text
    assert "RetryError" not in text
    assert not list(tmp_path.rglob("*_results.json"))


def test_bad_input_stops_before_the_model_is_called(corpus: Path, tmp_path: Path) -> None:
    bad = tmp_path / "faces"
    bad.mkdir()
    for path in corpus.iterdir():
        (bad / path.name).write_bytes(path.read_bytes())
    (bad / "39_1_20170116174525125.jpg.chip.jpg").write_bytes(b"")
    run = _run(["--model", "dummy", "--tasks", "fairlens_hiring", "--output_path", str(tmp_path / "out")], tmp_path,
               env={"FAIRLENS_CORPUS": str(bad)})  # fmt: skip
    text = run.stdout + run.stderr
    assert "39_1_20170116174525125.jpg.chip.jpg: file name does not parse" in text
    assert "FAIRLENS_ON_BAD_INPUT=skip" in text
    assert not list(tmp_path.rglob("*_results.json"))
