"""The real ``lm_eval`` and ``lmms-eval`` executables find our tasks from an installed copy, with no flags."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import load_results, offline_env, run

from fairness_evals.index import harness_index

pytestmark = pytest.mark.harness


def _names(harness: str, kind: str | None = None) -> list[str]:
    return [name for k, name in harness_index(harness) if kind is None or k == kind]


def test_startup_hook_is_installed_and_lazy(installed_bin: Path, tmp_path: Path) -> None:
    code = (
        "import sys, json; print(json.dumps([[getattr(f, '__name__', type(f).__name__) for f in sys.meta_path],"
        " sorted(m for m in sys.modules if 'fairness' in m), sys.modules['_fairness_evals_hook'].__file__]))"
    )
    out = run([str(installed_bin / "python"), "-c", code], env=offline_env(tmp_path), cwd=tmp_path).stdout
    finders, loaded, location = json.loads(out)
    assert finders[0] == "_fairness_evals_hook" and loaded == ["_fairness_evals_hook"]  # nothing else at start-up
    assert location.startswith(str(installed_bin.parent))
    off = run(
        [str(installed_bin / "python"), "-c", code],
        env=offline_env(tmp_path, FAIRNESS_EVALS_AUTOLOAD="0"),
        cwd=tmp_path,
    ).stdout
    assert "_fairness_evals_hook" not in json.loads(off)[0]


def test_lm_eval_ls_tasks_lists_ours_with_no_flags(installed_bin: Path, tmp_path: Path) -> None:
    out = run([str(installed_bin / "lm_eval"), "ls", "tasks"], env=offline_env(tmp_path), cwd=tmp_path).stdout
    for name in _names("lm-eval"):
        assert name in out, name


def _dummy_run(bin_: Path, tmp: Path, task: str, *extra: str, **env: str) -> tuple[int, dict | None, str]:
    out = tmp / "out"
    proc = run(
        [str(bin_ / "lm_eval"), "--model", "dummy", "--tasks", task, "--limit", "2", "--output_path", str(out), *extra],
        env=offline_env(tmp, **env),
        cwd=tmp,
        check=False,
    )
    results = load_results(out) if out.exists() and any(out.rglob("results*.json")) else None
    return proc.returncode, results, proc.stdout + proc.stderr


def test_autoload_off_hides_our_tasks(installed_bin: Path, tmp_path: Path) -> None:
    code, results, log = _dummy_run(installed_bin, tmp_path, "fact_or_fair_objective", FAIRNESS_EVALS_AUTOLOAD="0")
    assert code != 0 and results is None
    assert "fact_or_fair_objective" in log and "not found" in log.lower()


def test_a_user_task_of_the_same_name_wins(installed_bin: Path, tmp_path: Path) -> None:
    user = tmp_path / "user_tasks"
    user.mkdir()
    data = user / "docs.jsonl"
    data.write_text('{"q": "2+2=", "a": "4"}\n{"q": "3+3=", "a": "6"}\n')
    (user / "mine.yaml").write_text(
        "task: fact_or_fair_objective\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {data}\n"
        "test_split: test\noutput_type: generate_until\n"
        'doc_to_text: "{{q}}"\ndoc_to_target: "{{a}}"\n'
        "generation_kwargs:\n  until: ['\\n']\n"
        "metric_list:\n  - metric: exact_match\n"
    )
    code, results, log = _dummy_run(installed_bin, tmp_path, "fact_or_fair_objective", "--include_path", str(user))
    assert code == 0, log[-3000:]
    task = results["results"]["fact_or_fair_objective"]
    assert "exact_match,none" in task and "s_fact_gender,none" not in task


def test_lmms_eval_lists_ours_with_no_flags_and_hook_off_hides_them(installed_bin: Path, tmp_path: Path) -> None:
    ours = _names("lmms-eval")
    assert ours, "no lmms-eval task of ours is indexed"
    listing = run([str(installed_bin / "lmms-eval"), "tasks", "list"], env=offline_env(tmp_path), cwd=tmp_path).stdout
    listed = set(listing.split())
    assert set(ours) <= listed, sorted(set(ours) - listed)
    off = run(
        [str(installed_bin / "lmms-eval"), "tasks", "list"],
        env=offline_env(tmp_path, FAIRNESS_EVALS_AUTOLOAD="0"),
        cwd=tmp_path,
    ).stdout
    assert not set(ours) & set(off.split())
    # with the hook off, `--include_path $(fairness-evals tasks-dir lmms-eval)` brings them back: the run of
    # test_lmms_eval_runs_from_the_tasks_dir_copy_with_the_hook_off


def test_lmms_eval_user_task_of_the_same_name_wins(installed_bin: Path, tmp_path: Path) -> None:
    name = _names("lmms-eval", "task")[0]
    user = tmp_path / "user_tasks"
    user.mkdir()
    data = user / "docs.jsonl"
    data.write_text('{"q": "hello", "a": "x"}\n')
    (user / "mine.yaml").write_text(
        f"task: {name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {data}\n"
        "test_split: test\noutput_type: generate_until\n"
        "doc_to_text: !function mine_utils.doc_to_text\ndoc_to_visual: !function mine_utils.doc_to_visual\n"
        'doc_to_target: "{{a}}"\nprocess_results: !function mine_utils.process_results\n'
        "metric_list:\n  - metric: user_metric\n    aggregation: mean\n    higher_is_better: true\n"
        "metadata:\n  version: 0\n"
    )
    (user / "mine_utils.py").write_text(
        "def doc_to_text(doc, kwargs=None):\n    return doc['q']\n"
        "def doc_to_visual(doc):\n    return []\n"
        "def process_results(doc, results):\n    return {'user_metric': 1.0}\n"
    )
    out = tmp_path / "out"
    run(
        [str(installed_bin / "lmms-eval"), "eval", "--model", "dummy", "--tasks", name, "--include_path", str(user),
         "--limit", "1", "--output_path", str(out)],
        env=offline_env(tmp_path),
        cwd=tmp_path,
    )  # fmt: skip
    results = load_results(out)
    assert results["results"][name]["user_metric,none"] == 1.0


def test_lm_eval_config_sweep_with_an_include_path_list(installed_bin: Path, tmp_path: Path) -> None:
    """The example sweep (``examples/lm_eval_sweep.yaml``) with the hook off: the installed copy's task folder, named
    in the sweep's ``include_path`` list beside a user's own, is all lm-eval needs to find our tasks."""
    env = offline_env(tmp_path, FAIRNESS_EVALS_AUTOLOAD="0")
    folder = run([str(installed_bin / "fairness-evals"), "tasks-dir", "lm-eval"], env=env, cwd=tmp_path).stdout.strip()
    assert "site-packages" in folder
    example = (Path(__file__).resolve().parents[2] / "examples" / "lm_eval_sweep.yaml").read_text()
    (tmp_path / "mine").mkdir()
    config = (
        example.replace("/path/from/fairness-evals/tasks-dir/lm-eval", folder)
        .replace("/path/to/your/own/tasks", str(tmp_path / "mine"))
        .replace("model: hf", "model: dummy")
        .replace("apply_chat_template: true", "apply_chat_template: false")  # the dummy model has no tokenizer
        .replace("output_path: results", f"output_path: {tmp_path / 'out'}")
    )
    (tmp_path / "sweep.yaml").write_text(config)
    run(
        [str(installed_bin / "lm_eval"), "--config", str(tmp_path / "sweep.yaml"), "--limit", "2"],
        env=env,
        cwd=tmp_path,
    )
    results = load_results(tmp_path / "out")
    assert "fact_or_fair_objective" in results["results"] and "fact_or_fair" in results["groups"]


def _fairlens_dummy_eval(bin_: Path, tmp: Path, *extra: str, **env: str) -> dict:
    """lmms-eval's weight-free ``dummy`` model (always "Yes") on `fairlens_legal` over 30 faces (one per stratum, as
    FairLens compares every group), the first 27 documents (3 images x 9 questions), from the installed copy."""
    from faces import make_utkface_folder

    corpus = tmp / "faces"
    make_utkface_folder(corpus, 1, seed=5)
    out = tmp / "out"
    run(
        [str(bin_ / "lmms-eval"), "eval", "--model", "dummy", "--model_args", "response=Yes",
         "--tasks", "fairlens_legal", "--limit", "27", "--batch_size", "1", "--output_path", str(out), *extra],
        env=offline_env(tmp, FAIRLENS_CORPUS=str(corpus), FAIRLENS_SAMPLE_FRACTION="1", **env), cwd=tmp, timeout=600,
    )  # fmt: skip
    loaded = load_results(out)
    assert loaded["n-samples"]["fairlens_legal"]["effective"] == 3 * 9
    return loaded["results"]["fairlens_legal"]


def _unparsed_yes_rate() -> float:
    """The share of legal items without a "Yes" option: where the dummy model's "Yes" cannot be parsed."""
    from fairlens_tasks.questions import domain_questions

    items = domain_questions("legal")
    return sum("Yes" not in q.options for q in items) / len(items)


def test_lmms_eval_runs_our_task_with_no_flags(installed_bin: Path, tmp_path: Path) -> None:
    results = _fairlens_dummy_eval(installed_bin, tmp_path)
    assert results["unparsed_rate,none"] == pytest.approx(_unparsed_yes_rate())
    assert results["soundness,none"] == 0.0  # "Yes" is never the sound answer of a legal item


def test_lmms_eval_runs_from_the_tasks_dir_copy_with_the_hook_off(installed_bin: Path, tmp_path: Path) -> None:
    env = offline_env(tmp_path, FAIRNESS_EVALS_AUTOLOAD="0")
    folder = run(
        [str(installed_bin / "fairness-evals"), "tasks-dir", "lmms-eval"], env=env, cwd=tmp_path
    ).stdout.strip()
    assert "task-roots" in folder  # lmms-eval takes one folder: the cached copy of our three benchmarks' YAMLs
    results = _fairlens_dummy_eval(installed_bin, tmp_path, "--include_path", folder, FAIRNESS_EVALS_AUTOLOAD="0")
    assert results["unparsed_rate,none"] == pytest.approx(_unparsed_yes_rate())


def test_lmms_eval_finds_our_model_backends_in_the_installed_copy(installed_bin: Path, tmp_path: Path) -> None:
    code = (
        "import json, sys; from lmms_eval.models import get_model; "
        "classes = [get_model(name) for name in ('from_folder', 'diffusers_t2i')]; "
        "print(json.dumps([[c.__module__, sys.modules[c.__module__].__file__] for c in classes]))"
    )
    out = run([str(installed_bin / "python"), "-c", code], env=offline_env(tmp_path), cwd=tmp_path).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert [module for module, _ in found] == [
        "fairness_evals.generation.from_folder",
        "fairness_evals.generation.diffusers_t2i",
    ]
    assert all(path.startswith(str(installed_bin.parent)) for _, path in found)  # the wheel's copy, not the checkout


def test_lm_eval_runs_our_task_with_no_flags_and_report_and_check_read_it(installed_bin: Path, tmp_path: Path) -> None:
    code, results, log = _dummy_run(installed_bin, tmp_path, "fact_or_fair_objective", "--log_samples")
    assert code == 0 and results is not None, log[-3000:]
    task = results["results"]["fact_or_fair_objective"]
    assert task["unparsed_rate,none"] == 1.0  # the dummy model answers "lol"
    assert task["s_fact_gender,none"] != task["s_fact_gender,none"]  # NaN: nothing parsed, never a perfect score
    assert results["configs"]["fact_or_fair_objective"]["metadata"]["fact_or_fair_seed"] == 0
    env = offline_env(tmp_path)
    report = tmp_path / "report.html"
    run(
        [str(installed_bin / "fairness-evals"), "report", str(tmp_path / "out"), "--out", str(report)],
        env=env,
        cwd=tmp_path,
    )
    assert "fact_or_fair_objective" in report.read_text(encoding="utf-8")
    # The dummy model's "lol" parses as nothing: every score is null for coverage, and the gate says so.
    gate = run(
        [str(installed_bin / "fairness-evals"), "check", str(tmp_path / "out"), "--tasks", "fact_or_fair_objective"],
        env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert gate.returncode != 0 and "coverage" in (gate.stdout + gate.stderr)
