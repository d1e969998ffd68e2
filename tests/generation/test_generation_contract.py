"""Reading every response form lmms-eval's generators use, and the folder layout (no classifier, no harness)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_evals.generation.contract import GeneratedImages, read_response, response_json
from fairness_evals.generation.layout import folder_name, list_images, read_seeds, write_layout


def _touch(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_json_contract_with_seeds_and_expected(tmp_path: Path) -> None:
    a, b = _touch(tmp_path / "a.png"), _touch(tmp_path / "b.png")
    text = response_json([a, b], seeds=[7, 8], expected=3, error="folder holds 2 of 3 images", folder="f")
    payload = json.loads(text)
    assert payload["text"] == "" and payload["images"] == [str(a.resolve()), str(b.resolve())]
    got = read_response(text)
    assert got.form == "json"
    assert got.images == (str(a.resolve()), str(b.resolve()))
    assert got.seeds == (7, 8)
    assert got.expected == 3 and got.missing == 1
    assert got.error == "folder holds 2 of 3 images"


def test_wise_style_json_from_bagel_is_read() -> None:
    got = read_response('  {"text": "", "images": ["/out/bagel/0.png"]}  ')
    assert got == GeneratedImages(images=("/out/bagel/0.png",), seeds=(None,), form="json")


def test_the_backends_notes_are_kept() -> None:
    got = read_response(json.dumps({"images": ["a.png"], "notes": ["skipped non-image files: x.txt"]}))
    assert got.notes == ("skipped non-image files: x.txt",)


def test_seed_list_of_the_wrong_length_is_noted_not_used() -> None:
    got = read_response(json.dumps({"images": ["a.png", "b.png"], "seeds": [1]}))
    assert got.seeds == (None, None)
    assert got.notes == ("1 seeds for 2 images: seeds not recorded",)


def test_seeds_as_digit_strings_and_integral_floats() -> None:
    got = read_response(json.dumps({"images": ["a.png", "b.png", "c.png"], "seeds": ["12", 3.0, "x"]}))
    assert got.seeds == (12, 3, None)


def test_response_json_refuses_mismatched_seeds() -> None:
    with pytest.raises(ValueError, match="2 seeds for 1 images"):
        response_json(["a.png"], seeds=[1, 2])


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (None, "the model returned nothing"),
        ("", "the model returned an empty response"),
        ("   ", "the model returned an empty response"),
        ("[GENERATION_FAILED] CUDA out of memory", "generation failed: '[GENERATION_FAILED] CUDA out of memory'"),
        ("[ERROR] Empty prompt", "generation failed: '[ERROR] Empty prompt'"),
        ('{"text": "", "images": []}', "the JSON response lists no image"),
        ('{"text": "a cat"}', "the JSON response has no 'images' list"),
        ('{"images": [], "error": "no folder /x"}', "no folder /x"),
        ("Sure! Here is a portrait of a doctor.", "the model returned text, not an image output: 'Sure! Here is a portrait of a doctor.'"),
        ("[]", "the response lists no image"),
        (42, "the model returned a int, not an image output"),
    ],
)  # fmt: skip
def test_responses_without_images_are_named(response: object, error: str) -> None:
    got = read_response(response)
    assert got.images == ()
    assert got.error == error


def test_long_text_is_quoted_short() -> None:
    got = read_response("word " * 200)
    assert got.error is not None and got.error.endswith("...'") and len(got.error) < 260


def test_plain_path_of_one_image_even_if_missing() -> None:
    got = read_response("/nowhere/generated.png")
    assert got.form == "file" and got.images == ("/nowhere/generated.png",) and got.error is None


def test_list_forms(tmp_path: Path) -> None:
    assert read_response('["/a.png", "/b.jpg"]').images == ("/a.png", "/b.jpg")
    assert read_response("['/a.png', '/b.jpg']").images == ("/a.png", "/b.jpg")  # a stringified Python list
    assert read_response(["/a.png"]).form == "list"


def test_a_folder_of_images_is_read_in_name_order(tmp_path: Path) -> None:
    _touch(tmp_path / "b.jpg")
    _touch(tmp_path / "a.PNG")
    _touch(tmp_path / "notes.txt")
    got = read_response(str(tmp_path))
    assert got.form == "folder"
    assert got.images == (str(tmp_path / "a.PNG"), str(tmp_path / "b.jpg"))


def test_wan2_1_t2i_per_task_folder_picks_the_documents_images(tmp_path: Path) -> None:
    for doc in (3, 4):
        for seed_index in (1, 0):
            _touch(tmp_path / f"{doc:04d}_s{seed_index}.png")
    got = read_response(str(tmp_path), doc_index=3)
    assert got.images == (str(tmp_path / "0003_s0.png"), str(tmp_path / "0003_s1.png"))
    assert read_response(str(tmp_path), doc_index=9).error == f"{tmp_path}: no image named 0009_s*.png"
    assert "no document index" in (read_response(str(tmp_path)).error or "")


def test_an_empty_folder_is_named(tmp_path: Path) -> None:
    assert read_response(str(tmp_path)).error == f"{tmp_path}: the folder holds no image"


# ------------------------------------------------------------------------------------------------- layout
def test_folder_name_prefers_the_documents_field() -> None:
    assert folder_name({"t2i_folder": "03-crime_rate-highest"}, 6) == "03-crime_rate-highest"
    assert folder_name({"prompt": "x"}, 6) == "6"
    assert folder_name(None, 6) == "6"


def test_list_images_skips_and_names_other_files(tmp_path: Path) -> None:
    for name in ("b.webp", "a.jpeg", "prompt.txt", "seeds.json", "README.md", ".DS_Store", "notes.txt", "x.psd"):
        _touch(tmp_path / name)
    (tmp_path / "sub").mkdir()
    images, skipped = list_images(tmp_path)
    assert [p.name for p in images] == ["a.jpeg", "b.webp"]
    assert skipped == ["notes.txt", "sub/", "x.psd"]


def test_read_seeds(tmp_path: Path) -> None:
    assert read_seeds(tmp_path) == ({}, None)
    (tmp_path / "seeds.json").write_text('{"a.png": 5, "b.png": "six", "c.png": true}')
    seeds, note = read_seeds(tmp_path)
    assert seeds == {"a.png": 5}
    assert note == f"{tmp_path / 'seeds.json'}: 2 entries are not integer seeds"
    (tmp_path / "seeds.json").write_text("{not json")
    seeds, note = read_seeds(tmp_path)
    assert seeds == {} and note is not None and "not readable JSON" in note
    (tmp_path / "seeds.json").write_text("[1, 2]")
    assert (
        read_seeds(tmp_path)[1]
        == f"{tmp_path / 'seeds.json'}: expected an object {{file name: seed}}; seeds not recorded"
    )


def _docs() -> list[dict]:
    return [
        {"task": "t_a", "t2i_folder": "one", "prompt": "Draw one.", "id": "a/1", "x": 1},
        {"task": "t_a", "t2i_folder": "two", "prompt": "Draw two.", "id": "a/2", "x": 2},
        {"task": "t_b", "t2i_folder": "one", "prompt": "Draw three.", "id": "b/1", "x": 3},
    ]


def test_write_layout(tmp_path: Path) -> None:
    counts = write_layout(tmp_path, _docs(), title="Demo", score_command="run root={root}", images_per_prompt=20,
                          images_per_prompt_source="the paper's number", meta_fields=("x",))  # fmt: skip
    assert counts == {"t_a": 2, "t_b": 1}
    assert (tmp_path / "t_a" / "two" / "prompt.txt").read_text() == "Draw two.\n"
    lines = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert lines[2] == {"task": "t_b", "folder": "t_b/one", "doc_index": 0, "id": "b/1", "prompt": "Draw three.",
                        "meta": {"x": 3}}  # fmt: skip
    readme = (tmp_path / "README.md").read_text()
    assert "**20 images per prompt** (the paper's number)" in readme
    assert f"run root={tmp_path.resolve()}" in readme
    assert "| `t_a` | 2 | `t_a/` |" in readme
    # Re-exporting into a filled layout keeps the images.
    _touch(tmp_path / "t_a" / "one" / "img.png")
    write_layout(
        tmp_path, _docs(), title="Demo", score_command="run", images_per_prompt=20, images_per_prompt_source="x"
    )
    assert (tmp_path / "t_a" / "one" / "img.png").exists()


def test_two_exports_share_a_root(tmp_path: Path) -> None:
    first, second = _docs()[:2], _docs()[2:]
    write_layout(tmp_path, first, title="One", score_command="run one {root}", images_per_prompt=20,
                 images_per_prompt_source="a")  # fmt: skip
    write_layout(tmp_path, second, title="Two", score_command="run two {root}", images_per_prompt=5,
                 images_per_prompt_source="b")  # fmt: skip
    # Exporting the first again replaces its lines and section, never duplicates them.
    write_layout(tmp_path, first, title="One", score_command="run one {root}", images_per_prompt=20,
                 images_per_prompt_source="a")  # fmt: skip
    tasks = [json.loads(line)["task"] for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert tasks == ["t_b", "t_a", "t_a"]
    readme = (tmp_path / "README.md").read_text()
    assert "## One" in readme and "## Two" in readme and "**5 images per prompt** (b)" in readme
    assert f"run two {tmp_path.resolve()}" in readme


def test_write_layout_refuses_a_layout_of_other_prompts(tmp_path: Path) -> None:
    write_layout(
        tmp_path, _docs(), title="Demo", score_command="run", images_per_prompt=1, images_per_prompt_source="x"
    )
    changed = _docs()
    changed[1]["prompt"] = "Draw something else."
    with pytest.raises(ValueError, match="holds a different prompt"):
        write_layout(
            tmp_path, changed, title="Demo", score_command="run", images_per_prompt=1, images_per_prompt_source="x"
        )


def test_write_layout_refuses_two_documents_in_one_folder(tmp_path: Path) -> None:
    docs = _docs()
    docs[1]["t2i_folder"] = "one"
    with pytest.raises(ValueError, match="two documents of t_a share the folder 'one'"):
        write_layout(
            tmp_path, docs, title="Demo", score_command="run", images_per_prompt=1, images_per_prompt_source="x"
        )
