"""No command overwrites what it reads (issue 34; red team finding 7).

Before, ``score fact_or_fair --responses r.jsonl --out r.jsonl`` replaced the model's responses with the score JSON,
``report run --out run/<model>/results_<date>.json`` replaced the harness results with HTML, and ``judge d2 --details
<its samples file>`` overwrote the only copy of the answers; all exited 0. Now an output that is an input file (by
path, symbolic link or hard link) or lies inside an input folder is refused in one line, exit 2, before any work
(:func:`fairness_evals.jsonio.refuse_overwriting`, from the CLI's one entry point), and a file read while the command
ran (the responses a score output records) is never written over (:func:`fairness_evals.jsonio.replacing`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from objective_run import DATE, objective_run

from fairness_evals.commands.main import main


def _refused(capsys: pytest.CaptureFixture, argv: list[str], *messages: str) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert all(message in err for message in messages), err
    return err


def _responses(path: Path, letter: str = "A") -> Path:
    from fact_fair_tasks.documents import documents_for

    lines = [{"id": doc["id"], "response": f'{{"answer": "{letter}"}}'} for doc in documents_for("objective")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_score_refuses_to_write_over_its_responses_by_path_link_or_hard_link(tmp_path: Path) -> None:
    """The red team's case, through the installed command: the responses stay as they were."""
    responses = _responses(tmp_path / "r.jsonl")
    before = responses.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(responses)
    os.link(responses, tmp_path / "hard.jsonl")
    command = [str(Path(sys.executable).parent / "fairness-evals"), "score", "fact_or_fair", "--responses", "r.jsonl"]
    for out, extra in (("r.jsonl", ""), ("link.jsonl", ""), ("hard.jsonl", " (the same file as r.jsonl)")):
        done = subprocess.run([*command, "--out", out], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr == (
            f"error: fairness-evals: --out {out}: an input of this command{extra}; writing it would destroy it: give "
            "another path\n"
        )
    assert responses.read_bytes() == before


def test_report_refuses_to_write_over_the_harness_results_or_into_the_run(tmp_path: Path, capsys) -> None:
    run = objective_run(tmp_path / "run")
    results = run / f"results_{DATE}.json"
    before = results.read_bytes()
    _refused(capsys, ["report", str(tmp_path / "run"), "--out", str(results)], f"--out {results}: inside ")
    _refused(capsys, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "run" / "report.html")], "a folder")
    _refused(capsys, ["report", str(results), "--out", str(results)], "an input of this command")
    assert results.read_bytes() == before and sorted(p.name for p in run.iterdir()) == [
        f"results_{DATE}.json", f"samples_fact_or_fair_objective_{DATE}.jsonl",
    ]  # fmt: skip
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "report.html")]) == 0  # beside it: fine


def test_judge_refuses_details_over_the_answers_it_judges_before_judging(tmp_path: Path, capsys) -> None:
    """Refused before any work: no judge endpoint is ever asked (the one given does not exist)."""
    samples = tmp_path / "d2" / "m" / "20260101_000000_samples_fairlens_open_legal.jsonl"
    samples.parent.mkdir(parents=True)
    samples.write_text('{"doc_id": 0}\n')
    judge = ["--judge", "openai:judge", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"]
    _refused(capsys, ["judge", str(tmp_path / "d2"), *judge, "--details", str(samples)], f"--details {samples}: inside")
    _refused(capsys, ["judge", str(samples), *judge, "--details", str(samples)], "an input of this command")
    cache = tmp_path / "judge.sqlite"
    cache.write_bytes(b"")
    _refused(capsys, ["judge", str(samples), *judge, "--cache", str(cache), "--out", str(cache)], "an input")
    assert samples.read_text() == '{"doc_id": 0}\n' and cache.read_bytes() == b""


def test_every_output_option_of_every_command_is_checked(tmp_path: Path, capsys) -> None:
    run = objective_run(tmp_path / "run")
    samples = run / f"samples_fact_or_fair_objective_{DATE}.jsonl"
    other = objective_run(tmp_path / "other")
    metadata = tmp_path / "metadata.json"
    metadata.write_text('{"fact_or_fair_min_coverage": 0.5}')
    _refused(capsys, ["score", str(tmp_path / "run"), "--out", str(run / "detail.json")], "inside")
    _refused(capsys, ["compare", str(run), str(other), "--json", str(samples)], f"--json {samples}: inside")
    _refused(capsys, ["compare", str(run), str(other), "--out", str(other / "table.md")], "inside")
    both = tmp_path / "c.json"
    _refused(capsys, ["compare", str(run), str(other), "--json", str(both), "--out", str(both)], "the same file as")
    _refused(capsys, ["export", "fact_or_fair", "--metadata", str(metadata), "--out", str(metadata)], "an input")
    _refused(capsys, ["iris-profile", str(run), "--out", str(run / "profile.txt")], "inside")
    _refused(capsys, ["iris-profile", str(samples), "--out", str(samples)], "an input of this command")
    assert not (tmp_path / "c.json").exists() and metadata.read_text() == '{"fact_or_fair_min_coverage": 0.5}'


def test_a_file_a_score_output_records_is_not_written_over(tmp_path: Path, capsys) -> None:
    """``compare`` reads the responses a score output records: an ``--out`` naming one is refused by the shared writer
    (the arguments do not name it), the responses unchanged."""
    first, second = _responses(tmp_path / "a.jsonl", "A"), _responses(tmp_path / "b.jsonl", "B")
    for responses in (first, second):
        out = str(responses.with_suffix(".json"))
        assert main(["score", "fact_or_fair", "--responses", str(responses), "--out", out]) == 0  # beside: fine
    before = first.read_bytes()
    argv = ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--resamples", "200", "--out", str(first)]
    _refused(capsys, argv, f"{first}: this command read it, so it is not written over (nothing was written)")
    assert first.read_bytes() == before and not list(tmp_path.glob(".*.tmp"))
