"""The vocabulary of the statistics tables: what a benchmark declares once about each statistic it reports.

Each benchmark declares its statistics in one module (its :class:`~fairness_evals.benchmarks.Benchmark`'s
``statistics``) as :class:`Statistic` entries, grouped into the
:class:`Task` entries of the tasks that report them. Everything else reads those declarations: the harness metric
lists (the YAMLs are tested equal to :meth:`Task.harness_metrics`), ``fairness-evals score`` (the names it writes),
``compare``, ``check`` (its headline list), ``report``, the coverage simulations (which intervals to judge), the
README tables and ``fairness-evals metrics`` (the map from a metric's name to its formula).

A statistic is one metric, or a *family* of metrics that differ by a placeholder (``adverse_rate_{attribute}_{group}``)
declared once with the values its placeholders take. Its *derived* metrics follow from what it declares:

- ``<name>_ci_low`` / ``<name>_ci_high``: the ends of its 95% interval, when it declares an :class:`Interval`;
- ``<name>_ci_centre``: the value that interval is centred on, when its method corrects the estimate's bias (the
  interval's ``centre`` says how): a reflected interval can lie beside its plug-in estimate, and this is the
  bias-corrected estimate it stands for;
- ``<name>_coverage``: the share of its inputs that counted, when it declares a :class:`Coverage` (below the
  coverage's threshold the statistic and its interval are null); with it, where the coverage declares ``counts``,
  ``<name>_counted`` (the inputs that counted: the statistic's denominator n) and ``<name>_inputs`` (all its inputs);
- ``<name>_stderr``: its standard error, shown in the harness's ± column, when it declares ``stderr`` (the function
  that computes it; only where a seeded simulation shows that ``estimate ± 1.96 stderr`` covers at the bar).

A statistic built from cells (a mean over (statistic, target) cells, a comparison of groups) declares the evidence it
needs, a :class:`Minimum`: with the statistic (below it the estimate, its interval and standard error are null) and
with its interval (below it only the interval and standard error are). :mod:`fairness_evals.evidence` applies both.

``computed_by`` names, as ``module:function``, the function that computes the value: an importable function whose
docstring gives the formula and the paper section. A test imports every one.

Import-light: no numpy, no harness, no benchmark; the benchmark tables are imported only by :func:`tables`.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import itertools
import re
import string
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fairness_evals.notes import indefinite, plural

Direction = Literal["higher", "lower", "neither"]
Role = Literal["headline", "detail"]
Kind = Literal["score", "rate", "count", "diagnostic"]
Over = Literal["smallest", "harmonic mean", "total", "median"]


#: The resampling of every declared bootstrap interval, and the level of every interval: the coverage simulations
#: that back each declared interval (``bench/coverage.py``) ran with these, so they are set here once.
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95

#: The derived names that are counts of a statistic's inputs: they stay when the statistic is null.
COUNT_SUFFIXES = ("_coverage", "_counted", "_inputs")


@dataclass(frozen=True)
class Minimum:
    """The evidence a statistic's cells must hold for a value to be printed; below it the value is null, with the
    reason in the detail and the task's one warning (:func:`fairness_evals.evidence.enforce` applies it).

    The rule reads one count per cell of the design (0 for a cell without any): at least ``answers`` ``measured``
    (singular, e.g. "parsed answer") per ``per`` (e.g. "(statistic, target) cell", "group", "prompt"), taken
    ``over`` the cells that hold any (their ``smallest``, their ``harmonic mean`` -- the size whose plug-in bias,
    about 1/n per cell, the simulations measure -- or their ``total``), or over every cell given (their ``median``, a
    cell without any counting 0); at least the share ``cells`` of the design's cells holding any (a mean over the
    design's cells, or a comparison of its groups, from a few of them is another statistic); and, where ``outcome``
    is set, at least that many units of each cell with the outcome and as many without. ``by`` sets another
    ``answers`` for the members of a family whose placeholder takes a value (``(("race", 80),)``: the race members
    need 80; :meth:`resolved`). ``bias`` is what the minimum allows: the largest |bias| of the estimate the seeded
    simulations measured at the minimum over their true models (``bench/coverage.py --bias``); None for an
    interval's minimum, which its coverage backs instead."""

    answers: int
    per: str
    measured: str
    over: Over = "smallest"
    cells: float = 0.0
    outcome: int = 0
    bias: float | None = None
    by: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        if self.over not in ("smallest", "harmonic mean", "total", "median"):
            raise ValueError(f"minimum over {self.over!r}")
        if self.answers < 0 or not 0.0 <= self.cells <= 1.0 or self.outcome < 0 or any(n < 0 for _, n in self.by):
            raise ValueError(f"minimum {self!r}: answers and outcome >= 0, cells in [0, 1]")

    def resolved(self, values: Mapping[str, str]) -> Minimum:
        """The minimum of one member, whose placeholders take ``values`` (:meth:`Statistic.values_of`): ``answers``
        from ``by`` where a value is named there."""
        named = dict(self.by)
        found = [named[v] for v in values.values() if v in named]
        return dataclasses.replace(self, answers=found[0] if found else self.answers, by=())

    def rule(self) -> str:
        """What the rule asks, in words (e.g. "10 parsed answers per (statistic, target) cell (harmonic mean), in at
        least 50% of the design's (statistic, target) cells")."""
        cells = f"in at least {self.cells:.0%} of the design's {self.per}s" if self.cells else ""
        if self.cells == 1.0 and self.over == "smallest":
            amount = indefinite(self.measured) if self.answers == 1 else plural(self.answers, self.measured)
            text = f"{amount} in every {self.per} of the design"
        elif self.over == "median":
            text = f"{plural(self.answers, self.measured)} per {self.per} (median over the {self.per}s){cells and ', ' + cells}"
        elif self.answers <= 1 and self.over != "total":
            text = f"{indefinite(self.measured)}{' ' + cells if cells else ''}"
        else:
            taken = {
                "smallest": f"in every {self.per} that holds any",
                "harmonic mean": f"per {self.per} (harmonic mean over those that hold any)",
                "total": f"in all its {self.per}s together",
            }[self.over]
            text = f"{plural(self.answers, self.measured)} {taken}{', ' + cells if cells else ''}"
        if self.outcome:
            text += f"; {self.outcome} of them with the outcome and {self.outcome} without"
        if self.by:
            text += "".join(f"; {n} for {value}" for value, n in self.by)
        return text

    def describe(self) -> str:
        """One line: what the rule asks, and the bias it allows."""
        if self.bias is None:
            return self.rule()
        return f"{self.rule()}; allows a bias within ±{self.bias:g} (measured at the minimum)"


@dataclass(frozen=True)
class Interval:
    """How a statistic's 95% interval is made: the ``method`` (one line), the unit the bootstrap ``resampled``
    (and within which strata), the function that computes the interval from the resamples, and the ``minimum``
    evidence below which the interval (and the standard error) is withheld while the estimate stays. ``centre``,
    where the method corrects the plug-in estimate's bias (so the interval can lie beside the estimate), says what
    the interval is centred on, reported as ``<name>_ci_centre`` (:attr:`metrics.intervals.BootstrapInterval.centre`).
    """

    method: str
    resampled: str
    computed_by: str
    minimum: Minimum | None = None
    centre: str | None = None
    #: The :mod:`metrics.bootstrap` method the task's scoring puts the statistic's resamples through (``percentile``,
    #: ``basic``, ``bca``, ``max_t``; :class:`metrics.bootstrap.StatisticSpec`), where the interval is one of them or
    #: ``computed_by`` maps one (a score's interval from its magnitude's): by default the one ``computed_by`` names
    #: (``metrics.intervals:<method>_interval``); None where ``computed_by`` computes the interval from the resamples.
    bootstrap: Literal["percentile", "basic", "bca", "max_t"] | None = None
    #: Why the interval is never printed, where the coverage simulations found no method that reaches the bar at any
    #: size (the scoring nulls it with this reason); None: it is printed from its ``minimum``.
    withheld: str | None = None

    def __post_init__(self) -> None:
        module, _, function = self.computed_by.partition(":")
        named = function.removesuffix("_interval")
        if module == "metrics.intervals" and named in ("percentile", "basic", "bca", "max_t"):
            if self.bootstrap not in (None, named):
                raise ValueError(
                    f"interval {self.method!r}: computed by {self.computed_by}, bootstrap {self.bootstrap}"
                )
            object.__setattr__(self, "bootstrap", named)


@dataclass(frozen=True)
class Coverage:
    """What a statistic's ``<name>_coverage`` counts: the share of ``inputs`` that counted, computed by
    ``computed_by``; below the setting ``threshold`` (a task-metadata key, default ``default``) the statistic and
    its interval are null, with one warning. With ``counts``, the statistic also reports the two counts of that
    share: ``<name>_counted`` (its denominator n, the inputs that counted) and ``<name>_inputs``. The rule is the one
    every benchmark shares, :func:`fairness_evals.evidence.enforce_coverage`."""

    inputs: str
    computed_by: str
    threshold: str | None = None
    default: float | None = None
    counts: bool = False
    #: Its inputs (singular, plural) and what made one count, as the reason for a null says them ("coverage 3 of 40
    #: answers parsed is 7.5%"; :func:`fairness_evals.evidence.coverage_shortfall`); ``what`` may name fields the
    #: scoring fills (``"that show a face labelled for {axis}"``).
    unit: tuple[str, str] = ("answer", "answers")
    what: str = "parsed"


@dataclass(frozen=True)
class Statistic:
    """One statistic (or one family of statistics) of a benchmark, declared once."""

    name: str
    definition: str
    computed_by: str
    paper: str
    direction: Direction = "neither"
    kind: Kind = "score"
    interval: Interval | None = None
    coverage: Coverage | None = None
    #: The function computing its standard error (the harness's ± column), where a simulation backs it; else None.
    stderr: str | None = None
    #: The values each ``{placeholder}`` of ``name`` takes (a family); empty for a single metric.
    family: Mapping[str, Sequence[str]] = field(default_factory=dict)
    #: The evidence below which the estimate (with its interval and standard error) is null; None: no such rule.
    minimum: Minimum | None = None
    #: Whether it is null (with its interval and standard error) where the task's position test finds that the answers
    #: follow the option position rather than the content (:mod:`fairness_evals.position`).
    position: bool = False
    #: The function that computes the value under the released conventions (``<benchmark>_conventions: released``),
    #: as ``module:function``, where the released code's formula differs from ``computed_by``; None: the same.
    released_by: str | None = None
    #: The coverage rules, other than its own ``coverage``, that null this one too, with its interval and standard
    #: error, below their threshold (another statistic may report the share as ``<name>_coverage``; IRIS's probe
    #: coverage no statistic reports): a group's rate under its family's coverage, a magnitude under each coverage of
    #: its parts (:func:`fairness_evals.evidence.covered_names`).
    nulled_by: tuple[Coverage, ...] = ()

    def __post_init__(self) -> None:
        placeholders = {p for _, p, _, _ in string.Formatter().parse(self.name) if p}
        if placeholders != set(self.family):
            raise ValueError(f"statistic {self.name!r}: placeholders {sorted(placeholders)} != {sorted(self.family)}")
        if self.direction not in ("higher", "lower", "neither"):
            raise ValueError(f"statistic {self.name!r}: direction {self.direction!r}")

    def formula(self, conventions: str = "corrected") -> Callable[..., Any]:
        """The function that computes the value: the one ``computed_by`` names (``released_by`` under the released
        conventions, where declared), looked up at each call, so that the declaration is what runs."""
        return resolve(self.released_by if conventions == "released" and self.released_by else self.computed_by)

    @property
    def members(self) -> list[str]:
        """The metric names of this statistic (one, or every member of the family, in declaration order)."""
        if not self.family:
            return [self.name]
        keys = list(self.family)
        return [self.name.format(**dict(zip(keys, values, strict=True)))
                for values in itertools.product(*(self.family[k] for k in keys))]  # fmt: skip

    def values_of(self, member: str) -> dict[str, str]:
        """The value each placeholder takes in ``member`` (``{}`` for a single metric); ``KeyError`` for a name that
        is not a member."""
        if not self.family:
            if member != self.name:
                raise KeyError(member)
            return {}
        keys = list(self.family)
        for values in itertools.product(*(self.family[k] for k in keys)):
            chosen = dict(zip(keys, values, strict=True))
            if self.name.format(**chosen) == member:
                return chosen
        raise KeyError(member)

    def derived(self, member: str) -> list[str]:
        """The derived metric names of one member, in the order harness lists give them."""
        out = []
        if self.interval is not None:
            out += [f"{member}_ci_low", f"{member}_ci_high"]
            if self.interval.centre:
                out.append(f"{member}_ci_centre")
        if self.coverage is not None:
            out.append(f"{member}_coverage")
            if self.coverage.counts:
                out += [f"{member}_counted", f"{member}_inputs"]
        if self.stderr:
            out.append(f"{member}_stderr")
        return out

    def nullable(self, member: str) -> list[str]:
        """The names that are null with the value of ``member``: it, its interval and its standard error (its
        coverage stays: that is a true share of its inputs)."""
        return [member, *(name for name in self.derived(member) if not name.endswith(COUNT_SUFFIXES))]

    def names(self) -> list[str]:
        """Every metric name this statistic reports: each member followed by its derived names."""
        return [name for member in self.members for name in (member, *self.derived(member))]

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """A regular expression matching exactly the members."""
        if not self.family:
            return re.compile(re.escape(self.name))
        parts = []
        for literal, placeholder, _, _ in string.Formatter().parse(self.name):
            parts.append(re.escape(literal))
            if placeholder:
                parts.append("(?:" + "|".join(map(re.escape, self.family[placeholder])) + ")")
        return re.compile("".join(parts))


@dataclass(frozen=True)
class Task:
    """The statistics one harness task (or group) reports.

    ``headline`` names the statistics (by their declared name, family patterns included) that the harness prints;
    the others are ``detail``: computed in the same pass, written by ``fairness-evals score``. ``carrier`` is the
    headline metric whose per-document item is the document's readable record (the others carry ``None``), so a
    sample line holds the record once. ``rollups`` (groups) name the member metrics averaged over the group's
    tasks."""

    name: str
    benchmark: str
    statistics: tuple[Statistic, ...]
    headline: tuple[str, ...] = ()
    carrier: str | None = None
    harness: Literal["lm-eval", "lmms-eval"] = "lm-eval"
    group: bool = False
    members: tuple[str, ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        declared = {s.name for s in self.statistics}
        unknown = [h for h in self.headline if h not in declared]
        if unknown:
            raise ValueError(f"task {self.name}: headline names {unknown} are not among its statistics")

    @functools.cached_property
    def _declared(self) -> dict[str, Statistic]:
        return {s.name: s for s in self.statistics}

    def statistic(self, name: str) -> Statistic:
        """This task's statistic ``name``: its declared name (``AD_{level}``) or a member's (``AD_single``)."""
        found = self._declared.get(name)
        if found is None:
            found = next((s for s in self.statistics if s.family and s.pattern.fullmatch(name)), None)
        if found is None:
            raise KeyError(f"task {self.name}: no statistic {name!r}")
        return found

    def formula(self, name: str, conventions: str = "corrected") -> Callable[..., Any]:
        """The function that computes this task's statistic ``name`` (:meth:`statistic`): :meth:`Statistic.formula`,
        what the scoring calls."""
        return self.statistic(name).formula(conventions)

    def bootstrap(self, name: str) -> Literal["percentile", "basic", "bca", "max_t"]:
        """The :mod:`metrics.bootstrap` method of the interval of this task's statistic ``name``
        (:attr:`Interval.bootstrap`), what the scoring puts its resamples through."""
        interval = self.statistic(name).interval
        if interval is None or interval.bootstrap is None:
            raise KeyError(f"task {self.name}: {name} declares no bootstrap interval")
        return interval.bootstrap

    def headline_statistics(self) -> list[Statistic]:
        return [s for s in self.statistics if s.name in self.headline]

    def harness_metrics(self) -> list[tuple[str, Direction]]:
        """The metric names the harness lists for this task, in order, with their direction: the headline members
        and their standard errors (the carrier first)."""
        out: list[tuple[str, Direction]] = []
        for s in self.headline_statistics():
            for member in s.members:
                out.append((member, s.direction))
                if s.stderr:
                    out.append((f"{member}_stderr", "neither"))
        if self.carrier is not None:
            out.sort(key=lambda item: item[0] != self.carrier)
        return out

    def all_metrics(self) -> list[str]:
        """Every metric this task computes (headline and detail), with the derived names."""
        return [name for s in self.statistics for name in s.names()]


@dataclass(frozen=True)
class Explanation:
    """One metric name of one benchmark, explained: what :func:`explain` returns for ``fairness-evals metrics``."""

    name: str
    benchmark: str
    tasks: tuple[str, ...]
    definition: str
    direction: Direction
    paper: str
    computed_by: str
    role: Role
    interval: str | None
    resampled: str | None
    coverage: str | None
    threshold: str | None
    statistic: str
    #: The tasks (and groups) among ``tasks`` whose harness table prints this name; the others compute it for
    #: ``fairness-evals score`` only.
    printed_by: tuple[str, ...] = ()
    #: The evidence this value needs to be printed (:meth:`Minimum.describe`), and its interval (a statistic's entry).
    minimum: str | None = None
    interval_minimum: str | None = None
    #: The function under the released conventions, where it differs (:attr:`Statistic.released_by`).
    released_by: str | None = None
    #: The thresholds of the coverages other than its own that null this one (:attr:`Statistic.nulled_by`).
    nulled_below: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name, "benchmark": self.benchmark, "tasks": list(self.tasks), "definition": self.definition,
            "direction": self.direction, "paper": self.paper, "computed_by": self.computed_by, "role": self.role,
            "printed_by": list(self.printed_by),
            "interval": self.interval, "resampled": self.resampled, "coverage": self.coverage,
            "threshold": self.threshold, "statistic": self.statistic, "minimum": self.minimum,
            "interval_minimum": self.interval_minimum, "released_by": self.released_by,
            "nulled_below": self.nulled_below,
        }  # fmt: skip


def _entries_of(
    statistic: Statistic, member: str, benchmark: str, tasks: tuple[str, ...], role: Role
) -> Iterator[Explanation]:
    s = statistic
    interval = s.interval
    coverage = s.coverage
    common = dict(benchmark=benchmark, tasks=tasks, paper=s.paper, statistic=s.name)
    interval_minimum = interval.minimum.describe() if interval and interval.minimum else None
    if interval and interval.withheld:
        interval_minimum = f"never printed: {interval.withheld}"
    yield Explanation(
        name=member, definition=s.definition, direction=s.direction, computed_by=s.computed_by, role=role,
        interval=interval.method if interval else None, resampled=interval.resampled if interval else None,
        coverage=coverage.inputs if coverage else None, threshold=coverage.threshold if coverage else None,
        minimum=s.minimum.describe() if s.minimum else None, interval_minimum=interval_minimum,
        released_by=s.released_by, nulled_below=_nulled_below(s), **common,
    )  # fmt: skip
    if interval is not None:
        for end in ("low", "high"):
            yield Explanation(
                name=f"{member}_ci_{end}", definition=f"{'lower' if end == 'low' else 'upper'} end of the 95% interval "
                f"of {member} ({interval.method}; resampling {interval.resampled})", direction="neither",
                computed_by=interval.computed_by, role="detail", interval=interval.method,
                resampled=interval.resampled, coverage=None, threshold=None, minimum=interval_minimum, **common,
            )  # fmt: skip
    if interval is not None and interval.centre:
        yield Explanation(
            name=f"{member}_ci_centre", definition=f"the value the 95% interval of {member} is centred on: "
            f"{interval.centre}; the interval can lie beside {member}, whose plug-in estimate is biased",
            direction="neither", computed_by=interval.computed_by, role="detail", interval=interval.method,
            resampled=interval.resampled, coverage=None, threshold=None, minimum=interval_minimum, **common,
        )  # fmt: skip
    if coverage is not None:
        rule = (
            f"; below {coverage.threshold} (default {coverage.default:g}) {member} is null"
            if coverage.threshold
            else ""
        )
        yield Explanation(
            name=f"{member}_coverage", definition=f"share of the inputs of {member} that counted: {coverage.inputs}{rule}",
            direction="higher", computed_by=coverage.computed_by, role="detail", interval=None, resampled=None,
            coverage=coverage.inputs, threshold=coverage.threshold, **common,
        )  # fmt: skip
    if coverage is not None and coverage.counts:
        for suffix, what in (("counted", "the number of its inputs that counted: the denominator n of"),
                             ("inputs", "the number of inputs of")):  # fmt: skip
            yield Explanation(
                name=f"{member}_{suffix}", definition=f"{what} {member} ({coverage.inputs})", direction="neither",
                computed_by=coverage.computed_by, role="detail", interval=None, resampled=None,
                coverage=coverage.inputs, threshold=coverage.threshold, **common,
            )  # fmt: skip
    if s.stderr:
        yield Explanation(
            name=f"{member}_stderr", definition=f"standard error of {member}, shown in the harness's ± column "
            "(estimate ± 1.96 stderr covers at the bar in the seeded simulations)", direction="neither",
            computed_by=s.stderr, role=role, interval=None, resampled=interval.resampled if interval else None,
            coverage=None, threshold=None, minimum=interval_minimum, **common,
        )  # fmt: skip


def _nulled_below(s: Statistic) -> str | None:
    """``fairlens_min_coverage (the coverage of: answers to ...)``, one per rule of :attr:`Statistic.nulled_by`."""
    rules = [f"{c.threshold} (the coverage of: {c.inputs})" for c in s.nulled_by]
    return "; ".join(rules) or None


def tables() -> dict[str, tuple[Task, ...]]:
    """Every benchmark's declared tasks, ``{benchmark: tasks}`` (imports the benchmark tables)."""
    from fairness_evals import benchmarks

    return {name: tuple(importlib.import_module(b.statistics).TASKS) for name, b in benchmarks.registry().items()}


def all_tasks() -> list[Task]:
    return [task for tasks in tables().values() for task in tasks]


def task(name: str) -> Task:
    """The declared task (or group) ``name``; a ``KeyError`` naming the nearest names otherwise."""
    for t in all_tasks():
        if t.name == name:
            return t
    import difflib

    near = difflib.get_close_matches(name, [t.name for t in all_tasks()], n=3)
    raise KeyError(f"no task {name!r}" + (f" (did you mean {', '.join(near)}?)" if near else ""))


def leaves(name: str) -> list[str]:
    """The leaf tasks of the task or group ``name``: itself, or a group's members, nested groups expanded. A harness
    averages a group over these, whether its YAML lists them or a nested group (a YAML may list either)."""
    declared = task(name)
    return [leaf for member in declared.members for leaf in leaves(member)] if declared.group else [name]


def explain(tasks: Sequence[Task] | None = None) -> list[Explanation]:
    """Every metric name of ``tasks`` (default: all), explained once per (benchmark, name, definition, minimum),
    naming every task that reports it (a group's roll-up of a name is its own entry, and so is a name whose tasks
    declare different minima). Headline members (and their standard errors) have role ``headline``; everything else
    ``detail``. ``printed_by`` names the tasks whose harness table prints it (:meth:`Task.harness_metrics`)."""
    chosen = list(tasks) if tasks is not None else all_tasks()
    seen: dict[tuple[str, str, str, str | None], Explanation] = {}
    tasks_of: dict[tuple[str, str, str, str | None], list[str]] = {}
    printed_of: dict[tuple[str, str, str, str | None], list[str]] = {}
    for t in chosen:
        printed = {name for name, _ in t.harness_metrics()}
        for s in t.statistics:
            role: Role = "headline" if s.name in t.headline else "detail"
            for member in s.members:
                for entry in _entries_of(s, member, t.benchmark, (), role):
                    key = (t.benchmark, entry.name, entry.definition, entry.minimum)
                    tasks_of.setdefault(key, []).append(t.name)
                    if entry.name in printed:
                        printed_of.setdefault(key, []).append(t.name)
                    previous = seen.get(key)
                    if previous is None or (previous.role == "detail" and entry.role == "headline"):
                        seen[key] = entry
    return [
        Explanation(**{**entry.__dict__, "tasks": tuple(dict.fromkeys(tasks_of[key])),
                       "printed_by": tuple(dict.fromkeys(printed_of.get(key, ())))})
        for key, entry in seen.items()
    ]  # fmt: skip


def resolve(computed_by: str) -> object:
    """The function ``module:function`` names (a dotted attribute path after the colon is followed)."""
    module_name, _, attribute = computed_by.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"computed_by {computed_by!r} is not 'module:function'")
    target: object = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def markdown(benchmark: str) -> str:
    """The metric table of a benchmark's README: one row per declared statistic (a family on one row, by its
    pattern), with where it is a headline, its direction, definition, paper section and ``computed_by``. The READMEs
    hold it between ``<!-- metrics:<benchmark>:start -->`` and ``<!-- metrics:<benchmark>:end -->`` (tested equal;
    ``fairness-evals metrics --markdown BENCHMARK`` prints it)."""
    rows: dict[tuple[str, str], tuple[Statistic, list[str], list[str]]] = {}
    for t in tables()[benchmark]:
        for s in t.statistics:
            key = (s.name, s.definition)
            entry = rows.setdefault(key, (s, [], []))
            (entry[1] if s.name in t.headline else entry[2]).append(t.name)
    arrow = {"higher": "↑", "lower": "↓", "neither": ""}
    lines = [
        "| metric | | definition | derived | headline in | paper | computed by |",
        "|---|---|---|---|---|---|---|",
    ]
    for s, headline, _ in rows.values():
        ends = "_ci_low/_ci_high" + ("/_ci_centre" if s.interval and s.interval.centre else "")
        shares = "_coverage" + ("/_counted/_inputs" if s.coverage and s.coverage.counts else "")
        derived = ", ".join(suffix for suffix, on in ((ends, s.interval), (shares, s.coverage),
                                                      ("_stderr", s.stderr)) if on)  # fmt: skip
        below = ", ".join(dict.fromkeys(f"`{c.threshold}`" for c in s.nulled_by))
        derived += f"{'; ' if derived and below else ''}{'null below ' + below if below else ''}"
        where = _task_summary(headline) if headline else "detail"
        by = f"`{s.computed_by}`" + (f" (released: `{s.released_by}`)" if s.released_by else "")
        lines.append(f"| `{s.name}` | {arrow[s.direction]} | {s.definition} | {derived} | {where} | {s.paper} | {by} |")
    return "\n".join(lines) + "\n" + _minima_markdown(benchmark)


def _minima_markdown(benchmark: str) -> str:
    """The table of declared minima (:class:`Minimum`) below a README's metric table: one row per statistic and set
    of minima, with the tasks that declare them; empty when the benchmark declares none."""
    rows: dict[tuple[str, Minimum | None, Minimum | None, bool, bool], list[str]] = {}
    for t in tables()[benchmark]:
        for s in t.statistics:
            interval_minimum = s.interval.minimum if s.interval else None
            never = bool(s.interval and s.interval.withheld)
            if s.minimum or interval_minimum or never:
                rows.setdefault((s.name, s.minimum, interval_minimum, s.interval is not None, never), []).append(t.name)
    if not rows:
        return ""
    lines = [
        "",
        "The evidence each value needs (declared `Minimum`s; below it the value is null, with the reason; the bias is",
        "the largest measured at the minimum over the simulated models, `bench/coverage.py --bias`):",
        "",
        "| metric | tasks | the estimate needs | bias allowed | the interval needs |",
        "|---|---|---|---|---|",
    ]
    for (name, estimate, interval, has_interval, never), names in rows.items():
        bias = "" if estimate is None or estimate.bias is None else f"±{estimate.bias:g}"
        needs = interval.rule() if interval else ("no declared minimum" if has_interval else "(no interval)")
        needs = "never printed: no method reaches the coverage bar" if never else needs
        lines.append(
            f"| `{name}` | {_task_summary(names)} | {estimate.rule() if estimate else 'any answer'} | {bias} | {needs} |"
        )
    return "\n".join(lines) + "\n"


def _task_summary(names: list[str]) -> str:
    """Task names shortened for a table cell: ``a, b`` or ``a and 5 more``."""
    return ", ".join(f"`{n}`" for n in names) if len(names) <= 2 else f"`{names[0]}` and {len(names) - 1} more"
