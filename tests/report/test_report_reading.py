"""The report's "How to read these numbers" table (issue 33): one row per benchmark the report shows, its scores'
directions as their statistics tables declare them and what chance gives; none for a benchmark it does not show."""

from __future__ import annotations

import json
from pathlib import Path

from fact_fair_tasks import statistics as fact_or_fair
from fairlens_tasks import statistics as fairlens
from fairness_evals.report import build_report


def _row(text: str, benchmark: str) -> list[str]:
    (line,) = [line for line in text.splitlines() if line.startswith(f"| {benchmark} |")]
    return [cell.strip() for cell in line.strip("|").split(" | ")]


def test_the_guide_names_each_shown_benchmarks_directions_and_chance(tmp_path: Path) -> None:
    results = {
        "results": {"fairlens_open_legal": {"unjudged_rate,none": 0.0, "oe_bias_mean,none": 0.25}},
        "config": {"model": "dummy"},
        "lmms_eval_version": "0.7.3",
    }
    (tmp_path / "lmms").mkdir()
    (tmp_path / "lmms" / "20260101_000000_results.json").write_text(json.dumps(results))
    lm = {"results": {"fact_or_fair_objective": {"s_fact_gender,none": 0.5}}, "config": {"model": "m"}}
    (tmp_path / "lm").mkdir()
    (tmp_path / "lm" / "results_2026-01-01T00-00-00.json").write_text(json.dumps(lm))
    text = build_report([tmp_path / "lmms", tmp_path / "lm"], fmt="markdown")
    assert text.index("How to read these numbers") < text.index("## Fact-or-Fair") < text.index("## FairLens")
    _, higher, lower, chance = _row(text, "Fact-or-Fair")
    assert (
        higher.split(", ")[:2] == ["s_fact_{axis}", "s_e_{axis}"]
        and lower == "distance_{axis}, unparsed_rate, refused_rate"
    )
    assert chance == fact_or_fair.CHANCE and "S_fact 0.50" in chance
    _, higher, lower, chance = _row(text, "FairLens")
    assert "oe_bias_mean" in lower and chance == fairlens.CHANCE  # the open-ended task's headlines only
    assert "| IRIS |" not in text  # no IRIS task in these runs
    assert "a dash is a null" in text.lower() and "never 0" in text
