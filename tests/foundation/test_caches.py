"""What the package keeps between runs is trusted by its content, not by its presence (issue 24 item 16): the
lmms-eval task-folder copy, the converted default model and the Fact-or-Fair document cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairness_evals import paths


@pytest.fixture
def task_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two task packages (pkg_a with a data file, pkg_b) as the lmms-eval folders, and a cache under ``tmp_path``."""
    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path / "cache"))
    for name in ("pkg_a", "pkg_b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.yaml").write_text(f"task: {name}\n")
    (tmp_path / "pkg_a" / "data").mkdir()
    (tmp_path / "pkg_a" / "data" / "items.json").write_text("[1, 2]")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(paths, "task_modules", lambda harness: ["pkg_a", "pkg_b"])
    return tmp_path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("tamper", ["edit", "delete", "add"])
def test_a_task_folder_copy_that_was_changed_is_rebuilt(
    task_packages: Path, capsys: pytest.CaptureFixture, tamper: str
) -> None:
    copy = Path(paths.tasks_dir("lmms-eval"))
    expected = _files(copy)
    assert set(expected) == {"pkg_a/pkg_a.yaml", "pkg_a/data/items.json", "pkg_b/pkg_b.yaml"}
    if tamper == "edit":
        (copy / "pkg_b" / "pkg_b.yaml").write_text("task: something_else\n")
        difference = "pkg_b/pkg_b.yaml was changed"
    elif tamper == "delete":
        (copy / "pkg_a" / "data" / "items.json").unlink()
        difference = "pkg_a/data/items.json is missing"
    else:
        (copy / "pkg_b" / "extra.yaml").write_text("task: planted\n")
        difference = "pkg_b/extra.yaml was added"
    capsys.readouterr()
    assert Path(paths.tasks_dir("lmms-eval")) == copy  # the same name: the content it is named by
    assert _files(copy) == expected
    assert f"differs from our task files ({difference}); rebuilt it" in capsys.readouterr().err
    assert not [p for p in copy.parent.iterdir() if p.name.startswith(".lmms-eval-") and p.is_dir()]
    assert Path(paths.tasks_dir("lmms-eval")) == copy and capsys.readouterr().err == ""  # whole again: reused quietly


@pytest.mark.parametrize("tamper", ["edit", "delete", "add", "old marker"])
def test_a_converted_model_folder_is_reused_only_while_its_weights_hash_as_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tamper: str
) -> None:
    import json

    from fairness_evals import model

    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path))
    conversions: list[Path] = []

    def convert(source: Path, out: Path) -> dict[str, str]:
        conversions.append(out)
        (out / "model.safetensors").write_bytes(b"weights" * 100)
        (out / "config.json").write_text('{"model_type": "llama"}')
        return {"transformers": "test"}

    monkeypatch.setattr(model, "_convert", convert)
    monkeypatch.setattr(model, "gguf_path", lambda: tmp_path / "x.gguf")
    target = model.ensure_default_model()
    marker = json.loads((target / "fairness-evals-model.json").read_text())
    assert sorted(marker["files"]) == ["config.json", "model.safetensors"] and marker["transformers"] == "test"
    assert model.ensure_default_model() == target and len(conversions) == 1  # whole: reused
    if tamper == "edit":
        (target / "model.safetensors").write_bytes(b"WEIGHTS" * 100)  # same size, other bytes
    elif tamper == "delete":
        (target / "config.json").unlink()
    elif tamper == "add":
        (target / "planted.bin").write_bytes(b"x")
    else:  # a marker from before (no hashes): present, but it vouches for nothing
        (target / "fairness-evals-model.json").write_text(json.dumps({"model": model.MODEL_NAME}))
    assert not model.is_converted(target)
    assert model.ensure_default_model() == target and len(conversions) == 2  # converted again
    assert model.is_converted(target) and (target / "model.safetensors").read_bytes() == b"weights" * 100
    assert not (target / "planted.bin").exists()
