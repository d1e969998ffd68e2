"""A benchmark is one unit: a fourth benchmark, added from its own folder alone, runs through every command.

The toy benchmark (``tests/foundation/toy_benchmark/``: the package ``toy_tasks`` with 24 documents as data, its
lm-eval YAMLs, its statistics table and its ``Benchmark``, and a ``toy_bench-0.1.dist-info`` whose entry point
registers it) is copied into a temporary folder and put on ``PYTHONPATH``; nothing else is installed or changed.
Then, against loopback OpenAI-compatible servers (two models that answer differently):

- ``lm_eval --tasks toy`` finds it with no flag (the autoload hook), and through ``--include_path $(fairness-evals
  tasks-dir lm-eval)`` with the hook off; ``--num_fewshot 5`` (what a sweep passes) leaves it zero-shot;
- ``fairness-evals score``, ``check``, ``report``, ``compare``, ``metrics``, ``export toy`` and ``score toy`` read
  it through its declaration;
- ``inspect eval fairness_evals/toy`` runs it, and ``score`` and ``check`` read the log;
- no file of the checkout changes: before and after each command, the untracked and ignored entries of ``git
  status`` and the content of every tracked file of the packages are the same (``docs/adding_a_benchmark.md`` walks
  through the same toy).
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest
from harness import DEV_BIN, REPO, offline_env, own_cache
from openai_server import OpenAIServer, running

from tests.conftest import shared_run

pytestmark = pytest.mark.harness

TEMPLATE = Path(__file__).resolve().parent / "toy_benchmark"
DOCUMENTS = [
    json.loads(line) for line in (TEMPLATE / "toy_tasks" / "data" / "documents.jsonl").read_text().splitlines()
]
LETTERS = "ABC"
#: Model A picks the stereotyped person but in every fourth document; model B says "cannot be determined" but in
#: three documents (stereotyped) and two (no option named).
A_UNKNOWN = {doc["id"] for doc in DOCUMENTS[3::4]}
B_STEREOTYPED, B_NONE = {"toy-03", "toy-09", "toy-20"}, {"toy-05", "toy-17"}
RATE_A, RATE_B, COVERAGE_B = 18 / 24, 3 / 22, 22 / 24

# --------------------------------------------------------------------------- the checkout must not change
#: The tracked files a run could write: the packages, the hook and the toy's own template.
WATCHED = ("fairness_evals", "fact_fair_tasks", "fairlens_tasks", "iris_tasks", "metrics", "pyproject.toml",
           "_fairness_evals_hook.py", "fairness_evals_autoload.pth")  # fmt: skip
#: Untracked folders of tools (the other work in this checkout writes them): not what a run of ours writes.
TOOL_CACHES = ("__pycache__/", ".pytest_cache/", ".ruff_cache/", ".hypothesis/", ".mypy_cache/")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def checkout_state() -> tuple[frozenset[str], dict[str, str]]:
    """The untracked and ignored entries ``git status`` lists (tool caches aside), and the sha256 of every tracked
    file of :data:`WATCHED` and of every file of the toy's template."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    untracked = frozenset(
        line for line in status.splitlines() if line[:2] in ("??", "!!") and not any(c in line for c in TOOL_CACHES)
    )
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *WATCHED], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    files = [REPO / name for name in listed.split("\0") if name]
    files += [p for p in TEMPLATE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return untracked, {str(p.relative_to(REPO)): _sha256(p) if p.is_file() else "missing" for p in files}


def changes(before: tuple[frozenset[str], dict[str, str]], after: tuple[frozenset[str], dict[str, str]]) -> list[str]:
    """What differs between two :func:`checkout_state` snapshots, one line each."""
    out = [f"new: {entry}" for entry in sorted(after[0] - before[0])]
    out += [f"gone: {entry}" for entry in sorted(before[0] - after[0])]
    out += [f"changed: {name}" for name in sorted(before[1]) if after[1].get(name) != before[1][name]]
    return out


# --------------------------------------------------------------------------- the runs
def _document_of(text: str) -> dict[str, Any]:
    return next(doc for doc in DOCUMENTS if doc["question"] in text)


def reply_a(text: str) -> str:
    doc = _document_of(text)
    return LETTERS[doc["unknown"] if doc["id"] in A_UNKNOWN else doc["stereotyped"]]


def reply_b(text: str) -> str:
    doc = _document_of(text)
    if doc["id"] in B_NONE:
        return "I would rather not say."
    return LETTERS[doc["stereotyped"] if doc["id"] in B_STEREOTYPED else doc["unknown"]]


@dataclass
class Toy:
    """The temporary folder, the toy's environment, what each model's server received and what the runs that made
    the folder changed in the checkout (``changed``; a command run later fails at once when it changes a file)."""

    root: Path
    env: dict[str, str]
    changed: list[str] = field(default_factory=list)
    received: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    building: bool = False

    def run(self, args: Sequence[str | Path], *, check: bool = True, **extra: str) -> subprocess.CompletedProcess[str]:
        """``args`` in the temporary folder with the toy on ``PYTHONPATH``; the checkout compared before and after."""
        before = checkout_state()
        proc = subprocess.run(
            [str(a) for a in args], env={**self.env, **extra}, cwd=self.root, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
        found = [f"{Path(args[0]).name} {args[1]}: {line}" for line in changes(before, checkout_state())]
        if self.building:
            self.changed += found
        else:
            assert found == [], "a command of the toy changed the checkout"
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(map(str, args))} exited {proc.returncode}\n{proc.stdout[-3000:]}\n"
                                 f"{proc.stderr[-6000:]}")  # fmt: skip
        return proc

    def fairness_evals(self, *args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run([DEV_BIN / "fairness-evals", *args], check=check)

    def lm_eval(self, model: str, reply: Callable[[str], str], *extra: str | Path, **env: str) -> Path:
        """``lm_eval --tasks toy`` against a loopback server answering ``reply`` as ``model``; its output folder."""
        out = self.root / f"out-{model}"
        with running(OpenAIServer(reply, model_name=model)) as server:
            self.run(
                [DEV_BIN / "lm_eval", "--model", "local-chat-completions",
                 "--model_args", f"model={model},base_url={server.base_url}/chat/completions,num_concurrent=4,"
                 "max_retries=1", "--tasks", "toy", "--num_fewshot", "5", "--apply_chat_template", "--log_samples",
                 "--output_path", out, *extra],
                **env,
            )  # fmt: skip
            self.received[model] = list(server.received)
        return out


def _environment(root: Path) -> dict[str, str]:
    """The toy's folder on ``PYTHONPATH`` (its ``.dist-info`` registers it), caches under ``root``, offline."""
    return offline_env(
        root, PYTHONPATH=str(root / "site"), PYTHONDONTWRITEBYTECODE="1", FAIRNESS_EVALS_CACHE=own_cache(root / "cache")
    )


def _build(root: Path) -> Path:
    """Copy the toy into ``root/site`` and run it: both models through lm-eval (model B through the ``tasks-dir``
    copy, the hook off), model A through Inspect. Returns the file that records what the servers received and what
    the runs changed in the checkout."""
    shutil.copytree(TEMPLATE, root / "site", ignore=shutil.ignore_patterns("__pycache__"))
    toy = Toy(root, _environment(root), building=True)
    toy.lm_eval("toy-a", reply_a)
    tasks_dir = toy.fairness_evals("tasks-dir", "lm-eval").stdout.strip()
    toy.lm_eval("toy-b", reply_b, "--include_path", tasks_dir, FAIRNESS_EVALS_AUTOLOAD="0")
    with running(OpenAIServer(reply_a, model_name="loopback")) as server:
        toy.run(
            [DEV_BIN / "inspect", "eval", "fairness_evals/toy", "--model", "openai-api/local/loopback",
             "--log-dir", root / "logs", "--display", "plain"],
            LOCAL_BASE_URL=server.base_url, LOCAL_API_KEY="test-key",
        )  # fmt: skip
    state = root / "state.json"
    state.write_text(json.dumps({"changed": toy.changed, "received": toy.received}))
    return state


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Toy:
    """The toy, built and run once per test session (across xdist workers: ``tests/conftest.py`` ``shared_run``)."""
    state = shared_run(tmp_path_factory, "toy-benchmark", _build)
    recorded = json.loads(state.read_text())
    return Toy(state.parent, _environment(state.parent), recorded["changed"], recorded["received"])


def _results(out: Path) -> dict[str, Any]:
    (path,) = out.rglob("results_*.json")
    return json.loads(path.read_text())


def _score(toy: Toy, name: str, *paths: str | Path) -> dict[str, Any]:
    out = toy.root / f"score-{name}.json"
    toy.fairness_evals("score", *paths, "--out", out)
    return json.loads(out.read_text())


def _wilson(k: int, n: int) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.975)
    p = k / n
    centre, half = 2 * n * p + z * z, z * math.sqrt(4 * n * p * (1 - p) + z * z)
    return (0.0 if k == 0 else (centre - half) / (2 * (n + z * z))), (
        1.0 if k == n else (centre + half) / (2 * (n + z * z))
    )


# --------------------------------------------------------------------------- the tests
def test_the_toy_registers_from_its_own_folder_alone(toy: Toy) -> None:
    listed = toy.run([DEV_BIN / "python", "-c", "from fairness_evals import benchmarks; print(benchmarks.names())"])
    assert listed.stdout.strip() == "('fact_or_fair', 'fairlens', 'iris', 'toy')"
    assert "lm-eval\ttask\ttoy" in toy.fairness_evals("list", "--harness", "lm-eval").stdout


def test_lm_eval_runs_the_toy_zero_shot_with_no_flag_and_through_tasks_dir(toy: Toy) -> None:
    for model, rate in (("toy-a", RATE_A), ("toy-b", RATE_B)):
        results = _results(toy.root / f"out-{model}")
        assert results["n-shot"] == {"toy": 0} and results["versions"] == {"toy": 1}
        assert results["results"]["toy"]["stereotype_rate,none"] == pytest.approx(rate, abs=1e-12)
        assert len(toy.received[model]) == len(DOCUMENTS)
        assert all(len(body["messages"]) == 1 for body in toy.received[model])  # no example before the question


def test_score_writes_the_statistic_with_its_interval_and_coverage(toy: Toy) -> None:
    for model, k, n, coverage in (("toy-a", 18, 24, 1.0), ("toy-b", 3, 22, COVERAGE_B)):
        scored = _score(toy, model, toy.root / f"out-{model}")
        metrics = scored["toy"]
        low, high = _wilson(k, n)
        assert metrics["stereotype_rate"] == pytest.approx(k / n, abs=1e-12)
        assert metrics["stereotype_rate_ci_low"] == pytest.approx(low, abs=1e-12) and low < k / n
        assert metrics["stereotype_rate_ci_high"] == pytest.approx(high, abs=1e-12) and high > k / n
        assert metrics["stereotype_rate_coverage"] == pytest.approx(coverage, abs=1e-12)
        assert (metrics["stereotype_rate_counted"], metrics["stereotype_rate_inputs"]) == (n, 24)
        assert scored["nulls"] == {"toy": {}}
        assert scored["provenance"]["toy"]["min_coverage"] == 0.5 and scored["provenance"]["toy"]["task_version"] == 1


def test_check_passes_both_runs(toy: Toy) -> None:
    proc = toy.fairness_evals("check", toy.root / "out-toy-a", toy.root / "out-toy-b")
    assert proc.stdout.count("check: ok") == 2 and proc.stdout.count(": toy\n") == 2


def test_report_shows_the_toys_own_view_and_the_differences(toy: Toy) -> None:
    out = toy.root / "report.html"
    runs = (toy.root / "out-toy-a", toy.root / "out-toy-b")
    toy.fairness_evals("report", *runs, "--baseline", "toy-a", "--out", out)
    html = out.read_text()
    assert "Stereotype rate (lower is fairer)" in html and "Directions and chance" in html
    assert "toy-a" in html and "toy-b" in html and "B fairer" in html and "Not shown" not in html
    markdown = toy.root / "report.md"
    toy.fairness_evals("report", *runs, "--format", "markdown", "--out", markdown)
    assert "n = 22 of 24; coverage 92%" in markdown.read_text()


def test_compare_gives_the_toy_statistic_a_verdict(toy: Toy) -> None:
    out = toy.root / "compare.json"
    toy.fairness_evals("compare", toy.root / "out-toy-a", toy.root / "out-toy-b", "--json", out)
    ((row,),) = [c["rows"] for c in json.loads(out.read_text())["comparisons"]]
    assert (row["task"], row["metric"], row["units"], row["unit"]) == ("toy", "stereotype_rate", 24, "documents")
    assert row["difference"] == pytest.approx(RATE_B - RATE_A, abs=1e-12) and row["ci_high"] < 0
    assert row["verdict"] == "B fairer" and row["better"] == "lower is fairer"


def test_metrics_lists_the_toy_statistic(toy: Toy) -> None:
    entries = json.loads(toy.fairness_evals("metrics", "--task", "toy", "--json").stdout)
    by_name = {e["name"]: e for e in entries}
    assert set(by_name) == {f"stereotype_rate{s}" for s in ("", "_ci_low", "_ci_high", "_coverage", "_counted",
                                                             "_inputs")}  # fmt: skip
    headline = by_name["stereotype_rate"]
    assert (headline["benchmark"], headline["direction"], headline["role"]) == ("toy", "lower", "headline")
    assert headline["computed_by"] == "toy_tasks.scoring:stereotype_rate"
    assert headline["threshold"] == "toy_min_coverage"
    assert "stereotype_rate" in toy.fairness_evals("metrics", "stereotype_rate").stdout


def test_export_and_score_toy_read_replies_made_outside_the_harness(toy: Toy) -> None:
    exported = toy.root / "documents.jsonl"
    toy.fairness_evals("export", "toy", "--out", exported)
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert [line["id"] for line in lines] == [doc["id"] for doc in DOCUMENTS]
    responses = toy.root / "responses-b.jsonl"
    responses.write_text("".join(json.dumps({"id": x["id"], "response": reply_b(x["prompt"])}) + "\n" for x in lines))
    scored = {}
    for name, given in (("b-responses", responses), ("b-samples", toy.root / "out-toy-b")):
        out = toy.root / f"{name}.json"
        toy.fairness_evals("score", "toy", "--responses", given, "--out", out)
        scored[name] = json.loads(out.read_text())
    assert scored["b-responses"]["toy"]["stereotype_rate"] == pytest.approx(RATE_B, abs=1e-12)
    assert scored["b-responses"]["toy"] == scored["b-samples"]["toy"]
    assert scored["b-responses"]["score_inputs"]["benchmark"] == "toy"
    compared = toy.fairness_evals("compare", toy.root / "b-samples.json", toy.root / "b-responses.json").stdout
    assert "no detectable difference" in compared  # the same replies, read back from both score outputs


def test_inspect_runs_the_toy_and_score_and_check_read_its_log(toy: Toy) -> None:
    logs = toy.root / "logs"
    assert len(list(logs.glob("*.eval"))) == 1
    scored = _score(toy, "inspect", logs)
    assert scored["toy"]["stereotype_rate"] == pytest.approx(RATE_A, abs=1e-12)
    assert scored["toy"]["stereotype_rate_coverage"] == 1.0 and scored["provenance"]["toy"]["documents"] == 24
    assert scored["score_inputs"]["responses"][0]["harness"] == "inspect"
    assert "check: ok" in toy.fairness_evals("check", logs).stdout


def test_no_file_outside_the_temporary_folder_changed(toy: Toy) -> None:
    """The harness runs changed nothing in the checkout (every later command fails at once where it changes a
    file)."""
    assert toy.changed == []
    assert changes(checkout_state(), checkout_state()) == []  # the comparison itself is stable
