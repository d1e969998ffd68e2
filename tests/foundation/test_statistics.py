"""Each statistic is declared once (fairness_evals.statistics and each benchmark's statistics table), and everything
reads the declarations: every task and group of both harnesses is declared, its YAML metric list is the table's
headline list, and `fairness-evals metrics --json` explains every metric, each with an importable `computed_by`
whose docstring has the formula."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml

from fairness_evals import benchmarks, statistics
from fairness_evals.index import harness_index
from fairness_evals.paths import HARNESSES, task_paths

DIRECTION_YAML = {"higher": True, "lower": False, "neither": None}


class _Function(str):
    """The dotted name a YAML ``!function`` tag names."""


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: _Function(loader.construct_scalar(node)))


def _load(path: Path) -> dict:
    """A YAML config with its ``include:`` files merged in (later includes and local keys win)."""
    config = yaml.load(path.read_text(), Loader=_Loader)
    includes = config.pop("include", [])
    merged: dict = {}
    for include in [includes] if isinstance(includes, str) else includes:
        merged.update(_load(path.parent / include))
    merged.update(config)
    merged["__folder__"] = path.parent
    return merged


@cache
def _configs(harness: str) -> dict[str, dict]:
    out = {}
    for folder in task_paths(harness):
        for path in Path(folder).rglob("*.yaml"):
            config = _load(path)
            name = config.get("group") or config.get("task")
            if isinstance(name, str):
                out[name] = config
    return out


def _declared() -> dict[str, statistics.Task]:
    return {t.name: t for t in statistics.all_tasks()}


def _resolve_function(config: dict, dotted: str) -> object:
    """What a ``!function module.name`` resolves to, as the harnesses resolve it: a file beside the YAML first,
    else an importable module."""
    import importlib.util

    module_name, _, attribute = dotted.rpartition(".")
    beside = config["__folder__"] / f"{module_name}.py"
    if beside.is_file():
        spec = importlib.util.spec_from_file_location(f"_yaml_{abs(hash(str(beside)))}", beside)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(module_name)
    return getattr(module, attribute)


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_task_and_group_of_the_harness_is_declared(harness: str) -> None:
    indexed = {name for kind, name in harness_index(harness) if kind in ("task", "group")}
    declared = {name for name, t in _declared().items() if t.harness == harness}
    assert indexed == declared, (
        f"in the {harness} index but not declared: {sorted(indexed - declared)}; "
        f"declared but not in the index: {sorted(declared - indexed)}"
    )


@pytest.mark.parametrize("harness", HARNESSES)
def test_yaml_metric_lists_are_the_declared_headlines(harness: str) -> None:
    configs = _configs(harness)
    checked = 0
    for name, task in _declared().items():
        if task.harness != harness:
            continue
        config = configs[name]
        expected = task.harness_metrics()
        if task.group:
            listed = [entry["metric"].split(",")[0] for entry in config.get("aggregate_metric_list") or []]
            assert listed == [metric for metric, _ in expected], name
            # a YAML lists the declared members or their leaf tasks (the harness averages over the leaves either way)
            assert sorted(leaf for t in config["task"] for leaf in statistics.leaves(t)) == sorted(
                statistics.leaves(name)
            ), name
        else:
            entries = config.get("metric_list") or []
            listed = [(entry["metric"], entry.get("higher_is_better")) for entry in entries]
            assert listed == [(m, DIRECTION_YAML[d]) for m, d in expected], name
            for entry in entries:  # each metric names its own aggregation, which says where the metric is explained
                function_name = entry["aggregation"].rpartition(".")[2]
                assert function_name == f"aggregate_{entry['metric']}", (name, entry)
                function = _resolve_function(config, entry["aggregation"])
                assert f"fairness-evals metrics {entry['metric']}" in (inspect.getdoc(function) or ""), (name, entry)
        checked += 1
    assert checked


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_group_headline_has_a_direction_from_the_groups_own_members(harness: str) -> None:
    """Issue 33: lm-eval 0.4.13 (``_propagate_higher_is_better``) gives a group the directions of its *direct* members,
    top group first, so ``fact_or_fair_lite``'s s_fair_* (listed through the nested subjective group) printed without
    an arrow. Each aggregate metric of a group with a direction must be listed, with it, by a task the group lists."""
    configs = _configs(harness)
    checked = 0
    for name, task in _declared().items():
        if task.harness != harness or not task.group:
            continue
        config = configs[name]
        for metric, direction in task.harness_metrics():
            if direction == "neither":
                continue
            given = {
                entry.get("higher_is_better")
                for member in config["task"]
                if "metric_list" in configs[member]
                for entry in configs[member]["metric_list"]
                if entry["metric"] == metric
            }
            assert given == {DIRECTION_YAML[direction]}, (name, metric, given)
            checked += 1
    assert checked or harness != "lm-eval"


def test_harness_rows_stay_short() -> None:
    """At most 12 printed rows per task (a metric and its ± are one row), and 60 for `--tasks fact_or_fair`."""
    declared = _declared()
    for task in declared.values():
        rows = [m for m, _ in task.harness_metrics() if not m.endswith("_stderr")]
        assert len(rows) <= 12, (task.name, rows)

    def rows_of(name: str) -> int:  # lm-eval prints a group's rows twice: in the Tasks table and the Groups table
        task = declared[name]
        own = len([m for m, _ in task.harness_metrics() if not m.endswith("_stderr")])
        return own * (2 if task.group else 1) + sum(rows_of(member) for member in task.members)

    assert rows_of("fact_or_fair") <= 60


@cache
def _explained() -> list[dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "fairness_evals", "metrics", "--json"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_metrics_json_explains_every_metric_of_every_task() -> None:
    entries = _explained()
    for entry in entries:
        assert {"name", "tasks", "definition", "direction", "paper", "computed_by"} <= set(entry)
        assert entry["definition"] and entry["paper"] and entry["direction"] in DIRECTION_YAML
    by_task: dict[str, set[str]] = {}
    for entry in entries:
        for task in entry["tasks"]:
            by_task.setdefault(task, set()).add(entry["name"])
    for harness in HARNESSES:
        for name, config in _configs(harness).items():
            listed = [
                e["metric"].split(",")[0]
                for e in (config.get("metric_list") or config.get("aggregate_metric_list") or [])
            ]
            missing = [m for m in listed if m not in by_task.get(name, set())]
            assert not missing, f"{name}: {missing} not explained by `fairness-evals metrics --json`"
    for task in statistics.all_tasks():
        assert set(task.all_metrics()) <= by_task.get(task.name, set()), task.name


def test_every_computed_by_imports_and_documents_its_formula() -> None:
    for computed_by in sorted({entry["computed_by"] for entry in _explained()}):
        function = statistics.resolve(computed_by)
        assert callable(function), computed_by
        doc = inspect.getdoc(function) or ""
        assert len(doc) >= 60 and "=" in doc, f"{computed_by}: its docstring gives no formula"


def test_metrics_command_explains_one_name_and_refuses_unknown_ones() -> None:
    run = [sys.executable, "-m", "fairness_evals", "metrics"]
    one = subprocess.run([*run, "s_fact_gender", "--task", "fact_or_fair_objective"], capture_output=True, text=True)
    assert one.returncode == 0, one.stderr
    assert "computed by metrics.fact_fair:factuality_score_batch" in one.stdout
    assert "Definition 1" in one.stdout and "higher is better" in one.stdout
    pattern = subprocess.run(
        [*run, "--json", "s_fair_*", "--task", "fact_or_fair_subjective"], capture_output=True, text=True
    )
    names = {e["name"] for e in json.loads(pattern.stdout)}
    assert names == {f"s_fair_{axis}{end}" for axis in ("gender", "race") for end in ("", "_coverage")}
    unknown = subprocess.run([*run, "s_fiar_gender"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "s_fair_gender" in unknown.stderr and len(unknown.stderr.splitlines()) == 1


def test_metrics_of_a_task_mark_the_rows_the_harness_prints() -> None:
    """`metrics --task T` says which of its metrics the harness table shows (the task's headline members and their
    standard errors) and which `fairness-evals score` alone writes; one name says where it is printed."""
    run = [sys.executable, "-m", "fairness_evals", "metrics"]
    listing = subprocess.run([*run, "--task", "fact_or_fair_objective"], capture_output=True, text=True, check=True)
    shown = {line.split()[0]: line.split()[1:3] for line in listing.stdout.splitlines()}
    printed = {name for name, words in shown.items() if "printed" in words}
    expected = {name for name, _ in statistics.task("fact_or_fair_objective").harness_metrics()}
    assert printed == expected and len(printed) < len(shown)
    assert "s_fair_gender" in shown and "s_fair_gender" not in printed
    entries = json.loads(subprocess.run([*run, "--json", "s_fair_gender"], capture_output=True, text=True).stdout)
    objective = next(e for e in entries if "fact_or_fair_objective" in e["tasks"])
    subjective = next(e for e in entries if "fact_or_fair_subjective_base" in e["tasks"])
    assert "fact_or_fair_objective" not in objective["printed_by"]
    assert "fact_or_fair_subjective_base" in subjective["printed_by"]
    one = subprocess.run([*run, "s_fair_gender", "--task", "fact_or_fair_objective"], capture_output=True, text=True)
    assert "computed (fairness-evals score only) in fact_or_fair_objective" in one.stdout


def test_family_members_and_derived_names() -> None:
    s = statistics.Statistic(
        "rate_{attribute}_{group}", "a rate", "metrics.fact_fair:chance_baselines", "paper",
        family={"attribute": ("gender",), "group": ("male", "female")},
        interval=statistics.Interval("percentile", "images", "metrics.intervals:percentile_interval"),
    )  # fmt: skip
    assert s.members == ["rate_gender_male", "rate_gender_female"]
    assert s.names() == [
        "rate_gender_male", "rate_gender_male_ci_low", "rate_gender_male_ci_high",
        "rate_gender_female", "rate_gender_female_ci_low", "rate_gender_female_ci_high",
    ]  # fmt: skip
    assert s.pattern.fullmatch("rate_gender_female") and not s.pattern.fullmatch("rate_gender_other")
    with pytest.raises(ValueError, match="placeholders"):
        statistics.Statistic("rate_{group}", "a rate", "m:f", "paper")


def test_readme_metric_tables_are_the_declared_statistics() -> None:
    """Each benchmark README's metric table is generated from its statistics table (`metrics --markdown`)."""
    readmes = {"fact_or_fair": "fact_fair_tasks", "fairlens": "fairlens_tasks", "iris": "iris_tasks"}
    root = Path(__file__).resolve().parents[2]
    for benchmark in benchmarks.names():
        text = (root / readmes[benchmark] / "README.md").read_text()
        start, end = f"<!-- metrics:{benchmark}:start -->\n", f"<!-- metrics:{benchmark}:end -->"
        assert start in text and end in text, f"{benchmark}: README has no generated metric table"
        block = text.split(start, 1)[1].split(end, 1)[0]
        assert block == statistics.markdown(benchmark), (
            f"{benchmark}: README metric table differs; regenerate it with `fairness-evals metrics --markdown {benchmark}`"
        )
