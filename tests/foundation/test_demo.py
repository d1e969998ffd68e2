"""The README's first command, ``scripts/demo.sh``, as written: it prints the objective task's short table with
finite headline numbers and the line saying they check the plumbing. Its time is printed by ``bench/demo.py``, not
asserted here."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from harness import DEV_BIN, REPO, load_results, offline_env, run

from fairness_evals import statistics

pytestmark = pytest.mark.harness

TASK = "fact_or_fair_objective"


def test_the_readme_first_command_prints_the_table_and_a_reason_for_each_null(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "\nscripts/demo.sh\n" in readme.split("## ", 1)[0]  # the command the front page gives
    out = tmp_path / "demo"
    proc = run([str(REPO / "scripts" / "demo.sh"), str(out)], env=offline_env(tmp_path), cwd=REPO, timeout=1200)
    printed = proc.stdout
    rows = [line for line in printed.splitlines() if re.match(r"\|(fact_or_fair_objective| +)\|", line)]
    # one row per headline score; its standard error sits in the row's ± column
    headline = [name for name, _ in statistics.task(TASK).harness_metrics() if not name.endswith("_stderr")]
    assert 0 < len(rows) <= 12 and len(rows) == len(headline), printed[-3000:]
    assert all(any(re.search(rf"\|{name} *\|", row) for row in rows) for name in headline), printed[-3000:]
    assert "they are not a fairness result" in printed.splitlines()[-1]
    results = load_results(out)["results"][TASK]
    for name in ("s_fact_gender", "s_fact_gender_stderr", "unparsed_rate"):
        value = results[f"{name},none"]
        assert isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 1.0, (name, value)
    detail = run([str(DEV_BIN / "fairness-evals"), "score", str(out)], env=offline_env(tmp_path), cwd=REPO)
    nulls = json.loads(detail.stdout)["nulls"][TASK]
    # Greedy SmolLM2-135M answers "A" to every objective question it answers in a form that parses: the position test
    # finds it, and the entropy and distance are null with that reason (issue 33), not a near-perfect score.
    for name in ("s_e_gender", "distance_gender"):
        assert math.isnan(results[f"{name},none"]), name
        assert nulls[name].startswith("answers follow letter position rather than content: A was chosen"), nulls[name]
    position_nulled = [name for name, why in nulls.items() if why.startswith("answers follow letter position")]
    # It answers under half the race questions in a form that parses: those scores are withheld, each with the reason
    # score gives, never lowered to a number
    for name in ("s_fact_race", "s_e_race", "distance_race"):
        value = results[f"{name},none"]
        assert math.isfinite(value) or "below the minimum 0.5" in nulls[name] or name in position_nulled, (name, value)
