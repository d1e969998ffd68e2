"""``compare`` and the differences view on real harness output: a run (lmms-eval with the weight-free dummy model for
FairLens) and a copy of it show no detectable difference in ``compare``; a 4-document lm-eval run holds too little
evidence for any statistic, and ``compare`` says so on every row and the report's differences view shows it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fairness_evals.commands.main import main
from fairness_evals.report import build_report

pytestmark = pytest.mark.harness


def _compare(a: Path, b: Path, tmp: Path, *extra: str) -> tuple[int, dict]:
    out = tmp / "compare.json"
    status = main(["compare", str(a), str(b), "--json", str(out), *extra])
    return status, json.loads(out.read_text()) if status == 0 else {}


def _check_no_difference(data: dict, prefix: str) -> list[dict]:
    rows = data["comparisons"][0]["rows"]
    assert rows and all(r["task"].startswith(prefix) for r in rows)
    compared = [r for r in rows if r["verdict"] != "not comparable"]
    assert compared, "nothing was comparable"
    for row in compared:
        assert (row["difference"], row["p_value"], row["verdict"]) == (0.0, 1.0, "no detectable difference"), row
    for row in rows:
        if row["verdict"] == "not comparable":
            assert row["reason"].startswith(("NaN in", "not reported")), row
    return compared


def test_a_4_document_lm_eval_run_is_not_comparable_for_too_little_evidence(
    fact_or_fair_generation_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33: a ``--limit 4`` run holds a few cells of each design; every statistic is null for too little
    evidence, so ``compare`` (of the run and a copy of it) calls nothing a difference, or no difference, and says why
    on every row."""
    second = tmp_path / "second"
    shutil.copytree(fact_or_fair_generation_run, second)
    status, data = _compare(fact_or_fair_generation_run, second, tmp_path)
    assert status == 0, capsys.readouterr().err
    rows = data["comparisons"][0]["rows"]
    assert {r["task"] for r in rows} >= {"fact_or_fair_objective", "fact_or_fair_subjective_base_lite"}
    assert all(r["task"].startswith("fact_or_fair_") and r["verdict"] == "not comparable" for r in rows)
    assert all(r["reason"].startswith("NaN in") for r in rows), rows
    assert any("too little evidence" in r["reason"] for r in rows if r["task"] == "fact_or_fair_objective")
    html = build_report([fact_or_fair_generation_run, second], baseline=data["baseline"])
    assert "<h2>Differences</h2>" in html and "Fact-or-Fair:" in html


def test_an_lmms_eval_run_of_the_dummy_model_and_its_copy_show_no_detectable_difference(
    fairlens_dummy_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(Two separate runs give the same samples: the scale tests compare a run on one process with one on two.)"""
    second = tmp_path / "second"
    shutil.copytree(fairlens_dummy_run, second)
    status, data = _compare(fairlens_dummy_run, second, tmp_path)
    assert status == 0, capsys.readouterr().err
    rows = _check_no_difference(data, "fairlens")
    assert {r["task"] for r in rows} >= {"fairlens_hiring", "fairlens"}  # the domains and the model-level roll-ups
