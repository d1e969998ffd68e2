"""The folder layout ``export --t2i-layout`` writes: checked before anything is written, and re-exportable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fairness_evals.generation.layout import INDEX_FILE, MANIFEST_FILE, README_FILE, write_layout

DOCS = [
    {"task": "task_a", "t2i_folder": "one", "prompt": "A photo of a doctor.", "id": "a1"},
    {"task": "task_a", "t2i_folder": "two", "prompt": "A photo of a nurse.", "id": "a2"},
]
OTHER = [{"task": "task_b", "t2i_folder": "x", "prompt": "A portrait.", "id": "b1"}]


def export(root: Path, docs: list[dict] = DOCS, title: str = "A") -> dict[str, int]:
    return write_layout(root, docs, title=title, score_command="lmms-eval --model from_folder --model_args root={root}",
                        images_per_prompt=20, images_per_prompt_source="the paper's number")  # fmt: skip


def snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_export_writes_folders_manifest_index_and_readme_and_is_idempotent(tmp_path: Path) -> None:
    root = tmp_path / "images"
    assert export(root) == {"task_a": 2}
    first = snapshot(root)
    assert set(first) == {"task_a/one/prompt.txt", "task_a/two/prompt.txt", MANIFEST_FILE, INDEX_FILE, README_FILE}
    (root / "task_a" / "one" / "img.png").write_bytes(b"kept")
    export(root)
    assert snapshot(root) == {**first, "task_a/one/img.png": "kept"}
    export(root, OTHER, title="B")  # a second benchmark shares the root
    lines = [json.loads(line) for line in (root / MANIFEST_FILE).read_text().splitlines()]
    assert [line["task"] for line in lines] == ["task_a", "task_a", "task_b"]
    assert set(json.loads((root / INDEX_FILE).read_text())) == {"A", "B"}


@pytest.mark.parametrize(
    ("index", "message"),
    [
        ("[1, 2]", r"layout\.json: not a layout index written by fairness-evals export \(a list"),
        ('{"x": {"y": 1}}', r"layout\.json: entry 'x' is not an export \(no 'tasks' object\)"),
        ('{"x": {"tasks": {}}}', r"layout\.json: entry 'x' lacks 'command'"),
        ("{not json", r"layout\.json: not a layout index written by fairness-evals export \(Expecting"),
    ],
)
def test_a_foreign_layout_index_is_named_and_nothing_is_written(tmp_path: Path, index: str, message: str) -> None:
    """Review finding: a foreign layout.json failed as "error: 'tasks'" after the folders and manifest were written."""
    root = tmp_path / "images"
    root.mkdir()
    (root / INDEX_FILE).write_text(index, encoding="utf-8")
    before = snapshot(root)
    with pytest.raises(ValueError, match=message):
        export(root)
    assert snapshot(root) == before and not (root / "task_a").exists()


def test_a_malformed_manifest_line_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    root = tmp_path / "images"
    export(root)
    (root / MANIFEST_FILE).write_text('{"task": "task_a"}\n[1]\n', encoding="utf-8")
    before = snapshot(root)
    with pytest.raises(ValueError, match=r"manifest\.jsonl:2: not a manifest line \(no 'task'\)"):
        export(root, OTHER, title="B")
    assert snapshot(root) == before


def test_a_layout_of_other_prompts_is_refused_before_writing(tmp_path: Path) -> None:
    root = tmp_path / "images"
    export(root)
    before = snapshot(root)
    changed = [DOCS[0], {**DOCS[1], "prompt": "A photo of a pilot."}]
    with pytest.raises(ValueError, match=r"two/prompt\.txt holds a different prompt"):
        export(root, [*OTHER, *changed])
    assert snapshot(root) == before and not (root / "task_b").exists()


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        ([DOCS[0], DOCS[0]], "two documents of task_a share the folder 'one'"),
        ([{"task": "task_a", "t2i_folder": "", "prompt": "p", "id": "z"}], r"document 1 \(z\) has no t2i_folder"),
    ],
)
def test_bad_documents_are_refused_before_writing(tmp_path: Path, docs: list[dict], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        export(tmp_path / "images", docs)
    assert not (tmp_path / "images").exists() or not any((tmp_path / "images").iterdir())


def test_a_folder_holding_something_else_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / README_FILE).write_text("# My project\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"README\.md exists but layout\.json does not"):
        export(root)
    assert snapshot(root) == {README_FILE: "# My project\n"}
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a folder"):
        export(tmp_path / "file")
