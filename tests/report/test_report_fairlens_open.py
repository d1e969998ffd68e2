"""``report`` shows the FairLens open-ended scores (finding 13 of the 2026-12-06 review: a run of
``fairlens_open_legal`` alone gave a report with a title and "Sources" only) and lists every task of ours it does
not show, with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_server import OpenAIServer, keyword_judge, running

from fairness_evals.commands.main import main
from fairness_evals.report.build import build_report
from tests.conftest import shared_run
from tests.fairlens_open.test_fairlens_open_cli import write_samples

ANSWER = "The person looks calm. A guard might think they are old."  # two opinions, one biased: 0.5
REFUSAL = "I'm sorry, but I can't help with that."


def _judge_args(server: OpenAIServer, cache: Path) -> list[str]:
    return ["--judge", "openai:judge", "--base-url", server.base_url, "--api-key", "k", "--cache", str(cache)]


def _open_legal_run(tmp: Path) -> Path:
    """lmms-eval, the ``dummy`` model answering :data:`ANSWER`, ``fairlens_open_legal`` on 60 faces (720 answers:
    12 images a race group, above the 10 a gap needs),
    judged in the harness by the loopback keyword judge; then ``fairness-evals judge`` of its samples into
    ``judged.json`` beside the run folder."""
    from faces import make_utkface_folder
    from harness import offline_env, run_lmms_eval

    corpus = tmp / "faces"
    make_utkface_folder(corpus, 2, seed=11)
    with running(OpenAIServer(keyword_judge("old"), model_name="judge")) as server:
        env = offline_env(
            tmp, FAIRLENS_CORPUS=str(corpus), FAIRLENS_SAMPLE_FRACTION="1", FAIRLENS_JUDGE="openai:judge", FAIRLENS_JUDGE_BASE_URL=server.base_url,
            FAIRLENS_JUDGE_API_KEY="k", FAIRLENS_JUDGE_CACHE=str(tmp / "judge.sqlite"),
        )  # fmt: skip
        out = run_lmms_eval(tmp, "dummy", f"response={ANSWER}", "fairlens_open_legal", env=env)
        assert (
            main(["judge", str(out), *_judge_args(server, tmp / "judge.sqlite"), "--out", str(tmp / "judged.json")])
            == 0
        )
    return out


@pytest.fixture(scope="module")
def open_legal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_run(tmp_path_factory, "fairlens-open-legal-judged", _open_legal_run)


@pytest.mark.harness
def test_check_passes_the_run_the_harness_judged_whole(open_legal: Path, capsys: pytest.CaptureFixture) -> None:
    """The samples hold the answers, not the verdicts: check holds the harness's judged headlines, not a recount of
    the samples as unjudged (it failed with oe_bias_mean_coverage 0.000)."""
    assert main(["check", str(open_legal)]) == 0, capsys.readouterr().err
    assert main(["score", str(open_legal), "--out", str(open_legal.parent / "detail.json")]) == 0
    detail = json.loads((open_legal.parent / "detail.json").read_text())
    assert (
        detail["fairlens_open_legal"]["answers"] == 720 and "oe_bias_mean_coverage" not in detail["fairlens_open_legal"]
    )


@pytest.mark.harness
def test_a_run_of_fairlens_open_legal_alone_shows_its_scores(open_legal: Path) -> None:
    text = build_report([open_legal], fmt="markdown")
    assert "## FairLens" in text and "### Open-ended bias" in text and "Soundness by domain" not in text
    (row,) = [line for line in text.splitlines() if line.startswith("| dummy | fairlens_open_legal | 50.00")]
    assert "| 50.00 (n = 720 answers) | 0.00 (n = 720 answers) |" in row  # the harness's headlines, x100
    (counts,) = [line for line in text.splitlines() if "| fairlens_open_legal | 720 |" in line]
    assert "| 0.00 | 0 | 0.00 |" in counts  # unjudged 0%, declined 0 (0%)
    assert "Not shown" not in text


@pytest.mark.harness
def test_the_judge_output_shows_every_open_ended_statistic(open_legal: Path) -> None:
    judged = open_legal.parent / "judged.json"
    text = build_report([judged], fmt="markdown")
    values = json.loads(judged.read_text())["fairlens_open_legal"]
    (row,) = [line for line in text.splitlines() if line.startswith("| ") and "fairlens_open_legal | 50.00" in line]
    assert "(n = 720 judged of 720; coverage 100%)" in row and f"{100 * values['oe_bias_gap_race']:.2f}" in row
    (counts,) = [line for line in text.splitlines() if "| fairlens_open_legal | 720 | 720 |" in line]
    assert "| openai:judge | fairlens-bias-v1 |" in counts and "judged.json" in counts
    assert "(fairness-evals judge," in text  # the source says what it is


@pytest.fixture(scope="module")
def open_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from faces import make_utkface_folder

    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, 1, seed=11)
    return root


def test_declined_answers_show_as_null_scores_with_their_count(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    write_samples(tmp_path / "run", open_corpus, "legal", replies=(REFUSAL, "No comment."))
    with running(OpenAIServer(keyword_judge("old"), model_name="judge")) as server:
        argv = ["judge", str(tmp_path / "run"), *_judge_args(server, tmp_path / "j.sqlite")]
        assert main([*argv, "--out", str(tmp_path / "judged.json")]) == 0
    text = build_report([tmp_path / "judged.json"], fmt="markdown")
    (row,) = [line for line in text.splitlines() if "| fairlens_open_legal | – (n = 24 judged of 24" in line]
    assert "withheld: coverage 0.000 is below fairlens_min_judged 0.8 (of 24 answers, 24 decline)" in row
    (counts,) = [line for line in text.splitlines() if "| fairlens_open_legal | 24 | 24 |" in line]
    assert "| 0.00 | 24 | 100.00 |" in counts


def test_a_task_the_report_does_not_show_is_listed_with_the_reason(tmp_path: Path) -> None:
    results = {
        "results": {
            "fairlens_open_legal": {"unjudged_rate,none": 0.0, "oe_bias_mean,none": 0.25, "oe_flag_rate,none": 0.0},
            "fairlens_open_future": {"new_score,none": 0.5},  # a task of a later version, or renamed
        },
        "config": {"model": "dummy"},
        "lmms_eval_version": "0.7.3",
    }
    (tmp_path / "20260101_000000_results.json").write_text(json.dumps(results))
    text = build_report([tmp_path], fmt="markdown")
    assert "| dummy | fairlens_open_legal | 25.00" in text
    notes = [line for line in text.splitlines() if line.startswith("> Not shown")]
    assert notes == ["> Not shown: fairlens_open_future of dummy [0]: not a task of this version of fairness-evals."]
