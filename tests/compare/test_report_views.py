"""The report's differences view (``--baseline``) and published reference rows (``--published``)."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from coverage_compare import FAIRLENS_PAIRS, paired_fairlens_records
from coverage_fairlens import design

from fact_fair_tasks import report as fact_or_fair_report
from fairlens_tasks import report as fairlens_report
from fairness_evals.commands.main import main
from fairness_evals.report import build_report
from fairness_evals.report.published import beside
from iris_tasks import report as iris_report
from tests.compare.synthetic import fairlens_run

DATA = Path(__file__).resolve().parents[1] / "data"
TASK = "fairlens_healthcare"


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("models")
    rec_a, rec_b = paired_fairlens_records(FAIRLENS_PAIRS[0], design("paper"), np.random.default_rng(0))
    return fairlens_run(tmp / "a", "model-a", {TASK: rec_a}), fairlens_run(tmp / "b", "model-b", {TASK: rec_b})


def test_differences_view_has_a_forest_plot_and_the_compare_numbers(two_models, tmp_path, capsys) -> None:
    a, b = two_models
    html = build_report([a, b], baseline="model-a")
    section = html[html.index("<h2>Differences</h2>") :]
    svg = re.search(r"<svg.*?</svg>", section, re.S).group(0)
    ET.fromstring(svg)  # well-formed inline SVG
    assert "FairLens: model-b (B) - model-a (A)" in section and "parity_gap" in svg
    out = tmp_path / "compare.json"
    assert main(["compare", str(a), str(b), "--json", str(out)]) == 0
    capsys.readouterr()
    for row in json.loads(out.read_text())["comparisons"][0]["rows"]:
        cell = re.search(rf">{row['metric']}</td>.*?</tr>", section, re.S).group(0)
        assert row["verdict"] in cell  # the view shows compare's verdicts
        if row["verdict"] != "not comparable":
            assert f'data-value="{row["difference"]!r}"' in cell
    markdown = build_report([a, b], fmt="markdown", baseline="model-a")
    assert "### Differences against model-a (A)" in markdown


def test_no_differences_view_without_a_baseline_and_an_unknown_baseline_is_named(two_models) -> None:
    a, b = two_models
    assert "<h2>Differences</h2>" not in build_report([a, b])
    with pytest.raises(ValueError, match=r"--baseline nobody: no model of that name.*model-a, model-b"):
        build_report([a, b], baseline="nobody")


def test_published_rows_are_labelled_and_never_compared(two_models, tmp_path) -> None:
    a, b = two_models
    fairlens = json.loads((DATA / "fairlens_paper_tables.json").read_text())["table2_model_level"]
    group = {
        "fairlens": {"soundness": 0.5, "parity_gap": 0.01, "association_rate": 0.3, "association_gap": 0.02},
        "fairlens_healthcare": {"soundness": 0.5},
    }
    results = tmp_path / "group" / "20260101_000000_results.json"
    results.parent.mkdir()
    results.write_text(json.dumps({"results": group, "config": {"model_args": "pretrained=model-g"},
                                   "lmms_eval_version": "0.7"}))  # fmt: skip
    html = build_report([a, b, results], baseline="model-a", published=True)
    section = html[html.index("<h2>Published reference rows</h2>") :]
    for model, values in fairlens["rows"].items():
        assert f"{model} (published)" in section and f">{values[0]}</td>" in section
    assert "model-g" in section and "no test of significance" in section
    differences = html[html.index("<h2>Differences</h2>") : html.index("<h2>Published reference rows</h2>")]
    assert "(published)" not in differences and "Ovis2.5" not in differences


def test_published_json_equals_the_transcriptions() -> None:
    views = {"fact_or_fair": fact_or_fair_report, "fairlens": fairlens_report, "iris": iris_report}
    data = {name: beside(view.__file__) for name, view in views.items()}
    ff = json.loads((DATA / "fact_or_fair_paper_results.json").read_text())["table2_summary"]
    for model, row in data["fact_or_fair"]["rows"].items():
        assert row["values"] == [ff[model][c] for c in data["fact_or_fair"]["columns"]]
    assert set(data["fact_or_fair"]["rows"]) == set(ff)
    fl = json.loads((DATA / "fairlens_paper_tables.json").read_text())["table2_model_level"]
    assert {m: r["values"] for m, r in data["fairlens"]["rows"].items()} == fl["rows"]
    assert data["fairlens"]["columns"] == fl["columns"]
    iris = json.loads((DATA / "iris_paper_tables.json").read_text())
    tables = ("table23_IFS_Gen", "table24_RFS_Gen", "table25_BIS_Gen", "table26_IFS_Und", "table27_RFS_Und",
              "table28_BIS_Und")  # fmt: skip
    board = iris["readme_leaderboard_oct2025"]["rows"]
    for model, row in data["iris"]["rows"].items():
        assert row["values"] == [iris[t]["rows"][model][-1] if model in iris[t]["rows"] else None for t in tables]
        assert [row["total"], row["gen_profile"], row["und_profile"]] == (board.get(model) or [None, None, None])


def test_compare_markdown_escapes_html_in_run_names(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 24 item 13: compare printed run names raw into its Markdown; it escapes them as the report does."""
    rec_a, rec_b = paired_fairlens_records(FAIRLENS_PAIRS[0], design("paper"), np.random.default_rng(1))
    evil = "<script>alert(1)</script>`x`"
    a = fairlens_run(tmp_path / "a", f"{evil}-a", {TASK: rec_a})
    b = fairlens_run(tmp_path / "b", f"<img src=x onerror=alert(2)>|{evil}", {TASK: rec_b})
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "<script" not in out and "<img" not in out
    heading = "## &lt;img src=x onerror=alert(2)&gt;\\|&lt;script&gt;alert(1)&lt;/script&gt;\\`x\\` (B) against "
    assert f"{heading}&lt;script&gt;alert(1)&lt;/script&gt;\\`x\\`-a (A)\n" in out


def test_compare_with_nothing_to_compare_is_an_error(two_models, tmp_path: Path, capsys) -> None:
    """Two runs with no task in common printed "nothing to compare" and exited 0; it is an error (exit 2)."""
    a, b = two_models
    other = tmp_path / "legal"
    shutil.copytree(b, other)
    (results,) = other.glob("*_results.json")
    results.write_text(results.read_text().replace(TASK, "fairlens_legal"))
    for samples in other.glob(f"*_samples_{TASK}.jsonl"):
        samples.rename(samples.with_name(samples.name.replace(TASK, "fairlens_legal")))
    assert main(["compare", str(a), str(other)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"error: fairness-evals: {other} against {a}: nothing to compare: the runs share no task (baseline: "
        f"{TASK}; other run: fairlens_legal)"
    ]
    assert main(["compare", str(a), str(b), "--metrics", "no_such_metric*"]) == 2
    err = capsys.readouterr().err
    expected = f"nothing to compare: --metrics no_such_metric* match no metric of the tasks both runs report ({TASK})"
    assert f"{b} against {a}: {expected}\n" in err


def test_the_differences_view_of_models_with_huge_names_stays_small(tmp_path: Path) -> None:
    """Issue 24 item 10 for the differences view: its figure titles and table named each model in full."""
    rec_a, rec_b = paired_fairlens_records(FAIRLENS_PAIRS[0], design("paper"), np.random.default_rng(0))
    huge = "m" * 500_000
    a = fairlens_run(tmp_path / "a", f"{huge}-a", {TASK: rec_a})
    b = fairlens_run(tmp_path / "b", f"{huge}-b", {TASK: rec_b})
    html = build_report([a, b], baseline=f"{huge}-a")
    assert "<h2>Differences</h2>" in html and len(html) < 300_000
