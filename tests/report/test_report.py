"""``fairness-evals report`` on real result folders from harness runs of the test suite."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fairness_evals.cli import main
from fairness_evals.report import build_report
from fairness_evals.report.load import load_runs
from fairness_evals.report.model import pct

pytestmark = pytest.mark.harness

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0",
]  # fmt: skip


@pytest.fixture(scope="module")
def folders(
    fact_or_fair_generation_run: Path, fact_or_fair_loglikelihood_run: Path, fairlens_dummy_run: Path
) -> list[Path]:
    return [fact_or_fair_generation_run, fact_or_fair_loglikelihood_run, fairlens_dummy_run]


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []
        self.tags: set[str] = set()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        found = {k: v or "" for k, v in attrs}
        if tag == "td" and "data-source" in found:
            self.cells.append(found)
        self.urls += [v for k, v in found.items() if k in ("src", "href") and v]


def _same(reported: str, actual: object) -> bool:
    value = float(reported)
    if isinstance(actual, float) and math.isnan(actual):
        return math.isnan(value)
    return value == actual


def test_every_number_in_the_html_equals_the_results_json(folders: list[Path]) -> None:
    parser = _Cells()
    parser.feed(build_report(folders))
    runs = load_runs(folders)
    raw = [json.loads(r.source.read_text()) for r in runs]
    checked = 0
    for cell in parser.cells:
        index, task, metric = cell["data-source"].split("|")
        data = raw[int(index)]
        table = data["results"].get(task) or data.get("groups", {}).get(task)
        assert _same(cell["data-value"], table[f"{metric},none"]), (task, metric)
        if "data-low" in cell:
            assert _same(cell["data-low"], table[f"{metric}_ci_low,none"]), (task, metric)
            assert _same(cell["data-high"], table[f"{metric}_ci_high,none"]), (task, metric)
        checked += 1
    tasks = {c["data-source"].split("|")[1] for c in parser.cells}
    assert checked > 150 and {"fact_or_fair_objective", "fact_or_fair_subjective_ingroup_mc", "fairlens_legal"} <= tasks


def test_report_sections_show_denominators_seed_and_version(folders: list[Path]) -> None:
    html = build_report(folders)
    for text in ("Fact-or-Fair summary (paper Table 2", "Cognitive-error rates (paper Table 3", "S_fact against S_E",
                 "Soundness by domain", "Adverse-outcome rates per group", "rate ratio", "Demographic association",
                 "answers parsed of", "unparsed", "Documents sha256", "Limited runs (--limit)", "sample fraction"):  # fmt: skip
        assert text in html, text
    runs = load_runs(folders)
    fairlens = next(r for r in runs if r.has("fairlens_hiring"))
    assert f"corpus {fairlens.results['fairlens_hiring']['corpus_sha256']}" in html
    assert html.count("<svg") >= 3  # two Fact-or-Fair figures and the FairLens rates


def test_markdown_embeds_the_same_tables(folders: list[Path]) -> None:
    markdown = build_report(folders, fmt="markdown")
    runs = load_runs(folders)
    generation = next(r for r in runs if r.has("fact_or_fair_objective"))
    value = generation.metric("fact_or_fair_objective", "s_fact_gender")
    assert "| Model | Obj. S_fact G | R | Avg. |" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith(f"| {generation.model} |"))
    assert row.split(" | ")[1].startswith(pct(value))
    assert "<svg" not in markdown and "## FairLens" in markdown


def test_html_opens_in_headless_chromium_without_console_errors(folders: list[Path], tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required (scripts/setup.sh test installs it)"
    report = tmp_path / "report.html"
    assert main(["report", *map(str, folders), "--out", str(report)]) == 0
    parser = _Cells()
    parser.feed(report.read_text())
    assert "script" not in parser.tags and "link" not in parser.tags and parser.urls == []  # self-contained
    shot = tmp_path / "report.png"
    proc = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
         "--window-size=1300,2600", report.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "CONSOLE" not in proc.stderr, [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert shot.stat().st_size > 50_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (Path(__file__).resolve().parents[2] / ".pytest_cache").mkdir(exist_ok=True)
    shutil.copy(shot, Path(__file__).resolve().parents[2] / ".pytest_cache" / "report-screenshot.png")


def test_unrelated_or_broken_inputs_give_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    unrelated = tmp_path / "mmlu-run" / "model"
    unrelated.mkdir(parents=True)
    (unrelated / "results_2026-01-01T00-00-00.json").write_text(json.dumps({"results": {"mmlu": {"acc,none": 0.5}}}))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results_2026-01-01T00-00-00.json").write_text('{"results": {"fact_or_fair_objective": ')
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = {
        unrelated.parent: ["mmlu-run", "no fairness-evals task", "mmlu"],
        broken: ["broken/results_2026-01-01T00-00-00.json", "not a readable results file"],
        empty: ["empty", "no lm-eval or lmms-eval results file"],
        tmp_path / "nope": ["nope", "no such file"],
    }
    for folder, expected in cases.items():
        assert main(["report", str(folder), "--out", str(tmp_path / "r.html")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and all(e in err for e in expected), err
