"""``export`` / ``score`` for IRIS (``iris_tasks.commands``): shared documents once, replies scored like the harness."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from iris_tasks import bis_und, documents, ifs_und, rfs_und, scoring
from iris_tasks import commands as cli


def _args(adder, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    adder(parser)
    return parser.parse_args(argv)


def _reply(line: dict) -> str:
    meta = line["meta"]
    if meta["kind"] == "rating":
        return str(3 + (meta["gender"] == "female"))
    if meta["kind"] == "yes_no":
        return "yes" if meta["age"] == "young" else "no"
    if meta["kind"] == "probe":
        return meta["candidates"][0]
    return "nurse" if meta["gender"] == "female" else meta["occupation"]


def test_export_then_score_equals_the_harness_records(
    manifest_corpus: Path, steer_corpus: Path, tmp_path: Path
) -> None:
    base = ["--corpus", str(manifest_corpus), "--steer-corpus", str(steer_corpus), "--probe-rounds", "1"]
    out = tmp_path / "export.jsonl"
    assert cli.export(_args(cli.add_export_arguments, [*base, "--out", str(out)])) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    shared = [line for line in lines if line["tasks"] == ["iris_ifs_und", "iris_rfs_und"]]
    assert len(shared) == 72  # the occupation question on each image: once, for both tasks
    assert len(lines) == 72 + 234 + 384
    probe = next(line for line in lines if line["meta"]["kind"] == "probe")
    assert probe["image"] is None and len(probe["meta"]["candidates"]) == 4
    assert cli.export(_args(cli.add_export_arguments, [*base, "--out", str(tmp_path / "again.jsonl")])) == 0
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()  # deterministic
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": line["id"], "response": _reply(line)}) + "\n" for line in lines))
    scores_file = tmp_path / "scores.json"
    assert (
        cli.score(_args(cli.add_score_arguments, [*base, "--responses", str(answers), "--out", str(scores_file)])) == 0
    )
    scores = json.loads(scores_file.read_text())
    settings = cli._settings(_args(cli.add_score_arguments, [*base, "--responses", "x"]))
    by_id = {line["id"]: _reply(line) for line in lines}
    for task, module in (("iris_ifs_und", ifs_und), ("iris_rfs_und", rfs_und), ("iris_bis_und", bis_und)):
        docs = documents.build(task, settings)
        records = [scoring.read_reply(d, by_id[d["id"]])[0] for d in docs]
        expected = module.compute_metrics(records)
        assert list(expected) == list(module.METRICS)  # every statistic of the table
        for name in module.METRICS:
            assert scores[task][name] == pytest.approx(expected[name], nan_ok=True), (task, name)
        assert scores[task]["data_version"] == 1 and scoring.provenance(docs)["data_version"] == 1
    assert scores["iris_ifs_und"]["accuracy"] == 45 / 72  # the 36 men, and the 9 women who are nurses


def test_score_errors_name_the_line(manifest_corpus: Path, tmp_path: Path) -> None:
    base = ["--corpus", str(manifest_corpus), "--task", "iris_ifs_und"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "no-such-image.png", "response": "doctor"}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: id 'no-such-image\.png' is not a document of iris_ifs_und"):
        cli.score(_args(cli.add_score_arguments, [*base, "--responses", str(bad)]))
    docs = documents.build("iris_ifs_und", cli._settings(_args(cli.add_score_arguments, [*base, "--responses", "x"])))
    twice = tmp_path / "twice.jsonl"
    twice.write_text("".join(json.dumps({"id": docs[0]["id"], "response": r}) + "\n" for r in ("a", "b")))
    with pytest.raises(ValueError, match=r"twice\.jsonl:2: a second response"):
        cli.score(_args(cli.add_score_arguments, [*base, "--responses", str(twice)]))
    with pytest.raises(ValueError, match="no lmms-eval samples_iris"):
        cli.score(_args(cli.add_score_arguments, [*base, "--responses", str(tmp_path)]))


def test_metadata_sets_the_minimum_coverage(manifest_corpus: Path, tmp_path: Path) -> None:
    """``--metadata '{"iris_min_coverage": ...}'`` reaches the scoring: a model answering one question in five is
    withheld at the default minimum and scored below a lower one."""
    base = ["--corpus", str(manifest_corpus), "--task", "iris_ifs_und"]
    out = tmp_path / "export.jsonl"
    assert cli.export(_args(cli.add_export_arguments, [*base, "--out", str(out)])) == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"id": line["id"], "response": line["meta"]["occupation"] if i % 5 == 0 else "I cannot tell."})
            + "\n"
            for i, line in enumerate(lines)
        )
    )
    scores = {}
    for name, metadata in (("default", []), ("low", ["--metadata", '{"iris_min_coverage": 0.1}'])):
        path = tmp_path / f"{name}.json"
        assert (
            cli.score(
                _args(cli.add_score_arguments, [*base, "--responses", str(answers), *metadata, "--out", str(path)])
            )
            == 0
        )
        scores[name] = json.loads(path.read_text())["iris_ifs_und"]
    assert (
        scores["default"]["ifs_und_score_coverage"] == scores["low"]["ifs_und_score_coverage"] == pytest.approx(15 / 72)
    )
    assert scores["default"]["ifs_und_score"] is None and isinstance(scores["low"]["ifs_und_score"], float)
