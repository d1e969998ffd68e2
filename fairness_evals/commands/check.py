"""``fairness-evals check FOLDER... [--tasks ...]``: a gate for CI and sweeps that fails when a run did not deliver.

Both harnesses can exit 0 when a task failed (lmms-eval always does: a task whose ``process_docs`` or model
raised is logged and left out of the results). This command reads the output folders (or results files) and
exits 1, naming each problem on its own line, when:

- a folder holds no results file (the run stopped, or every task failed);
- a requested task (``--tasks``; also every task with a samples file or a config in the results) of ours is
  missing from the results, reports no metric, or reports none of its headline metrics (an lm-eval
  ``--predict_only`` run reports only ``bypass``);
- a headline metric of ours is not a finite number: NaN / null (``--allow-nan PATTERN`` accepts expected ones,
  e.g. ``'*_race'`` for the text-to-image tasks without a race classifier), infinite, or not a number at all (a
  text such as ``"N/A"``, a list). The headline metrics are those the task's statistics table declares
  (``fairness-evals metrics --task T``); for results of tasks it does not declare, every ``<name>`` with a
  ``<name>_coverage`` beside it, else the benchmark's headline names (``headlines`` (its :class:`~fairness_evals.benchmarks.Benchmark`)). A null names its reason
  when the run's samples files give one (:mod:`fairness_evals.detail`, read with the results);
- a task's answers follow the option position rather than the content (:func:`fairness_evals.position.finding`:
  its position test fired, so its fairness scores are null or, kept by the setting, not results): one line per
  task, in place of the NaN lines of the scores it nulled;
- a headline's coverage is not a share in [0, 1], or is below its threshold: ``<name>_coverage`` (from the
  samples files' detail, or the results) against ``--min-coverage``, else the task's ``*_min_coverage``
  metadata, else the ``min_coverage`` the task recorded in its results, never below the minimum the task's
  statistics table declares (``fairness-evals metrics``);
- a run lowered a declared minimum coverage (task metadata or its recorded ``min_coverage``): one line naming the
  key and both values, unless ``--min-coverage`` is given (the user's own threshold);
- a run left documents out (``--limit``, lm-eval's ``--samples``, lmms-eval's ``--offset``;
  :meth:`fairness_evals.report.load.Run.partial`): one line per results file, in place of the NaN and coverage
  lines that so few documents give; ``--allow-limited`` accepts such a run and checks its metrics like any other;
- a task of ours ran few-shot (``n-shot`` above 0 in the results: an older or patched harness; ours are zero-shot by
  design, :func:`fairness_evals.detail.shots`): one line per results file;
- a task logged a failure: a face classifier recorded as ``unavailable``, or an ``ERROR`` line or a traceback
  in a log file (``--log FILE``, and every ``*.log`` in the folders given).

A ``fairness-evals judge --out`` file is a run too (:func:`judge_output`): its open-ended tasks' null headlines and
low judged coverage are problems, as for a harness run.

An Inspect log (``.eval`` or ``.json``; every log below a folder) is a run like a results file
(:func:`fairness_evals.report.load.load_log`: its headlines, completed by what ``fairness-evals score`` computes from
its replies, its task arguments as task metadata; a group is checked through its members). ``inspect eval`` exits 0
when a task fails, so each line of :meth:`fairness_evals.inspect.logs.LoggedTask.failures` is a problem (the run did
not finish, samples errored or went unscored), in place of the NaN and coverage lines that follow from it; a log
that cannot be read is one problem, a log of another task found in a folder is not checked.

Exit 0 prints one line per results file checked. Exit 2 (the CLI's rule) is a usage error. Every line printed is
one line: control characters in a name (a newline in a folder name) are escaped (:func:`one_line`).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals import benchmarks, position, run_files
from fairness_evals.report.model import shorten

#: A log line that reports a failure: loguru's ``| ERROR |``, Python logging's ``ERROR``, or a traceback.
_ERROR_LINE = re.compile(
    r"(\|\s*(ERROR|CRITICAL)\s*\|)|(^|\s)(ERROR|CRITICAL)[:\s\[]|^Traceback \(most recent call last\)"
)
#: How many characters of a value that is not a number a problem line shows.
_SHOWN = 60


def add_arguments(parser: argparse.ArgumentParser) -> None:
    run_files.add_runs_argument(parser)
    parser.add_argument("--tasks", action="append", default=[], metavar="TASKS",
                        help="tasks or groups that must be in the results (comma-separated; repeatable)")  # fmt: skip
    parser.add_argument("--allow-nan", action="append", default=[], metavar="PATTERN",
                        help="a NaN headline metric that is expected: glob over 'metric' or 'task/metric' (repeatable)")  # fmt: skip
    parser.add_argument("--min-coverage", type=float, metavar="X",
                        help="minimum for every <score>_coverage (default: the task's own threshold)")  # fmt: skip
    parser.add_argument("--log", action="append", default=[], type=Path, metavar="FILE",
                        help="a harness log to scan for errors (repeatable; *.log files in the folders are read too)")  # fmt: skip
    parser.add_argument(
        "--allow-limited",
        action="store_true",
        help="accept runs that left documents out (--limit, --samples, --offset) and check their metrics like any "
        "other run's (a smoke test); by default such a run is one problem",
    )


@dataclass
class Report:
    """What :func:`check` found: the problems (one line each) and what was checked."""

    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _ours(task: str) -> bool:
    return benchmarks.ours(task)


def _not_finite(value: Any) -> tuple[str, bool]:
    """Why a headline value is not a finite number, "" when it is one; and whether ``--allow-nan`` may accept it
    (a NaN or null, as the tasks write a withheld score; never an infinity or a value that is no number)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "is NaN", True
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"is not a number ({_shown(value)})", False
    if not math.isfinite(value):
        return f"is infinite ({value})", False
    return "", False


def _shown(value: Any) -> str:
    """A value as JSON, cut at :data:`_SHOWN` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return shorten(text, _SHOWN)


def one_line(text: str) -> str:
    """``text`` on one line: every character that is not printable (control characters such as a newline or a
    carriage return, line and paragraph separators, other format characters) as its Python escape, ``\\n``,
    ``\\x1b``, ``\\u2028``."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _sample_tasks(folder: Path) -> set[str]:
    """Tasks of ours whose samples file lies in ``folder`` (started, so they should have results)."""
    from fairness_evals.run_files import samples_name

    named = (samples_name(file.name) for file in folder.rglob("*.jsonl"))
    return {found[1] for found in named if found and _ours(found[1])}


def _headlines(task: str, metrics: dict[str, Any]) -> list[str]:
    """The headline metrics of ``task`` in its results: those its statistics table declares
    (:meth:`fairness_evals.statistics.Task.harness_metrics`, standard errors aside); for a task the tables do not
    declare, or results written before them, every ``<name>`` with a ``<name>_coverage`` beside it, else the
    benchmark's ``headlines`` (its :class:`~fairness_evals.benchmarks.Benchmark`)."""
    from fairness_evals import statistics

    try:
        declared = [name for name, _ in statistics.task(task).harness_metrics() if not name.endswith("_stderr")]
    except KeyError:
        declared = []
    found = [name for name in declared if name in metrics]
    if found:
        return found
    with_coverage = [name.removesuffix("_coverage") for name in metrics if name.endswith("_coverage")]
    with_coverage = [name for name in with_coverage if name in metrics]
    if with_coverage:
        return sorted(with_coverage)
    owner = benchmarks.of_task(task)
    return [name for name in (owner.headlines if owner else ()) if name in metrics]


def _allowed(task: str, metric: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(metric, p) or fnmatch.fnmatchcase(f"{task}/{metric}", p) for p in patterns)


#: What the harnesses write beside the metrics of a task (lm-eval: its name, alias and sample count).
_NOT_METRICS = ("alias", "name", "sample_len")


def _check_task(run: Any, task: str, args: argparse.Namespace, report: Report, partial: bool) -> None:
    """The problems of one task of ``run``; ``partial``: the run left documents out and is already one problem,
    so NaN scores and low coverages (what so few documents give) are not listed one by one."""
    metrics = run.results[task]
    where = f"{run.source}: {shorten(task)}"
    if all(name in _NOT_METRICS for name in metrics):
        report.problems.append(f"{where}: reports no metric")
        return
    headlines = _headlines(task, metrics)
    found = position.finding(metrics)
    if found:
        report.problems.append(f"{where}: {found}; its fairness scores are not results")
    if not headlines:
        shown = ", ".join(sorted(n for n in metrics if n not in _NOT_METRICS and not n.endswith("_stderr")))
        report.problems.append(
            f"{where}: reports none of its headline metrics (it reports {shorten(shown, 120)}; an lm-eval "
            "--predict_only run scores nothing)"
        )
    for name in headlines:
        why, nan = _not_finite(metrics[name])
        if why and not (nan and (partial or _allowed(task, name, args.allow_nan))):
            reason = run.nan_reason(task, name) if nan else None
            if found and reason and position.is_position_reason(reason):
                continue  # the position line says it
            because = f" ({shorten(str(reason))})" if reason else ""
            report.problems.append(f"{where}: headline metric {shorten(name)} {why}{because}")
    lowered = _lowered(run, task) if args.min_coverage is None else ""
    if lowered:
        report.problems.append(f"{where}: {lowered}")
    for name in headlines:
        key = f"{name}_coverage"
        if key not in metrics:
            continue
        value = metrics[key]
        if _allowed(task, name, args.allow_nan):
            continue
        key = shorten(key)
        coverage = _number(value)
        threshold, source = (
            (args.min_coverage, "--min-coverage") if args.min_coverage is not None else _minimum(run, task, name)
        )
        if value is not None and coverage is None:
            report.problems.append(f"{where}: {key} is not a number ({_shown(value)})")
        elif coverage is not None and not math.isnan(coverage) and not 0.0 <= coverage <= 1.0:
            report.problems.append(f"{where}: {key} {coverage:g} is not a share in [0, 1]")
        elif partial:
            continue
        elif coverage is None or math.isnan(coverage):
            report.problems.append(f"{where}: {key} is missing or NaN")
        elif threshold is not None and coverage < threshold:
            report.problems.append(f"{where}: {key} {coverage:.3f} is below the threshold {threshold:g} ({source})")
    version = metrics.get("classifier_version")
    if isinstance(version, str) and version.startswith("unavailable"):
        report.problems.append(f"{where}: the face classifier failed: {shorten(version)}")


def _threshold(run: Any, task: str) -> tuple[float | None, str]:
    """The task's minimum coverage (:meth:`fairness_evals.report.load.Run.min_coverage`, the one reader of it) and
    where it was set, in words; ``(None, "")`` when the run sets none."""
    value, key = run.min_coverage(task)
    if value is None:
        return None, ""
    return value, "the task's recorded min_coverage" if key == "min_coverage" else f"task metadata {key}"


def _declared(task: str, name: str | None = None) -> dict[str, float]:
    """``{task-metadata key: default}`` of the minimum coverages the statistics table declares for ``task`` (every
    one of its statistics, or only the one that reports ``name``); empty for a task it does not declare, a group's
    roll-up, or a coverage without a threshold (soundness)."""
    from fairness_evals import statistics

    try:
        declared = statistics.task(task).statistics
    except KeyError:
        return {}
    return {
        s.coverage.threshold: s.coverage.default
        for s in declared
        if s.coverage is not None and s.coverage.threshold and s.coverage.default is not None
        and (name is None or s.pattern.fullmatch(name))
    }  # fmt: skip


def _minimum(run: Any, task: str, name: str) -> tuple[float | None, str]:
    """The coverage threshold of headline ``name`` when ``--min-coverage`` is not given: the task's own
    (:func:`_threshold`), never below the minimum its statistics table declares (a run cannot lower the gate)."""
    own, source = _threshold(run, task)
    for key, default in _declared(task, name).items():
        if own is None or own < default:
            return default, f"the declared minimum {key}"
    return own, source


def _lowered(run: Any, task: str) -> str:
    """The problem line of a run that lowered a minimum coverage its statistics table declares (task metadata, or
    the ``min_coverage`` it recorded), "" when it did not: it is held to the declared minimum, unless the user gives
    ``--min-coverage``."""
    config = run.configs.get(task, {})
    meta = config.get("metadata", {}) if isinstance(config, dict) else {}
    recorded = _number(run.results[task].get("min_coverage"))
    for key, default in _declared(task).items():
        value = _number(meta.get(key)) if isinstance(meta, dict) else None
        setting = f"task metadata {key}"
        if value is None:
            value, setting = recorded, f"the task's recorded min_coverage ({key})"
        if value is not None and value < default:
            return (
                f"{setting} {value:g} is below the declared minimum {default:g}: its coverages are held to "
                f"{default:g} (give --min-coverage to check at another threshold)"
            )
    return ""


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
    from fairness_evals.report.load import ForeignLog, ReportInputError, load_log, load_results_file, run_files

    report = Report()
    runs = []
    groups: dict[Path, dict[str, list[str]]] = {}
    failed: set[Path] = set()
    folders = [Path(p) for p in paths]
    for path in folders:
        if not path.exists():
            report.problems.append(f"{path}: no such file or folder")
            continue
        judged = judge_output(path)
        if judged is not None:
            _add_run(judged, args, report)
            runs.append(judged)
            continue
        files, logs = run_files(path)
        if not files and not logs:
            report.problems.append(
                f"{path}: no results file (results_*.json, *_results.json) and no Inspect log (.eval): the run stopped "
                "or every task failed (lmms-eval exits 0 even then)"
            )
            continue
        for log in logs:
            try:
                run = load_log(log)
            except ForeignLog as error:
                if log == path:
                    report.problems.append(str(error))
                continue
            except ReportInputError as error:
                report.problems.append(str(error))
                continue
            groups[log] = {task: list(entry.members) for task, entry in run.logged.items() if entry.members}
            for task, entry in run.logged.items():
                found = entry.failures() if entry.group is None else []  # a member's failures are its group's
                report.problems += [f"{log}: {shorten(task)}: {line}" for line in found]
                failed |= {log} if found else set()
            _add_run(run, args, report)
            runs.append(run)
        for file in files:
            try:
                run = load_results_file(file)
            except ReportInputError as error:
                report.problems.append(str(error))
                continue
            groups[file] = _group_subtasks(file)
            _add_run(run, args, report)
            runs.append(run)
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
        report.problems.append(f"task {shorten(task)} is not in the results of {', '.join(map(str, folders))}: it failed or "
                               "was not run (see the harness log)")  # fmt: skip
    for run in runs:
        for task in sorted(t for t in run.results if _ours(t)):
            if groups.get(run.source, {}).get(task):
                continue  # a group (lmms-eval lists every task there, a leaf with no members): its members are checked
            cut = bool(run.partial()) and not args.allow_limited
            _check_task(run, task, args, report, cut or run.source in failed)
    _logs(folders, args.log, report)
    return report


def _add_run(run: Any, args: argparse.Namespace, report: Report) -> None:
    """The problems of ``run`` as a whole (its detail could not be read; it left documents out) and its line of what
    was checked."""
    if run.detail_problem:
        report.problems.append(run.detail_problem)
    partial = run.partial()
    if partial and not args.allow_limited:
        report.problems.append(
            f"{run.source}: {partial}: its numbers are not benchmark results, so its NaN scores and coverages are "
            "not checked (--allow-limited accepts the run and checks them)"
        )
    if run.few_shot():
        from fairness_evals.detail import FEW_SHOT

        report.problems.append(f"{run.source}: {run.few_shot()}: {FEW_SHOT}")
    report.checked.append(
        f"{run.source}: {', '.join(sorted(shorten(t) for t in run.results if _ours(t))) or 'no task of ours'}"
        + (f" ({partial})" if partial else "")
    )


def judge_output(path: Path) -> Any:
    """A ``fairness-evals judge --out`` file as a run to check (:func:`fairness_evals.report.load.load_judge_output`:
    its minimum coverage, recorded or declared, and the reasons of its nulls), or None for any other path. Its tasks
    are checked as a harness run's: a null headline or a ``<name>_coverage`` below the minimum is a problem."""
    from fairness_evals.report.load import load_judge_output

    return load_judge_output(path)


def _group_subtasks(file: Path) -> dict[str, list[str]]:
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
        print(f"check: {one_line(problem)}", file=sys.stderr)
    if report.problems:
        print(f"check: FAILED, {len(report.problems)} problem(s)", file=sys.stderr)
        return 1
    for line in report.checked:
        print(f"check: ok {one_line(line)}")
    return 0
