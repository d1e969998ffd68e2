"""Every JSON output of every command is strict JSON (RFC 8259): parsed here with a parser that refuses
``NaN``/``Infinity``, as JavaScript's ``JSON.parse`` and the Go, Rust and Java parsers do.

Each case is built so that its output holds undefined numbers (NaN in Python), which must come out as ``null``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from faces import make_utkface_folder
from openai_server import Action, OpenAIServer, running
from PIL import Image

from fairness_evals.commands.main import main
from fairness_evals.jsonio import dumps, loads_strict, strict_json

IRIS_DATA = Path(__file__).resolve().parents[1] / "iris" / "data"


def strict(text: str) -> Any:
    """``json.loads`` that fails on the non-standard constants."""

    def refuse(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def strict_lines(text: str) -> list[Any]:
    return [strict(line) for line in text.splitlines() if line.strip()]


def nulls(value: Any) -> int:
    """How many nulls ``value`` holds (an output that should carry undefined numbers must show them)."""
    if value is None:
        return 1
    if isinstance(value, dict):
        return sum(nulls(v) for v in value.values())
    if isinstance(value, list):
        return sum(nulls(v) for v in value)
    return 0


def run(capsys: pytest.CaptureFixture, *argv: str, status: int = 0) -> str:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == status, captured.err[-2000:]
    return captured.out


def test_the_writer_turns_nan_and_infinity_into_null_and_numpy_into_numbers() -> None:
    import numpy as np

    value = {"a": float("nan"), "b": [float("inf"), -float("inf"), 1.5], "c": np.float64("nan"), "d": np.int64(3)}
    value["e"] = np.array([1.0, np.nan])
    value["f"] = (np.float32(0.5), np.bool_(True))
    assert strict(dumps(value)) == {"a": None, "b": [None, None, 1.5], "c": None, "d": 3, "e": [1.0, None]} | {
        "f": [0.5, True]
    }
    assert strict_json({"x": float("nan")}) == {"x": None}
    with pytest.raises(ValueError, match="NaN is not a JSON value"):
        loads_strict('{"x": NaN}')


@pytest.fixture(scope="module")
def faces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, 1, seed=3)
    return root


@pytest.fixture(scope="module")
def iris_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two occupations x every gender, age and skin tone: a CSV manifest of flat colour patches."""
    from iris_tasks.vocabulary import AGES, GENDERS, SKIN_TONES

    root = tmp_path_factory.mktemp("iris")
    rows = ["path,occupation,gender,age,skin_tone"]
    cells = [(o, g, a, s) for o in ("doctor", "nurse") for g in GENDERS for a in AGES for s in SKIN_TONES]
    for i, (occupation, gender, age, skin) in enumerate(cells):
        Image.new("RGB", (32, 32), (7 * i % 256, 90, 160)).save(root / f"img{i}.png")
        rows.append(f"img{i}.png,{occupation},{gender},{age},{skin}")
    (root / "images.csv").write_text("\n".join(rows) + "\n")
    return root / "images.csv"


def test_exports(capsys: pytest.CaptureFixture, tmp_path: Path, faces: Path, iris_corpus: Path) -> None:
    for argv in (
        ["export", "fact_or_fair", "--tasks", "objective"],
        ["export", "fairlens", "--corpus", str(faces), "--domain", "legal"],
        ["export", "iris", "--corpus", str(iris_corpus)],
    ):
        lines = strict_lines(run(capsys, *argv))
        assert lines and all(isinstance(line, dict) and "id" in line for line in lines), argv
        out = tmp_path / "export.jsonl"
        run(capsys, *argv, "--out", str(out))
        assert strict_lines(out.read_text()) == lines
    for benchmark in ("fact_or_fair", "iris"):
        layout = tmp_path / f"layout-{benchmark}"
        run(capsys, "export", benchmark, "--t2i-layout", str(layout))
        written = [p for p in layout.rglob("*") if p.suffix in (".json", ".jsonl")]
        assert written
        for path in written:
            (strict_lines if path.suffix == ".jsonl" else strict)(path.read_text())


def test_score_fact_or_fair(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    lines = strict_lines(run(capsys, "export", "fact_or_fair", "--tasks", "objective"))
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps({"id": line["id"], "response": "A"}) + "\n" for line in lines))
    printed = strict(run(capsys, "score", "fact_or_fair", "--responses", str(responses), "--by-statistic"))
    assert nulls(printed) > 0  # withheld intervals and statistics without data on an axis
    out = tmp_path / "scores.json"
    run(capsys, "score", "fact_or_fair", "--responses", str(responses), "--by-statistic", "--out", str(out))
    assert strict(out.read_text()) == printed


def test_score_fairlens(capsys: pytest.CaptureFixture, tmp_path: Path, faces: Path) -> None:
    lines = strict_lines(run(capsys, "export", "fairlens", "--corpus", str(faces), "--domain", "legal"))
    responses = tmp_path / "r.jsonl"
    responses.write_text("".join(json.dumps({"id": line["id"], "response": "Yes"}) + "\n" for line in lines[:9]))
    argv = ["score", "fairlens", "--corpus", str(faces), "--domain", "legal", "--responses", str(responses)]
    printed = strict(run(capsys, *argv))
    assert nulls(printed["fairlens_legal"]) > 0  # one image: every other group's rate is undefined
    out = tmp_path / "scores.json"
    run(capsys, *argv, "--out", str(out))
    assert strict(out.read_text()) == printed


def test_score_iris_without_a_corpus(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The documented default (no corpus: only the probe) gave 33 bare NaN values before."""
    lines = strict_lines(run(capsys, "export", "iris", "--probe-rounds", "1"))
    responses = tmp_path / "r.jsonl"
    responses.write_text(
        "".join(json.dumps({"id": line["id"], "response": line["meta"]["candidates"][0]}) + "\n" for line in lines)
    )
    printed = strict(run(capsys, "score", "iris", "--probe-rounds", "1", "--responses", str(responses)))
    assert nulls(printed["iris_rfs_und"]) > 0


def _open_samples(folder: Path, corpus: Path) -> None:
    from fairlens_tasks import open_scoring
    from fairlens_tasks.open_documents import open_documents
    from fairlens_tasks.settings import ENV, build_settings

    docs = open_documents(build_settings({"corpus": str(corpus), "sample_fraction": 1}, ENV), "legal")[:12]
    rows = []
    for i, doc in enumerate(docs):
        text = f"Answer {i}: they look calm."
        rows.append({"doc_id": i, "target": "", "filtered_resps": text, **open_scoring.process_results(doc, [text])})
    folder.mkdir(parents=True)
    (folder / "20260101_000000_samples_fairlens_open_legal.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows)
    )


def test_judge_with_a_dead_endpoint(capsys: pytest.CaptureFixture, tmp_path: Path, faces: Path) -> None:
    """Every call fails: the judge stops early (exit 1) and every bias score is undefined, written as null."""
    _open_samples(tmp_path / "run" / "model", faces)
    out, details = tmp_path / "judged.json", tmp_path / "details.jsonl"
    with running(OpenAIServer(script=[Action(status=503, body="{}")])) as server:
        argv = [
            "judge", str(tmp_path / "run"), "--judge", "openai:scripted", "--base-url", server.base_url,
            "--api-key", "k", "--retries", "0", "--concurrency", "1", "--attempts", "1",
            "--cache", str(tmp_path / "cache.sqlite"), "--out", str(out), "--details", str(details),
        ]  # fmt: skip
        run(capsys, *argv, status=1)
    judged = strict(out.read_text())
    assert judged["fairlens_open_legal"]["oe_bias_mean"] is None
    assert len(strict_lines(details.read_text())) == 12


def test_iris_profile_json(capsys: pytest.CaptureFixture) -> None:
    strict(run(capsys, "iris-profile", str(IRIS_DATA), "--format", "json"))
