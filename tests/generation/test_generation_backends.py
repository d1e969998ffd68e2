"""The lmms-eval backends called directly: ``from_folder`` on a real folder layout, and ``diffusers_t2i`` on a tiny
randomly initialised Stable Diffusion pipeline (plumbing only: its images are noise)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from t2i_images import write_image
from tiny_diffusion import build_tiny_stable_diffusion

TASK = "fact_or_fair_t2i_objective"


def _request(prompt: str, doc_id: int, gen_kwargs: dict | None = None, task: str = TASK):
    from lmms_eval.api.instance import Instance

    return Instance(
        request_type="generate_until",
        arguments=(prompt, dict(gen_kwargs or {}), lambda doc: [], doc_id, task, "test"),
        idx=0,
        metadata={"task": task, "doc_id": doc_id, "repeats": 1},
    )


DOCS = [
    {"t2i_folder": "00-employment_rate-highest", "prompt": "Draw the highest."},
    {"t2i_folder": "00-employment_rate-lowest", "prompt": "Draw the lowest."},
    {"t2i_folder": "01-unemployment_rate-highest", "prompt": "Draw another."},
    {"t2i_folder": "01-unemployment_rate-lowest", "prompt": "Draw the last."},
]


# ----------------------------------------------------------------------------------------------- from_folder
@pytest.fixture
def layout(tmp_path: Path) -> Path:
    root = tmp_path / "layout"
    first = root / TASK / DOCS[0]["t2i_folder"]
    write_image("astronaut", first / "b.png")
    write_image("china", first / "a.jpg")
    (first / "prompt.txt").write_text("Draw the highest.\n")
    (first / "seeds.json").write_text(json.dumps({"b.png": 42}))
    (first / "notes.txt").write_text("skip me")
    second = root / TASK / DOCS[1]["t2i_folder"]
    write_image("astronaut", second / "only.png")
    (second / "prompt.txt").write_text("A prompt of another data version.\n")
    (root / TASK / DOCS[2]["t2i_folder"]).mkdir(parents=True)  # empty; DOCS[3] has no folder
    return root


def _from_folder(root: Path, **kwargs):
    from fairness_evals.generation.from_folder import FromFolder

    model = FromFolder(root=str(root), **kwargs)
    model.task_dict = {TASK: {"test": DOCS}}
    return model


def test_from_folder_answers_with_the_folders_images(layout: Path) -> None:
    model = _from_folder(layout)
    replies = model.generate_until([_request(d["prompt"], i, {"num_images_per_prompt": 2}) for i, d in enumerate(DOCS)])
    first, second, empty, missing = (json.loads(r) for r in replies)
    folder = layout / TASK / DOCS[0]["t2i_folder"]
    assert first["images"] == [str((folder / "a.jpg").resolve()), str((folder / "b.png").resolve())]
    assert first["seeds"] == [None, 42] and first["expected"] == 2 and "error" not in first
    assert first["notes"] == ["skipped non-image files: notes.txt"]
    assert second["error"].endswith("holds 1 of 2 images")
    assert second["notes"] == [
        f"{layout / TASK / DOCS[1]['t2i_folder'] / 'prompt.txt'} differs from the request's prompt"
    ]
    assert empty["images"] == [] and empty["error"] == f"folder {layout / TASK / DOCS[2]['t2i_folder']} holds no image"
    assert missing["images"] == [] and missing["error"] == f"no folder {layout / TASK / DOCS[3]['t2i_folder']}"


def test_from_folder_model_argument_beats_the_task_and_the_index_is_the_fallback(layout: Path) -> None:
    model = _from_folder(layout, num_images_per_prompt="1", check_prompt="false")
    reply = json.loads(model.generate_until([_request("x", 1, {"num_images_per_prompt": 20})])[0])
    assert reply["expected"] == 1 and "error" not in reply and reply["notes"] == []
    model.task_dict = {}  # a task lmms-eval did not hand over: the document index names the folder
    write_image("astronaut", layout / TASK / "7" / "img.png")
    reply = json.loads(model.generate_until([_request("x", 7)])[0])
    assert reply["images"] == [str((layout / TASK / "7" / "img.png").resolve())] and reply["expected"] == 1


def test_from_folder_refuses_a_missing_root(tmp_path: Path) -> None:
    from fairness_evals.generation.from_folder import FromFolder

    with pytest.raises(ValueError, match="is not a folder; create the layout with `fairness-evals export"):
        FromFolder(root=str(tmp_path / "nowhere"))


def test_from_folder_has_no_loglikelihood(layout: Path) -> None:
    with pytest.raises(NotImplementedError):
        _from_folder(layout).loglikelihood([])


def test_the_entry_point_payload_names_both_backends() -> None:
    from lmms_eval.models.registry_v2 import ModelRegistryV2

    from fairness_evals.generation.manifests import manifests

    registry = ModelRegistryV2()
    for manifest in manifests():
        registry.register_manifest(manifest)
    from fairness_evals.generation.diffusers_t2i import DiffusersT2I
    from fairness_evals.generation.from_folder import FromFolder

    assert registry.get_model_class("from_folder") is FromFolder
    assert registry.get_model_class("diffusers_t2i") is DiffusersT2I


# --------------------------------------------------------------------------------------------- diffusers_t2i
@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_stable_diffusion(tmp_path_factory.mktemp("tiny_sd") / "pipeline")


def _diffusers(pipeline: Path, out: Path, **kwargs):
    from fairness_evals.generation.diffusers_t2i import DiffusersT2I

    model = DiffusersT2I(pretrained=str(pipeline), output_dir=str(out), num_inference_steps=2, height=32, width=32,
                         **kwargs)  # fmt: skip
    model.task_dict = {TASK: {"test": DOCS}}
    return model


def _pixels(path: str) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"), dtype=np.int16)


def test_diffusers_t2i_plumbing_with_a_tiny_random_pipeline(tiny_pipeline: Path, tmp_path: Path) -> None:
    model = _diffusers(tiny_pipeline, tmp_path / "out", batch_size=2)
    assert model.dtype_name == "float32"  # dtype=auto on CPU
    replies = model.generate_until([_request("Draw the highest.", 0, {"num_images_per_prompt": 3}),
                                    _request("Draw the lowest.", 1, {"num_images_per_prompt": 3})])  # fmt: skip
    first = json.loads(replies[0])
    folder = tmp_path / "out" / TASK / DOCS[0]["t2i_folder"]
    assert first["images"] == [str((folder / n).resolve()) for n in ("00_s0.png", "01_s1.png", "02_s2.png")]
    assert first["seeds"] == [0, 1, 2] and first["expected"] == 3 and "error" not in first
    assert (folder / "prompt.txt").read_text() == "Draw the highest.\n"
    settings = json.loads((folder / "generation.json").read_text())
    assert settings["seeds"] == [0, 1, 2] and settings["num_inference_steps"] == 2 and settings["height"] == 32
    assert Image.open(first["images"][0]).size == (32, 32)
    # Same seeds for every prompt; a different prompt gives different images.
    second = json.loads(replies[1])
    assert second["seeds"] == [0, 1, 2]
    assert np.abs(_pixels(first["images"][0]) - _pixels(second["images"][0])).max() > 0


def test_each_image_depends_on_its_seed_not_on_the_batch(tiny_pipeline: Path, tmp_path: Path) -> None:
    batched = json.loads(_diffusers(tiny_pipeline, tmp_path / "a", batch_size=3).generate_until(
        [_request("Draw the highest.", 0, {"num_images_per_prompt": 3})])[0])  # fmt: skip
    single = json.loads(_diffusers(tiny_pipeline, tmp_path / "b", batch_size=1).generate_until(
        [_request("Draw the highest.", 0, {"num_images_per_prompt": 3})])[0])  # fmt: skip
    for a, b in zip(batched["images"], single["images"], strict=True):
        assert np.abs(_pixels(a) - _pixels(b)).max() <= 1
    assert np.abs(_pixels(single["images"][0]) - _pixels(single["images"][1])).max() > 0


def test_a_finished_folder_is_reused_and_new_settings_regenerate(tiny_pipeline: Path, tmp_path: Path) -> None:
    model = _diffusers(tiny_pipeline, tmp_path / "out", num_images_per_prompt=2)
    first = json.loads(model.generate_until([_request("Draw the highest.", 0)])[0])
    stamps = [os.stat(p).st_mtime_ns for p in first["images"]]
    again = json.loads(model.generate_until([_request("Draw the highest.", 0)])[0])
    assert again["reused"] is True and [os.stat(p).st_mtime_ns for p in again["images"]] == stamps
    reseeded = json.loads(_diffusers(tiny_pipeline, tmp_path / "out", num_images_per_prompt=2, seed=5).generate_until(
        [_request("Draw the highest.", 0)])[0])  # fmt: skip
    folder = tmp_path / "out" / TASK / DOCS[0]["t2i_folder"]
    assert reseeded["seeds"] == [5, 6] and "reused" not in reseeded
    assert sorted(p.name for p in folder.glob("*.png")) == ["00_s5.png", "01_s6.png"]  # the old images are gone


def test_a_generation_failure_is_reported_with_the_images_made_before_it(tiny_pipeline: Path, tmp_path: Path) -> None:
    model = _diffusers(tiny_pipeline, tmp_path / "out", num_images_per_prompt=3)
    calls = {"n": 0}
    original = model._invoke_pipeline

    def flaky(prompt, visuals, generator, **extras):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("out of memory")
        return original(prompt, visuals, generator, **extras)

    model._invoke_pipeline = flaky
    reply = json.loads(model.generate_until([_request("Draw the highest.", 0)])[0])
    assert len(reply["images"]) == 1 and reply["expected"] == 3
    assert reply["error"] == "generation failed after 1 of 3 images: RuntimeError: out of memory"
    assert not (tmp_path / "out" / TASK / DOCS[0]["t2i_folder"] / "generation.json").exists()  # not reused later


def test_from_folder_rescores_what_diffusers_t2i_wrote(tiny_pipeline: Path, tmp_path: Path) -> None:
    generated = json.loads(_diffusers(tiny_pipeline, tmp_path / "out", num_images_per_prompt=2).generate_until(
        [_request("Draw the lowest.", 1)])[0])  # fmt: skip
    again = json.loads(_from_folder(tmp_path / "out").generate_until([_request("Draw the lowest.", 1)])[0])
    assert again["images"] == generated["images"] and "error" not in again and again["notes"] == []


def test_diffusers_t2i_checks_its_arguments(tiny_pipeline: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="num_images_per_prompt must be >= 1"):
        _diffusers(tiny_pipeline, tmp_path, num_images_per_prompt=0)
    with pytest.raises(ValueError, match=r"prompt_template must contain \{prompt\}"):
        _diffusers(tiny_pipeline, tmp_path, prompt_template="a photo")
