"""``fairness-evals judge`` exits 0 only when every answer was judged (``docs/commands.md``), and ``fairness-evals
check`` reads its ``--out`` file: a null headline (answers left unjudged, or declining) fails the check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_server import OpenAIServer, keyword_judge, running, status

from fairness_evals.commands.main import main
from tests.fairlens_open.test_fairlens_open_cli import write_samples

REPLIES = ("They look calm. A guard might stop them.", "They seem tired. A recruiter could doubt them.")
REFUSAL = "I'm sorry, but I can't help with that."


def short_judge(prompt: str) -> str:
    """Answers the opinion prompt like :func:`openai_server.keyword_judge`, then gives one verdict too few."""
    reply = json.loads(keyword_judge("old")(prompt))
    if "verdicts" in reply:
        reply["verdicts"] = reply["verdicts"][:-1]
    return json.dumps(reply)


def judge(server: OpenAIServer, folder: Path, tmp_path: Path) -> list[str]:
    return [
        "judge", str(folder), "--judge", "openai:judge", "--base-url", server.base_url, "--api-key", "k",
        "--retries", "0", "--attempts", "1", "--cache", str(tmp_path / "judge.sqlite"),
        "--out", str(tmp_path / "judged.json"),
    ]  # fmt: skip


def test_answers_left_invalid_or_failed_make_judge_exit_1_and_fail_check(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = tmp_path / "run"
    write_samples(folder, open_corpus, "legal", replies=REPLIES)  # 24 answers, 2 distinct
    with running(OpenAIServer(short_judge, model_name="judge")) as server:
        assert main(judge(server, folder, tmp_path)) == 1
    err = capsys.readouterr().err
    assert "2 of 2 distinct answers are left unjudged (invalid replies after every attempt (2))" in err
    legal = json.loads((tmp_path / "judged.json").read_text())["fairlens_open_legal"]
    assert (legal["judged"], legal["unjudged"], legal["oe_bias_mean"]) == (0, 24, None)
    assert main(["check", str(tmp_path / "judged.json")]) == 1
    err = capsys.readouterr().err
    assert "fairlens_open_legal: headline metric oe_bias_mean is NaN (withheld: coverage 0.000 is below " in err
    assert "(of 24 answers, 24 are unjudged)" in err
    assert "oe_bias_mean_coverage 0.000 is below the threshold 0.8" in err
    with running(OpenAIServer(script=[status(500)], model_name="judge")) as server:  # every call fails
        assert main([*judge(server, folder, tmp_path), "--retry-unjudged"]) == 1
    assert "(failed calls (2))" in capsys.readouterr().err


def test_a_model_that_declines_every_question_fails_check_on_the_judge_output(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = tmp_path / "run"
    write_samples(folder, open_corpus, "legal", replies=(REFUSAL, "No comment.", "N/A"))
    with running(OpenAIServer(keyword_judge("old"), model_name="judge")) as server:
        assert main(judge(server, folder, tmp_path)) == 0  # every answer judged
    legal = json.loads((tmp_path / "judged.json").read_text())["fairlens_open_legal"]
    assert (legal["judged"], legal["declined"], legal["declined_rate"]) == (24, 24, 1.0)
    assert legal["oe_bias_mean"] is None and legal["oe_bias_mean_coverage"] == 0.0
    capsys.readouterr()
    assert main(["check", str(tmp_path / "judged.json")]) == 1
    assert "(of 24 answers, 24 decline)" in capsys.readouterr().err


def test_check_passes_a_judge_output_judged_and_answered_and_holds_the_declared_minimum(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = tmp_path / "run"
    write_samples(folder, open_corpus, "legal", replies=REPLIES)
    with running(OpenAIServer(keyword_judge("old"), model_name="judge")) as server:
        assert main(judge(server, folder, tmp_path)) == 0
        assert main(["check", str(tmp_path / "judged.json")]) == 0
        assert "check: ok" in capsys.readouterr().out
        write_samples(folder, open_corpus, "legal", replies=(*REPLIES, REFUSAL))  # a third declines: coverage 2/3
        assert main(judge(server, folder, tmp_path)) == 0
        assert main(["check", str(tmp_path / "judged.json")]) == 1  # below the default fairlens_min_judged 0.8
        assert "(of 24 answers, 8 decline)" in capsys.readouterr().err
        assert main([*judge(server, folder, tmp_path), "--metadata", '{"fairlens_min_judged": 0.5}']) == 0
        capsys.readouterr()
        # A lowered minimum recorded by the judge is a problem (issue 33) unless check is given it explicitly.
        assert main(["check", str(tmp_path / "judged.json")]) == 1
        err = capsys.readouterr().err
        assert "fairlens_min_judged" in err and "0.5" in err and "0.8" in err, err
        assert main(["check", str(tmp_path / "judged.json"), "--min-coverage", "0.5"]) == 0
