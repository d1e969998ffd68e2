"""Issue 33 for IRIS understanding: a value of a task's design is null unless every document of the design was
answered (``iris_tasks.statistics``, the declared ``Minimum``s; ``fairness_evals.evidence``), and a full run keeps
every number.

The documents carry the design's size (``documents``), the readable records carry it in their provenance, and every
path that scores records passes it: the harness aggregation (:func:`iris_tasks.scoring.compute_for_items`),
``score iris`` (:func:`iris_tasks.commands.score_documents`) and the samples detail (check, report). The harness run
itself is in ``test_iris_harness.py``.
"""

from __future__ import annotations

import argparse
import logging
import math
from pathlib import Path

import coverage_iris as sim
import numpy as np
import pytest

from fairness_evals.notes import Notes
from iris_tasks import bis_und, documents, ifs_und, rfs_und, scoring
from iris_tasks import commands as cli
from iris_tasks import statistics as table

MODULES = {"iris_ifs_und": ifs_und, "iris_rfs_und": rfs_und, "iris_bis_und": bis_und}


def _declared(task: str) -> list[str]:
    """The members of ``task`` that declare an estimate minimum (the values of the design)."""
    return [m for s in table.task_of(task).statistics if s.minimum is not None for m in s.members]


def _records(task: str) -> np.ndarray:
    """A small full design of ``task`` in the documents' order (one image per occupation x combination, one probe
    round, one counterfactual set per occupation): every declared value is a number."""
    rng = np.random.default_rng(5)
    pi = sim.recognition_model("gender")
    if task == "iris_ifs_und":
        return sim._fast_recognition(pi, 1, rng)
    if task == "iris_rfs_und":
        return sim._interleaved(sim._probe_in_order("moderate", 1, rng), sim._fast_recognition(pi, 1, rng))
    occupations = np.arange(sim.N_OCC)
    return sim._bis_in_order(sim.bis_records(occupations, *sim.set_answers("biased", occupations, rng)))


@pytest.mark.parametrize("task", list(MODULES))
def test_a_limited_run_of_the_design_prints_no_value_of_the_design(task: str, caplog) -> None:
    module, records = MODULES[task], _records(task)
    full = module.compute_metrics(records, design_size=len(records))
    assert full == pytest.approx(module.compute_metrics(records), nan_ok=True)  # the design known or not: the same
    declared = _declared(task)
    assert all(math.isfinite(full[name]) for name in declared), [n for n in declared if not math.isfinite(full[n])]
    prefix = module.compute_metrics(records[:20])  # what the prefix printed as if it were the design
    finite = [name for name in declared if math.isfinite(prefix[name])]
    notes = Notes(task)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="fairness_evals.iris"):
        limited = module.compute_metrics(records[:20], design_size=len(records), notes=notes)
    assert all(math.isnan(limited[name]) for name in declared), [n for n in declared if math.isfinite(limited[n])]
    score = f"{task.removeprefix('iris_')}_score"
    assert math.isnan(limited[f"{score}_ci_low"]) and math.isnan(limited[f"{score}_ci_high"])
    reason = f"too little evidence: only 20 of the design's {len(records)} documents hold an answer"
    assert finite and all(notes.reasons[name].startswith(reason) for name in finite)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]  # one short line a problem
    (warning,) = [w for w in warnings if reason in w]
    assert warning.startswith(f"{task}: ") and "\n" not in warning and all(w.startswith(f"{task}: ") for w in warnings)
    counts = {"iris_ifs_und": ("answers",), "iris_rfs_und": ("probe_answers", "answers"),
              "iris_bis_und": ("ac_answers", "dhr_answers")}[task]  # fmt: skip
    assert sum(limited[name] for name in counts) == 20  # the accounting stays


def test_the_aggregation_reads_the_design_from_the_records_provenance() -> None:
    records = _records("iris_ifs_und")

    def items(rows: np.ndarray, documents: int | None) -> list[dict]:
        provenance = {"corpus_sha256": "x", "seed": 0, "sample_fraction": 1.0, "data_version": 1}
        if documents is not None:
            provenance["documents"] = documents
        return [{"id": str(i), "record": r.tolist(), "provenance": provenance} for i, r in enumerate(rows)]

    limited = scoring.compute_for_items(items(records[:20], len(records)))
    assert math.isnan(limited["ifs_und_score"]) and limited["answers"] == 20
    assert math.isfinite(scoring.compute_for_items(items(records, len(records)))["ifs_und_score"])
    # an older log (no documents in the provenance) is scored as the whole design, as before
    assert math.isfinite(scoring.compute_for_items(items(records[:20], None))["ifs_und_score"])
    assert scoring.design_of([{"documents": 936}, {"documents": 936}, None]) == 936
    assert scoring.design_of([{"documents": None}, {}]) is None


def _args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli.add_score_arguments(parser)
    return parser.parse_args(argv)


def test_documents_carry_the_design_and_score_nulls_a_partial_reply_file(
    manifest_corpus: Path, steer_corpus: Path
) -> None:
    """Each document says how many its task's design holds; ``score`` with replies to only some of them (a limited
    run's samples) nulls the values of the design, with all of them it prints them."""
    base = ["--corpus", str(manifest_corpus), "--steer-corpus", str(steer_corpus), "--probe-rounds", "1"]
    settings = cli._settings(_args([*base, "--responses", "x"]))
    docs = {task: documents.build(task, settings) for task in MODULES}
    assert {task: {d["documents"] for d in found} for task, found in docs.items()} == {
        "iris_ifs_und": {72}, "iris_rfs_und": {234 + 72}, "iris_bis_und": {384}
    }  # fmt: skip
    reply = {"recognition": "A doctor.", "probe": None, "rating": "7", "yes_no": "Yes."}

    def replies(count: int | None) -> dict[tuple[str, str], str]:
        out = {}
        for task, found in docs.items():
            for doc in found[:count]:
                out[(task, doc["id"])] = reply[doc["kind"]] if doc["kind"] != "probe" else doc["candidates"][0]
        return out

    full, missing = cli.score_documents(docs, replies(None))
    assert missing == dict.fromkeys(MODULES, 0)
    limited, missing = cli.score_documents(docs, replies(20))
    assert missing == {"iris_ifs_und": 52, "iris_rfs_und": 286, "iris_bis_und": 364}
    assert math.isfinite(full["iris_rfs_und"]["rfs_und_score"]) and math.isfinite(
        full["iris_bis_und"]["ac_diff_single"]
    )
    for task in MODULES:
        for name in _declared(task):
            assert math.isnan(limited[task][name]), (task, name)
