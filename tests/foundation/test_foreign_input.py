"""Foreign input, unknown settings and malformed samples are refused in one line naming the item (issue 24).

Every case here was scored, silently, before: another benchmark's samples read by ``score fairlens`` through the
position of their ``doc_id``, a misspelt ``fact_or_fair_`` setting ignored, ``true`` read as a minimum coverage of
1.0, a response that is a number, an object, ``null`` or ``true`` counted as an unparsed answer, and lm-eval samples
whose document lacks its hash or seed failing with a bare ``'doc_sha'`` or an "unexpected TypeError".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from faces import make_utkface_folder

from fairness_evals.commands.main import main


def _run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _refused(capsys: pytest.CaptureFixture, argv: list[str], *messages: str) -> str:
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1, (argv, err)
    assert all(message in err for message in messages), (argv, err)
    return err


def _lines(path: Path, rows: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def faces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One image per stratum: 30 images."""
    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, 1, seed=3)
    return root


def _fairlens_documents(faces: Path, domain: str, **settings: Any) -> list[dict[str, Any]]:
    from fairlens_tasks.documents import documents
    from fairlens_tasks.settings import ENV, build_settings

    return documents(build_settings({"corpus": str(faces), "sample_fraction": 1, **settings}, ENV), domain)


def _fairlens_sample(index: int, doc: dict[str, Any], reply: str = "Yes") -> dict[str, Any]:
    """A line as lmms-eval 0.7 logs it: the document (its non-image fields), the replies, our process_results."""
    from fairlens_tasks import scoring

    return {"doc_id": index, "doc": doc, "filtered_resps": [reply], **scoring.process_results(doc, [reply])}


# ----------------------------------------------------------------------------- item 2: samples of another benchmark
def test_fairlens_refuses_lines_that_name_no_document(tmp_path: Path, faces: Path, capsys) -> None:
    """The issue's case: bare ``{"doc_id", "filtered_resps"}`` lines scored "20 of 630 documents" by position."""
    samples = _lines(
        tmp_path / "run" / "m" / "samples_fairlens_hiring_2026-01-01T00-00-00.jsonl",
        [{"doc_id": i, "filtered_resps": ["Yes"]} for i in range(20)],
    )
    argv = ["score", "fairlens", "--corpus", str(faces), "--sample-fraction", "1", "--responses", str(tmp_path / "run")]
    _refused(
        capsys, argv, f"{samples}:1:", "nor an lmms-eval FairLens sample", "the id of its logged record, or doc.id"
    )


def test_fairlens_refuses_fact_or_fair_samples_renamed(tmp_path: Path, faces: Path, capsys) -> None:
    from fact_fair_tasks.documents import documents_for

    rows = [{"doc_id": i, "doc": doc, "filtered_resps": ["A"]} for i, doc in enumerate(documents_for("objective"))]
    samples = _lines(tmp_path / "run" / "m" / "samples_fairlens_hiring_2026-01-01T00-00-00.jsonl", rows)
    argv = ["score", "fairlens", "--corpus", str(faces), "--sample-fraction", "1", "--responses", str(samples)]
    _refused(capsys, argv, f"{samples}:1: id 'objective/", "is not a document of this corpus")


def test_fairlens_refuses_samples_of_other_settings_another_task_or_two_ids(
    tmp_path: Path, faces: Path, capsys
) -> None:
    """A sample logs its document: one of another seed (same image and question), another domain's document in a
    file of this domain, and a line whose two ids disagree are refused; the run's own samples score."""
    legal = _fairlens_documents(faces, "legal")
    argv = ["score", "fairlens", "--corpus", str(faces), "--sample-fraction", "1", "--domain", "legal", "--responses"]
    good = _lines(
        tmp_path / "good" / "20260101_000000_samples_fairlens_legal.jsonl",
        [_fairlens_sample(i, doc) for i, doc in enumerate(legal)],
    )
    code, out, err = _run(capsys, *argv, str(good))
    assert code == 0 and json.loads(out)["fairlens_legal"]["answers"] == len(legal), err

    other_seed = _fairlens_documents(faces, "legal", seed=1)
    assert [d["id"] for d in other_seed] == [d["id"] for d in legal]  # fraction 1: the same images, another seed
    seeded = _lines(
        tmp_path / "seed" / "20260101_000000_samples_fairlens_legal.jsonl",
        [_fairlens_sample(i, doc) for i, doc in enumerate(other_seed)],
    )
    _refused(capsys, [*argv, str(seeded)], f"{seeded}:1:", "has seed 1", "document of this corpus and these settings 0")

    hiring = _fairlens_documents(faces, "hiring")
    moved = _lines(
        tmp_path / "moved" / "20260101_000000_samples_fairlens_legal.jsonl", [_fairlens_sample(0, hiring[0])]
    )
    argv_all = ["score", "fairlens", "--corpus", str(faces), "--sample-fraction", "1", "--responses", str(moved)]
    _refused(capsys, argv_all, f"{moved}:1:", "is a document of fairlens_hiring, not of fairlens_legal")

    from fairlens_tasks.scoring import CARRIER

    two = _fairlens_sample(0, legal[0])
    two[CARRIER] = {**two[CARRIER], "id": legal[1]["id"]}
    twice = _lines(tmp_path / "two" / "20260101_000000_samples_fairlens_legal.jsonl", [two])
    _refused(capsys, [*argv, str(twice)], f"{twice}:1: its record answers {legal[1]['id']!r} and its doc.id is")


# ----------------------------------------------------------------------------- item 14: non-text responses
NOT_TEXT = [(5, "is a number (5)"), ({"x": 1}, "is an object"), (None, "is null"), (True, "is true")]


@pytest.mark.parametrize(("value", "named"), NOT_TEXT, ids=["number", "object", "null", "true"])
@pytest.mark.parametrize("benchmark", ["fact_or_fair", "fairlens", "iris"])
def test_a_response_that_is_not_text_is_refused_naming_the_line(
    benchmark: str, value: Any, named: str, tmp_path: Path, faces: Path, capsys
) -> None:
    """They were counted as unparsed answers (``score fact_or_fair``, ``score fairlens``): here every other line
    answers its document, so only the second line is wrong."""
    if benchmark == "fact_or_fair":
        from fact_fair_tasks.documents import documents_for

        ids, options = [d["id"] for d in documents_for("objective")], []
    elif benchmark == "fairlens":
        ids, options = [d["id"] for d in _fairlens_documents(faces, "legal")], ["--corpus", str(faces)]
        options += ["--sample-fraction", "1", "--domain", "legal"]
    else:
        ids, options = ["probe/male/young/light/r0/b0", "probe/male/young/middle/r0/b0"], ["--probe-rounds", "1"]
    rows = [{"id": doc_id, "response": value if i == 1 else "A"} for i, doc_id in enumerate(ids)]
    responses = _lines(tmp_path / "r.jsonl", rows)
    _refused(
        capsys,
        ["score", benchmark, *options, "--responses", str(responses)],
        f"{responses}:2: the response to {ids[1]!r} {named}, not text",
    )


# ----------------------------------------------------------------------------- item 3: unknown Fact-or-Fair settings
def test_fact_or_fair_refuses_a_misspelt_setting_naming_the_nearest(tmp_path: Path, capsys) -> None:
    responses = _lines(tmp_path / "r.jsonl", [{"id": "objective/x", "response": "A"}])
    typo = '{"fact_or_fair_min_coverge": 0.99}'
    for argv in (
        ["score", "fact_or_fair", "--responses", str(responses), "--metadata", typo],
        ["export", "fact_or_fair", "--tasks", "objective", "--metadata", typo],
    ):
        _refused(
            capsys,
            argv,
            "--metadata: not a Fact-or-Fair setting: 'fact_or_fair_min_coverge'",
            "did you mean 'fact_or_fair_min_coverage'?",
        )


def test_lm_eval_task_metadata_checks_only_our_keys() -> None:
    """lm-eval passes the task metadata with the model arguments, ``config_source`` and its own keys: only
    ``fact_or_fair_`` keys are ours, and a misspelt one is refused, naming the nearest setting."""
    from fact_fair_tasks.documents import load_dataset

    theirs = {"version": 2, "pretrained": "/m", "dtype": "float32", "config_source": "fact_or_fair.yaml"}
    dataset = load_dataset(fact_or_fair_kind="objective", fact_or_fair_seed=0, **theirs)["test"]
    assert dataset.num_rows == 198
    with pytest.raises(ValueError, match=r"'fact_or_fair_draw' \(did you mean 'fact_or_fair_draws'\?\)"):
        load_dataset(fact_or_fair_kind="base", fact_or_fair_draw=1, **theirs)
    with pytest.raises(ValueError, match="fact_or_fair_seed must be an integer, got 'abc'"):
        load_dataset(fact_or_fair_kind="objective", fact_or_fair_seed="abc")


# ----------------------------------------------------------------------------- item 17: true is not a coverage
def test_true_is_not_a_minimum_coverage(tmp_path: Path, faces: Path, capsys) -> None:
    """``true`` was read as 1.0 by all three benchmarks; a number is still taken."""
    from fact_fair_tasks.documents import scoring_settings

    responses = _lines(tmp_path / "r.jsonl", [{"id": "x", "response": "A"}])
    fairlens = ["--corpus", str(faces), "--sample-fraction", "1"]
    for benchmark, options, key, message in (
        ("fact_or_fair", [], "fact_or_fair_min_coverage", "must be a number in [0, 1]"),
        ("fairlens", fairlens, "fairlens_min_coverage", "fairlens_min_coverage=true is not a number"),
        ("iris", [], "iris_min_coverage", "iris_min_coverage=true is not a number"),
    ):
        metadata = json.dumps({key: True})
        _refused(capsys, ["score", benchmark, *options, "--responses", str(responses), "--metadata", metadata], message)
    _refused(
        capsys,
        ["score", "iris", "--responses", str(responses), "--metadata", '{"iris_min_coverage": "0.5"}'],
        'iris_min_coverage="0.5" is not a number',
    )
    with pytest.raises(ValueError, match="got True"):
        scoring_settings({"fact_or_fair_min_coverage": True})
    assert scoring_settings({"fact_or_fair_min_coverage": 1})["min_coverage"] == 1.0


def test_fairlens_thresholds_take_numbers_and_the_text_of_their_variables() -> None:
    from fairlens_tasks.settings import SettingsError, coverage_threshold, scoring_from_env

    assert coverage_threshold("fairlens_min_coverage", 0.3).value == 0.3
    assert scoring_from_env("open", {"FAIRLENS_MIN_JUDGED": "0.6"}) == {"fairlens_min_judged": 0.6}
    for given in (True, "0.5", [0.5]):
        with pytest.raises(SettingsError, match="is not a number"):
            coverage_threshold("fairlens_min_judged", given)
    with pytest.raises(SettingsError, match="FAIRLENS_MIN_COVERAGE='true' is not a number"):
        scoring_from_env("closed", {"FAIRLENS_MIN_COVERAGE": "true"})


# ----------------------------------------------------------------------------- item 15: lm-eval samples that name nothing
def _without(key: str) -> Any:
    return lambda doc: doc.pop(key)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_without("doc_sha"), "has no doc_sha: not a Fact-or-Fair document"),
        (lambda doc: doc.update(seed="abc"), "has seed 'abc', not a whole number"),
        (lambda doc: doc.update(seed=None), "has seed None, not a whole number"),
        (_without("options"), "has no options"),
        (lambda doc: doc.update(task="fairlens_hiring"), "is not a document of fact_or_fair_objective"),
        (lambda doc: doc.update(answer="Martian"), "cannot be scored as a fact_or_fair_objective document"),
    ],
    ids=["no-doc-sha", "seed-text", "seed-null", "no-options", "other-task", "bad-label"],
)
def test_lm_eval_samples_with_a_malformed_document_name_the_line(change: Any, message: str, tmp_path: Path, capsys):
    from fact_fair_tasks.documents import documents_for

    rows = []
    for i, doc in enumerate(documents_for("objective")):
        if i == 2:
            change(doc)
        rows.append({"doc_id": i, "doc": doc, "resps": [["A"]], "filtered_resps": ["A"]})
    samples = _lines(tmp_path / "out" / "m" / "samples_fact_or_fair_objective_2026-01-01T00-00-00.jsonl", rows)
    _refused(capsys, ["score", "fact_or_fair", "--responses", str(tmp_path / "out")], f"{samples}:3:", message)
