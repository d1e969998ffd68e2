"""The complete detail of a run: what `fairness-evals score <output folder>` writes.

The harnesses print each task's headline statistics only. Every other statistic (intervals, coverages, per-group
values, diagnostics, counts), the reason each null is null, and the provenance (seed, data version, documents or
corpus hash, settings) are computed here from the run's ``--log_samples`` files by each benchmark's own scoring (the
code the harness ran), and the groups' roll-ups by the functions the statistics tables name. ``check``, ``report``
and ``compare`` read runs through :func:`detail` too, so the four commands agree with each other and with the
harness.

An Inspect log (``.eval`` or ``.json``; a folder of them) is a run too (:func:`log_detail`): each task's
statistics and reasons are :meth:`fairness_evals.inspect.logs.LoggedTask.statistics` (the replies the log holds,
parsed again), its provenance the benchmark's own from the documents the log holds, its groups those of
:func:`add_groups`.

The output (strict JSON) holds one entry per task and group, under the harness's names (``_lite`` tasks included),
with every metric; ``"nulls"``: ``{task: {metric: reason}}``; ``"intervals"``: ``{task: {metric: why}}``, why each
interval that excludes its estimate does, with the bias-corrected estimate it is centred on
(:func:`fairness_evals.centres.beside`); ``"provenance"``: ``{task: {...}}``, with ``limit``
and ``samples`` where the harness recorded a limited or subset run (an Inspect log: ``limited`` and ``epochs``); and
``"score_inputs"``, the files read (see :mod:`fairness_evals.run_files`; an Inspect log's with harness
``inspect``).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals import benchmarks, run_files, statistics
from fairness_evals.run_files import SCORE_INPUTS, InputFile, input_files, score_inputs, select_runs

#: Why a run whose task ran few-shot (:func:`shots`) is no result, in the words of score, check and report.
FEW_SHOT = (
    "the prompts held other documents with their answers, so the numbers are not benchmark results (our tasks are "
    "zero-shot by design: README, Zero-shot)"
)
#: The keys of a score output that are not tasks.
NULLS, PROVENANCE, INTERVALS = "nulls", "provenance", "intervals"
NOT_TASKS = (NULLS, PROVENANCE, INTERVALS, SCORE_INPUTS)


@dataclass
class Detail:
    """Every statistic of some tasks (``results``: task -> metric -> value), why each null is null, the provenance,
    and why each interval that excludes its estimate does (``intervals``: :meth:`add_centres`)."""

    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    nulls: dict[str, dict[str, str]] = field(default_factory=dict)
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    intervals: dict[str, dict[str, str]] = field(default_factory=dict)

    def update(self, other: Detail) -> None:
        self.results.update(other.results)
        self.nulls.update(other.nulls)
        self.provenance.update(other.provenance)
        self.intervals.update(other.intervals)

    def add_centres(self) -> None:
        """:attr:`intervals`: for each task, why each interval that excludes its estimate does
        (:func:`fairness_evals.centres.beside`)."""
        from fairness_evals import centres

        for task, metrics in self.results.items():
            found = centres.beside(task, metrics)
            if found:
                self.intervals[task] = found

    def as_json(self) -> dict[str, Any]:
        return {**self.results, NULLS: self.nulls, INTERVALS: self.intervals, PROVENANCE: self.provenance}


def samples_files(paths: Iterable[str], *, model: str | None = None, run: str | None = None) -> list[InputFile]:
    """The ``--log_samples`` files of our tasks under ``paths`` (folders or files), of one model and one run per task
    (the errors name the files when a folder holds several)."""
    found = input_files(paths, benchmarks.task_pattern(), "--log_samples files of a fairness-evals task")
    unknown = [f for f in found if not f.is_samples]
    if unknown:
        raise ValueError(
            f"{unknown[0].path}: not a --log_samples file of our tasks (score a model run outside the harness with "
            "`fairness-evals score <benchmark> --responses FILE`)"
        )
    return select_runs(found, model=model, run=run)


def benchmark_of(task: str) -> str:
    """The benchmark that declares ``task`` (a ValueError naming it otherwise)."""
    try:
        return statistics.task(task).benchmark
    except KeyError as error:
        raise ValueError(f"{task}: {error.args[0]}") from None


def detail(paths: Iterable[str], *, model: str | None = None, run: str | None = None) -> tuple[Detail, list[InputFile]]:
    """The detail of one run under ``paths`` (see the module docstring), and the files read: Inspect logs when a path
    is one or a folder holds some (:func:`inspect_detail`), else the harness's ``--log_samples`` files."""
    paths = list(paths)
    if inspect_logs(paths):
        return inspect_detail(paths, model=model, run=run)
    files = samples_files(paths, model=model, run=run)
    by_benchmark: dict[str, list[InputFile]] = {}
    for f in files:
        by_benchmark.setdefault(benchmark_of(f.task or ""), []).append(f)
    out = Detail()
    for benchmark, chosen in by_benchmark.items():
        commands = benchmarks.get(benchmark).hook("commands")
        if commands is None or not hasattr(commands, "detail"):
            raise ValueError(f"{chosen[0].path}: {benchmark} declares no commands module with detail(files)")
        out.update(commands.detail(chosen))
    add_groups(out, _sample_counts(files))
    _add_run_provenance(out, files)
    out.add_centres()
    return out, files


def _sample_counts(files: list[InputFile]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in files:
        with f.path.open("rb") as handle:
            counts[f.task or ""] = counts.get(f.task or "", 0) + sum(1 for line in handle if line.strip())
    return counts


def add_groups(out: Detail, sizes: Mapping[str, int]) -> None:
    """Every declared group whose leaf tasks are all in ``out``: each of its statistics computed as the harness's
    group aggregation does, over the leaves that list the metric (``computed_by(values, sizes)``), and its coverage
    the same way over the leaves' coverages."""
    for task in statistics.all_tasks():
        leaves = statistics.leaves(task.name) if task.group else []
        if not task.group or not leaves or not all(leaf in out.results for leaf in leaves):
            continue
        values: dict[str, Any] = {}
        for s in task.statistics:
            for member in s.members:
                listing = [leaf for leaf in leaves if member in {m for m, _ in statistics.task(leaf).harness_metrics()}]
                values[member] = _rollup(s.computed_by, [out.results[leaf].get(member) for leaf in listing],
                                         [sizes.get(leaf, 0) for leaf in listing])  # fmt: skip
                if s.coverage is not None:
                    values[f"{member}_coverage"] = _rollup(
                        s.coverage.computed_by, [out.results[leaf].get(f"{member}_coverage") for leaf in listing],
                        [sizes.get(leaf, 0) for leaf in listing],
                    )  # fmt: skip
        out.results[task.name] = values
        nulls = {name: "a member task's value is null" for name, value in values.items() if _null(value)}
        if nulls:
            out.nulls[task.name] = nulls


def _rollup(computed_by: str, values: list[Any], sizes: list[int]) -> float:
    function = statistics.resolve(computed_by)
    numbers = [math.nan if _null(v) else float(v) for v in values]
    if len(inspect.signature(function).parameters) >= 2:  # the harness's (values, sizes, weight_by_size) form
        return float(function(numbers, sizes))
    return float(function(numbers))


def _null(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _results_of(samples: Path) -> Path | None:
    """The results file the harness wrote with the samples file ``samples`` (the same time stamp): lm-eval's
    ``results_<date>.json`` beside ``samples_<task>_<date>.jsonl``, lmms-eval's ``<stamp>_results.json`` beside
    ``<stamp>_samples_<task>.jsonl``; None when there is none."""
    name = samples.name.removesuffix(".jsonl")
    if "_samples_" in name:  # lmms-eval
        candidate = samples.with_name(f"{name.split('_samples_', 1)[0]}_results.json")
    else:  # lm-eval: the date is the last underscore-separated part
        candidate = samples.with_name(f"results_{name.rsplit('_', 1)[-1]}.json")
    return candidate if candidate.is_file() else None


def shots(results: Mapping[str, Any]) -> dict[str, int]:
    """The tasks (not groups) of ours that a harness results file says ran few-shot: ``{task: n}`` for each
    ``"n-shot"`` above 0 (else the task config's ``num_fewshot``). Our tasks are zero-shot by design (each template
    says ``num_fewshot: 0``, which lm-eval and lmms-eval keep whatever ``--num_fewshot`` says), so a shot here comes
    from an older or patched harness or an override of our config: its prompts held other documents' answers."""
    table = results.get("n-shot")
    table = table if isinstance(table, Mapping) else {}
    configs = results.get("configs")
    configs = configs if isinstance(configs, Mapping) else {}
    groups = {t.name for t in statistics.all_tasks() if t.group}
    found = {}
    for task in sorted(n for n in {*table, *configs} if isinstance(n, str) and benchmarks.task_pattern().fullmatch(n)):
        if task in groups:
            continue
        config = configs.get(task)
        n = table.get(task, config.get("num_fewshot") if isinstance(config, Mapping) else None)
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            found[task] = n
    return found


def _add_run_provenance(out: Detail, files: list[InputFile]) -> None:
    """What the harness recorded about the run itself in the results file written with each samples file:
    ``limit`` (``--limit``) and ``samples`` (``--samples``, lm-eval) when set, ``n_shot`` when the task ran few-shot
    (:func:`shots`), and the task's version. A results file that cannot be read is an error naming it
    (:func:`fairness_evals.jsonio.read_json`)."""
    from fairness_evals import jsonio

    for f in files:
        results: dict[str, Any] = {}
        path = _results_of(f.path)
        if path is not None:
            data = jsonio.read_json(path, "results file", allow_nan=True)  # the harnesses write a bare NaN
            results = data if isinstance(data, dict) else {}
        config = results.get("config") if isinstance(results.get("config"), dict) else {}
        task = f.task or ""
        entry = out.provenance.setdefault(task, {})
        if config.get("limit") is not None:
            entry["limit"] = config["limit"]
        if config.get("samples"):
            entry["samples"] = config["samples"]
        if task in (given := shots(results)):
            entry["n_shot"] = given[task]
        version = (results.get("versions") or {}).get(task)
        if version is not None:
            entry["task_version"] = version


def samples_detail(files: Sequence[InputFile], score_samples: Callable[..., dict[str, Any]]) -> Detail:
    """The detail (:class:`Detail`) of image-generation tasks from a run's samples ``files``
    (:class:`fairness_evals.run_files.InputFile`): each task's lines scored by its benchmark's ``score_samples``
    (every statistic, the reason for each null, the provenance). A line that cannot be scored is a ``ValueError``
    naming its file and line."""
    out = Detail()
    for file in files:
        lines = list(run_files.read_lines([file]))
        bad = next((line for line in lines if not isinstance(line.row, Mapping)), None)
        if bad is not None:
            raise ValueError(f"{bad.where}: not a sample object")
        try:
            scored = score_samples([line.row for line in lines])
        except ValueError as error:  # "line N:" counts the rows given: name the file's line (blank lines skipped)
            raise ValueError(
                re.sub(r"^line (\d+):", lambda m, lines=lines: f"{lines[int(m[1]) - 1].where}:", str(error))
            ) from None
        task = file.task or ""
        out.results[task] = scored["metrics"]
        out.nulls[task] = scored["nulls"]
        out.provenance[task] = scored["provenance"]
    return out


def inspect_logs(paths: Iterable[str | Path]) -> list[tuple[Path, Path]]:
    """``(path given, log)`` of the Inspect logs among ``paths`` (:func:`fairness_evals.inspect.logs.find_logs`): each
    path that is one, and those below each folder but logs of other tasks (:func:`~fairness_evals.inspect.logs.
    foreign_task`: a harness run's folder may hold some); empty when there are none."""
    from fairness_evals.inspect.logs import find_logs, foreign_task, is_inspect_log

    return [
        (p, log)
        for p in map(Path, paths)
        if p.is_dir() or is_inspect_log(p)
        for log in find_logs([p])
        if log == p or foreign_task(log) is None
    ]


def inspect_detail(
    paths: Iterable[str | Path], *, model: str | None = None, run: str | None = None
) -> tuple[Detail, list[InputFile]]:
    """The detail of the one run in the Inspect logs under ``paths`` (``model``, ``run``: Inspect's model name and the
    run's creation time, or its start, when they hold several), and the logs read (harness ``inspect``). A log of
    another task found in a folder is skipped; two logs of one task are an error naming both."""
    from fairness_evals.inspect.logs import NotOurs, read_log

    entries = []
    logs = inspect_logs(paths)
    for given, log in logs:
        try:
            entries += read_log(log)
        except NotOurs:
            if log == given:
                raise
    entries = [e for e in entries if (model is None or e.model == model) and (run is None or e.run.startswith(run))]
    if not entries:
        chosen = "" if model is None and run is None else f" of model {model!r} and run {run!r}"
        raise ValueError(f"{logs[0][0]}: no Inspect log of a fairness-evals task{chosen}")
    seen: dict[str, Path] = {}
    for entry in entries:
        if entry.name in seen and seen[entry.name] != entry.path:
            raise ValueError(
                f"{entry.path}: a second Inspect log of {entry.name} (the first is {seen[entry.name]}); give one run's "
                "logs (or --model, --run)"
            )
        seen[entry.name] = entry.path
    files = {e.path: InputFile(e.path, e.name, e.harness, e.run, e.model) for e in entries if e.group is None}
    return log_detail(entries), list(files.values())


def log_detail(entries: Iterable[Any]) -> Detail:
    """The detail of Inspect ``entries`` (:class:`fairness_evals.inspect.logs.LoggedTask`): each task's every
    statistic and reasons (:meth:`~fairness_evals.inspect.logs.LoggedTask.statistics`) and provenance
    (:func:`log_provenance`), then every group whose members are all there (:func:`add_groups`)."""
    out = Detail()
    sizes: dict[str, int] = {}
    for entry in entries:
        if entry.members:
            continue
        out.results[entry.name], out.nulls[entry.name] = entry.statistics()
        out.provenance[entry.name] = log_provenance(entry)
        sizes[entry.name] = len(entry.samples)
    add_groups(out, sizes)
    out.add_centres()
    return out


def log_provenance(entry: Any) -> dict[str, Any]:
    """The provenance of one Inspect task, as :func:`detail` gives a harness run's from the same documents: the
    benchmark's own (its ``provenance`` hook, of the answered documents, their number and the task's settings), then
    ``limited`` and ``epochs`` where the run left documents out or asked each several times."""
    answered = [s for s in entry.samples if s.error is None]
    docs = list({s.id: s.document for s in answered}.values())
    make = benchmarks.get(entry.benchmark).hook("provenance")
    out = make(docs, len(answered), entry.settings) if make is not None else {"answers": len(answered)}
    if entry.limited:
        out["limited"] = entry.limited
    if entry.epochs > 1:
        out["epochs"] = entry.epochs
    return out


def write(paths: Iterable[str], out: str | None, *, model: str | None = None, run: str | None = None) -> Detail:
    """`fairness-evals score <folder>`: the detail of the run under ``paths`` as strict JSON, whole or not at all."""
    from fairness_evals import jsonio

    found, files = detail(paths, model=model, run=run)
    for task, entry in sorted(found.provenance.items()):
        if entry.get("n_shot"):
            run_files.note("fairness-evals score", f"{task} ran {entry['n_shot']}-shot (n-shot): {FEW_SHOT}")
    data = found.as_json()
    data[SCORE_INPUTS] = score_inputs("run", files, {})
    jsonio.write_json(data, out)
    return found


def read(path: Path) -> Detail:
    """A score output (:func:`write`) read back, its tasks under ``results``."""
    from fairness_evals import jsonio

    data = jsonio.read_json(path, "score output")
    return Detail(
        {k: v for k, v in data.items() if k not in NOT_TASKS and isinstance(v, dict)},
        data.get(NULLS) or {},
        data.get(PROVENANCE) or {},
        data.get(INTERVALS) or {},
    )
