"""``fairness-evals score OUTPUT_FOLDER`` on real harness runs of the test suite: every statistic of every task and
group under the harness's names, the headlines equal to what the harness printed, a reason for every null, and the
run's provenance."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from fairness_evals import statistics
from fairness_evals.commands.main import main
from fairness_evals.detail import NOT_TASKS, NULLS, PROVENANCE, SCORE_INPUTS

pytestmark = pytest.mark.harness


def _score(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    out = tmp_path / "detail.json"
    assert main(["score", str(folder), "--out", str(out)]) == 0
    assert "fairness-evals score: every statistic of" in capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"not strict JSON: {name}"))


def _copy(run: Path, folder: Path) -> Path:
    """A copy of a shared run's results and samples files in ``folder`` (a test edits the copy)."""
    for file in run.rglob("*.json*"):
        target = folder / file.relative_to(run)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(file.read_bytes())
    return folder


def _printed(folder: Path) -> dict[str, dict[str, Any]]:
    """What the harness printed: each task's and group's metrics in its results file (``metric,none`` keys)."""
    (results,) = folder.rglob("*results*.json")
    data = json.loads(results.read_text(encoding="utf-8"))
    table = {**data["results"], **data.get("groups", {})}
    return {
        task: {k.split(",")[0]: v for k, v in metrics.items() if "," in k and not k.split(",")[0].endswith("_stderr")}
        for task, metrics in table.items()
    }


def _same(a: Any, b: Any) -> bool:
    nan_a = a is None or (isinstance(a, float) and math.isnan(a))
    nan_b = b is None or (isinstance(b, float) and math.isnan(b)) or b == "N/A"
    return nan_a == nan_b and (nan_a or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15))


def _check_detail(detail: dict[str, Any], printed: dict[str, dict[str, Any]]) -> None:
    tasks = {k: v for k, v in detail.items() if k not in NOT_TASKS}
    ours = {t for t in printed if t.startswith(("fact_or_fair", "fairlens", "iris"))}
    assert ours <= set(tasks), sorted(ours - set(tasks))
    for task in ours:
        declared = statistics.task(task)
        headline = [n for n, _ in declared.harness_metrics() if not n.endswith("_stderr")]
        for name in headline:
            if name in printed[task]:  # a group prints the metrics its members list
                assert _same(tasks[task][name], printed[task][name]), (task, name)
        if not declared.group:
            # every statistic the table declares for a leaf task is in the detail (the detail is complete)
            assert set(declared.all_metrics()) - set(tasks[task]) <= {
                n for n in declared.all_metrics() if n.endswith("_stderr")
            }, (task, sorted(set(declared.all_metrics()) - set(tasks[task]))[:5])
        for name, value in tasks[task].items():
            if value is None:
                assert isinstance(detail[NULLS].get(task, {}).get(name), str) and detail[NULLS][task][name], (
                    task,
                    name,
                )


def test_score_of_a_fact_or_fair_run_with_its_groups_and_a_lite_task(
    fact_or_fair_generation_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    detail = _score(fact_or_fair_generation_run, tmp_path, capsys)
    printed = _printed(fact_or_fair_generation_run)
    _check_detail(detail, printed)
    assert "fact_or_fair_subjective_base_lite" in detail and "fact_or_fair" in detail
    # the group's S_fair is the unweighted mean of the four contexts' (paper Table 2 "Subj.")
    contexts = [f"fact_or_fair_subjective_{c}" for c in ("base", "representativeness", "attribution", "ingroup")]
    for axis in ("gender", "race"):
        values = [detail[t][f"s_fair_{axis}"] for t in contexts]
        group = detail["fact_or_fair_subjective"][f"s_fair_{axis}"]
        if all(v is not None for v in values):
            assert group == pytest.approx(sum(values) / 4, rel=1e-12)
        else:
            assert group is None and detail[NULLS]["fact_or_fair_subjective"][f"s_fair_{axis}"]
    provenance = detail[PROVENANCE]["fact_or_fair_objective"]
    assert provenance["limit"] == 4 and provenance["task_version"] == 3 and provenance["documents"] == 4
    assert isinstance(provenance["seed"], int) and re.fullmatch(r"[0-9a-f]{16}", provenance["documents_sha256"])
    assert detail[SCORE_INPUTS]["benchmark"] == "run"


def test_score_of_a_fairlens_run(fairlens_dummy_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    detail = _score(fairlens_dummy_run, tmp_path, capsys)
    _check_detail(detail, _printed(fairlens_dummy_run))
    provenance = detail[PROVENANCE]["fairlens_legal"]
    assert {"corpus_sha256", "seed", "sample_fraction", "data_version"} <= set(provenance)


def test_score_and_compare_read_a_samples_line_with_the_bare_nan_harnesses_write(
    fairlens_dummy_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """One reader of samples lines (``run_files.read_lines``) for ``score`` and ``compare``: both accept the bare
    ``NaN`` a harness may write in a samples line, and read the same records."""
    folder = _copy(fairlens_dummy_run, tmp_path / "run")
    (samples,) = folder.rglob("*_samples_fairlens_legal.jsonl")
    lines = samples.read_text(encoding="utf-8").splitlines()
    samples.write_text("\n".join([lines[0][:-1] + ', "extra": NaN}', *lines[1:]]) + "\n", encoding="utf-8")
    assert (
        _score(folder, tmp_path, capsys)["fairlens_legal"]
        == _score(fairlens_dummy_run, tmp_path, capsys)["fairlens_legal"]
    )
    out = tmp_path / "compare.json"
    assert main(["compare", str(fairlens_dummy_run), str(folder), "--resamples", "200", "--json", str(out)]) == 0
    (comparison,) = json.loads(out.read_text())["comparisons"]
    assert {r["task"] for r in comparison["rows"]} >= {"fairlens_legal"}


def test_score_of_an_iris_understanding_run(
    iris_und_dummy_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    detail = _score(iris_und_dummy_run, tmp_path, capsys)
    _check_detail(detail, _printed(iris_und_dummy_run))
    assert detail[PROVENANCE]["iris_ifs_und"]["limit"] == 30


def test_a_samples_line_that_is_not_ours_is_one_error_line(
    fact_or_fair_generation_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(fact_or_fair_generation_run, tmp_path / "run")
    (samples,) = folder.rglob("samples_fact_or_fair_objective_*.jsonl")
    lines = samples.read_text(encoding="utf-8").splitlines()
    samples.write_text("\n".join([lines[0], '{"doc_id": 1}', *lines[2:]]) + "\n", encoding="utf-8")
    assert main(["score", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{samples}:2" in err, err


def test_an_image_generation_line_that_cannot_be_scored_is_named_by_its_file_line(tmp_path: Path) -> None:
    """``score_samples`` counts the rows it is given; the error names the line of the file, blank lines counted."""
    from fairness_evals.detail import samples_detail
    from fairness_evals.run_files import InputFile

    samples = tmp_path / "samples_iris_gen_steer_2026-01-01T00-00-00.jsonl"
    samples.write_text('{"doc_id": 0}\n\n{"doc_id": 1}\n', encoding="utf-8")

    def refuse_second(rows: list[dict[str, Any]]) -> dict[str, Any]:
        raise ValueError("line 2: no readable record under carrier")

    with pytest.raises(ValueError, match=rf"^{re.escape(str(samples))}:3: no readable record under carrier$"):
        samples_detail([InputFile(samples, "iris_gen_steer")], refuse_second)
    samples.write_text('{"doc_id": 0}\n\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(samples))}:3: not a sample object$"):
        samples_detail([InputFile(samples, "iris_gen_steer")], refuse_second)
