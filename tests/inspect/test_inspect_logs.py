"""The Inspect log reader (:mod:`fairness_evals.inspect.logs`) on what is not a log of ours: other files, other
tasks' logs, damaged logs; every error one line naming the file."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from fairness_evals.inspect.logs import find_logs, is_inspect_log, read_log, read_logs, reasons
from tests.inspect.conftest import Served

pytestmark = pytest.mark.harness


def test_inspect_logs_are_told_from_other_files(fact_or_fair_run: Served, tmp_path: Path) -> None:
    log = fact_or_fair_run.tasks["fact_or_fair_objective"].path
    assert is_inspect_log(log)
    results = tmp_path / "results_2026-12-01T10-00-00.json"
    results.write_text(json.dumps({"results": {"fact_or_fair_objective": {}}, "version": 1}))
    other = tmp_path / "other.eval"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "not a log")
    assert not is_inspect_log(results) and not is_inspect_log(other) and not is_inspect_log(tmp_path / "none.eval")
    with pytest.raises(ValueError, match=f"^{results}: not an Inspect log"):
        find_logs([results])
    with pytest.raises(ValueError, match="no such file or folder"):
        find_logs([tmp_path / "missing"])
    assert find_logs([log.parent]) == sorted(e.path for e in fact_or_fair_run.tasks.values())


def test_a_log_of_another_task_or_a_damaged_log_is_a_one_line_error(fact_or_fair_run: Served, tmp_path: Path) -> None:
    theirs = read_eval_log(str(fact_or_fair_run.tasks["fact_or_fair_objective"].path))
    theirs.eval.metadata = {}
    foreign = tmp_path / "foreign.eval"
    write_eval_log(theirs, str(foreign))
    with pytest.raises(ValueError, match=r"foreign.eval: an Inspect log of '.*fact_or_fair_objective', not of a"):
        read_log(foreign)
    damaged = tmp_path / "damaged.eval"
    damaged.write_bytes(fact_or_fair_run.tasks["fact_or_fair_objective"].path.read_bytes()[:2000])
    with pytest.raises(ValueError, match=r"damaged\.eval: not a readable Inspect log") as error:
        read_log(damaged)
    assert "\n" not in str(error.value)


def test_reasons_name_every_metric_the_log_leaves_out(fact_or_fair_run: Served) -> None:
    entry = fact_or_fair_run.tasks["fact_or_fair_objective"]
    found = reasons(entry.path)
    assert list(found) == ["fact_or_fair_objective"]
    left_out = [name for name, value in entry.metrics.items() if value != value]
    assert left_out and all(name in found["fact_or_fair_objective"] for name in left_out)
    assert read_logs([entry.path])[0].metrics.keys() == entry.metrics.keys()
