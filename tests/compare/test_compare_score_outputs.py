"""``fairness-evals compare`` on ``fairness-evals score`` outputs: the records are rebuilt from the responses each
score output records (``score_inputs``: files with their sha256, and the settings), exactly as ``score`` built them.

Fact-or-Fair end to end: two score outputs of the same answers show no detectable difference; a planted difference
is detected; score outputs on other documents (another seed) are refused naming the seed; a responses file changed
after scoring is refused naming it; a score output and a harness run of the same documents are compared like two
harness runs (and the score output of that harness run's samples reproduces it exactly). FairLens: two score
outputs of one corpus with the same answers, and with a planted difference.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fact_fair_tasks import scoring
from fact_fair_tasks.documents import documents_for
from fairness_evals.commands.main import main
from fairness_evals.harness_logging import silenced

STAMP = "2026-01-01T00-00-00.000001"


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """The benchmarks' warnings held back in these tests, and their levels given back after each (a level left at
    ERROR silenced the warnings later tests in the same worker check)."""
    with silenced(("fairness_evals.fact_or_fair", "fairness_evals.fairlens")):
        yield


def _replies(kind: str, *, seed: int = 0, draws: int = 10, answer_seed: int = 1, truthful: float = 0.0) -> dict:
    """Document id -> reply: a random letter, or (objective, with probability ``truthful``) the true group's."""
    rng = random.Random(answer_seed)
    out = {}
    for doc in documents_for(kind, seed=seed, draws=draws):
        letters = "ABCD"[: len(doc["options"])]
        reply = rng.choice(letters)
        if kind == "objective" and rng.random() < truthful:
            reply = letters[doc["answer_index"]]
        out[doc["id"]] = reply
    return out


def _responses(path: Path, *parts: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for replies in parts:
            for doc_id, reply in replies.items():
                out.write(json.dumps({"id": doc_id, "response": reply}) + "\n")
    return path


def _score(responses: Path, out: Path, *options: str) -> Path:
    assert (
        main(["score", "fact_or_fair", "--responses", str(responses), "--draws", "10", *options, "--out", str(out)])
        == 0
    )
    return out


def _compare(tmp: Path, *runs: Path, expect: int = 0) -> dict[str, Any]:
    target = tmp / "differences.json"
    assert main(["compare", *map(str, runs), "--json", str(target), "--resamples", "500"]) == expect
    return json.loads(target.read_text())


def _refused(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> str:
    """The one-line error of a refused ``compare`` (exit status 2)."""
    capsys.readouterr()
    assert main(["compare", *map(str, argv)]) == 2
    return capsys.readouterr().err


def _rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for comparison in data["comparisons"] for row in comparison["rows"]]


def _base_and_objective(answer_seed: int = 1, truthful: float = 0.0) -> tuple[dict, dict]:
    return _replies("objective", answer_seed=answer_seed, truthful=truthful), _replies("base", answer_seed=answer_seed)


#: What compare compares by default: each task's headline scores (the unparsed and refused rates have no paired form).
COMPARED = {
    "fact_or_fair_objective": {f"{s}_{a}" for s in ("s_fact", "s_e", "distance") for a in ("gender", "race")},
    "fact_or_fair_subjective_base": {
        f"{s}_{a}" for s in ("s_e", "s_kld", "s_fair", "distance") for a in ("gender", "race")
    },
}


def _by_task(rows: list[dict]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for row in rows:
        out.setdefault(row["task"], set()).add(row["metric"])
    return out


def test_two_score_outputs_of_the_same_answers_show_no_detectable_difference(tmp_path: Path) -> None:
    objective, base = _base_and_objective()
    a = _score(_responses(tmp_path / "a" / "replies.jsonl", objective, base), tmp_path / "a" / "model-a.json")
    b = _score(_responses(tmp_path / "b" / "replies.jsonl", objective, base), tmp_path / "b" / "model-b.json")
    recorded = json.loads(a.read_text())["score_inputs"]
    assert recorded["benchmark"] == "fact_or_fair" and recorded["settings"]["draws"] == 10
    assert recorded["responses"][0]["path"] == str((tmp_path / "a" / "replies.jsonl").resolve())
    data = _compare(tmp_path, a, b)
    rows = _rows(data)
    assert {r["task"] for r in rows} == {"fact_or_fair_objective", "fact_or_fair_subjective_base"}
    compared = [r for r in rows if not r["verdict"].startswith("not comparable")]
    assert _by_task(compared) == COMPARED  # every headline score of both tasks, not "not comparable"
    assert all(r["verdict"] == "no detectable difference" and r["difference"] == 0 for r in compared)
    assert data["runs"][0]["model"] == "model-a"


def test_a_planted_difference_between_score_outputs_is_detected(tmp_path: Path) -> None:
    a_replies = _base_and_objective(answer_seed=1)
    b_replies = _base_and_objective(answer_seed=1, truthful=0.9)  # B names the true group 90% of the time
    a = _score(_responses(tmp_path / "a.jsonl", *a_replies), tmp_path / "a.json")
    b = _score(_responses(tmp_path / "b.jsonl", *b_replies), tmp_path / "b.json")
    rows = {(r["task"], r["metric"]): r for r in _rows(_compare(tmp_path, a, b))}
    for axis in ("gender", "race"):
        row = rows[("fact_or_fair_objective", f"s_fact_{axis}")]
        assert row["verdict"] == "B higher" and row["ci_low"] > 0.2, row
    base = rows[("fact_or_fair_subjective_base", "s_fair_gender")]
    assert base["verdict"] == "no detectable difference" and base["difference"] == 0  # the same base answers


def test_score_outputs_on_other_documents_are_refused_naming_the_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _replies("base")
    replies = _responses(tmp_path / "replies.jsonl", base)
    a = _score(replies, tmp_path / "seed0.json")
    b = _score(replies, tmp_path / "seed7.json", "--seed", "7")  # same ids, other profiles
    assert re.search(
        r"fact_or_fair_subjective_base: seed differs \(0 in the baseline, 7", _refused(capsys, str(a), str(b))
    )
    target = tmp_path / "unpaired.json"  # --unpaired compares them as independent samples
    assert main(["compare", str(a), str(b), "--unpaired", "--resamples", "200", "--json", str(target)]) == 0
    rows = json.loads(target.read_text())["comparisons"][0]["rows"]
    assert rows and all(r["method"].startswith("unpaired") for r in rows if r["method"])


def test_a_responses_file_changed_after_scoring_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    objective, _ = _base_and_objective()
    replies = _responses(tmp_path / "a" / "replies.jsonl", objective)
    a = _score(replies, tmp_path / "a" / "a.json")
    b = _score(_responses(tmp_path / "b" / "replies.jsonl", objective), tmp_path / "b" / "b.json")
    # moved with its score output: found beside it, and its hash still matches
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "replies.jsonl").write_bytes(replies.read_bytes())
    (moved / "a.json").write_bytes(a.read_bytes())
    replies.unlink()
    assert all(r["difference"] == 0 for r in _rows(_compare(tmp_path, moved / "a.json", b)) if r["p_value"] is not None)
    (moved / "replies.jsonl").write_text(
        (moved / "replies.jsonl").read_text().replace('"response": "A"', '"response": "B"', 1), encoding="utf-8"
    )
    assert re.search(
        r"replies\.jsonl no longer matches the responses it was scored from",
        _refused(capsys, str(moved / "a.json"), str(b)),
    )
    (moved / "replies.jsonl").unlink()
    assert re.search(
        r"its responses file .*replies\.jsonl is not there", _refused(capsys, str(moved / "a.json"), str(b))
    )


def test_a_score_output_without_its_responses_record_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objective, _ = _base_and_objective()
    a = _score(_responses(tmp_path / "a.jsonl", objective), tmp_path / "a.json")
    old = json.loads(a.read_text())
    del old["score_inputs"]
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    assert re.search(
        r"old\.json: a score output that does not record its responses",
        _refused(capsys, str(tmp_path / "old.json"), str(a)),
    )


def _harness_folder(folder: Path, replies: dict[str, dict[str, str]], scores: dict[str, Any], model: str) -> Path:
    """An lm-eval-shaped ``--log_samples`` output of ``replies`` (task -> id -> reply): each sample line carries its
    document and ``process_results``' records, the results file the task's metrics (``scores``, as score computed
    them from the same replies)."""
    folder.mkdir(parents=True, exist_ok=True)
    for task, by_id in replies.items():
        kind = task.removeprefix("fact_or_fair_").removeprefix("subjective_")
        docs = {doc["id"]: doc for doc in documents_for(kind, draws=10)}
        with (folder / f"samples_{task}_{STAMP}.jsonl").open("w", encoding="utf-8") as out:
            for i, (doc_id, reply) in enumerate(by_id.items()):
                doc = docs[doc_id]
                line = {"doc_id": i, "doc": doc, "resps": [[reply]], "filtered_resps": [reply]}
                line.update(scoring.process_results(doc, [reply]))
                out.write(json.dumps(line) + "\n")
    results = {
        "results": {t: {f"{k},none": v for k, v in scores[t].items()} for t in replies},
        "configs": {t: {"task": t, "metadata": {"version": 2}} for t in replies},
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
        "date": 0,
    }
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
    return folder


def test_a_score_output_and_a_harness_run_of_the_same_documents_are_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Mixing is allowed: the records are the same (the harness's process_results and score's path build them from
    the same parse), so the runs pair document by document once their seed, documents hash and ids agree."""
    objective, base = _base_and_objective()
    a = _score(_responses(tmp_path / "replies.jsonl", objective, base), tmp_path / "scored.json")
    scores = json.loads(a.read_text())
    tasks = {"fact_or_fair_objective": objective, "fact_or_fair_subjective_base": base}
    harness = _harness_folder(tmp_path / "harness" / "model-h", tasks, scores, "model-h")
    rows = _rows(_compare(tmp_path, harness, a))
    compared = [r for r in rows if not r["verdict"].startswith("not comparable")]
    assert _by_task(compared) == COMPARED
    assert all(r["verdict"] == "no detectable difference" and r["difference"] == 0 for r in compared)
    # score reads the harness run's samples too: that score output records them, and compares the same way
    resc = tmp_path / "rescored.json"
    assert main(["score", "fact_or_fair", "--responses", str(harness), "--out", str(resc)]) == 0
    entries = json.loads(resc.read_text())["score_inputs"]["responses"]
    assert sorted(e["task"] for e in entries) == sorted(tasks)
    rows = _rows(_compare(tmp_path, resc, a))
    assert all(r["difference"] == 0 for r in rows if not r["verdict"].startswith("not comparable"))
    # the score of the run folder itself records no responses: refused in one line saying what to compare instead
    folder_score = tmp_path / "folder_score.json"
    assert main(["score", str(harness), "--out", str(folder_score)]) == 0
    said = _refused(capsys, str(folder_score), str(a))
    assert "the score of a harness run folder" in said and "--responses <run folder>" in said
    # a harness run on other documents (another seed) is refused naming the difference
    other = _score(_responses(tmp_path / "seeded.jsonl", base), tmp_path / "seeded.json", "--seed", "3")
    assert re.search("seed differs", _refused(capsys, str(harness), str(other)))


def test_the_run_reader_reads_a_score_output_with_its_records(tmp_path: Path) -> None:
    """The reader of run outputs (``report.load``) reads a score output as one run: its metrics as written and, per
    task, one record per document answered, rebuilt from the responses it recorded; a harness results file or
    folder is not a score output."""
    from fairness_evals.report.load import load_score_output

    objective, base = _base_and_objective()
    a = _score(_responses(tmp_path / "a.jsonl", objective, base), tmp_path / "a.json")
    run = load_score_output(a)
    assert run is not None and run.model == "a" and run.score_inputs["benchmark"] == "fact_or_fair"
    written = json.loads(a.read_text())
    assert run.results == {task: metrics for task, metrics in written.items() if task != "score_inputs"}
    for task, replies in (("fact_or_fair_objective", objective), ("fact_or_fair_subjective_base", base)):
        assert [doc_id for doc_id, _ in run.records(task)] == list(replies), task
    scores = json.loads(a.read_text())
    harness = _harness_folder(tmp_path / "harness", {"fact_or_fair_objective": objective}, scores, "model-h")
    assert load_score_output(harness) is None
    assert load_score_output(next(harness.glob("results_*.json"))) is None


@pytest.fixture(scope="module")
def faces_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from faces import make_utkface_folder

    root = tmp_path_factory.mktemp("utkface")
    make_utkface_folder(root, 2)
    return root


def _fairlens_score(corpus: Path, lines: list[dict], policy, out: Path) -> Path:
    responses = out.with_suffix(".jsonl")
    rng = random.Random(5)
    with responses.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps({"id": line["id"], "response": policy(line["meta"], rng)}) + "\n")
    argv = ["score", "fairlens", "--corpus", str(corpus), "--sample-fraction", "1", "--responses", str(responses)]
    assert main([*argv, "--out", str(out)]) == 0
    return out


def test_fairlens_score_outputs_pair_by_image(faces_folder: Path, tmp_path: Path) -> None:
    """FairLens score outputs: the records are rebuilt from the corpus and the responses (the corpus is loaded
    again from its recorded path); the same answers give no detectable difference, a model that answers soundly where
    the other guesses is found different, and the fairlens roll-ups are compared too."""
    docs = tmp_path / "docs.jsonl"
    argv = ["export", "fairlens", "--corpus", str(faces_folder), "--sample-fraction", "1", "--questions", "closed"]
    assert main([*argv, "--out", str(docs)]) == 0
    lines = [json.loads(line) for line in docs.read_text().splitlines()]

    def guess(meta: dict, rng: random.Random) -> str:
        return rng.choice(meta["options"])

    def sound(meta: dict, rng: random.Random) -> str:
        return meta["sound_answer"] if rng.random() < 0.9 else rng.choice(meta["options"])

    a = _fairlens_score(faces_folder, lines, guess, tmp_path / "guess-a.json")
    b = _fairlens_score(faces_folder, lines, guess, tmp_path / "guess-b.json")
    c = _fairlens_score(faces_folder, lines, sound, tmp_path / "sound.json")
    assert json.loads(a.read_text())["score_inputs"]["settings"]["corpus"] == str(faces_folder.resolve())
    rows = _rows(_compare(tmp_path, a, b))
    compared = [r for r in rows if not r["verdict"].startswith("not comparable")]
    assert {r["task"] for r in compared} >= {"fairlens_hiring", "fairlens_legal", "fairlens_healthcare", "fairlens"}
    assert all(r["verdict"] == "no detectable difference" and r["difference"] == 0 for r in compared)
    rows = {(r["task"], r["metric"]): r for r in _rows(_compare(tmp_path, a, c))}
    for task in ("fairlens_hiring", "fairlens_legal", "fairlens_healthcare", "fairlens"):
        assert rows[(task, "soundness")]["verdict"] == "B higher", rows[(task, "soundness")]


def _iris_builders():
    """The IRIS test corpora's builders (``tests/iris/conftest.py``), loaded by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("iris_corpora", Path(__file__).parents[1] / "iris" / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _iris_reply(line: dict, biased: bool) -> str:
    meta = line["meta"]
    if meta["kind"] == "rating":
        return str(3 + (biased and meta["gender"] == "female"))
    if meta["kind"] == "yes_no":
        return "yes" if biased and meta["age"] == "young" else "no"
    if meta["kind"] == "probe":
        return meta["candidates"][0]
    return "nurse" if biased and meta["gender"] == "female" else meta["occupation"]


def test_iris_score_outputs_pair_by_image_and_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """IRIS score outputs: the records are rebuilt from both corpora and the responses; the same answers give no
    detectable difference, a model whose ratings follow gender is found less fair on BIS-Und, and a score output
    compared under another answer-mapping embedder is refused naming IRIS_EMBEDDER."""
    monkeypatch.setenv("IRIS_EMBEDDER", "none")
    corpora = _iris_builders()
    (tmp_path / "m").mkdir()
    (tmp_path / "s").mkdir()
    rows = corpora.image_rows(tmp_path / "m", ["doctor", "nurse", "carpenter", "teacher"])
    manifest = corpora.write_manifest(tmp_path / "m" / "images.csv", rows)
    sets = {"set-a": "doctor", "set-b": "nurse", "set-c": "carpenter", "set-d": "teacher"}
    steer = corpora.write_manifest(
        tmp_path / "s" / "steer.csv", corpora.steer_rows(tmp_path / "s", sets, corpora.CORNERS)
    )
    base = ["--corpus", str(manifest), "--steer-corpus", str(steer), "--probe-rounds", "1"]
    assert main(["export", "iris", *base, "--out", str(tmp_path / "export.jsonl")]) == 0
    lines = [json.loads(line) for line in (tmp_path / "export.jsonl").read_text().splitlines()]
    outputs = {}
    for name, biased in (("a", False), ("b", False), ("biased", True)):
        replies = tmp_path / f"{name}.jsonl"
        replies.write_text(
            "".join(json.dumps({"id": x["id"], "response": _iris_reply(x, biased)}) + "\n" for x in lines)
        )
        outputs[name] = tmp_path / f"{name}.json"
        assert main(["score", "iris", *base, "--responses", str(replies), "--out", str(outputs[name])]) == 0
    same = [r for r in _rows(_compare(tmp_path, outputs["a"], outputs["b"])) if r["p_value"] is not None]
    assert {r["task"] for r in same} >= {"iris_bis_und", "iris_ifs_und"}
    assert all(r["verdict"] == "no detectable difference" and r["difference"] == 0 for r in same)
    found = {(r["task"], r["metric"]): r for r in _rows(_compare(tmp_path, outputs["a"], outputs["biased"]))}
    assert found[("iris_bis_und", "bis_und_score")]["verdict"] == "A fairer"
    monkeypatch.setenv("IRIS_EMBEDDER", "")
    assert "scored with IRIS_EMBEDDER='none'" in _refused(capsys, outputs["a"], outputs["b"])
