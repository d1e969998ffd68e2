"""The benchmarks, found through one registry: shared code knows none of them by name.

Each benchmark is one package that declares one :class:`Benchmark` and registers it under the entry-point group
:data:`GROUP` of its distribution (``pyproject.toml``)::

    [project.entry-points."fairness_evals.benchmarks"]
    my_benchmark = "my_benchmark_tasks.benchmark:BENCHMARK"

Everything under ``fairness_evals/`` reads the benchmarks from :func:`registry`: the task folders the harnesses
index, the statistics tables, the ``score``/``export`` commands, ``check``'s headlines and coverage settings, the
samples ``detail``, ``compare``'s adapters, the report's views and the Inspect plans. A hook is named as
``"module:attribute"`` (or ``"module"``) and imported only when it is used, so loading the registry imports nothing
heavy. ``docs/adding_a_benchmark.md`` walks through a new benchmark.

Import-light: no numpy, no harness.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The entry-point group every benchmark registers its :class:`Benchmark` under.
GROUP = "fairness_evals.benchmarks"
#: Where :meth:`Benchmark.of_package` finds each hook in a benchmark's package.
CONVENTIONAL_HOOKS = {
    "statistics": "statistics",
    "commands": "commands",
    "compare": "compare:ADAPTERS",
    "report": "report:section",
    "published": "report:published_table",
    "provenance": "inspect_plan:provenance",
    "inspect": "inspect_plan:plan",
    "inspect_tasks": "inspect_tasks:TASKS",
}


@dataclass(frozen=True)
class Benchmark:
    """What shared code needs to know of one benchmark; every hook is ``"module:attribute"``, imported on use.

    ``name``: its name in ``fairness-evals score <name>`` and the prefix of its task names (``prefixes`` when several).
    ``statistics``: the module of its statistics table (``TASKS``, ``PAPER``, ``CHANCE``).
    ``task_folders``: harness (``lm-eval``/``lmms-eval``) -> the modules whose folders hold its task YAMLs (the rule
    of the harnesses' ``*.tasks`` entry points: a package's folder, every ``*.yaml`` below it).
    ``headlines``: the metrics ``check`` requires when a task's results carry no ``<name>_coverage``.
    ``one_per_model``: metrics a model's runs may report once (the report refuses two runs that both do).
    ``settings``: task-metadata key -> default, for every setting it reads; ``coverage_settings`` the keys among them
    that set a minimum coverage (``check`` and ``report`` read a run's threshold there).
    ``commands``: the module of ``fairness-evals export/score <name>`` (``add_export_arguments``, ``export``,
    ``add_score_arguments``, ``score``, ``detail(files)`` for the samples of a harness run and ``compare_records``
    for a score output).
    ``more_commands``: further sub-commands, ``{command: (help, module with add_arguments and run)}``.
    ``provenance``: ``provenance(documents, answers, settings)``, the provenance of an Inspect task's answered documents
    (corpus, seed, hashes), as ``score`` gives a harness run's.
    ``compare``: its ``compare`` adapters (a tuple of :class:`fairness_evals.compare.problem.Adapter`).
    ``score_outputs``: the names a score output of it records as its benchmark (``judge`` outputs included) ->
    the module whose ``compare_records`` reads them; ``judged_outputs`` those of them that a judge wrote after the
    run (the report reads them as a run of their tasks) -> the command that writes them.
    ``report``: ``section(runs) -> Section | None``, its view in ``fairness-evals report``; ``published`` the
    papers' rows beside it (``section(runs)``); ``differences``: the scale and unit of its differences plot.
    ``inspect``: ``plan(task, settings)``, how an Inspect task of it turns scores into statistics;
    ``inspect_tasks``: its Inspect tasks, ``{name: make(**task arguments) -> Task}``, registered as
    ``fairness_evals/<name>`` (their module ends in literal ``@task`` functions: ``fairness_evals.inspect.task_files``).
    """

    name: str
    title: str
    statistics: str
    task_folders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    prefixes: tuple[str, ...] = ()
    headlines: tuple[str, ...] = ()
    one_per_model: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    coverage_settings: tuple[str, ...] = ()
    commands: str | None = None
    more_commands: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    provenance: str | None = None
    compare: str | None = None
    score_outputs: Mapping[str, str] = field(default_factory=dict)
    judged_outputs: Mapping[str, str] = field(default_factory=dict)
    report: str | None = None
    published: str | None = None
    differences: tuple[float, str] = (1.0, "")
    inspect: str | None = None
    inspect_tasks: str | None = None

    @classmethod
    def of_package(cls, package: str, **fields: Any) -> Benchmark:
        """The benchmark whose hooks stand in ``package`` where :data:`CONVENTIONAL_HOOKS` says (``report`` is
        ``<package>.report:section``, ...); ``fields`` give the rest, and a hook that stands elsewhere (None: none)."""
        return cls(**{name: f"{package}.{where}" for name, where in CONVENTIONAL_HOOKS.items()} | fields)

    @property
    def task_prefixes(self) -> tuple[str, ...]:
        return self.prefixes or (self.name,)

    def owns(self, task: str) -> bool:
        """Whether ``task`` (a task or group name) is one of this benchmark's, by its name."""
        return any(task == p or task.startswith(f"{p}_") for p in self.task_prefixes)

    def described(self, setting: str) -> str:
        """``"<setting>, default <its declared default>"``: how a message names a setting (one place for the
        default)."""
        return f"{setting}, default {self.settings[setting]:g}"

    def hook(self, which: str) -> Any:
        """The object a hook field names (``"module:attribute"``, or a module); None when it is not declared."""
        value = getattr(self, which)
        return None if value is None else load(value)


def load(reference: str) -> Any:
    """The object ``"module:attribute"`` names (the module itself for ``"module"``)."""
    module, _, attribute = reference.partition(":")
    loaded = importlib.import_module(module)
    for part in attribute.split(".") if attribute else ():
        loaded = getattr(loaded, part)
    return loaded


class RegistryError(RuntimeError):
    """A broken registration: an entry point that does not load a Benchmark, or two benchmarks of one name."""


@functools.cache
def registry() -> dict[str, Benchmark]:
    """Every registered benchmark, ``{name: Benchmark}`` in name order (entry-point group :data:`GROUP`)."""
    found: dict[str, Benchmark] = {}
    for entry in importlib.metadata.entry_points(group=GROUP):
        try:
            benchmark = entry.load()
        except Exception as error:  # one line naming the entry point
            raise RegistryError(f"entry point {entry.name} = {entry.value!r} ({GROUP}): {error}") from error
        if not isinstance(benchmark, Benchmark):
            raise RegistryError(f"entry point {entry.name} = {entry.value!r} ({GROUP}) is not a Benchmark")
        known = found.get(benchmark.name)
        if known is not None and known != benchmark:
            raise RegistryError(f"two benchmarks are registered as {benchmark.name!r} ({GROUP})")
        found[benchmark.name] = benchmark
    return dict(sorted(found.items()))


def names() -> tuple[str, ...]:
    return tuple(registry())


def get(name: str) -> Benchmark:
    """The benchmark ``name``; a KeyError naming the registered ones otherwise."""
    try:
        return registry()[name]
    except KeyError:
        raise KeyError(f"no benchmark {name!r} (registered: {', '.join(registry()) or 'none'})") from None


def of_task(task: str) -> Benchmark | None:
    """The benchmark whose tasks ``task`` is named like (the longest matching prefix), None for another task."""
    best: tuple[int, Benchmark | None] = (0, None)
    for benchmark in registry().values():
        for prefix in benchmark.task_prefixes:
            if (task == prefix or task.startswith(f"{prefix}_")) and len(prefix) > best[0]:
                best = (len(prefix), benchmark)
    return best[1]


def ours(task: str) -> bool:
    """Whether ``task`` is named like a task of a registered benchmark."""
    return of_task(task) is not None


def task_pattern() -> re.Pattern[str]:
    """A pattern that matches the name of every task of a registered benchmark (``--log_samples`` file names)."""
    prefixes = sorted({p for b in registry().values() for p in b.task_prefixes}, key=len, reverse=True)
    alternatives = "|".join(re.escape(p) for p in prefixes) or "(?!)"
    return re.compile(rf"(?:{alternatives})(?:_[A-Za-z0-9_]+)?")


def coverage_settings() -> tuple[str, ...]:
    """Every benchmark's task-metadata keys of a minimum coverage, in registry order."""
    return tuple(key for b in registry().values() for key in b.coverage_settings)


def hooks(which: str) -> list[tuple[Benchmark, Any]]:
    """``(benchmark, object)`` of every benchmark that declares the hook ``which``."""
    return [(b, b.hook(which)) for b in registry().values() if getattr(b, which) is not None]
