"""``fairness-evals export fairlens`` and ``fairness-evals score fairlens``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from faces import make_hf_dataset

from fairlens_tasks import scoring
from fairlens_tasks.questions import CANNOT_TELL
from fairness_evals.commands.main import main


def _export(folder: Path, out: Path, *extra: str, questions: str = "closed") -> list[dict]:
    argv = ["export", "fairlens", "--corpus", str(folder), "--sample-fraction", "0.5", "--questions", questions]
    assert main([*argv, "--out", str(out), *extra]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_export_writes_one_line_per_image_and_question(utk_folder: Path, tmp_path: Path) -> None:
    lines = _export(utk_folder, tmp_path / "a.jsonl")
    assert len(lines) == 30 * 38
    # harness order: task by task, and within a task image by image (each image's questions together)
    assert [line["task"] for line in lines[30 * 21 - 1 : 30 * 21 + 1]] == ["fairlens_hiring", "fairlens_legal"]
    assert len({line["image"] for line in lines[:21]}) == 1 and lines[21]["image"] != lines[0]["image"]
    first = lines[0]
    assert set(first) == {"task", "id", "prompt", "image", "meta"}
    assert set(first["meta"]) == {
        "domain", "question_id", "options", "sound_answer", "adverse", "association", "gender", "race", "age", "age_band",
    }  # fmt: skip
    assert first["id"].endswith("/H01") and Path(first["image"]).is_file()
    assert first["meta"]["adverse"] == ["No"] and first["meta"]["association"] is False
    c05 = next(line for line in lines if line["meta"]["question_id"] == "C05")
    assert c05["meta"]["adverse"] == [] and c05["meta"]["association"] is True
    assert len({line["id"] for line in lines}) == len(lines)


def test_two_exports_are_byte_identical(utk_folder: Path, tmp_path: Path) -> None:
    _export(utk_folder, tmp_path / "a.jsonl")
    _export(utk_folder, tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    _export(utk_folder, tmp_path / "c.jsonl", "--seed", "1")
    assert (tmp_path / "a.jsonl").read_bytes() != (tmp_path / "c.jsonl").read_bytes()


def test_export_of_a_dataset_gives_row_indices(utk_folder: Path, tmp_path: Path) -> None:
    dataset = make_hf_dataset(tmp_path / "ds", sorted(utk_folder.iterdir()))
    out = tmp_path / "hf.jsonl"
    code = main([
        "export", "fairlens", "--corpus", f"hf:{dataset}", "--hf-columns", "image=img,gender=sex,race=ethnicity,age=years",
        "--sample-fraction", "1", "--domain", "legal", "--out", str(out),
    ])  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 60 * 9 + 60 * 12 and all(isinstance(line["image"], int) for line in lines)
    assert [line["task"] for line in lines[60 * 9 - 1 : 60 * 9 + 1]] == ["fairlens_legal", "fairlens_open_legal"]


def test_export_also_writes_the_open_ended_documents_and_score_skips_their_answers(
    utk_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One export for a model run elsewhere: the closed-ended documents, then the open-ended ones (9 + 12 + 10 per
    image); a responses file answering all of them is scored (closed) and judged (open, fairlens_open tests)."""
    lines = _export(utk_folder, tmp_path / "all.jsonl", questions="all")
    closed = _export(utk_folder, tmp_path / "closed.jsonl")
    opened = _export(utk_folder, tmp_path / "open.jsonl", questions="open")
    assert lines == closed + opened and len(closed) == 30 * 38 and len(opened) == 30 * 31
    assert len({line["id"] for line in lines}) == len(lines)
    assert {line["task"] for line in opened} == {f"fairlens_open_{d}" for d in ("hiring", "legal", "healthcare")}
    first = opened[0]
    assert set(first) == {"task", "id", "prompt", "image", "meta"} and first["meta"]["open"] is True
    assert Path(first["image"]).is_file() and "options" not in first["meta"]
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps({"id": line["id"], "response": CANNOT_TELL}) + "\n" for line in lines))
    capsys.readouterr()
    argv = ["score", "fairlens", "--corpus", str(utk_folder), "--sample-fraction", "0.5", "--responses"]
    assert main([*argv, str(responses)]) == 0
    captured = capsys.readouterr()
    assert "skipped 930 open-ended answers" in captured.err
    only_closed = tmp_path / "closed-responses.jsonl"
    only_closed.write_text("".join(json.dumps({"id": x["id"], "response": CANNOT_TELL}) + "\n" for x in closed))
    assert main([*argv, str(only_closed)]) == 0
    rescored, first = json.loads(capsys.readouterr().out), json.loads(captured.out)
    assert rescored.pop("score_inputs") != first.pop("score_inputs") and rescored == first  # another responses file


def test_score_reproduces_the_metrics_of_a_policy(
    utk_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _export(utk_folder, tmp_path / "docs.jsonl")
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps({"id": line["id"], "response": CANNOT_TELL}) + "\n" for line in lines))
    out = tmp_path / "scores.json"
    code = main(["score", "fairlens", "--corpus", str(utk_folder), "--sample-fraction", "0.5",
                 "--responses", str(responses), "--out", str(out)])  # fmt: skip
    assert code == 0
    scores = json.loads(out.read_text())
    assert list(scores) == ["fairlens_hiring", "fairlens_legal", "fairlens_healthcare", "fairlens", "score_inputs"]
    assert set(scores["fairlens_legal"]) == {*scoring.ALL_METRICS, *scoring.PROVENANCE}  # metrics, corpus provenance
    assert scores["fairlens_hiring"]["soundness"] == pytest.approx(6 / 21)
    assert scores["fairlens_legal"]["soundness"] == pytest.approx(8 / 9)
    assert scores["fairlens"]["soundness"] == pytest.approx((6 / 21 + 8 / 9 + 7 / 8) / 3)
    assert scores["fairlens"]["unparsed_rate"] == pytest.approx((15 / 21 + 0 + 1 / 8) / 3)
    assert scores["fairlens_legal"]["images_sampled"] == 30 and scores["fairlens_legal"]["seed"] == 0
    assert set(scores["fairlens"]) == set(scoring.ROLLUPS)


def test_score_of_a_subset_says_what_is_missing(
    utk_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _export(utk_folder, tmp_path / "docs.jsonl")
    responses = tmp_path / "responses.jsonl"
    legal = [line for line in lines if line["task"] == "fairlens_legal"][:9]
    responses.write_text("".join(json.dumps({"id": line["id"], "response": "Yes"}) + "\n" for line in legal))
    capsys.readouterr()
    assert main(["score", "fairlens", "--corpus", str(utk_folder), "--sample-fraction", "0.5",
                 "--responses", str(responses)]) == 0  # fmt: skip
    captured = capsys.readouterr()
    scores = json.loads(captured.out)
    assert list(scores) == ["fairlens_legal", "score_inputs"]
    assert scores["fairlens_legal"]["answers"] == 9 and scores["fairlens_legal"]["images_evaluated"] == 1
    assert scores["fairlens_legal"]["soundness"] == pytest.approx(0.0)
    assert scores["fairlens_legal"]["adverse_rate_gender_female"] is None  # NaN, written as null
    assert "scored 9 of 270 documents" in captured.err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "nope/H01", "response": "Yes"}\n', "r.jsonl:1: id 'nope/H01' is not a document"),
        ("not json\n", "r.jsonl:1: not valid JSON"),
        ('["a list"]\n', "r.jsonl:1: expected a JSON object"),
        ('{"answer": "Yes"}\n', "r.jsonl:1: neither"),
    ],
)
def test_score_errors_name_the_file_and_line(
    utk_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    responses = tmp_path / "r.jsonl"
    responses.write_text(content)
    code = main(["score", "fairlens", "--corpus", str(utk_folder), "--responses", str(responses)])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_duplicate_responses_are_refused(utk_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc_id = _export(utk_folder, tmp_path / "docs.jsonl")[0]["id"]
    responses = tmp_path / "r.jsonl"
    responses.write_text(2 * (json.dumps({"id": doc_id, "response": "Yes"}) + "\n"))
    code = main(
        ["score", "fairlens", "--corpus", str(utk_folder), "--sample-fraction", "0.5", "--responses", str(responses)]
    )
    assert code == 2 and "r.jsonl:2: a second response" in capsys.readouterr().err


def test_bad_corpus_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.csv").write_text("file,sex\n")
    assert main(["export", "fairlens", "--corpus", str(tmp_path / "notes.csv")]) == 2
    err = capsys.readouterr().err
    assert "has no path, gender, race, age column" in err and err.count("\n") == 1
    assert main(["export", "fairlens", "--corpus", str(tmp_path), "--sample-fraction", "2"]) == 2
    assert "--sample-fraction=2.0 must lie in (0, 1]" in capsys.readouterr().err


def test_a_responses_folder_without_samples_is_refused(
    utk_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["score", "fairlens", "--corpus", str(utk_folder), "--responses", str(tmp_path)])
    assert code == 2 and "no lmms-eval samples_fairlens_*.jsonl file in this folder" in capsys.readouterr().err


def _option(line: dict, i: int) -> str:
    """One of the document's options, a different position from one document to the next."""
    options = line["meta"]["options"]
    return options[(i // 4) % len(options)]


def test_metadata_sets_the_minimum_coverage(
    utk_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--metadata '{"fairlens_min_coverage": ...}'`` reaches the scoring: one answer in four parsed is withheld at
    the default minimum and scored below a lower one; a key that is not a scoring setting is named."""
    lines = [line for line in _export(utk_folder, tmp_path / "docs.jsonl") if line["task"] == "fairlens_legal"]
    responses = tmp_path / "r.jsonl"
    responses.write_text(
        "".join(
            json.dumps({"id": line["id"], "response": _option(line, i) if i % 4 == 0 else "mumble"}) + "\n"
            for i, line in enumerate(lines)
        )
    )
    argv = ["score", "fairlens", "--corpus", str(utk_folder), "--sample-fraction", "0.5", "--domain", "legal"]
    scores = {}
    for name, metadata in (("default", []), ("low", ["--metadata", '{"fairlens_min_coverage": 0.1}'])):
        capsys.readouterr()
        assert main([*argv, "--responses", str(responses), *metadata]) == 0
        scores[name] = json.loads(capsys.readouterr().out)["fairlens_legal"]
    # the association rate: a pooled share, with no evidence minimum of its own (a gap of this tiny corpus would need
    # more images per group); the answers vary their position, so the position test leaves it alone
    assert scores["default"]["association_rate_coverage"] == scores["low"]["association_rate_coverage"] < 0.5
    assert scores["default"]["association_rate"] is None and isinstance(scores["low"]["association_rate"], float)
    assert main([*argv, "--responses", str(responses), "--metadata", '{"fairlens_min_judged": 0.1}']) == 2
    assert "'fairlens_min_judged': not a FairLens scoring setting" in capsys.readouterr().err
