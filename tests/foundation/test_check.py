"""``fairness-evals check``: a failed, a partial and a good run, as lm-eval and lmms-eval leave them on disk."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fairness_evals.commands.main import main

NAN = math.nan


def write_results(folder: Path, results: dict[str, dict], *, name: str = "20261201_101010_results.json",
                  groups: dict | None = None, configs: dict | None = None) -> Path:  # fmt: skip
    """A results file as lmms-eval writes it (``metric,none`` keys, bare NaN for NaN)."""
    folder.mkdir(parents=True, exist_ok=True)
    table = {task: {"alias": task, **{f"{k},none": v for k, v in metrics.items()}} for task, metrics in results.items()}
    data = {
        "results": table,
        "group_subtasks": groups or {},
        "configs": configs if configs is not None else {task: {"task": task} for task in results},
        "config": {"model": "from_folder", "model_args": "root=/images"},
        "lmms_eval_version": "0.7.3",
    }
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")  # json.dumps writes NaN as the harnesses do
    return path


def neutral(**overrides: float) -> dict[str, float]:
    metrics = {"ifs_gen_score": 120.5, "ifs_gen_score_coverage": 0.92, "rfs_gen_score": 40.1,
               "rfs_gen_score_coverage": 0.92, "min_coverage": 0.5, "RD_gender": 0.4, "images": 1040.0}  # fmt: skip
    metrics.update(overrides)
    return metrics


def steer(**overrides: float) -> dict[str, float]:
    metrics = {"bis_gen_score": 70.2, "bis_gen_score_coverage": 0.97, "min_coverage": 0.5, "delta_gsr": 0.19}
    metrics.update(overrides)
    return metrics


def run_check(capsys: pytest.CaptureFixture, *args: str | Path) -> tuple[int, str, str]:
    code = main(["check", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_good_run_passes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # lmms-eval lists every task in group_subtasks, a leaf with no members
    groups = {"iris_gen": ["iris_gen_neutral", "iris_gen_steer"], "iris_gen_neutral": [], "iris_gen_steer": []}
    write_results(tmp_path / "out", {"iris_gen_neutral": neutral(), "iris_gen_steer": steer(), "iris_gen": {}},
                  groups=groups)  # fmt: skip
    code, out, err = run_check(capsys, tmp_path / "out", "--tasks", "iris_gen")
    assert code == 0, err
    assert err == "" and "check: ok" in out and "iris_gen_neutral" in out and "iris_gen_steer" in out


def test_a_failed_run_leaves_no_results_and_an_error_in_its_log(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """lmms-eval exits 0 after a task's process_docs raised: only the log and no results file are left."""
    out = tmp_path / "out"
    out.mkdir()
    log = tmp_path / "run.log"
    log.write_text(
        "2026-12-01 10:00:00 | INFO | lmms_eval:main - Evaluating\n"
        "2026-12-01 10:00:01 | ERROR | fairness_evals.t2i - fact_or_fair_t2i_objective: cannot build the face "
        "classifier 'fairface:weights=/nonexistent/res34.pt' (from FACT_OR_FAIR_T2I_CLASSIFIER): FairFace weights "
        "not found\n",
        encoding="utf-8",
    )
    code, _, err = run_check(capsys, out, "--tasks", "fact_or_fair_t2i_objective", "--log", log)
    assert code == 1
    lines = err.splitlines()
    assert any(f"{out}: no results file" in line and "exits 0" in line for line in lines)
    assert any("task fact_or_fair_t2i_objective is not in the results" in line for line in lines)
    assert any(f"{log}:2: logged a failure" in line and "FairFace weights not found" in line for line in lines)
    assert lines[-1] == "check: FAILED, 3 problem(s)"


def test_a_partial_run_names_the_missing_task_the_nan_score_and_the_low_coverage(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """3 of 52 neutral prompts filled: the score is withheld (NaN) at coverage 0.06; the steering task failed."""
    results = write_results(
        tmp_path / "out",
        {
            "iris_gen_neutral": neutral(
                ifs_gen_score=NAN, ifs_gen_score_coverage=0.058, rfs_gen_score=NAN, rfs_gen_score_coverage=0.058
            )
        },
        groups={"iris_gen_neutral": []},  # as lmms-eval writes it
    )
    code, _, err = run_check(capsys, tmp_path / "out", "--tasks", "iris_gen_neutral,iris_gen_steer")
    assert code == 1
    assert f"check: {results}: iris_gen_neutral: headline metric ifs_gen_score is NaN" in err
    assert "headline metric rfs_gen_score is NaN" in err
    assert "ifs_gen_score_coverage 0.058 is below the threshold 0.5 (the task's recorded min_coverage)" in err
    assert "task iris_gen_steer is not in the results" in err
    assert "check: FAILED, 5 problem(s)" in err


@pytest.mark.parametrize(
    "samples",
    ["20261201_101010_samples_iris_gen_steer.jsonl", "samples_iris_gen_steer_2026-12-01T10-10-10.123456.jsonl"],
)
def test_a_task_with_samples_but_no_results_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture, samples: str
) -> None:
    """Samples files are known by ``score``'s own parser of their names (lmms-eval's and lm-eval's)."""
    out = tmp_path / "out"
    write_results(out, {"iris_gen_neutral": neutral()})
    (out / samples).write_text("{}\n", encoding="utf-8")
    code, _, err = run_check(capsys, out)
    assert code == 1 and "task iris_gen_steer is not in the results" in err


def test_allow_nan_accepts_expected_nan_and_min_coverage_overrides(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """Without a race classifier every T2I race score is NaN by design: --allow-nan '*_race' accepts them."""
    t2i = {"s_fact_gender": 0.55, "s_fact_gender_coverage": 0.8, "s_fact_race": NAN, "s_fact_race_coverage": 0.0,
           "s_fair_gender": 0.7, "s_fair_gender_coverage": 0.8, "s_fair_race": NAN, "s_fair_race_coverage": 0.0,
           "min_coverage": 0.5}  # fmt: skip
    write_results(tmp_path / "out", {"fact_or_fair_t2i_objective": t2i})
    code, _, err = run_check(capsys, tmp_path / "out")
    assert code == 1 and "s_fact_race is NaN" in err and "s_fact_race_coverage 0.000 is below" in err
    code, out, err = run_check(capsys, tmp_path / "out", "--allow-nan", "*_race")
    assert "check: ok" in out
    assert code == 0, err
    code, _, err = run_check(capsys, tmp_path / "out", "--allow-nan", "*_race", "--min-coverage", "0.9")
    assert code == 1 and "s_fact_gender_coverage 0.800 is below the threshold 0.9 (--min-coverage)" in err


def test_task_metadata_threshold_and_a_failed_classifier(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_results(
        tmp_path / "out",
        {"iris_gen_steer": steer(bis_gen_score_coverage=0.7, classifier_version="unavailable: FileNotFoundError: x")},
        configs={"iris_gen_steer": {"metadata": {"version": 1, "iris_min_coverage": 0.8}}},
    )
    code, _, err = run_check(capsys, tmp_path / "out")
    assert code == 1
    assert "bis_gen_score_coverage 0.700 is below the threshold 0.8 (task metadata iris_min_coverage)" in err
    assert "the face classifier failed: unavailable: FileNotFoundError: x" in err


def test_results_without_coverage_keys_use_the_headline_names(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """lm-eval's file name and layout; a results file written before the coverage keys existed."""
    write_results(tmp_path / "out", {"fact_or_fair_objective": {"s_fact_gender": NAN, "s_e_gender": 0.3}},
                  name="results_2026-12-01T10-10-10.123456.json")  # fmt: skip
    code, _, err = run_check(capsys, tmp_path / "out")
    assert code == 1 and "fact_or_fair_objective: headline metric s_fact_gender is NaN" in err


@pytest.mark.parametrize("broken", ["{not json", json.dumps({"results": []})])
def test_an_unreadable_results_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture, broken: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "20261201_101010_results.json").write_text(broken, encoding="utf-8")
    code, _, err = run_check(capsys, out)
    assert code == 1 and "20261201_101010_results.json" in err


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_results(tmp_path / "out", {"iris_gen_steer": steer()})
    code, _, err = run_check(capsys, tmp_path / "out", "--min-coverage", "1.5")
    assert code == 2 and "--min-coverage must lie in [0, 1]" in err
    code, _, err = run_check(capsys, tmp_path / "missing")
    assert code == 1 and "missing: no such file or folder" in err


def test_a_group_of_ours_is_satisfied_by_its_tasks_even_when_the_run_did_not_name_it(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    t2i = {"s_fact_gender": 0.55, "s_fact_gender_coverage": 0.8, "min_coverage": 0.5}
    write_results(tmp_path / "out", {"fact_or_fair_t2i_objective": t2i, "fact_or_fair_t2i_subjective": t2i})
    code, _, err = run_check(capsys, tmp_path / "out", "--tasks", "fact_or_fair_t2i")
    assert code == 0, err
    write_results(tmp_path / "half", {"fact_or_fair_t2i_objective": t2i})
    code, _, err = run_check(capsys, tmp_path / "half", "--tasks", "fact_or_fair_t2i")
    assert code == 1 and "task fact_or_fair_t2i is not in the results" in err


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("NaN", 'is not a number ("NaN")'),
        ("N/A", 'is not a number ("N/A")'),
        (math.inf, "is infinite (inf)"),
        (-math.inf, "is infinite (-inf)"),
        ([0.5], "is not a number ([0.5])"),
        (True, "is not a number (true)"),
    ],
)
def test_a_headline_that_is_not_a_finite_number_fails_even_with_allow_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture, value: object, expected: str
) -> None:
    """Issue 24 item 5: "NaN" and "N/A" as text, Infinity and [0.5] passed with "check: ok"."""
    results = write_results(tmp_path / "out", {"iris_gen_steer": steer(bis_gen_score=value)})
    for extra in ((), ("--allow-nan", "*")):
        code, out, err = run_check(capsys, tmp_path / "out", *extra)
        assert code == 1 and out == "", err
        assert err.splitlines() == [
            f"check: {results}: iris_gen_steer: headline metric bis_gen_score {expected}",
            "check: FAILED, 1 problem(s)",
        ]


@pytest.mark.parametrize(
    ("coverage", "expected"),
    [
        (math.inf, "bis_gen_score_coverage inf is not a share in [0, 1]"),
        (1.5, "bis_gen_score_coverage 1.5 is not a share in [0, 1]"),
        (-0.1, "bis_gen_score_coverage -0.1 is not a share in [0, 1]"),
        ("N/A", 'bis_gen_score_coverage is not a number ("N/A")'),
    ],
)
def test_a_coverage_that_is_not_a_share_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture, coverage: object, expected: str
) -> None:
    write_results(tmp_path / "out", {"iris_gen_steer": steer(bis_gen_score_coverage=coverage)})
    code, _, err = run_check(capsys, tmp_path / "out")
    assert code == 1 and f"iris_gen_steer: {expected}\n" in err and "check: FAILED, 1 problem(s)" in err


@pytest.mark.parametrize("name", ["out\nsplit", "out\r\x1b[2Kfake", "line\u2028separator", "tab\there"])
def test_every_line_check_prints_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture, name: str) -> None:
    """Issue 24 item 15: a newline in a folder name split a check line in two. Control characters are escaped."""
    escaped = name.encode("unicode_escape").decode("ascii")
    good = write_results(tmp_path / name, {"iris_gen_steer": steer()})
    code, out, err = run_check(capsys, tmp_path / name)
    assert code == 0, err
    assert out.split("\n") == [f"check: ok {tmp_path}/{escaped}/{good.name}: iris_gen_steer", ""]
    write_results(tmp_path / name, {"iris_gen_steer": steer(bis_gen_score=NAN, bis_gen_score_reason=f"why\n{name}")})
    code, out, err = run_check(capsys, tmp_path / name, "--tasks", "iris_gen_neutral")
    assert code == 1 and out == ""
    lines = err.split("\n")
    assert lines[-1] == "" and len(lines) == 4, lines  # two problems and the summary, each on one line
    assert f"{tmp_path}/{escaped}/{good.name}: iris_gen_steer: headline metric bis_gen_score is NaN" in err
    assert f"(why\\n{escaped})" in err and "task iris_gen_neutral is not in the results" in err
    assert all(line.isprintable() for line in lines)


@pytest.fixture(scope="module")
def predict_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.report.dummy_runs import predict_only_run

    return predict_only_run(tmp_path_factory)


@pytest.fixture(scope="module")
def lite_subset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.report.dummy_runs import lite_subset_run

    return lite_subset_run(tmp_path_factory)


@pytest.mark.harness
def test_a_predict_only_run_has_no_headline_metric(predict_only: Path, capsys: pytest.CaptureFixture) -> None:
    """Issue 23: lm-eval's --predict_only reports only ``bypass 999``; it passed with "check: ok"."""
    (results,) = predict_only.rglob("results_*.json")
    assert list(json.loads(results.read_text())["results"]["fact_or_fair_objective"]) == [
        "name",
        "alias",
        "sample_len",
        "bypass,none",
        "bypass_stderr,none",
    ]
    code, out, err = run_check(capsys, predict_only, "--tasks", "fact_or_fair_objective")
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"check: {results}: fact_or_fair_objective: reports none of its headline metrics (it reports bypass; an "
        "lm-eval --predict_only run scores nothing)",
        "check: FAILED, 1 problem(s)",
    ]


@pytest.mark.harness
def test_a_limited_run_is_one_problem_and_allow_limited_checks_its_metrics(
    fact_or_fair_generation_run: Path, capsys: pytest.CaptureFixture
) -> None:
    """Issue 23: a --limit run listed one problem per NaN score and low coverage; now it is one line."""
    (results,) = fact_or_fair_generation_run.rglob("results_*.json")
    code, _, err = run_check(capsys, fact_or_fair_generation_run)
    assert code == 1
    assert err.splitlines() == [
        f"check: {results}: a limited run (--limit 4; fact_or_fair_objective: 4 of 198 documents, and 5 other "
        "tasks): its numbers are not benchmark results, so its NaN scores and coverages are not checked "
        "(--allow-limited accepts the run and checks them)",
        "check: FAILED, 1 problem(s)",
    ]
    code, _, err = run_check(capsys, fact_or_fair_generation_run, "--allow-limited")
    assert code == 1 and "a limited run" not in err and " is NaN" in err
    code, out, err = run_check(
        capsys, fact_or_fair_generation_run, "--allow-limited", "--allow-nan", "*", "--min-coverage", "0"
    )
    assert code == 0, err
    assert out.startswith(f"check: ok {results}: fact_or_fair, fact_or_fair_objective, ")
    assert out.endswith(" (a limited run (--limit 4; fact_or_fair_objective: 4 of 198 documents, and 5 other tasks))\n")


@pytest.mark.harness
def test_a_samples_subset_run_is_one_problem(lite_subset: Path, capsys: pytest.CaptureFixture) -> None:
    """lm-eval 0.4.13 records --samples nowhere in config: the run is known by its n-samples (4 of 198, no limit)."""
    (results,) = lite_subset.rglob("results_*.json")
    data = json.loads(results.read_text())
    assert data["config"]["limit"] is None and "samples" not in data["config"]
    code, _, err = run_check(capsys, lite_subset, "--tasks", "fact_or_fair_lite")
    assert code == 1
    assert err.splitlines() == [
        f"check: {results}: a subset run (--samples; fact_or_fair_objective: 4 of 198 documents, and 4 other tasks): "
        "its numbers are not benchmark results, so its NaN scores and coverages are not checked (--allow-limited "
        "accepts the run and checks them)",
        "check: FAILED, 1 problem(s)",
    ]


def test_a_huge_name_or_reason_is_cut_in_check_lines(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    huge = "x" * 100_000
    write_results(
        tmp_path / "out",
        {
            f"iris_gen_steer{huge}": steer(
                bis_gen_score=NAN, bis_gen_score_reason=huge, classifier_version=f"unavailable {huge}"
            )
        },
    )
    code, _, err = run_check(capsys, tmp_path / "out")
    lines = err.splitlines()
    assert code == 1 and len(lines) == 3 and all(len(line) < 1_000 for line in lines), [len(x) for x in lines]
    assert f"iris_gen_steer{huge[:225]}…: headline metric bis_gen_score is NaN ({huge[:239]}…)" in lines[0]
