"""``fairness-evals iris-profile``: the six scores and the IRIS-MBTI codes from results files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fairness_evals.commands.main import main
from iris_tasks.profile import SCORE_METRICS, profile, read_scores

DATA = Path(__file__).resolve().parent / "data"
PAPER = Path(__file__).resolve().parents[1] / "data" / "iris_paper_tables.json"


def _profile(capsys: pytest.CaptureFixture, *args: str) -> dict:
    assert main(["iris-profile", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_bagel_from_the_seed_tables(capsys: pytest.CaptureFixture) -> None:
    """Generation sector (Tables 23-25): 82.58, 69.13, 60.91 -> UAF; understanding (26-28): 71.46, 69.81,
    50.75 -> UAR (the paper's Und code for Bagel; our name, the Rigid names are not public)."""
    result = _profile(capsys, str(DATA))
    assert result["model"] == "ByteDance-Seed/BAGEL-7B-MoT" and result["threshold"] == 60.0
    scores = {d: e["score"] for d, e in result["dimensions"].items()}
    assert scores == {"IFS-Gen": 82.58, "RFS-Gen": 69.13, "BIS-Gen": 60.91, "IFS-Und": 71.46, "RFS-Und": 69.81,
                      "BIS-Und": 50.75}  # fmt: skip
    gen, und = result["mbti"]["Gen"], result["mbti"]["Und"]
    assert (gen["code"], gen["name"], gen["name_source"]) == ("UAF", "The Adaptive Idealist", "paper Table 2")
    assert (und["code"], und["name"], und["name_source"]) == ("UAR", "The Entrenched Idealist", "fairness-evals (ours)")
    assert result["dimensions"]["IFS-Gen"]["task"] == "iris_gen_neutral"
    assert result["dimensions"]["IFS-Gen"]["ifs_gen_magnitude"] == 2.1848
    assert result["dimensions"]["IFS-Und"]["ifs_und_score_ci_low"] == 60.1
    assert (
        result["dimensions"]["IFS-Und"]["coverage"] == 0.96 and result["dimensions"]["IFS-Und"]["min_coverage"] == 0.5
    )
    assert result["dimensions"]["IFS-Gen"]["coverage"] is None  # the generation fixture predates coverage
    assert result["notes"] == [
        "Gen: coverage not in the results for IFS-Gen, RFS-Gen, BIS-Gen (a harness results file holds the headline metrics only; `fairness-evals score` writes the coverages)"
    ]


def test_text_output_and_one_sector(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    out = tmp_path / "profile.txt"
    assert main(["iris-profile", str(DATA / "bagel_gen_results.json"), "--out", str(out), "--name", "Bagel"]) == 0
    text = out.read_text()
    assert text.startswith("IRIS fairness-space profile: Bagel (tau = 60)")
    assert "Gen: UAF The Adaptive Idealist [paper Table 2]" in text
    assert "IFS-Und" in text and "(not in the results)" in text
    assert "note: Und: no IRIS-MBTI code, IFS-Und, RFS-Und, BIS-Und missing or NaN" in text


def _results(path: Path, task: str, metrics: dict[str, float], model: str = "m") -> Path:
    path.write_text(json.dumps({"results": {task: {f"{k},none": v for k, v in metrics.items()}},
                                "config": {"model_args": f"pretrained={model}"}}))  # fmt: skip
    return path


def test_every_model_of_the_seed_tables() -> None:
    """Gen codes at tau = 60 equal the README leaderboard's for the models in both; Und codes follow the
    appendix (the leaderboard's Und codes disagree with it, notes section 9)."""
    tables = json.loads(PAPER.read_text())
    gen = {"table23_IFS_Gen": "IFS-Gen", "table24_RFS_Gen": "RFS-Gen", "table25_BIS_Gen": "BIS-Gen"}
    und = {"table26_IFS_Und": "IFS-Und", "table27_RFS_Und": "RFS-Und", "table28_BIS_Und": "BIS-Und"}
    leaderboard = tables["readme_leaderboard_oct2025"]["rows"]
    expected_und = {"Bagel": "UAR", "BLIP3-o": "UAF", "Harmon": "UDR", "Janus-Pro": "HDF"}
    for model in ("Bagel", "BLIP3-o", "Harmon", "Janus-Pro"):
        found = {}
        for table, dimension in {**gen, **und}.items():
            from iris_tasks.profile import Found

            found[dimension] = Found(tables[table]["rows"][model][-1], "t", "s", model, {})
        result = profile(found)
        assert result["mbti"]["Gen"]["code"] == leaderboard[model][1], model
        assert result["mbti"]["Und"]["code"] == expected_und[model], model


def test_nan_score_and_threshold(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _results(tmp_path / "a_results.json", "iris_ifs_und", {"ifs_und_score": 65.0})
    _results(tmp_path / "b_results.json", "iris_rfs_und", {"rfs_und_score": math.nan})
    _results(tmp_path / "c_results.json", "iris_bis_und", {"bis_und_score": 61.0})
    result = _profile(capsys, str(tmp_path))
    assert result["dimensions"]["RFS-Und"]["score"] is None and result["mbti"]["Und"] is None
    _results(tmp_path / "b_results.json", "iris_rfs_und", {"rfs_und_score": 59.0})
    assert _profile(capsys, str(tmp_path))["mbti"]["Und"]["code"] == "UDF"
    assert _profile(capsys, str(tmp_path), "--threshold", "62")["mbti"]["Und"]["code"] == "UDR"


def test_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _results(tmp_path / "a_results.json", "iris_ifs_und", {"ifs_und_score": 65.0}, model="one")
    _results(tmp_path / "b_results.json", "iris_ifs_und", {"ifs_und_score": 66.0}, model="two")
    assert main(["iris-profile", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "ifs_und_score is in both" in error and "model one" in error and "give the results of one model" in error
    assert error.count("\n") == 1
    other = _results(tmp_path / "other.json", "mmmu_val", {"acc": 0.5})
    assert main(["iris-profile", str(other)]) == 2
    assert "no IRIS dimension score (ifs_gen_score" in capsys.readouterr().err
    assert main(["iris-profile", str(tmp_path / "missing")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["iris-profile", str(tmp_path / "empty")]) == 2
    assert "no lm-eval or lmms-eval results file" in capsys.readouterr().err


def test_score_metric_names() -> None:
    assert SCORE_METRICS == {
        "IFS-Gen": "ifs_gen_score", "RFS-Gen": "rfs_gen_score", "BIS-Gen": "bis_gen_score",
        "IFS-Und": "ifs_und_score", "RFS-Und": "rfs_und_score", "BIS-Und": "bis_und_score",
    }  # fmt: skip
    assert set(read_scores([DATA])) == set(SCORE_METRICS)


def test_different_models_are_refused_unless_allowed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The review's m1: IFS, RFS and BIS-Und of three models gave one code, exit 0."""
    a = _results(tmp_path / "a_results.json", "iris_ifs_und", {"ifs_und_score": 65.0}, model="Bagel")
    b = _results(tmp_path / "b_results.json", "iris_rfs_und", {"rfs_und_score": 61.0}, model="Harmon")
    c = _results(tmp_path / "c_results.json", "iris_bis_und", {"bis_und_score": 61.0}, model="Janus-Pro")
    assert main(["iris-profile", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "different models" in error and "--allow-mixed-models" in error and error.count("\n") == 1
    for model, path in (("Bagel", a), ("Harmon", b), ("Janus-Pro", c)):
        assert f"{model} ({path})" in error
    result = _profile(capsys, str(tmp_path), "--allow-mixed-models")
    assert result["mbti"]["Und"]["code"] == "UAF" and result["model"] == "Bagel / Harmon / Janus-Pro"


def test_a_file_found_twice_is_read_once(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The review's m2: `iris-profile prof/Bagel prof/Bagel/a` said the score was in the same file twice."""
    (tmp_path / "a").mkdir()
    path = _results(tmp_path / "a" / "x_results.json", "iris_ifs_und", {"ifs_und_score": 65.0})
    result = _profile(capsys, str(tmp_path), str(tmp_path / "a"), str(path))
    assert result["dimensions"]["IFS-Und"]["score"] == 65.0


@pytest.mark.parametrize(
    ("value", "message"),
    [("abc", "is 'abc', not a number"), ([1], "is [1], not a number"), (True, "is True, not a number"),
     (1e308, "is 1e+308, outside [0, 2750]"), (-1.0, "is -1.0, outside [0, 2750]")],
)  # fmt: skip
def test_garbage_scores_are_rejected(tmp_path: Path, capsys: pytest.CaptureFixture, value, message) -> None:
    """The review's minor 8: "abc" and [1] were shown as NaN, 1e308 printed as a 309-digit score."""
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"iris_rfs_und": {"rfs_und_score": value}}))
    assert main(["iris-profile", str(path)]) == 2
    error = capsys.readouterr().err
    assert f"{path}: iris_rfs_und rfs_und_score {message}" in error


def test_coverage_and_interval_values_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({"iris_ifs_und": {"ifs_und_score": 60.0, "ifs_und_score_coverage": 1.5}}))
    assert main(["iris-profile", str(path)]) == 2
    assert "ifs_und_score_coverage is 1.5, outside [0, 1]" in capsys.readouterr().err
    path.write_text(json.dumps({"iris_ifs_und": {"ifs_und_score": 60.0, "ifs_und_score_ci_high": "x"}}))
    assert main(["iris-profile", str(path)]) == 2
    assert "ifs_und_score_ci_high is 'x', not a number" in capsys.readouterr().err


def test_reads_score_iris_output(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """The review's m3: the output of `fairness-evals score iris` ({task: {metric: value}}, null for NaN) was refused."""
    scores = {
        "iris_ifs_und": {"ifs_und_score": 71.46, "ifs_und_score_ci_low": 40.0, "ifs_und_score_ci_high": 150.0,
                         "ifs_und_score_coverage": 0.9, "min_coverage": 0.5, "AD_single_gender": 0.03},
        "iris_rfs_und": {"rfs_und_score": 69.81, "rfs_und_score_ci_low": None, "rfs_und_score_ci_high": None,
                         "rfs_und_score_coverage": 0.8, "min_coverage": 0.5, "embedder": "all-MiniLM-L6-v2"},
        "iris_bis_und": {"bis_und_score": 50.75, "bis_und_score_coverage": 0.99, "min_coverage": 0.5},
    }  # fmt: skip
    path = tmp_path / "scores.json"
    path.write_text(json.dumps(scores))
    result = _profile(capsys, str(path))
    assert result["mbti"]["Und"]["code"] == "UAR"
    assert result["dimensions"]["RFS-Und"]["rfs_und_score_ci_low"] is None
    assert result["dimensions"]["BIS-Und"]["coverage"] == 0.99
    wrapped = tmp_path / "wrapped.json"  # the same under a "results" table, as a scaffold may write it
    wrapped.write_text(json.dumps({"results": scores, "model": "m"}))
    assert _profile(capsys, str(wrapped))["model"] == "m"


def test_no_letter_from_a_dimension_below_its_coverage(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A score whose coverage is below its run's minimum gives no IRIS-MBTI code (issue 14), with the reason."""
    path = tmp_path / "scores.json"
    path.write_text(json.dumps({
        "iris_ifs_und": {"ifs_und_score": 65.0, "ifs_und_score_coverage": 0.3, "min_coverage": 0.25},
        "iris_rfs_und": {"rfs_und_score": 61.0, "rfs_und_score_coverage": 0.3, "min_coverage": 0.5},
        "iris_bis_und": {"bis_und_score": 61.0, "bis_und_score_coverage": 0.9},
    }))  # fmt: skip
    result = _profile(capsys, str(path))
    assert result["mbti"]["Und"] is None
    assert result["notes"][1:] == [
        "Und: no IRIS-MBTI code, RFS-Und coverage 0.30 is below 0.5 (a letter needs the score's coverage)"
    ]
    assert _profile(capsys, str(path), "--min-coverage", "0.95")["notes"][1].endswith(
        "RFS-Und coverage 0.30 is below 0.5; BIS-Und coverage 0.90 is below 0.95 (a letter needs the score's coverage)"
    )
    assert main(["iris-profile", str(path)]) == 0
    text = capsys.readouterr().out
    assert "coverage" in text.splitlines()[2] and "Und: -" in text and "RFS-Und coverage 0.30 is below 0.5" in text


def _limited_und(folder: Path) -> Path:
    """Red team 6: Bagel's understanding results as a `--limit 3` run leaves them (3 of 5000 documents per task)."""
    data = json.loads((DATA / "bagel_und_results.json").read_text())
    data["config"]["limit"] = 3.0
    data["n-samples"] = {
        task: {"original": 5000, "effective": 3} for task in ("iris_ifs_und", "iris_rfs_und", "iris_bis_und")
    }
    folder.mkdir()
    path = folder / "20261201_101010_results.json"
    path.write_text(json.dumps(data))
    return path


def test_a_limited_run_is_refused_unless_allowed_and_then_gets_no_code(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A `--limit 3` run printed "Und: UAR The Entrenched Idealist" and exited 0; check flagged the same run."""
    path = _limited_und(tmp_path / "lim")
    assert main(["iris-profile", str(tmp_path / "lim")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"error: fairness-evals: {path}: a limited run (--limit 3; iris_bis_und: 3 of 5000 documents, and 2 other "
        "tasks): its scores are not benchmark results, so it gets no IRIS profile (--allow-limited shows the scores "
        "without an IRIS-MBTI code)"
    ]
    assert main(["iris-profile", str(tmp_path / "lim"), "--allow-limited"]) == 0
    text = capsys.readouterr().out
    assert "Und: -" in text and "Idealist" not in text and "UAR" not in text
    assert (
        f"note: {path}: a limited run (--limit 3; iris_bis_und: 3 of 5000 documents, and 2 other tasks): its scores are not benchmark results, so no IRIS-MBTI"
        in text
    )
    result = _profile(capsys, str(tmp_path / "lim"), "--allow-limited")
    assert result["mbti"] == {"Gen": None, "Und": None} and result["dimensions"]["IFS-Und"]["score"] == 71.46
    assert result["limited"] == [
        f"{path}: a limited run (--limit 3; iris_bis_und: 3 of 5000 documents, and 2 other tasks)"
    ]


def test_a_score_output_of_a_limited_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`fairness-evals score <folder>` of a limited run records the limit in its provenance."""
    out = tmp_path / "score.json"
    out.write_text(json.dumps({"iris_ifs_und": {"ifs_und_score": 71.46}, "provenance": {"iris_ifs_und": {"limit": 3}}}))
    assert main(["iris-profile", str(out)]) == 2
    assert f"{out}: a limited run (--limit 3; iris_ifs_und): its scores are not" in capsys.readouterr().err
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps({"iris_ifs_und": {"ifs_und_score": 71.46}, "provenance": {"iris_ifs_und": {}}}))
    assert _profile(capsys, str(whole))["limited"] == []
