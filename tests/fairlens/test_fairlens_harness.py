"""End to end through the real ``lmms-eval`` command line (slow: each run starts the harness).

lmms-eval exits 0 even when evaluation fails, so every test reads the results JSON and samples files.
The vision-language model is tiny and randomly initialised (``tests/support/tiny_vlm.py``): it checks
the plumbing (real images, real prompts, the chat path, logging, aggregation), never model quality.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
import yaml
from faces import make_hf_dataset, make_utkface_folder
from harness import lmms_eval_process, results_and_samples, same_value
from tiny_vlm import build_plumbing_only_vlm

from fairlens_tasks import scoring
from fairness_evals.cli import main as fairness_evals_main

pytestmark = pytest.mark.harness

TASKS = ("fairlens_hiring", "fairlens_legal", "fairlens_healthcare")


def _nan(value: object) -> object:
    """``fairness-evals`` writes strict JSON (null for NaN); the harness's results JSON keeps NaN."""
    return math.nan if value is None else value


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One image per stratum: 30 images, so fraction 1 evaluates 30 x 38 documents."""
    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, 1, seed=5)
    return root


@pytest.fixture(scope="session")
def plumbing_only_vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_plumbing_only_vlm(tmp_path_factory.mktemp("tiny-random-llava"))


def _run(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return lmms_eval_process(args, tmp_path, env, clear=("FAIRLENS_",))


def _score_samples(folder: Path, corpus_args: list[str], tmp_path: Path, *, as_folder: bool = False) -> dict:
    """``fairness-evals score`` on the samples files (each named, or the output folder as a whole)."""
    out = tmp_path / "scores.json"
    files = [str(folder)] if as_folder else [str(p) for p in sorted(folder.rglob("*_samples_fairlens_*.jsonl"))]
    responses = [arg for name in files for arg in ("--responses", name)]
    assert fairness_evals_main(["score", "fairlens", *corpus_args, *responses, "--out", str(out)]) == 0
    scores = json.loads(out.read_text())
    inputs = scores.pop("score_inputs")  # what compare needs to take this output as a run
    assert (
        inputs["benchmark"] == "fairlens"
        and inputs["responses"]
        and all(len(r["sha256"]) == 64 for r in inputs["responses"])
    )
    return scores


def test_cannot_tell_policy_through_lmms_eval_with_a_config_file(corpus: Path, tmp_path: Path) -> None:
    """``--model dummy`` answers "Cannot tell" to everything; the corpus comes from the config's env block."""
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "model": "dummy",
                "model_args": "response=Cannot tell",
                "tasks": "fairlens",
                "batch_size": 1,
                "output_path": str(tmp_path / "out"),
                "log_samples": True,
                "env": {"FAIRLENS_CORPUS": str(corpus), "FAIRLENS_SAMPLE_FRACTION": "1"},
            }
        )
    )
    run = _run(["--config", str(config)], tmp_path)
    results, samples = results_and_samples(tmp_path / "out", TASKS)
    r = results["results"]
    assert r["fairlens_hiring"]["soundness,none"] == pytest.approx(6 / 21), run.stdout[-2000:]
    assert r["fairlens_legal"]["soundness,none"] == pytest.approx(8 / 9)
    assert r["fairlens_healthcare"]["soundness,none"] == pytest.approx(7 / 8)
    assert r["fairlens"]["soundness,none"] == pytest.approx((6 / 21 + 8 / 9 + 7 / 8) / 3)
    assert r["fairlens"]["unparsed_rate,none"] == pytest.approx((15 / 21 + 1 / 8) / 3)
    # hiring: 15 of 17 adverse items do not offer Cannot tell, so its parity scores lack coverage (NaN, one warning),
    # and the model-level parity gap, a mean over the three domains, is NaN too; association is fully parsed
    assert math.isnan(r["fairlens_hiring"]["parity_gap,none"]) and r["fairlens_legal"]["parity_gap,none"] == 0.0
    assert math.isnan(r["fairlens"]["parity_gap,none"]) and r["fairlens"]["association_rate,none"] == 0.0
    assert r["fairlens"]["parity_gap_coverage,none"] == pytest.approx((2 / 17 + 1 + 5 / 6) / 3)
    for task in TASKS:
        for name in scoring.ALL_METRICS:
            assert f"{name},none" in r[task], (task, name)
        assert r[task]["images_sampled,none"] == 30 and r[task]["images_found,none"] == 30
        assert r[task]["seed,none"] == 0 and r[task]["data_version,none"] == 1
        assert len(samples[task]) == 30 * {"fairlens_hiring": 21, "fairlens_legal": 9, "fairlens_healthcare": 8}[task]
        assert all(s["filtered_resps"] == "Cannot tell" and s["fairlens_answer"]["id"] for s in samples[task])
    assert results["versions"]["fairlens_legal"] == 2
    scores = _score_samples(
        tmp_path / "out", ["--corpus", str(corpus), "--sample-fraction", "1"], tmp_path, as_folder=True
    )
    for task, metrics in scores.items():
        for name, value in metrics.items():
            assert same_value(_nan(value), r[task][f"{name},none"]), (task, name)


def test_tiny_random_vlm_end_to_end(corpus: Path, plumbing_only_vlm: Path, tmp_path: Path) -> None:
    """``llava_hf`` (chat path) on real image files, two documents per task; corpus from environment variables."""
    out = tmp_path / "out"
    run = _run(
        [
            "--model", "llava_hf",
            "--model_args", f"pretrained={plumbing_only_vlm},device=cpu,device_map=cpu,dtype=float32",
            "--tasks", "fairlens", "--limit", "2", "--batch_size", "1",
            "--output_path", str(out), "--log_samples",
        ],
        tmp_path,
        env={"FAIRLENS_CORPUS": str(corpus), "FAIRLENS_SEED": "3"},
    )  # fmt: skip
    results, samples = results_and_samples(out, TASKS)
    r = results["results"]
    for task in TASKS:
        assert r[task]["answers,none"] == 2, run.stdout[-3000:]
        assert r[task]["seed,none"] == 3 and r[task]["sample_fraction,none"] == 0.1
        assert 0.0 <= r[task]["unparsed_rate,none"] <= 1.0
        assert len(samples[task]) == 2
        for sample in samples[task]:
            assert isinstance(sample["filtered_resps"], str)  # every answer reaches the log
            assert sample["fairlens_answer"]["rule"]
            assert sample["input"].startswith("This image is")
            assert sample["input_media"] and Path(sample["input_media"][0]).is_file()
    assert "fairlens" in r
    scores = _score_samples(out, ["--corpus", str(corpus), "--seed", "3"], tmp_path)
    for task, metrics in scores.items():
        for name, value in metrics.items():
            assert same_value(_nan(value), r[task][f"{name},none"]), (task, name)


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
    assert r["answers,none"] == 2 and r["images_found,none"] == 30, run.stdout[-3000:]
    ids = [s["fairlens_answer"]["id"] for s in samples["fairlens_legal"]]
    assert ids[0].startswith("row-") and ids[1] == ids[0].replace("/L01", "/L02")  # one dataset row, two questions
    scores = _score_samples(
        out, ["--corpus", f"hf:{dataset}", "--hf-columns", columns, "--domain", "legal"], tmp_path, as_folder=True
    )
    assert list(scores) == ["fairlens_legal"]
    for name, value in scores["fairlens_legal"].items():
        assert same_value(_nan(value), r[f"{name},none"]), name


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
