"""One task's samples come from one run (issue 33, red team 8): lines of two seeds, data versions, conventions,
minimum coverages or corpora in one task are an error naming two lines that differ, in every reader that pools them
(:class:`fairness_evals.jsonio.OneRun`), as a document answered twice already is.

The samples are what the harnesses log: lm-eval lines carry the Fact-or-Fair document and our readable record
(``process_results``); lmms-eval lines carry no document, only our readable record with its corpus provenance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fact_fair_tasks import scoring
from fact_fair_tasks.documents import documents_for
from fairness_evals.commands.main import main

TASK = "fact_or_fair_subjective_base_lite"
STAMP = "2026-12-01T10-00-00.000000"
REPLY = '{"answer": "A"}'


def lm_eval_line(index: int, doc: dict[str, Any]) -> dict[str, Any]:
    return {"doc_id": index, "doc": doc, "resps": [[REPLY]], "filtered_resps": [REPLY],
            **scoring.process_results(doc, [REPLY])}  # fmt: skip


def write_run(folder: Path, docs: list[dict[str, Any]]) -> Path:
    """An lm-eval output folder of the base lite task: its samples file (returned) and its results file."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = folder / f"samples_{TASK}_{STAMP}.jsonl"
    samples.write_text("".join(json.dumps(lm_eval_line(i, d)) + "\n" for i, d in enumerate(docs)), encoding="utf-8")
    results = {"results": {TASK: {"alias": TASK, "s_fair_gender,none": 0.5}}, "configs": {TASK: {"task": TASK}},
               "config": {"model": "local-chat-completions", "model_args": "model=served", "limit": None},
               "n-samples": {TASK: {"original": len(docs), "effective": len(docs)}}}  # fmt: skip
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results), encoding="utf-8")
    return samples


def base_docs(seed: int = 0) -> list[dict[str, Any]]:
    return [{**doc, "task": "fact_or_fair_subjective_base"} for doc in documents_for("base", seed=seed, draws=10)]


def mixed(field: str) -> tuple[list[dict[str, Any]], Any, Any]:
    """The first half of a seed-0 run's documents and the second half of another run's: another seed (different
    documents under the same ids), or the same documents with another data version, conventions or threshold."""
    docs = base_docs()
    half = len(docs) // 2
    if field == "seed":
        other = base_docs(seed=1)[half:]
    else:
        value = {"data_version": 0, "conventions": "released", "min_coverage": 0.0}[field]
        other = [{**doc, field: value} for doc in docs[half:]]
    return docs[:half] + other, docs[0][field], other[0][field]


FIELDS = ["seed", "data_version", "conventions", "min_coverage"]


@pytest.mark.parametrize("field", FIELDS)
def test_score_refuses_a_task_whose_samples_mix_two_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture, field: str
) -> None:
    """Red team 8: `score FOLDER` reported seed 0 (the first line's), `score fact_or_fair --responses` seed -1."""
    docs, first, second = mixed(field)
    samples = write_run(tmp_path / "run" / "served", docs)
    expected = (
        f"{samples}:{len(docs) // 2 + 1}: the lines of {TASK} come from two runs: {field} {json.dumps(second)} here, "
        f"{json.dumps(first)} at {samples}:1; score one run's samples at a time"
    )
    for command in (["score", str(tmp_path / "run")], ["score", "fact_or_fair", "--responses", str(tmp_path / "run")]):
        assert main([*command, "--out", str(tmp_path / "score.json")]) == 2
        err = capsys.readouterr().err
        assert expected in err and err.count("\n") == 1, err
        assert not (tmp_path / "score.json").exists()


def test_check_and_compare_name_the_two_lines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from fairness_evals.compare.problem import adapters
    from fairness_evals.compare.runs import TaskRun, read_records

    docs, _, _ = mixed("seed")
    samples = write_run(tmp_path / "run" / "served", docs)
    line = f"{samples}:{len(docs) // 2 + 1}: the lines of {TASK} come from two runs: seed 1 here, 0 at {samples}:1"
    assert main(["check", str(tmp_path / "run")]) == 1
    shown = line.split(" 0 at ")[0]  # check cuts a long line: on a long temporary path, within the second path
    assert f"its samples cannot be scored, so only its headlines show: {shown}" in capsys.readouterr().err
    adapter = next(a for a in adapters() if a.owns(TASK))
    with pytest.raises(ValueError, match="come from two runs") as error:
        read_records(TaskRun(TASK, {}, {}, samples, samples.with_name(f"results_{STAMP}.json")), adapter)
    assert str(error.value).startswith(line)


def test_one_run_scores_as_before(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_run(tmp_path / "run" / "served", base_docs(seed=1))
    assert main(["score", str(tmp_path / "run"), "--out", str(tmp_path / "score.json")]) == 0
    assert json.loads((tmp_path / "score.json").read_text())["provenance"][TASK]["seed"] == 1


# ----------------------------------------------------------------------------- lmms-eval lines: no document
def fairlens_doc(image: int, corpus: str) -> dict[str, Any]:
    from fairlens_tasks.labels import AGE_BANDS, GENDERS, RACES

    return dict(id=f"img{image}/H01", question_index=0, gender=GENDERS[image % 2], race=RACES[0],
                age_band=AGE_BANDS[0], image_unit=image, options=["Yes", "No", "Cannot tell"], adverse=["No"],
                association=[], sound_answer="Cannot tell", seed=0, sample_fraction=1.0, corpus_sha256=corpus,
                data_version=1)  # fmt: skip


def test_fairlens_samples_of_two_corpora_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The closed tasks' detail (score, check, report) reads the provenance each logged record carries."""
    from fairlens_tasks import scoring as fairlens
    from fairlens_tasks.normalise import normalise

    docs = [fairlens_doc(i, "aaaa" if i < 3 else "bbbb") for i in range(6)]
    samples = tmp_path / "run" / "model" / "20261201_100000_samples_fairlens_hiring.jsonl"
    samples.parent.mkdir(parents=True)
    rows = [{"doc_id": i, fairlens.CARRIER: fairlens.readable_record(d, normalise("Yes", d["options"]))}
            for i, d in enumerate(docs)]  # fmt: skip
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["score", str(tmp_path / "run"), "--out", str(tmp_path / "score.json")]) == 2
    assert (
        f'{samples}:4: the lines of fairlens_hiring come from two runs: corpus_sha256 "bbbb" here, "aaaa" at '
        f"{samples}:1"
    ) in capsys.readouterr().err


def test_judge_refuses_open_ended_answers_of_two_seeds(tmp_path: Path) -> None:
    from fairlens_tasks import open_scoring
    from fairlens_tasks.judging.samples import read_answers

    docs = [{**fairlens_doc(i, "aaaa"), "seed": 0 if i < 2 else 7} for i in range(4)]
    samples = tmp_path / "20261201_100000_samples_fairlens_open_legal.jsonl"
    rows = [{open_scoring.CARRIER: open_scoring.readable_record(d, f"Answer {i}.")} for i, d in enumerate(docs)]
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(ValueError) as error:
        read_answers([(samples, "fairlens_open_legal")])
    assert str(error.value).startswith(
        f"{samples.name}:3: the lines of fairlens_open_legal come from two runs: seed 7 here, 0 at {samples.name}:1"
    )
