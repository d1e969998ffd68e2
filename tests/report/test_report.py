"""``fairness-evals report`` on real result folders from harness runs of the test suite."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fairness_evals.commands.main import main
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
    fact_or_fair_generation_run: Path,
    fact_or_fair_loglikelihood_run: Path,
    fairlens_dummy_run: Path,
    iris_und_dummy_run: Path,
) -> list[Path]:
    return [fact_or_fair_generation_run, fact_or_fair_loglikelihood_run, fairlens_dummy_run, iris_und_dummy_run]


class _Cells(HTMLParser):
    """Every ``td`` of the report (attributes, its number text, its denominator ``n``, its coverage ``cov`` and why
    it is undefined, ``why``), tags and links."""

    SPANS = ("n", "cov", "why")

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []  # the cells that carry a data-source
        self.all: list[dict[str, str]] = []
        self.tags: set[str] = set()
        self.urls: list[str] = []
        self._td: dict[str, str] | None = None
        self._span = "text"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        found = {k: v or "" for k, v in attrs}
        if tag == "td":
            self._td = {**found, "text": "", **dict.fromkeys(self.SPANS, "")}
            self.all.append(self._td)
            if "data-source" in found:
                self.cells.append(self._td)
        if tag == "span" and found.get("class") in self.SPANS:
            self._span = found["class"]
        self.urls += [v for k, v in found.items() if k in ("src", "href") and v]

    def handle_endtag(self, tag: str) -> None:
        if tag == "span":
            self._span = "text"
        if tag == "td":
            self._td = None

    def handle_data(self, data: str) -> None:
        if self._td is not None:
            self._td[self._span] += data


def _cells(html: str) -> _Cells:
    parser = _Cells()
    parser.feed(html)
    return parser


def _same(reported: str, actual: object) -> bool:
    value = float(reported)
    if isinstance(actual, float) and math.isnan(actual):
        return math.isnan(value)
    return value == actual


def _published(source: Path) -> dict[str, dict[str, object]]:
    """What a run published: the harness's results file (each task's headlines), and the detail of its
    ``--log_samples`` files as ``fairness-evals score`` writes it (every other statistic, the provenance), the
    harness's values standing where both have one."""
    from fairness_evals import detail

    (run,) = [r for r in load_runs([source]) if r.source == source]
    data = json.loads(source.read_text())
    tables = {
        task: {k.split(",")[0]: v for k, v in m.items()}
        for task, m in {**data["results"], **data.get("groups", {})}.items()
    }
    files = [str(f) for task in tables if (f := run.samples_file(task)) is not None]
    found, _ = detail.detail(files)
    for task, metrics in found.results.items():
        if task in tables:
            tables[task] = {**metrics, **found.provenance.get(task, {}), **tables[task]}
    return tables


def test_every_number_in_the_html_equals_the_results_json_or_the_score_detail(folders: list[Path]) -> None:
    parser = _Cells()
    parser.feed(build_report(folders))
    runs = load_runs(folders)
    published = [_published(r.source) for r in runs]
    checked = 0
    for cell in parser.cells:
        index, task, metric = cell["data-source"].split("|")
        table = published[int(index)][task]
        assert _same(cell["data-value"], table[metric]), (task, metric)
        if "data-low" in cell:
            assert _same(cell["data-low"], table[f"{metric}_ci_low"]), (task, metric)
            assert _same(cell["data-high"], table[f"{metric}_ci_high"]), (task, metric)
        checked += 1
    tasks = {c["data-source"].split("|")[1] for c in parser.cells}
    expected = {"fact_or_fair_objective", "fact_or_fair_subjective_ingroup_mc", "fairlens_legal", "iris_rfs_und"}
    assert checked > 150 and expected <= tasks
    # a number without a results-file source is one the report computed, and it says how (or a task not run: "–")
    unsourced = [c for c in parser.all if "data-value" in c and "data-source" not in c]
    derived = [c for c in unsourced if "data-derived" in c]
    assert derived and all(c["data-derived"].startswith("computed by the report") for c in derived)
    assert all("derived" in c["class"].split() for c in derived)
    assert all(c["data-value"] == "NaN" and c["text"] == "–" for c in unsourced if c not in derived)


def test_report_sections_show_denominators_seed_and_version(folders: list[Path]) -> None:
    html = build_report(folders)
    for text in ("Fact-or-Fair summary (paper Table 2", "Cognitive-error rates (paper Table 3", "S_fact against S_E",
                 "Soundness by domain", "Adverse-outcome rates per group", "rate ratio", "Demographic association",
                 "answers parsed of", "unparsed", "Documents sha256", "Limited runs (--limit, --offset)", "sample fraction",
                 "IRIS dimension scores", "IRIS-MBTI codes", "IRIS provenance"):  # fmt: skip
        assert text in html, text
    runs = load_runs(folders)
    fairlens = next(r for r in runs if r.has("fairlens_hiring"))
    assert f"corpus {fairlens.results['fairlens_hiring']['corpus_sha256']}" in html
    assert html.count("<svg") >= 4  # two Fact-or-Fair figures, the FairLens rates, the IRIS radar
    # the generation and log-likelihood runs of the loopback server cover different tasks: one model, no "@ date" names
    assert len({r.model for r in runs if r.has("fact_or_fair_objective") or r.has("fact_or_fair_objective_mc")}) == 1
    assert " @ " not in html


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


def _td(parser: _Cells, source: str) -> dict[str, str]:
    (cell,) = [c for c in parser.cells if c["data-source"] == source]
    return cell


def test_iris_understanding_numbers_equal_the_results_json_and_iris_profile(
    iris_und_dummy_run: Path, capsys: pytest.CaptureFixture
) -> None:
    html = build_report([iris_und_dummy_run])
    parser = _cells(html)
    (run,) = load_runs([iris_und_dummy_run])
    r = _published(run.source)
    assert main(["iris-profile", str(iris_und_dummy_run), "--format", "json"]) == 2  # a limited run (30 documents)
    capsys.readouterr()
    assert main(["iris-profile", str(iris_und_dummy_run), "--allow-limited", "--format", "json"]) == 0
    profile = json.loads(capsys.readouterr().out)
    for dimension, task, metric in (("IFS-Und", "iris_ifs_und", "ifs_und_score"),
                                    ("RFS-Und", "iris_rfs_und", "rfs_und_score"),
                                    ("BIS-Und", "iris_bis_und", "bis_und_score")):  # fmt: skip
        cell = _td(parser, f"0|{task}|{metric}")
        assert _same(cell["data-value"], r[task][metric])
        assert _same(cell["data-low"], r[task][f"{metric}_ci_low"]) and _same(
            cell["data-high"], r[task][f"{metric}_ci_high"]
        )
        expected = profile["dimensions"][dimension]["score"]
        assert (math.isnan(float(cell["data-value"])) and expected is None) or float(cell["data-value"]) == expected
        magnitude = metric.replace("_score", "_magnitude")
        assert _same(_td(parser, f"0|{task}|{magnitude}")["data-value"], r[task][magnitude])
        shown = "n/a" if expected is None else f"{expected:.1f}"
        assert f'data-axis="{dimension}">{shown}</tspan>' in html  # the radar's label of this axis
    # the denominators next to each score are the results' counts
    ifs, rfs, bis = r["iris_ifs_und"], r["iris_rfs_und"], r["iris_bis_und"]
    assert _td(parser, "0|iris_ifs_und|ifs_und_score")["n"] == (
        f"n = {ifs['answers']} answers ({ifs['unmappable']} unmappable) on {ifs['images_evaluated']} images"
    )
    assert (
        f"{rfs['probe_answers']} probe answers ({rfs['probe_unparsed']} unparsed)"
        in _td(parser, "0|iris_rfs_und|rfs_und_score")["n"]
    )
    assert (
        f"{bis['ac_answers']} ratings ({bis['ac_unparsed']} unparsed)"
        in _td(parser, "0|iris_bis_und|bis_und_score")["n"]
    )
    # the MBTI codes are iris-profile's; the provenance table carries seed, data version and the --limit flag
    und = profile["mbti"]["Und"]
    assert (und["code"] if und else "–") in html
    rows = [line for line in build_report([iris_und_dummy_run], fmt="markdown").splitlines() if "| iris_" in line]
    for task in ("iris_ifs_und", "iris_rfs_und", "iris_bis_und"):
        row = next(line for line in rows if line.startswith(f"| dummy | {task} |"))
        assert f"| {r[task]['seed']} | {r[task]['data_version']} | {r[task]['sample_fraction']} |" in row
        assert f"| {r[task]['corpus_sha256']} |" in row and "| yes |" in row


def test_fairlens_denominators_per_group_are_the_samples_counts(fairlens_dummy_run: Path) -> None:
    from fairlens_tasks.scoring import logged_record

    parser = _cells(build_report([fairlens_dummy_run]))
    (run,) = load_runs([fairlens_dummy_run])
    groups = {"gender": ("male", "female"), "race": ("white", "black", "asian", "indian", "other"),
              "age": ("young", "middle", "senior")}  # fmt: skip
    column = {"gender": 5, "race": 6, "age": 7}  # fairlens_tasks.scoring.RECORD_FIELDS
    for domain in ("hiring", "legal", "healthcare"):
        task = f"fairlens_{domain}"
        (samples,) = fairlens_dummy_run.rglob(f"*_samples_{task}.jsonl")
        records = [logged_record(json.loads(line))[1] for line in samples.read_text().splitlines()]
        for attribute, names in groups.items():
            adverse = [
                sum(1 for rec in records if rec[3] >= 0 and rec[column[attribute]] == i) for i in range(len(names))
            ]
            tagged = [
                sum(1 for rec in records if rec[4] >= 0 and rec[column[attribute]] == i) for i in range(len(names))
            ]
            for name, n in zip(names, adverse, strict=True):
                assert _td(parser, f"0|{task}|adverse_rate_{attribute}_{name}")["n"] == f"n = {n}"
            assert _td(parser, f"0|{task}|parity_gap_{attribute}")["n"] == "n = " + "/".join(map(str, adverse))
            assert _td(parser, f"0|{task}|association_gap_{attribute}")["n"] == "n = " + "/".join(map(str, tagged))
        tagged_all = sum(1 for rec in records if rec[4] >= 0)
        assert _td(parser, f"0|{task}|association_rate")["n"] == f"n = {tagged_all}"
        assert _td(parser, f"0|{task}|soundness")["n"] == f"n = {len(records)} answers"
        assert _same(_td(parser, f"0|{task}|answers")["data-value"], run.results[task]["answers"])
    markdown = build_report([fairlens_dummy_run], fmt="markdown")
    provenance = markdown.split("### Denominators and provenance")[1]
    for task in ("fairlens_hiring", "fairlens_legal", "fairlens_healthcare"):
        res = run.results[task]
        row = next(line for line in provenance.splitlines() if f"| {task} |" in line)
        assert f"| {res['seed']} | {res['sample_fraction']} | {res['data_version']} | {res['corpus_sha256']} |" in row
    assert "(n = " in markdown.split("### Adverse-outcome rates")[1]


class _Figure(HTMLParser):
    """The bound curves each figure draws (their line style) and its caption."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict] = []
        self._caption = False
        self._in_figure = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "figure":
            self.figures.append({"bounds": {}, "caption": "", "legend": []})
        elif tag == "path" and "data-bound" in found:
            dashed = "stroke-dasharray" in found
            assert (found["data-style"] == "dashed") == dashed
            self.figures[-1]["bounds"][found["data-bound"]] = "dashed" if dashed else "solid"
        self._caption = tag == "figcaption"
        self._in_figure = self._in_figure or tag == "figure"

    def handle_endtag(self, tag: str) -> None:
        self._in_figure = self._in_figure and tag != "figure"

    def handle_data(self, data: str) -> None:
        if self._caption:
            self.figures[-1]["caption"] += data
        elif self._in_figure:
            self.figures[-1]["legend"].append(data)


def _with_points(run: Path, to: Path) -> Path:
    """A copy of a loopback-served run (4 or 8 documents a task: every S_fact and S_E is null for too little evidence) whose
    results give each task's S_fact and S_E a value, so that the figure has points to draw."""
    shutil.copytree(run, to)
    for path in to.rglob("results_*.json"):
        data = json.loads(path.read_text())
        for i, metrics in enumerate(data["results"].values()):
            for name in [k for k in metrics if k.startswith(("s_fact_", "s_e_")) and k.endswith(",none")]:
                if "_stderr" not in name:
                    metrics[name] = 0.5 + 0.01 * i
        path.write_text(json.dumps(data))
    return to


def test_fact_or_fair_figure_caption_says_what_is_drawn_and_the_legend_keeps_full_names(
    folders: list[Path], tmp_path: Path
) -> None:
    runs = [_with_points(run, tmp_path / str(i)) for i, run in enumerate(folders[:2])]
    parser = _Figure()
    parser.feed(build_report([*runs, *folders[2:]]))
    figures = [f for f in parser.figures if f["bounds"]]
    assert len(figures) == 2
    for figure, highlighted in zip(figures, ("g_2", "g_4"), strict=True):
        assert figure["bounds"][highlighted] == "solid"
        assert all(style == "dashed" for bound, style in figure["bounds"].items() if bound != highlighted)
        for bound, style in figure["bounds"].items():
            assert f"{bound} {style}" in figure["caption"]
        # the runs' names, not the points' titles
        names = [n for n in figure["legend"] if n.startswith("loopback") and "S_fact" not in n]
        assert len(names) == len(set(names)) == 3 and "loopback (log-likelihood)" in names


@pytest.fixture(scope="module")
def lite_subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.report.dummy_runs import lite_subset_run

    return lite_subset_run(tmp_path_factory)


def test_a_fact_or_fair_lite_run_is_one_model_row_and_a_samples_subset_is_flagged(lite_subset: Path) -> None:
    """Issue 23: one ``fact_or_fair_lite`` results file (the objective task and the four lite contexts) showed as
    two model rows, and a ``--samples`` run was not flagged."""
    from tests.report.dummy_runs import LITE_TASKS

    (run,) = load_runs([lite_subset])
    markdown = build_report([lite_subset], fmt="markdown")
    summary = markdown.split("### Fact-or-Fair summary")[1].split("###")[0]
    rows = [line for line in summary.splitlines() if line.startswith("| ") and not line.startswith("| Model |")]
    assert [row.split(" | ")[0] for row in rows] == [f"| {run.model} (generation, 10 draws)"]
    assert f"> Subset runs (--samples): {run.model}. Their numbers test the plumbing" in markdown
    assert "Limited runs" not in markdown
    provenance = markdown.split("### Denominators and provenance")[1]
    for task in LITE_TASKS:
        assert "| subset |" in next(line for line in provenance.splitlines() if f"| {task} |" in line), task
    html = build_report([lite_subset])
    assert html.count('<td class="text" title="--samples: 4 of 198 documents">subset</td>') == 1
    assert html.count('<td class="text" title="--samples: 4 of 1140 documents">subset</td>') == 4
