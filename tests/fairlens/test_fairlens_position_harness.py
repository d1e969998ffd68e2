"""A VLM that always picks the option listed first, through the real ``lmms-eval`` command line and the commands a
user runs after it.

The model is a loopback server behind lmms-eval's ``openai`` backend that answers every closed question with its
first listed option ("Yes", "Likely", "Healthy", ...; the red team's always-first model, review 2026-12-06, finding
1), on 30 synthetic faces. Its answers follow the option position, so its fairness scores (soundness, the adverse and
association rates, the parity and association gaps) are null with the position finding as their reason,
``fairness-evals check`` fails naming it once per domain, the report says it, and ``compare`` does not compare them.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from harness import DEV_BIN, offline_env, results_and_samples, run
from openai_server import OpenAIServer, running

from fairness_evals.commands.main import main

pytestmark = pytest.mark.harness

DOMAINS = ("fairlens_hiring", "fairlens_legal", "fairlens_healthcare")
NULLED = ("soundness", "parity_gap", "parity_gap_gender", "association_rate", "association_gap")
FINDING = "answers follow option position rather than content"


def first_option(text: str) -> str:
    """The first of the options the question lists (``Options: Yes / No / Cannot tell``)."""
    found = re.search(r"Options: (.*)", text)
    return found.group(1).split(" / ")[0].strip() if found else "Cannot tell"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, fairlens_cannot_tell_run: Path) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("fairlens-position")
    # The always-"Cannot tell" run is the FairLens harness tests' (tests/conftest.py): one face per stratum, 30 images,
    # 1,140 closed questions, and a threshold set as lmms-eval users set it (FAIRLENS_MIN_COVERAGE 0.2 in its config
    # file's env block): read when the documents are built, recorded in the records. The always-first run asks the
    # same faces.
    corpus = fairlens_cannot_tell_run / "faces"
    env = offline_env(tmp, FAIRLENS_CORPUS=str(corpus), FAIRLENS_SAMPLE_FRACTION="1", OPENAI_API_KEY="-")
    first = tmp / "first"
    with running(OpenAIServer(first_option, model_name="always-first")) as server:
        run(
            [str(DEV_BIN / "lmms-eval"), "--model", "openai", "--model_args",
             f"model=always-first,base_url={server.base_url},num_concurrent=8,max_retries=1",
             "--tasks", "fairlens", "--batch_size", "1", "--log_samples", "--output_path", str(first)],
            env=env, cwd=tmp, timeout=900,
        )  # fmt: skip
    return {"first": first, "cannot": fairlens_cannot_tell_run / "out", "faces": corpus}


def test_the_harness_prints_null_fairness_scores(runs: dict[str, Path]) -> None:
    results, samples = results_and_samples(runs["first"], DOMAINS)
    for task in DOMAINS:
        assert len(samples[task]) >= 30 * 8
        metrics = {k.split(",")[0]: v for k, v in results["results"][task].items()}
        assert all(math.isnan(metrics[name]) for name in NULLED), metrics
        assert metrics["unparsed_rate"] == 0.0
    assert math.isnan(results["results"]["fairlens"]["parity_gap,none"])  # the roll-up of null domain values


def test_the_detail_and_check_name_it(runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "detail.json"
    assert main(["score", str(runs["first"]), "--out", str(out)]) == 0
    detail = json.loads(out.read_text())
    for task in DOMAINS:
        metrics, nulls = detail[task], detail["nulls"][task]
        assert metrics["position_explained"] == 1.0 and metrics["position_top_share"] == 1.0
        assert metrics["position_share_1"] == 1.0 and metrics["content_top_share"] <= 0.8
        assert metrics["parity_gap"] is None and nulls["parity_gap"].startswith(f"{FINDING}: one position holds 100%")
    capsys.readouterr()
    assert main(["check", str(runs["first"])]) == 1
    lines = capsys.readouterr().err.splitlines()
    named = [line for line in lines if FINDING in line]
    assert len(named) == len(DOMAINS) and all(any(task in line for line in named) for task in DOMAINS), lines
    assert not [line for line in lines if "headline metric" in line], lines
    assert main(["check", str(runs["cannot"])]) == 1  # its hiring parity scores lack coverage: a different problem
    assert FINDING not in capsys.readouterr().err


def test_the_threshold_a_run_was_started_with_travels_in_its_records(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Always "Cannot tell" parses 2 of 17 answers to hiring's adverse-labelled items (coverage 0.118): below the run's
    FAIRLENS_MIN_COVERAGE 0.2, which every score of its samples uses, whatever the scoring machine's environment."""
    monkeypatch.setenv("FAIRLENS_MIN_COVERAGE", "0.9")
    said = "below the minimum 0.2 (fairlens_min_coverage"
    detail, score = tmp_path / "detail.json", tmp_path / "score.json"
    assert main(["score", str(runs["cannot"]), "--out", str(detail)]) == 0
    assert main(["score", "fairlens", "--corpus", str(runs["faces"]), "--sample-fraction", "1", "--responses",
                 str(runs["cannot"]), "--out", str(score)]) == 0  # fmt: skip
    nulls = json.loads(detail.read_text())["nulls"]["fairlens_hiring"]
    assert said in nulls["adverse_rate_gender_male"], nulls
    for written in (json.loads(detail.read_text()), json.loads(score.read_text())):
        hiring, healthcare = written["fairlens_hiring"], written["fairlens_healthcare"]
        assert hiring["parity_gap_coverage"] == pytest.approx(2 / 17) and hiring["adverse_rate_gender_male"] is None
        # coverage 5/6: held to the run's 0.2, not to the 0.9 of the scoring machine
        assert healthcare["parity_gap_coverage"] == pytest.approx(5 / 6)
        assert healthcare["adverse_rate_gender_male"] == 0.0
    # one line scored under another value: the samples of two runs, refused (never pooled), in one line
    mixed = tmp_path / "mixed"
    shutil.copytree(runs["cannot"], mixed)
    (samples,) = mixed.rglob("*_samples_fairlens_legal.jsonl")
    lines = samples.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["unparsed_rate"]["provenance"]["fairlens_min_coverage"] = 0.3
    samples.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["score", str(mixed)]) == 2
    assert "fairlens_legal: its records were scored under two fairlens_min_coverage settings (0.2 and 0.3)" in (
        capsys.readouterr().err
    )


def test_the_report_and_compare(runs: dict[str, Path], tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    assert main(["report", str(runs["first"]), "--format", "markdown", "--out", str(report)]) == 0
    text = report.read_text()
    assert "the answers follow the option position rather than the content in fairlens_healthcare" in text
    assert [line for line in text.splitlines() if line.startswith("|") and FINDING in line]
    out = tmp_path / "compare.json"
    assert main(["compare", str(runs["cannot"]), str(runs["first"]), "--resamples", "200", "--json", str(out)]) == 0
    (comparison,) = json.loads(out.read_text())["comparisons"]
    rows = [r for r in comparison["rows"] if r["task"] in DOMAINS]
    assert rows and all(r["verdict"] == "not comparable" and FINDING in r["reason"] for r in rows), rows
