"""Crafted inputs give one line naming ``file:line`` (exit 2), and a ``check`` problem (exit 1) (issue 34; red team
finding 10).

Before: a results file nested 100,000 deep made ``score`` fail with "maximum recursion depth exceeded" and no file
name; ``min_coverage: 1e308`` in a logged document gave "unexpected OverflowError" in ``score``, ``check``,
``report`` and ``compare`` (``check`` exiting 2); a 31-digit integer in a logged record crashed ``compare`` the same
way; a samples line whose reply is ``[{"a": 1}]`` was counted as an unparsed answer. The lines are now read and
checked in one place (:func:`fairness_evals.jsonio.loads_line`: JSON, nesting, integers beyond 64 bits, numbers
beyond the float range), the logged reply by :func:`fairness_evals.run_files.sample_reply` (text, as a responses
file's), a Fact-or-Fair document's threshold where its samples are read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from objective_run import DATE, objective_run

from fairness_evals.commands.main import main

SAMPLES = f"samples_fact_or_fair_objective_{DATE}.jsonl"
RESULTS = f"results_{DATE}.json"


def _run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_error(capsys: pytest.CaptureFixture, *argv: str) -> str:
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and "unexpected" not in err, (argv, err)
    return err


def _check_problem(capsys: pytest.CaptureFixture, folder: Path, *messages: str) -> None:
    code, _, err = _run(capsys, "check", str(folder))
    assert code == 1 and "unexpected" not in err, err
    assert any(all(m in line for m in messages) for line in err.splitlines()), err


def _edit_line(path: Path, number: int, change) -> None:
    """Line ``number`` (1-based) of the samples file ``path`` as ``change(row)`` makes it (written as JSON)."""
    lines = path.read_text().split("\n")
    changed = change(json.loads(lines[number - 1]))
    lines[number - 1] = changed if isinstance(changed, str) else json.dumps(changed)
    path.write_text("\n".join(lines))


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A Fact-or-Fair objective run folder (``run/m``) as lm-eval writes it, and another one (``other/m``) to compare
    it with."""
    objective_run(tmp_path / "other")
    objective_run(tmp_path / "run")
    return tmp_path / "run"


def test_a_results_file_nested_100000_deep_is_named(run: Path, capsys) -> None:
    results = run / "m" / RESULTS
    results.write_text("[" * 100_000 + "]" * 100_000)
    err = _one_error(capsys, "score", str(run))
    assert f"{results}: not valid JSON (nested too deeply)" in err
    _check_problem(capsys, run, str(results), "nested too deeply")
    assert f"{results}: not a readable results file (not valid JSON (nested too deeply))" in _one_error(
        capsys, "report", str(run), "--out", str(run.parent / "r.html")
    )


def _with(key: str, value: Any):
    def change(row: dict[str, Any]) -> dict[str, Any]:
        row["doc"][key] = value
        return row

    return change


def test_a_logged_threshold_of_1e308_is_named_in_every_command(run: Path, capsys) -> None:
    samples = run / "m" / SAMPLES
    _edit_line(samples, 4, _with("min_coverage", 1e308))
    where = f"{samples}:4: doc "
    for argv in (["score", str(run)], ["score", "fact_or_fair", "--responses", str(run)]):
        err = _one_error(capsys, *argv)
        assert where in err and "has min_coverage 1e+308, not a share in [0, 1]" in err, (argv, err)
    _check_problem(capsys, run, where, "not a share in [0, 1]")
    code, _, err = _run(capsys, "report", str(run), "--out", str(run.parent / "r.html"))
    assert code == 0 and "unexpected" not in err  # the report shows it, as any samples that cannot be scored
    assert f"{samples}:4: doc" in (run.parent / "r.html").read_text()
    # compare makes each record from the logged document, as score does: the same line, named
    err = _one_error(capsys, "compare", str(run.parent / "other"), str(run), "--resamples", "200")
    assert f"{samples}:4: fact_or_fair: document" in err and "min_coverage 1e+308 is not a share in [0, 1]" in err, err


def test_an_integer_beyond_64_bits_in_a_logged_record_is_named(run: Path, capsys) -> None:
    from fact_fair_tasks.scoring import CARRIER

    samples = run / "m" / SAMPLES

    def change(row: dict[str, Any]) -> str:  # a record logged as task version 3 logged it (its readers stay)
        row[CARRIER]["record"] = [0] * 11 + [7]
        return json.dumps(row).replace('"record": [', '"record": [' + "1" * 31 + ", ", 1)

    _edit_line(samples, 6, change)
    for argv in (["compare", str(run.parent / "other"), str(run)], ["score", str(run)]):
        err = _one_error(capsys, *argv)
        assert f"{samples}:6: the integer 111111111111... (31 digits) is beyond 64 bits" in err, (argv, err)
    _check_problem(capsys, run, f"{samples}:6: the integer", "beyond 64 bits")


def test_a_number_beyond_the_float_range_is_named(tmp_path: Path, capsys) -> None:
    from fact_fair_tasks.documents import documents_for

    responses = tmp_path / "r.jsonl"
    ids = [doc["id"] for doc in documents_for("objective")]
    responses.write_text(f'{{"id": "{ids[0]}", "response": "A", "score": 1e400}}\n')
    err = _one_error(capsys, "score", "fact_or_fair", "--responses", str(responses))
    assert f"{responses}:1: the number 1e400 is beyond the floating-point range" in err


NOT_TEXT = [([{"a": 1}], "an object"), ([5], "a number (5)"), ([True], "true")]


@pytest.mark.parametrize(("logged", "named"), NOT_TEXT, ids=["object", "number", "true"])
def test_a_samples_reply_that_is_not_text_is_refused_as_in_a_responses_file(
    logged: Any, named: str, run: Path, capsys
) -> None:
    """It was counted as an unparsed answer (``parsed 197``)."""
    samples = run / "m" / SAMPLES
    doc_id = json.loads(samples.read_text().split("\n")[2])["doc"]["id"]
    _edit_line(samples, 3, lambda row: {**row, "filtered_resps": logged})
    message = f"{samples}:3: the logged reply to {doc_id!r} is {named}, not text"
    for argv in (["score", str(run)], ["score", "fact_or_fair", "--responses", str(run)]):
        assert message in _one_error(capsys, *argv), argv
    _check_problem(capsys, run, message)


def test_a_fairlens_samples_reply_that_is_not_text_is_refused(tmp_path: Path, capsys) -> None:
    """The same rule for lmms-eval samples, read by the shared reader (:func:`run_files.sample_reply`)."""
    from faces import make_utkface_folder

    from fairlens_tasks import scoring
    from fairlens_tasks.documents import documents
    from fairlens_tasks.settings import ENV, build_settings

    faces = tmp_path / "faces"
    make_utkface_folder(faces, 1, seed=3)
    docs = documents(build_settings({"corpus": str(faces), "sample_fraction": 1}, ENV), "legal")
    rows = [
        {"doc_id": i, "doc": d, "filtered_resps": ["Yes"], **scoring.process_results(d, ["Yes"])}
        for i, d in enumerate(docs)
    ]
    rows[1]["filtered_resps"] = [{"a": 1}]
    samples = tmp_path / "run" / "m" / "20260101_000000_samples_fairlens_legal.jsonl"
    samples.parent.mkdir(parents=True)
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    argv = ["score", "fairlens", "--corpus", str(faces), "--sample-fraction", "1", "--domain", "legal"]
    err = _one_error(capsys, *argv, "--responses", str(tmp_path / "run"))
    assert f"{samples}:2: the logged reply to {docs[1]['id']!r} is an object, not text" in err


def test_a_logged_record_beyond_64_bits_is_named_by_the_shared_record_reader(tmp_path: Path, capsys) -> None:
    """A FairLens record holding ``1e300`` (records of lmms-eval runs are read by
    :func:`fairness_evals.run_files.sample_records`, and by ``compare``): it was "unexpected OverflowError" in
    ``score``, ``check`` and ``compare``."""
    from coverage_compare import FairLensPair, paired_fairlens_records
    from coverage_fairlens import ClosedPolicy, design

    from tests.compare.synthetic import fairlens_run

    fair = ClosedPolicy("fair", "healthcare", base=0.3)
    rec_a, rec_b = paired_fairlens_records(
        FairLensPair("healthcare", fair, fair, 0.7), design("paper"), np.random.default_rng(0)
    )
    a = fairlens_run(tmp_path / "a", "model-a", {"fairlens_healthcare": rec_a})
    b = fairlens_run(tmp_path / "b", "model-b", {"fairlens_healthcare": rec_b})
    (samples,) = b.glob("*_samples_fairlens_healthcare.jsonl")

    def change(row: dict[str, Any]) -> dict[str, Any]:
        row["soundness"][2] = 1e300
        return row

    _edit_line(samples, 4, change)
    message = f"{samples}:4: the logged record of "
    for argv in (["score", str(b)], ["compare", str(a), str(b), "--resamples", "200"]):
        err = _one_error(capsys, *argv)
        assert message in err and "holds a number beyond 64 bits: [" in err, (argv, err)
    _check_problem(capsys, b, message, "beyond 64 bits")
