"""``fairness-evals check FOLDER... [--tasks ...]``: a gate for CI and sweeps that fails when a run did not deliver.

Both harnesses can exit 0 when a task failed (lmms-eval always does: a task whose ``process_docs`` or model
raised is logged and left out of the results). This command reads the output folders (or results files) and
exits 1, naming each problem on its own line, when:

- a folder holds no results file (the run stopped, or every task failed);
- a requested task (``--tasks``; also every task with a samples file or a config in the results) of ours is
  missing from the results, or reports no metric;
- a headline metric of ours is NaN / null: every metric ``<name>`` that has a ``<name>_coverage`` beside it
  (package convention 1), and, for results written before those keys existed, the benchmark's headline
  names (:data:`HEADLINES`); ``--allow-nan PATTERN`` accepts expected ones (e.g. ``'*_race'`` for the
  text-to-image tasks without a race classifier);
- a coverage is below its threshold: ``<name>_coverage`` against ``--min-coverage``, else the task's
  ``*_min_coverage`` metadata, else the ``min_coverage`` the task recorded in its results;
- a task logged a failure: a face classifier recorded as ``unavailable``, or an ``ERROR`` line or a traceback
  in a log file (``--log FILE``, and every ``*.log`` in the folders given).

Exit 0 prints one line per results file checked. Exit 2 (the CLI's rule) is a usage error.
"""

from __future__ import annotations

import argparse
import fnmatch
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Our task name prefixes.
OURS = ("fact_or_fair", "fairlens", "iris")
#: Headline metrics per task prefix, checked when a task's results carry no ``<name>_coverage`` key.
HEADLINES: dict[str, tuple[str, ...]] = {
    "fact_or_fair": tuple(f"{s}_{a}" for s in ("s_fact", "s_e", "s_kld", "s_fair") for a in ("gender", "race")),
    "fairlens": ("soundness", "oe_bias_mean"),
    "iris": ("ifs_und_score", "rfs_und_score", "bis_und_score", "ifs_gen_score", "rfs_gen_score", "bis_gen_score"),
}
#: The task-metadata keys of each benchmark's minimum coverage (package convention 2).
MIN_COVERAGE_KEYS = ("fact_or_fair_min_coverage", "fairlens_min_coverage", "fairlens_min_judged", "iris_min_coverage")
#: A log line that reports a failure: loguru's ``| ERROR |``, Python logging's ``ERROR``, or a traceback.
_ERROR_LINE = re.compile(
    r"(\|\s*(ERROR|CRITICAL)\s*\|)|(^|\s)(ERROR|CRITICAL)[:\s\[]|^Traceback \(most recent call last\)"
)
_SAMPLES = re.compile(r"(?:^|_)samples_(?P<task>[A-Za-z0-9_]+?)(?:_\d{4}-\d\d-\d\dT[\d\-.]+)?\.jsonl$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", metavar="FOLDER", help="lm-eval / lmms-eval --output_path folders or results files"
    )
    parser.add_argument("--tasks", action="append", default=[], metavar="TASKS",
                        help="tasks or groups that must be in the results (comma-separated; repeatable)")  # fmt: skip
    parser.add_argument("--allow-nan", action="append", default=[], metavar="PATTERN",
                        help="a NaN headline metric that is expected: glob over 'metric' or 'task/metric' (repeatable)")  # fmt: skip
    parser.add_argument("--min-coverage", type=float, metavar="X",
                        help="minimum for every <score>_coverage (default: the task's own threshold)")  # fmt: skip
    parser.add_argument("--log", action="append", default=[], type=Path, metavar="FILE",
                        help="a harness log to scan for errors (repeatable; *.log files in the folders are read too)")  # fmt: skip


@dataclass
class Report:
    """What :func:`check` found: the problems (one line each) and what was checked."""

    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _ours(task: str) -> bool:
    return task.startswith(OURS)


def _is_nan(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isnan(float(value))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _results_files(path: Path) -> list[Path]:
    from fairness_evals.report.load import _is_results_file

    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.json") if _is_results_file(p))


def _sample_tasks(folder: Path) -> set[str]:
    """Tasks of ours whose samples file lies in ``folder`` (started, so they should have results)."""
    tasks = set()
    for file in folder.rglob("*.jsonl"):
        match = _SAMPLES.search(file.name)
        if match and _ours(match.group("task")):
            tasks.add(match.group("task"))
    return tasks


def _headlines(task: str, metrics: dict[str, Any]) -> list[str]:
    with_coverage = [name.removesuffix("_coverage") for name in metrics if name.endswith("_coverage")]
    with_coverage = [name for name in with_coverage if name in metrics]
    if with_coverage:
        return sorted(with_coverage)
    prefix = next((p for p in HEADLINES if task.startswith(p)), None)
    return [name for name in HEADLINES.get(prefix or "", ()) if name in metrics]


def _allowed(task: str, metric: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(metric, p) or fnmatch.fnmatchcase(f"{task}/{metric}", p) for p in patterns)


def _check_task(run: Any, task: str, args: argparse.Namespace, report: Report) -> None:
    metrics = run.results[task]
    where = f"{run.source}: {task}"
    if not any(not name.startswith(("alias", "sample_len")) for name in metrics):
        report.problems.append(f"{where}: reports no metric")
        return
    for name in _headlines(task, metrics):
        if _is_nan(metrics[name]) and not _allowed(task, name, args.allow_nan):
            reason = metrics.get(f"{name}_reason")
            report.problems.append(f"{where}: headline metric {name} is NaN" + (f" ({reason})" if reason else ""))
    for key, value in metrics.items():
        if not key.endswith("_coverage") or key.removesuffix("_coverage") not in metrics:
            continue
        name = key.removesuffix("_coverage")
        if _allowed(task, name, args.allow_nan):
            continue
        coverage = _number(value)
        threshold, source = (
            (args.min_coverage, "--min-coverage") if args.min_coverage is not None else _threshold(run, task)
        )
        if coverage is None or math.isnan(coverage):
            report.problems.append(f"{where}: {key} is missing or NaN")
        elif threshold is not None and coverage < threshold:
            report.problems.append(f"{where}: {key} {coverage:.3f} is below the threshold {threshold:g} ({source})")
    version = metrics.get("classifier_version")
    if isinstance(version, str) and version.startswith("unavailable"):
        report.problems.append(f"{where}: the face classifier failed: {version}")


def _threshold(run: Any, task: str) -> tuple[float | None, str]:
    """The task's minimum coverage and where it was set: its ``*_min_coverage`` task metadata, else the
    ``min_coverage`` it recorded in its results; ``(None, "")`` when neither."""
    config = run.configs.get(task, {})
    meta = config.get("metadata", {}) if isinstance(config, dict) else {}
    for key in MIN_COVERAGE_KEYS:
        value = _number(meta.get(key)) if isinstance(meta, dict) else None
        if value is not None and math.isfinite(value):
            return value, f"task metadata {key}"
    recorded = _number(run.results[task].get("min_coverage"))
    if recorded is not None and math.isfinite(recorded):
        return recorded, "the task's recorded min_coverage"
    return None, ""


def _requested(raw: Iterable[str]) -> list[str]:
    return [t for item in raw for t in re.split(r"[,\s]+", item) if t]


def _group_members(groups: dict[Path, dict[str, list[str]]], group: str) -> list[str]:
    """The tasks of ``group``: from a results file's ``group_subtasks``, else from our own group YAMLs (a group the
    run did not name is still satisfied by its tasks)."""
    for members in groups.values():
        if members.get(group):
            return list(members[group])
    return _our_groups().get(group, [])


def _our_groups() -> dict[str, list[str]]:
    """``{group: [tasks]}`` of every group YAML in our task folders (both harnesses); nested groups expanded."""
    import yaml

    from fairness_evals.paths import task_paths

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    found: dict[str, list[str]] = {}
    for harness in ("lm-eval", "lmms-eval"):
        for folder in task_paths(harness):
            for path in sorted(Path(folder).rglob("*.yaml")):
                try:
                    config = yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)
                except (OSError, UnicodeDecodeError, yaml.YAMLError):
                    continue
                if isinstance(config, dict) and isinstance(config.get("group"), str):
                    tasks = config.get("task")
                    names = [t if isinstance(t, str) else t.get("task") for t in tasks or [] if t]
                    found[config["group"]] = [n for n in names if isinstance(n, str)]

    def expand(name: str, seen: frozenset[str] = frozenset()) -> list[str]:
        if name not in found or name in seen:
            return [name]
        return [leaf for member in found[name] for leaf in expand(member, seen | {name})]

    return {group: expand(group) for group in found}


def _logs(paths: Sequence[Path], extra: Sequence[Path], report: Report) -> None:
    files = list(extra) + [f for p in paths if p.is_dir() for f in sorted(p.rglob("*.log"))]
    for file in files:
        try:
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            report.problems.append(f"{file}: cannot read the log ({error.strerror or error})")
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if _ERROR_LINE.search(line):
                report.problems.append(f"{file}:{number}: logged a failure: {' '.join(line.split())[:240]}")


def check(paths: Sequence[str | Path], args: argparse.Namespace) -> Report:
    """Every problem with the runs under ``paths`` (see the module docstring)."""
    from fairness_evals.report.load import ReportInputError, load_results_file

    report = Report()
    runs = []
    groups: dict[Path, dict[str, list[str]]] = {}
    folders = [Path(p) for p in paths]
    for path in folders:
        if not path.exists():
            report.problems.append(f"{path}: no such file or folder")
            continue
        files = _results_files(path)
        if not files:
            report.problems.append(
                f"{path}: no results file (results_*.json, *_results.json): the run stopped or every task failed "
                "(lmms-eval exits 0 even then)"
            )
            continue
        for file in files:
            try:
                run = load_results_file(file)
            except ReportInputError as error:
                report.problems.append(str(error))
                continue
            groups[file] = _group_subtasks(file)
            runs.append(run)
            report.checked.append(
                f"{file}: {', '.join(sorted(t for t in run.results if _ours(t))) or 'no task of ours'}"
            )
    present = {task for run in runs for task in run.results}
    requested = set(_requested(args.tasks))
    requested |= {t for p in folders if p.is_dir() for t in _sample_tasks(p)}
    requested |= {t for run in runs for t in run.configs if _ours(t)}
    for task in sorted(requested):
        if task in present:
            continue
        members = _group_members(groups, task)
        if members and all(m in present for m in members):
            continue
        report.problems.append(f"task {task} is not in the results of {', '.join(map(str, folders))}: it failed or "
                               "was not run (see the harness log)")  # fmt: skip
    for run in runs:
        for task in sorted(t for t in run.results if _ours(t)):
            if groups.get(run.source, {}).get(task):
                continue  # a group (lmms-eval lists every task there, a leaf with no members): its members are checked
            _check_task(run, task, args, report)
    _logs(folders, args.log, report)
    return report


def _group_subtasks(file: Path) -> dict[str, list[str]]:
    import json

    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    groups = data.get("group_subtasks") if isinstance(data, dict) else None
    return {k: list(v) for k, v in groups.items() if isinstance(v, list)} if isinstance(groups, dict) else {}


def run(args: argparse.Namespace) -> int:
    if args.min_coverage is not None and not 0.0 <= args.min_coverage <= 1.0:
        raise ValueError(f"--min-coverage must lie in [0, 1], got {args.min_coverage}")
    report = check(args.paths, args)
    for problem in report.problems:
        print(f"check: {problem}", file=sys.stderr)
    if report.problems:
        print(f"check: FAILED, {len(report.problems)} problem(s)", file=sys.stderr)
        return 1
    for line in report.checked:
        print(f"check: ok {line}")
    return 0
