"""Data-parallel runs give the numbers and the samples of a one-process run (CPU, gloo; slow: real harness runs).

Each test runs the same command once in one process and once in two, launched the way users launch a multi-GPU
run (``accelerate launch``, ``torchrun``), and compares every result value and the union of the logged samples
(matched by document). The two-process run must really have split the work: both ranks log building requests.

lm-eval 0.4.13's ``hf`` model only splits the work when it sees more than one GPU; on CPU every process would
evaluate everything (identical, but proving nothing). ``lm_eval_cpu_data_parallel.py`` (beside this file) sets
rank and world size from accelerate as the GPU branch does. lmms-eval 0.7.3 sets them itself from ``WORLD_SIZE``
for any model (``evaluator.py``), so its runs use the plain ``lmms_eval`` module.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import DEV_BIN, run
from models import smollm2

from tests.conftest import DIFFUSERS_FLAGS, DIFFUSERS_MODEL_ARGS, DIFFUSERS_TASK, diffusers_env
from tests.scale.runs import accelerate_launch, compare_runs, ranks_that_built, scale_env, torchrun

pytestmark = pytest.mark.harness

LAUNCHER = Path(__file__).with_name("lm_eval_cpu_data_parallel.py")


def test_accelerate_launch_starts_as_typed(tmp_path: Path) -> None:
    """``accelerate launch`` imports timm when it is installed, and timm cannot import without torchvision,
    which the setup removes: scripts/setup.sh removes timm too."""
    proc = run([str(DEV_BIN / "accelerate"), "launch", "--help"], env=scale_env(tmp_path), cwd=tmp_path)
    assert "--num_processes" in proc.stdout


def _two_ranks(log: str, tasks: list[str]) -> None:
    for task in tasks:
        assert ranks_that_built(log, task) == {0, 1}, f"{task}: the work was not split across two ranks"


def _same(one: Path, many: Path, documents: int, **kwargs) -> None:
    values, samples, differences = compare_runs(one, many, **kwargs)
    assert not differences, "\n".join(differences[:20])
    assert samples == documents and values > 0


def test_lm_eval_generation_and_log_likelihood_tasks_on_two_processes(tmp_path: Path) -> None:
    """Fact-or-Fair objective (generation) and subjective base ``_mc`` (log-likelihood), SmolLM2, 4 documents each,
    one request per forward pass (batch composition then cannot differ between the runs)."""
    tasks = ["fact_or_fair_objective", "fact_or_fair_subjective_base_mc"]
    common = [
        "--model_args", f"pretrained={smollm2()},dtype=float32", "--tasks", ",".join(tasks), "--limit", "4",
        "--batch_size", "1", "--apply_chat_template", "--log_samples",
    ]  # fmt: skip
    env = scale_env(tmp_path)
    one, many = tmp_path / "one", tmp_path / "many"
    run([str(DEV_BIN / "lm_eval"), "--model", "hf", *common, "--output_path", str(one)], env=env, cwd=tmp_path)
    proc = run(
        [*accelerate_launch(2), str(LAUNCHER), "--model", "hf-cpu-data-parallel", *common, "--output_path", str(many)],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    _two_ranks(proc.stdout + proc.stderr, tasks)
    _same(one, many, documents=8)


def test_lmms_eval_fairlens_and_iris_understanding_on_two_processes(
    tmp_path: Path, tiny_vlm: Path, face_corpus: Path, iris_corpora: dict[str, str]
) -> None:
    """The FairLens group and the IRIS understanding group through ``llava_hf`` (tiny random VLM), 5 documents
    per task (rank 0 gets three, rank 1 two, so rank 0 gathers them in another order), ``accelerate launch -m
    lmms_eval``."""
    tasks = ["fairlens_hiring", "fairlens_legal", "fairlens_healthcare", "iris_ifs_und", "iris_rfs_und", "iris_bis_und"]
    args = [
        "--model", "llava_hf", "--model_args", f"pretrained={tiny_vlm},device=cpu,device_map=cpu,dtype=float32",
        "--tasks", "fairlens,iris_und", "--limit", "5", "--batch_size", "1", "--log_samples",
    ]  # fmt: skip
    env = scale_env(tmp_path, FAIRLENS_CORPUS=str(face_corpus), FAIRLENS_SAMPLE_FRACTION="1", **iris_corpora)
    one, many = tmp_path / "one", tmp_path / "many"
    run([str(DEV_BIN / "lmms-eval"), *args, "--output_path", str(one)], env=env, cwd=tmp_path)
    proc = run([*accelerate_launch(2), "-m", "lmms_eval", *args, "--output_path", str(many)], env=env, cwd=tmp_path)
    _two_ranks(proc.stdout + proc.stderr, tasks)
    _same(one, many, documents=5 * len(tasks))


def test_lmms_eval_image_generation_on_two_processes(tmp_path: Path, diffusers_run: Path) -> None:
    """``iris_gen_neutral`` through our ``diffusers_t2i`` backend (tiny random pipeline), 3 prompts x 2 images,
    ``torchrun -m lmms_eval``: same samples up to the output folder, and the same image files byte for byte. The
    one-process run is the generation tests' (``tests/conftest.py``, :func:`diffusers_run`); this runs the same command
    and environment on two processes. The HOG detector stands in for the default CNN: this test is about splitting the
    work, and the CNN costs seconds per image on a CPU."""
    pipeline = diffusers_run / "tiny_sd"
    env = {**scale_env(tmp_path), **diffusers_env(tmp_path, diffusers_run / "site")}
    outputs = {"one": diffusers_run / "generated", "many": tmp_path / "images-many"}
    proc = run(
        [
            *torchrun(2), "-m", "lmms_eval", "--model", "diffusers_t2i", "--model_args",
            f"pretrained={pipeline},output_dir={outputs['many']},{DIFFUSERS_MODEL_ARGS}", "--tasks", DIFFUSERS_TASK,
            *DIFFUSERS_FLAGS,
            "--batch_size", "1", "--log_samples", "--output_path", str(tmp_path / "many"),
        ],
        env=env, cwd=tmp_path,
    )  # fmt: skip
    _two_ranks(proc.stdout + proc.stderr, ["iris_gen_neutral"])
    _same(
        diffusers_run / "out", tmp_path / "many", documents=3,
        normalise=lambda text: text.replace(str(outputs["many"]), str(outputs["one"])),
    )  # fmt: skip
    files = {name: sorted(p.relative_to(folder) for p in folder.rglob("*.png")) for name, folder in outputs.items()}
    assert len(files["one"]) == 6 and files["one"] == files["many"]
    for relative in files["one"]:
        assert (outputs["one"] / relative).read_bytes() == (outputs["many"] / relative).read_bytes(), relative
