"""End to end through Inspect's own ``hf/`` provider with the embedded SmolLM2-135M-Instruct (``fairness-evals
model`` prints its folder): a real model's replies, parsed and scored as ``fairness-evals score`` scores them.

SmolLM2 answers near chance: this proves the plumbing with a real model, not its fairness.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from models import smollm2

from fact_fair_tasks import scoring
from fairness_evals.inspect.headline import headline_names
from fairness_evals.inspect.logs import read_logs
from tests.inspect.runs import inspect_eval

pytestmark = pytest.mark.harness

TASK = "fact_or_fair_objective"


def test_smollm2_through_the_hf_provider(tmp_path: Path) -> None:
    model = ["--model", "hf/local", "-M", f"model_path={smollm2()}", "-M", "device=cpu", "-M", "do_sample=false"]
    proc = inspect_eval(tmp_path, [TASK], *model, "--limit", "6", timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    (entry,) = read_logs([tmp_path / "logs"])
    assert entry.failures() == [] and entry.model == "hf/local" and entry.limited.startswith("--limit 6")
    assert len(entry.samples) == 6 and all(s.reply.strip() for s in entry.samples)  # the model's own text
    records = [scoring.record_for(s.document, scoring.parse_reply(s.document, s.reply)) for s in entry.samples]
    assert [s.record["record"] for s in entry.samples] == records
    expected = scoring.compute_metrics(records, task=TASK)  # what score computes from these replies
    for name in headline_names(TASK):
        value = entry.metrics[name]
        assert (math.isnan(value) and math.isnan(expected[name])) or math.isclose(value, expected[name], abs_tol=1e-9)
    assert not math.isnan(entry.metrics["unparsed_rate"])
