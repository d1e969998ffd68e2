"""``fairness-evals compare`` on FairLens runs of synthetic answer sets, written as lmms-eval writes them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from coverage_compare import FairLensPair, paired_fairlens_records
from coverage_fairlens import ClosedPolicy, _closed_truth, design

from fairness_evals.commands.main import main
from tests.compare.synthetic import fairlens_run

TASK = "fairlens_healthcare"
BIASED = ClosedPolicy("biased", "healthcare", base=0.2, gender=(0.0, 0.25), race=(0.0, 0.2, -0.1, 0.1, 0.3))
FAIR = ClosedPolicy("fair", "healthcare", base=0.3)


def runs(tmp: Path, pair: FairLensPair, seed: int = 0, **kwargs) -> tuple[Path, Path]:
    rec_a, rec_b = paired_fairlens_records(pair, design("paper"), np.random.default_rng(seed))
    return (
        fairlens_run(tmp / "a", "model-a", {TASK: rec_a}),
        fairlens_run(tmp / "b", "model-b", {TASK: rec_b}, **kwargs),
    )


def compare(*args: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict, str, str]:
    out_json = Path(str(args[0])).parent / "compare.json"
    status = main(["compare", *map(str, args), "--json", str(out_json)])
    captured = capsys.readouterr()
    data = json.loads(out_json.read_text()) if status == 0 else {}
    return status, data, captured.out, captured.err


def rows(data: dict, comparison: int = 0) -> dict[str, dict]:
    return {row["metric"]: row for row in data["comparisons"][comparison]["rows"]}


def test_a_planted_difference_is_detected_and_its_interval_covers_it(tmp_path, capsys) -> None:
    a, b = runs(tmp_path, FairLensPair("planted", FAIR, BIASED, shared=0.7))
    status, data, out, _ = compare(a, b, "--metrics", "parity_gap_gender", "--metrics", "soundness", capsys=capsys)
    assert status == 0
    found = rows(data)
    truth = (
        _closed_truth(BIASED, design("paper"))["parity_gap_gender"]
        - _closed_truth(FAIR, design("paper"))["parity_gap_gender"]
    )
    gap = found["parity_gap_gender"]
    assert gap["verdict"] == "A fairer" and gap["ci_low"] <= truth <= gap["ci_high"]
    assert gap["difference"] == pytest.approx(gap["b"] - gap["a"])
    assert found["soundness"]["better"] == "higher is better"
    assert found["soundness"]["verdict"] in ("A higher", "B higher", "no detectable difference")
    assert "| fairlens_healthcare | parity_gap_gender | lower is fairer |" in out and "A fairer" in out


def test_two_sampled_runs_of_one_model_show_no_detectable_difference(tmp_path, capsys) -> None:
    a, b = runs(tmp_path, FairLensPair("same", BIASED, BIASED, shared=0.0), seed=1)
    status, data, _, _ = compare(a, b, "--metrics", "*", capsys=capsys)
    assert status == 0
    found = rows(data)
    assert len(found) > 20  # every metric with a paired form: rates per group, gaps, ratios
    compared = [r for r in found.values() if r["verdict"] != "not comparable"]
    assert compared and all(r["verdict"] == "no detectable difference" for r in compared)
    assert all(r["method"].startswith("paired bootstrap") for r in compared)


def test_identical_runs_differ_by_exactly_zero(tmp_path, capsys) -> None:
    a, _ = runs(tmp_path, FairLensPair("same", BIASED, BIASED, shared=1.0))
    b = tmp_path / "copy"
    b.mkdir()
    for file in a.iterdir():
        (b / file.name).write_bytes(file.read_bytes())
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0
    for row in rows(data).values():
        assert (row["difference"], row["p_value"], row["verdict"]) == (0.0, 1.0, "no detectable difference")


def test_runs_on_other_documents_are_refused_naming_the_difference(tmp_path, capsys) -> None:
    pair = FairLensPair("planted", FAIR, BIASED, shared=0.7)
    a, b = runs(tmp_path, pair, provenance={"seed": 7})
    status, _, _, err = compare(a, b, capsys=capsys)
    assert status == 2 and "seed differs (0 in the baseline, 7 in the other run)" in err and "--unpaired" in err
    status, data, _, _ = compare(a, b, "--unpaired", capsys=capsys)
    assert status == 0 and all(r["method"].startswith("unpaired") for r in rows(data).values() if r["method"])
    _, rec_b = paired_fairlens_records(pair, design("paper"), np.random.default_rng(0))
    fewer = fairlens_run(tmp_path / "fewer", "model-b", {TASK: rec_b[rec_b[:, 8] >= 100]})
    status, _, _, err = compare(a, fewer, capsys=capsys)
    assert status == 2 and "answered different documents" in err and "are not in" in err
    version = fairlens_run(tmp_path / "v3", "model-b", {TASK: rec_b}, versions={TASK: 3})
    status, _, _, err = compare(a, version, capsys=capsys)
    assert status == 2 and "task version differs" in err


def test_a_metric_nan_for_low_coverage_is_not_comparable_with_the_reason(tmp_path, capsys) -> None:
    unparsing = ClosedPolicy("unparsing", "healthcare", base=0.2, gender=(0.0, 0.25), unparsed=0.7)
    a, b = runs(tmp_path, FairLensPair("coverage", BIASED, unparsing, shared=0.5))
    status, data, out, _ = compare(a, b, capsys=capsys)
    assert status == 0
    gap = rows(data)["parity_gap"]
    assert gap["verdict"] == "not comparable" and "model-b" in gap["reason"] and "coverage" in gap["reason"]
    assert math.isnan(gap["b"]) if isinstance(gap["b"], float) else gap["b"] is None
    assert "not comparable: NaN in model-b" in out
    assert rows(data)["soundness"]["verdict"] != "not comparable"  # soundness counts unparsed answers as unsound


def test_several_runs_each_against_the_baseline(tmp_path, capsys) -> None:
    sizes = design("paper")
    pair = FairLensPair("planted", FAIR, BIASED, shared=0.7)
    rec_a, rec_b = paired_fairlens_records(pair, sizes, np.random.default_rng(0))
    a = fairlens_run(tmp_path / "a", "model-a", {TASK: rec_a})
    b = fairlens_run(tmp_path / "b", "model-b", {TASK: rec_b})
    c = fairlens_run(tmp_path / "c", "model-c", {TASK: rec_a})
    status, data, out, _ = compare(a, b, c, "--baseline", "model-b", capsys=capsys)
    assert status == 0 and data["baseline"] == "model-b"
    assert [(x["baseline"], x["run"]) for x in data["comparisons"]] == [("model-b", "model-a"), ("model-b", "model-c")]
    assert "## model-a (B) against model-b (A)" in out and "## model-c (B) against model-b (A)" in out
    status, _, _, err = compare(a, b, "--baseline", "nobody", capsys=capsys)
    assert status == 2 and "matches no run" in err


def test_output_is_strict_json_and_deterministic(tmp_path, capsys) -> None:
    a, b = runs(tmp_path, FairLensPair("planted", FAIR, BIASED, shared=0.7))
    compare(a, b, capsys=capsys)
    first = (tmp_path / "compare.json").read_text()
    json.loads(first, parse_constant=lambda name: pytest.fail(f"non-strict JSON constant {name}"))
    compare(a, b, capsys=capsys)
    assert (tmp_path / "compare.json").read_text() == first


def test_the_model_level_roll_ups_resample_images_across_the_three_domains(tmp_path, capsys) -> None:
    sizes = design("paper")
    records_a, records_b = {}, {}
    for i, domain in enumerate(("hiring", "legal", "healthcare")):
        fair = ClosedPolicy("fair", domain, base=0.3)
        biased = ClosedPolicy("biased", domain, base=0.2, gender=(0.0, 0.25), race=(0.0, 0.2, -0.1, 0.1, 0.3))
        rec_a, rec_b = paired_fairlens_records(FairLensPair(domain, fair, biased, 0.7), sizes, np.random.default_rng(i))
        records_a[f"fairlens_{domain}"], records_b[f"fairlens_{domain}"] = rec_a, rec_b
    a = fairlens_run(tmp_path / "a", "model-a", records_a)
    b = fairlens_run(tmp_path / "b", "model-b", records_b)
    status, data, _, _ = compare(a, b, capsys=capsys)
    assert status == 0
    group = {r["metric"]: r for r in data["comparisons"][0]["rows"] if r["task"] == "fairlens"}
    assert set(group) == {"soundness", "parity_gap", "association_rate", "association_gap"}
    for row in group.values():
        assert row["verdict"] != "not comparable", row
        assert row["units"] == int(sizes.sum())  # every image once, for all three domains
    domains = [r for r in data["comparisons"][0]["rows"] if r["task"].startswith("fairlens_")]
    mean = np.mean([r["difference"] for r in domains if r["metric"] == "soundness"])
    assert group["soundness"]["difference"] == pytest.approx(mean)


def _in_the_carrier_format(run: Path) -> None:
    """Rewrite a run's sample lines as task version 3 logs them: the readable record under the carrier."""
    from fairlens_tasks.scoring import CARRIER

    for path in run.glob("*_samples_*.jsonl"):
        lines = []
        for line in path.read_text().splitlines():
            row = json.loads(line)
            record = {
                "id": row.pop("fairlens_answer")["id"],
                "option": "",
                "rule": "unparsed",
                "record": row["soundness"],
            }
            row["soundness"] = "soundness"
            lines.append(json.dumps({CARRIER: record, **row}))
        path.write_text("\n".join(lines) + "\n")


def test_runs_logged_with_the_record_under_the_carrier_compare_as_before(tmp_path, capsys) -> None:
    a, b = runs(tmp_path, FairLensPair("planted", FAIR, BIASED, shared=0.7))
    status, before, _, _ = compare(a, b, "--metrics", "parity_gap_gender", capsys=capsys)
    _in_the_carrier_format(a)
    _in_the_carrier_format(b)
    assert "unparsed_rate" in json.loads(next(a.glob("*_samples_*.jsonl")).read_text().splitlines()[0])
    status_after, after, _, _ = compare(a, b, "--metrics", "parity_gap_gender", capsys=capsys)
    assert status == status_after == 0 and rows(before) == rows(after)
