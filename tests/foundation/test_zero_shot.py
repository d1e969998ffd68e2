"""Zero-shot by design (issue 33): whatever few-shot setting a sweep passes, no document's answer reaches a prompt.

Every task template of ours says ``num_fewshot: 0``, which lm-eval (0.4.11, 0.4.13) and lmms-eval keep whatever
``--num_fewshot`` says; lm-eval's template also gives an empty pool of examples, so that a path that asks for shots
anyway fails before any prompt is built. Inspect has no global flag: its equivalent, a ``-T fewshot=N`` task
argument as inspect_evals tasks take, is not a parameter of ours, so Inspect ignores it with one warning naming the
task. A results file whose ``n-shot`` is above 0 for a task of ours (an older or patched harness) is a problem for
``check``, a note for ``score`` and ``report``. Each harness run here is the real command against a loopback model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import DEV_BIN, lmms_eval_process, load_results, results_and_samples, run, sample_lines
from openai_server import OpenAIServer, fact_or_fair_reply, prompt_text, running
from zero_shot_sweep import LEAVES, LIMIT, PROBE, lm_eval_env

from fact_fair_tasks import scoring as fact_or_fair
from fact_fair_tasks.documents import LITE_DRAWS, documents_for
from fairlens_tasks import scoring as fairlens
from fairlens_tasks.prompts import prompt_for
from fairlens_tasks.questions import closed_questions, open_questions
from fairness_evals import detail, statistics
from fairness_evals.commands.main import main
from fairness_evals.inspect.logs import read_logs
from tests.foundation.test_statistics import _configs
from tests.inspect.runs import MODEL, inspect_eval, loopback_env


def test_every_task_template_of_ours_says_zero_shot() -> None:
    """Every task (not group) of both harnesses' folders resolves to ``num_fewshot: 0``; lm-eval's to an empty pool."""
    for harness in ("lm-eval", "lmms-eval"):
        tasks = {name: config for name, config in _configs(harness).items() if "group" not in config}
        declared = {t.name for t in statistics.all_tasks() if t.harness == harness and not t.group}
        assert set(tasks) == declared, sorted(tasks)
        for name, config in tasks.items():
            assert config.get("num_fewshot") == 0, (harness, name)
            if harness == "lm-eval":
                assert config.get("fewshot_config") == {"samples": []}, name


# ----------------------------------------------------------------------------- lm-eval
def _prompts(task: str) -> set[str]:
    """The prompt text of every document of a Fact-or-Fair task (seed 0)."""
    kind = "objective" if task == "fact_or_fair_objective" else task.split("_")[4]
    return {fact_or_fair.doc_to_text(doc) for doc in documents_for(kind, draws=LITE_DRAWS)}


@pytest.mark.harness
@pytest.mark.parametrize(("version", "fixture"), [("0.4.13", "sweep"), ("0.4.11", "sweep_0411")])
def test_num_fewshot_5_leaves_fact_or_fair_zero_shot_in_lm_eval(
    version: str, fixture: str, request: pytest.FixtureRequest
) -> None:
    out, printed, received = request.getfixturevalue(fixture)
    results = load_results(out)
    assert results["lm_eval_version"].startswith(version), results["lm_eval_version"]
    assert {task: results["n-shot"][task] for task in LEAVES} == dict.fromkeys(LEAVES, 0)
    assert results["n-shot"][PROBE] == 5  # the rest of the sweep keeps its shots
    ours = set()
    for task in LEAVES:
        assert f"num_fewshot has been set to 0 for {task} in its config" in printed, (task, printed[-3000:])
        every = _prompts(task)
        lines = sample_lines(out, task)
        assert len(lines) == LIMIT
        for line in lines:
            own = fact_or_fair.doc_to_text(line["doc"])
            (chat,) = line["arguments"]["gen_args_0"]["arg_0"]
            messages = json.loads(chat)
            turns = [(message["role"], message["content"]) for message in messages]  # 0.4.11 adds a "type"
            assert turns == [("user", own)], (task, messages)  # one turn: no shot, no answer
            assert [text for text in every if text in messages[0]["content"]] == [own]  # no other document's text
            ours.add(own)
    # what the model was sent: each of our prompts alone in its request; the probe's requests carry five shots
    alone = [body["messages"] for body in received if prompt_text(body) in ours]
    assert len(alone) == len(LEAVES) * LIMIT and all(len(messages) == 1 for messages in alone)
    probe = [body["messages"] for body in received if "probe question" in prompt_text(body)]
    assert len(probe) == LIMIT and all(len(messages) == 11 for messages in probe), probe[:1]


_BYPASS = """
import json, lm_eval
from lm_eval.tasks import TaskManager, get_task_dict
from fairness_evals.paths import task_paths
ours = TaskManager(include_path=task_paths("lm-eval"), include_defaults=False)  # our folder only: quicker
task = get_task_dict(["fact_or_fair_objective"], ours)["fact_or_fair_objective"]
task.set_config(key="num_fewshot", value=5)
try:
    task.build_all_requests(limit=2, rank=0, world_size=1)
except Exception as error:
    print(json.dumps({"lm_eval": lm_eval.__file__, "refused": f"{type(error).__name__}: {error}"}))
else:
    print(json.dumps({"lm_eval": lm_eval.__file__, "built": [str(i.args[0]) for i in task.instances]}))
"""


@pytest.mark.harness
@pytest.mark.parametrize("version", ["0.4.13", "0.4.11"])
def test_asking_for_shots_past_the_config_fails_before_any_prompt(
    version: str, lm_eval_0411: Path, tmp_path: Path
) -> None:
    """The defence in depth: a Python caller that sets ``num_fewshot`` on the task object (as a YAML override
    would) finds no example to draw, in both lm-eval versions, before a single request is built."""
    proc = run([str(DEV_BIN / "python"), "-c", _BYPASS], env=lm_eval_env(tmp_path, version, lm_eval_0411), cwd=tmp_path)
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["lm_eval"].startswith(str(lm_eval_0411)) == (version == "0.4.11"), found["lm_eval"]
    assert found.get("refused") == "AssertionError: Error: no documents available for sampling.", found


@pytest.mark.harness
def test_a_few_shot_results_file_is_a_problem_for_check_and_a_note_for_score_and_report(
    sweep: tuple[Path, str, list[dict]], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The zero-shot run passes the few-shot rule; the same run with ``n-shot`` 5 for the objective task (what an
    older or patched harness writes) fails check, and score and report say why."""
    out = sweep[0]
    assert main(["check", str(out), "--allow-limited", "--allow-nan", "*", "--min-coverage", "0"]) == 0
    assert "few-shot" not in capsys.readouterr().err
    shot = tmp_path / "out"
    shutil.copytree(out, shot)
    (results,) = shot.rglob("results_*.json")
    data = json.loads(results.read_text())
    data["n-shot"]["fact_or_fair_objective"] = 5
    results.write_text(json.dumps(data))

    assert main(["check", str(shot), "--allow-limited", "--allow-nan", "*", "--min-coverage", "0"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"check: {results}: a few-shot run (n-shot 5; fact_or_fair_objective): {detail.FEW_SHOT}",
        "check: FAILED, 1 problem(s)",
    ]
    scores = tmp_path / "scores.json"
    assert main(["score", str(shot), "--out", str(scores)]) == 0
    note = f"fairness-evals score: fact_or_fair_objective ran 5-shot (n-shot): {detail.FEW_SHOT}"
    assert note in capsys.readouterr().err.splitlines()
    provenance = json.loads(scores.read_text())["provenance"]
    assert provenance["fact_or_fair_objective"]["n_shot"] == 5
    assert all("n_shot" not in provenance[task] for task in LEAVES[1:])
    page = tmp_path / "report.md"
    assert main(["report", str(shot), "--format", "markdown", "--out", str(page)]) == 0
    assert "Few-shot runs (n-shot above 0): served. The prompts held other documents with their answers" in (
        page.read_text()
    )


def test_shots_reads_tasks_of_ours_only() -> None:
    """Groups (their n-shot repeats their tasks'), other tasks and values that are no count are left out; a task
    without an ``n-shot`` entry is read from its config."""
    results = {
        "n-shot": {"fact_or_fair_lite": 5, "fact_or_fair_objective": 5, "mmlu": 5, "fairlens_legal": True},
        "configs": {"iris_ifs_und": {"num_fewshot": 2}, "fairlens_hiring": {"num_fewshot": 0}},
    }
    assert detail.shots(results) == {"fact_or_fair_objective": 5, "iris_ifs_und": 2}
    assert detail.shots({"results": {}}) == {}


# ----------------------------------------------------------------------------- lmms-eval
@pytest.mark.harness
def test_num_fewshot_5_leaves_fairlens_zero_shot_in_lmms_eval(tmp_path: Path, plumbing_only_vlm: Path) -> None:
    """The tiny test VLM (``llava_hf``, chat path) on a closed and an open FairLens task with ``--num_fewshot 5``:
    n-shot 0, and each logged prompt is its own question's alone. (Without ``num_fewshot: 0`` lmms-eval
    0.7.3 stops the whole run: these tasks have no sampler.)"""
    from faces import make_utkface_folder

    corpus = tmp_path / "faces"
    make_utkface_folder(corpus, 1, seed=5)
    vlm = plumbing_only_vlm
    tasks = ("fairlens_legal", "fairlens_open_legal")
    proc = lmms_eval_process(
        ["--model", "llava_hf", "--model_args", f"pretrained={vlm},device=cpu,device_map=cpu,dtype=float32",
         "--tasks", ",".join(tasks), "--num_fewshot", "5", "--limit", "2", "--batch_size", "1",
         "--output_path", str(tmp_path / "out"), "--log_samples"],
        tmp_path, {"FAIRLENS_CORPUS": str(corpus), "CUDA_VISIBLE_DEVICES": ""}, clear=("FAIRLENS_",),
    )  # fmt: skip
    printed = proc.stdout + proc.stderr
    assert list((tmp_path / "out").rglob("*_results.json")), printed[-3000:]
    results, samples = results_and_samples(tmp_path / "out", tasks)
    assert {task: results["n-shot"][task] for task in tasks} == dict.fromkeys(tasks, 0)
    every = {q.id: prompt_for(q.id) for q in (*closed_questions(), *open_questions())}
    carriers = {"fairlens_legal": fairlens.CARRIER, "fairlens_open_legal": "unjudged_rate"}
    for task in tasks:
        assert f"num_fewshot has been set to 0 for {task} in its config" in printed, task
        assert len(samples[task]) == 2
        for sample in samples[task]:
            question = sample[carriers[task]]["id"].rsplit("/", 1)[1]
            assert sample["input"] == every[question], (task, sample["input"])
            assert [q for q, text in every.items() if text in sample["input"]] == [question]


# ----------------------------------------------------------------------------- Inspect
@pytest.mark.harness
def test_inspect_ignores_a_fewshot_task_argument_naming_the_task(tmp_path: Path) -> None:
    """``-T fewshot=5`` (the inspect_evals tasks' few-shot argument) on two of our tasks: Inspect runs them and says
    once per task that the argument is not used; every request is one user turn holding its own document's prompt;
    the log records no fewshot argument."""
    tasks = ["fact_or_fair_objective", "fact_or_fair_subjective_base_lite"]
    with running(OpenAIServer(fact_or_fair_reply, model_name=MODEL)) as server:
        env = {**loopback_env(server), "COLUMNS": "400"}  # Inspect's log lines unwrapped
        args = ["--model", f"openai-api/local/{MODEL}", "--limit", str(LIMIT), "-T", "fewshot=5"]
        proc = inspect_eval(tmp_path, tasks, *args, env=env)
        received = list(server.received)
    printed = proc.stdout + proc.stderr
    assert proc.returncode == 0, printed[-3000:]
    for task in tasks:
        assert printed.count(f"param 'fewshot' not used by task 'fairness_evals/{task}'") == 1, printed[-3000:]
    entries = {entry.name: entry for entry in read_logs([tmp_path / "logs"])}
    prompts = []
    for task in tasks:
        assert "fewshot" not in entries[task].task_args
        every = _prompts(task)
        for sample in entries[task].samples:
            own = fact_or_fair.doc_to_text(sample.document)
            assert [text for text in every if text in own] == [own]
            prompts.append(own)
    assert len(received) == len(tasks) * LIMIT
    assert sorted(prompt_text(body) for body in received) == sorted(prompts)
    assert all([m["role"] for m in body["messages"]] == ["user"] for body in received)


def test_inspect_tasks_take_no_fewshot_argument() -> None:
    """So that Inspect, not a task of ours, decides: none declares ``fewshot`` (it would then be recorded in the log
    as the run's setting, though the run is zero-shot)."""
    import inspect

    from fact_fair_tasks import inspect_tasks as fact_or_fair
    from fairlens_tasks import inspect_tasks as fairlens
    from iris_tasks import inspect_tasks as iris

    for tasks in (fact_or_fair.TASKS, fairlens.TASKS, iris.TASKS):
        for name, make in tasks.items():
            assert not {"fewshot", "num_fewshot"} & set(inspect.signature(make).parameters), name
