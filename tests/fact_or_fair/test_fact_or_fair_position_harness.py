"""A model that always answers "A", through the real ``lm_eval`` command line and the commands a user runs after it.

The model is a loopback ``local-chat-completions`` server that answers ``{"answer": "A"}`` to every prompt (the red
team's always-"A" model, review 2026-12-06, finding 1). Its answers follow the letters, not the groups, so its
fairness scores (S_E, S_KLD, S_fair, the distance; the Table 3 rates) are null with the position finding as their
reason, ``fairness-evals check`` fails naming it once per task, the report says it, and ``compare`` does not call it
fairer than a stereotyped model. With ``fact_or_fair_position_nulls: false`` the numbers are kept (for study), and
still marked, failed and not compared.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from harness import DEV_BIN, load_results, offline_env, run
from openai_server import OpenAIServer, running

from fairness_evals.commands.main import main

pytestmark = pytest.mark.harness

TASKS = ("fact_or_fair_objective", "fact_or_fair_subjective_base_lite")
NULLED = ("s_e", "s_kld", "s_fair", "distance")
FINDING = "answers follow letter position rather than content"


def stereotyped(text: str) -> str:
    """The option of a White person, else of a man, else A (answers by content, wherever the group sits)."""
    parts = re.split(r"\s([A-D])\.\s", text.split(". Please")[0])
    options = dict(zip(parts[1::2], parts[2::2], strict=True))
    for wanted in (r"\bWhite\b", r"\bmale\b"):
        found = [letter for letter, body in options.items() if re.search(wanted, body)]
        if found:
            return json.dumps({"answer": found[0]})
    return '{"answer": "A"}'


def _lm_eval(tmp: Path, name: str, reply: object, tasks: str, *extra: str) -> Path:
    out = tmp / name
    with running(OpenAIServer(reply, model_name=name)) as server:
        run(
            [str(DEV_BIN / "lm_eval"), "--model", "local-chat-completions", "--model_args",
             f"model={name},base_url={server.base_url}/chat/completions,num_concurrent=16,max_retries=1",
             "--tasks", tasks, "--apply_chat_template", "--log_samples", "--output_path", str(out), *extra],
            env=offline_env(tmp), cwd=tmp, timeout=900,
        )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("position")
    keep = json.dumps({"fact_or_fair_position_nulls": False})
    return {
        "always-a": _lm_eval(tmp, "always-a", '{"answer": "A"}', ",".join(TASKS)),
        "stereotyped": _lm_eval(tmp, "stereotyped", stereotyped, ",".join(TASKS)),
        "kept": _lm_eval(tmp, "kept", '{"answer": "A"}', ",".join(TASKS), "--metadata", keep),
    }


def _metrics(out: Path, task: str) -> dict[str, float]:
    return {k.split(",")[0]: v for k, v in load_results(out)["results"][task].items()}


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["check", *args])
    return code, capsys.readouterr().err.splitlines()


def test_the_harness_prints_null_fairness_scores(runs: dict[str, Path]) -> None:
    for task in TASKS:
        metrics = _metrics(runs["always-a"], task)
        for axis in ("gender", "race"):
            assert all(math.isnan(metrics[f"{name}_{axis}"]) for name in NULLED if f"{name}_{axis}" in metrics)
            assert math.isnan(metrics[f"s_e_{axis}"])
        assert metrics["unparsed_rate"] == 0.0
    assert _metrics(runs["always-a"], TASKS[0])["s_fact_gender"] == 0.5  # accuracy: at chance, as it reads
    assert math.isnan(_metrics(runs["always-a"], "fact_or_fair_subjective_base_lite")["s_fair_race"])
    kept = _metrics(runs["kept"], TASKS[0])
    assert kept["s_e_gender"] == pytest.approx(0.9182958340544898, abs=1e-12)  # the number, kept for study


def test_the_detail_gives_the_reason_and_the_numbers(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "detail.json"
    assert main(["score", str(runs["always-a"]), "--out", str(out)]) == 0
    detail = json.loads(out.read_text())
    for task in TASKS:
        metrics, nulls = detail[task], detail["nulls"][task]
        assert metrics["position_explained"] == 1.0 and metrics["position_share_1"] == 1.0
        assert metrics["position_bias"] > metrics["position_bias_chance_high"]
        assert metrics["letter_dependence"] == 1.0 and metrics["letter_dependence"] >= metrics["content_dependence"]
        for axis in ("gender", "race"):
            assert metrics[f"s_fair_{axis}"] is None and nulls[f"s_fair_{axis}"].startswith(f"{FINDING}: A was")
            assert metrics[f"s_fact_{axis}"] is not None and f"s_fact_{axis}" not in nulls
        assert "fact_or_fair_position_nulls: false keeps them" in nulls["s_e_gender"]


def test_check_fails_naming_it_once_per_task(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("always-a", "kept"):
        code, lines = _check(capsys, str(runs[name]), "--allow-nan", "*_race")
        assert code == 1, lines
        named = [line for line in lines if FINDING in line]
        assert len(named) == len(TASKS) and all(any(task in line for line in named) for task in TASKS), lines
        assert not [line for line in lines if "headline metric" in line], lines  # said once, not per score
    code, lines = _check(capsys, str(runs["stereotyped"]))
    assert not [line for line in lines if FINDING in line], lines


def test_the_report_marks_the_scores(runs: dict[str, Path], tmp_path: Path) -> None:
    for name in ("always-a", "kept"):
        out = tmp_path / f"{name}.md"
        assert main(["report", str(runs[name]), "--format", "markdown", "--out", str(out)]) == 0
        text = out.read_text()
        assert f"the answers follow the option position rather than the content in {TASKS[0]}" in text
        cells = [line for line in text.splitlines() if line.startswith("|") and FINDING in line]
        assert cells, text  # the score cells carry the finding: null with it, or kept and marked
        if name == "kept":
            assert "not a result, kept for study" in text and "91.83" in text


def test_compare_does_not_call_it_fairer(runs: dict[str, Path], tmp_path: Path) -> None:
    for name in ("always-a", "kept"):
        out = tmp_path / f"{name}.json"
        code = main(["compare", str(runs["stereotyped"]), str(runs[name]), "--resamples", "200", "--json", str(out)])
        assert code == 0
        (comparison,) = json.loads(out.read_text())["comparisons"]
        rows = {(r["task"], r["metric"]): r for r in comparison["rows"]}
        for (_, metric), row in rows.items():
            if metric.startswith(NULLED):
                assert row["verdict"] == "not comparable" and FINDING in row["reason"], row
            else:
                assert metric.startswith("s_fact_") and row["verdict"] != "not comparable", row
        assert ("fact_or_fair_subjective_base_lite", "s_e_race") in rows  # the red team's "B fairer", Holm p 0.016
