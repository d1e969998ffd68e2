"""The declaration is the computation (issue 36): replacing the function a statistic's declaration names
(``Statistic.computed_by``, or ``released_by`` under the released conventions) changes the value the task prints, for every headline statistic of every scoring
pipeline of every benchmark.

Each case draws one seeded run of a task's records from the coverage simulators (``tests/support/coverage_*``, the
same records a harness run gives), scores it with the task's own scoring entry point, then scores it again with the
declared function wrapped so that its result moves (x -> 0.9 x + 0.01 on every float it returns), and checks that
every headline member the first scoring printed moved. A statistic whose printed value is computed by another
function than the one its declaration names fails here.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from fairness_evals import statistics


def _moved(value: Any) -> Any:
    """``value`` with every float in it moved (arrays, numbers, and the dicts, lists and tuples that hold them)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value * 0.9 + 0.01
    if isinstance(value, (float, np.floating)):
        return float(value) * 0.9 + 0.01
    if isinstance(value, dict):
        return {key: _moved(item) for key, item in value.items()}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_moved(item) for item in value)
    if isinstance(value, list):
        return [_moved(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _moved(getattr(value, f.name)) for f in dataclasses.fields(value)})
    return value


def _patch_declared(monkeypatch: pytest.MonkeyPatch, computed_by: str) -> None:
    """Replace the function ``module:attribute.path`` names by one whose results are :func:`_moved`."""
    module_name, _, attribute = computed_by.partition(":")
    owner: Any = importlib.import_module(module_name)
    *path, last = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, last)

    @functools.wraps(original)
    def moved(*args: Any, **kwargs: Any) -> Any:
        return _moved(original(*args, **kwargs))

    monkeypatch.setattr(owner, last, moved)


# ----------------------------------------------------------------------------------------- the cases
def _fact_or_fair(kind: str, conventions: str, draws: int = 10) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        from fact_fair_tasks import scoring
        from fact_fair_tasks.items import CONVENTIONS
        from tests.support import coverage_fact_or_fair as cff

        rng = np.random.default_rng(0)
        if kind == "objective":
            policy = next(p for p in cff.objective_policies() if p.name == "truthful_noisy")
            records = np.asarray(cff.objective_records(rng, policy, 0))
        else:
            policy = next(p for p in cff.subjective_policies() if p.name == "stereotyped")
            records = cff.subjective_records(rng, policy, draws)
        records[:, scoring.RECORD_FIELDS.index("conventions")] = CONVENTIONS.index(conventions)
        return scoring.compute_metrics(records, task=f"fact_or_fair_{kind}")

    return run


def _fact_or_fair_t2i(conventions: str, images: int = 10) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        from fact_fair_tasks import t2i_scoring
        from tests.support import coverage_generation as cg

        gender, race = cg.t2i_population("stereotyped")
        records = cg.t2i_records(np.random.default_rng(0), gender, race, images)
        return t2i_scoring.compute_metrics(records, metadata={"fact_or_fair_conventions": conventions})

    return run


def _fairlens_closed(size: str) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        from fairlens_tasks import scoring
        from tests.support import coverage_fairlens as cf

        policy = cf.CLOSED_POLICIES[1]
        records = cf._closed_records(policy, cf.design(size), np.random.default_rng(0))
        return scoring.compute_metrics(records, task=f"fairlens_{policy.domain}", min_coverage=0.0)

    return run


def _fairlens_open() -> dict[str, Any]:
    from fairlens_tasks import open_scoring
    from tests.support import coverage_fairlens as cf

    policy = cf.OPEN_POLICIES[1]
    arrays = cf._open_arrays(policy, cf.design("lite"), np.random.default_rng(0))
    return open_scoring.open_metrics_from_arrays(*arrays, task=f"fairlens_open_{policy.domain}", min_judged=0.0)


def _iris_design(index: int) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        from tests.support import coverage_iris as ci

        design = ci.DESIGNS[index]
        return design.score(design.draw(np.random.default_rng(0), ci.SIZES["lite"]))

    return run


def _iris_neutral_gen() -> dict[str, Any]:
    from iris_tasks import neutral_gen
    from tests.support import coverage_generation as cg

    cells = cg.neutral_population("stereotyped")
    return neutral_gen.compute_metrics(cg.neutral_records(np.random.default_rng(0), cells, 10))


def _iris_bis_gen() -> dict[str, Any]:
    from iris_tasks import bis_gen
    from tests.support import coverage_generation as cg

    shapes, success = cg.steer_population("gap")
    return bis_gen.compute_metrics(cg.steer_records(np.random.default_rng(0), shapes, success, 10))


#: (case, the declared task whose headline statistics it prints, its scoring): one per scoring pipeline.
CASES: tuple[tuple[str, str, Callable[[], dict[str, Any]]], ...] = (
    ("fact_or_fair objective", "fact_or_fair_objective", _fact_or_fair("objective", "corrected")),
    ("fact_or_fair objective released", "fact_or_fair_objective", _fact_or_fair("objective", "released")),
    ("fact_or_fair subjective", "fact_or_fair_subjective_base", _fact_or_fair("subjective_base", "corrected")),
    ("fact_or_fair subjective released", "fact_or_fair_subjective_base", _fact_or_fair("subjective_base", "released")),
    ("fact_or_fair text-to-image", "fact_or_fair_t2i_objective", _fact_or_fair_t2i("corrected")),
    ("fact_or_fair text-to-image released", "fact_or_fair_t2i_objective", _fact_or_fair_t2i("released")),
    ("fairlens closed", "fairlens_healthcare", _fairlens_closed("lite")),
    ("fairlens open", "fairlens_open_legal", _fairlens_open),
    ("iris ifs_und", "iris_ifs_und", _iris_design(0)),
    ("iris rfs_und", "iris_rfs_und", _iris_design(3)),
    ("iris bis_und", "iris_bis_und", _iris_design(6)),
    ("iris neutral_gen", "iris_gen_neutral", _iris_neutral_gen),
    ("iris bis_gen", "iris_gen_steer", _iris_bis_gen),
)


def _statistic_cases() -> list[Any]:
    out = []
    for case, task, score in CASES:
        try:
            declared = statistics.task(task)
        except KeyError as error:
            out.append(pytest.param(case, task, None, score, id=f"{case}: {error}"))
            continue
        if not declared.headline_statistics():
            out.append(pytest.param(case, task, None, score, id=f"{case}: {task} declares no headline"))
        for statistic in declared.headline_statistics():
            out.append(pytest.param(case, task, statistic.name, score, id=f"{case}: {statistic.name}"))
    return out


@pytest.fixture(scope="module")
def baselines() -> dict[str, dict[str, Any]]:
    return {}


@pytest.mark.parametrize(("case", "task", "name", "score"), _statistic_cases())
def test_replacing_the_declared_formula_changes_the_printed_value(
    case: str,
    task: str,
    name: str | None,
    score: Callable[[], dict[str, Any]],
    baselines: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert name is not None, f"{case}: no declared leaf task {task!r} with headline statistics"
    statistic = next(s for s in statistics.task(task).headline_statistics() if s.name == name)
    if case not in baselines:
        baselines[case] = score()
    before = baselines[case]
    printed = [m for m in statistic.members if isinstance(before.get(m), float) and np.isfinite(before[m])]
    assert printed, f"{case}: the run prints no {name} (the case must print every headline to test it): " + str(
        {m: before.get(m) for m in statistic.members}
    )
    declared = statistic.released_by if case.endswith("released") and statistic.released_by else statistic.computed_by
    _patch_declared(monkeypatch, declared)
    after = score()
    unmoved = [m for m in printed if after.get(m) == before[m]]
    assert not unmoved, f"{case}: replacing {declared} left {unmoved} as they were"


#: Every headline interval, with a run that prints it: (case, task, the statistics, the scoring). The objective
#: design (3 answers per cell) withholds every Fact-or-Fair objective interval but S_fact's; 60 profile draws give S_KLD's
#: interval the 100 parsed answers per cell it needs; the text-to-image intervals need a median of 80 labelled faces per
#: prompt for race.
INTERVAL_CASES: tuple[tuple[str, str, tuple[str, ...], Callable[[], dict[str, Any]]], ...] = (
    ("fact_or_fair objective", "fact_or_fair_objective", ("s_fact_{axis}",), _fact_or_fair("objective", "corrected")),
    (
        "fact_or_fair subjective",
        "fact_or_fair_subjective_base",
        ("s_e_{axis}", "s_kld_{axis}", "s_fair_{axis}", "distance_{axis}"),
        _fact_or_fair("subjective_base", "corrected", 60),
    ),
    (
        "fact_or_fair text-to-image",
        "fact_or_fair_t2i_objective",
        ("s_fact_{axis}", "s_e_{axis}", "s_kld_{axis}", "s_fair_{axis}"),
        _fact_or_fair_t2i("corrected", 150),
    ),
    (
        "fairlens closed",
        "fairlens_healthcare",
        ("soundness", "parity_gap_{attribute}", "parity_gap", "association_rate", "association_gap"),
        _fairlens_closed("paper"),
    ),
    ("fairlens open", "fairlens_open_legal", ("oe_bias_mean", "oe_flag_rate"), _fairlens_open),
    ("iris ifs_und", "iris_ifs_und", ("ifs_und_score",), _iris_design(0)),
    ("iris rfs_und", "iris_rfs_und", ("rfs_und_score",), _iris_design(3)),
    ("iris bis_und", "iris_bis_und", ("bis_und_score",), _iris_design(6)),
    ("iris bis_gen", "iris_gen_steer", ("gsr_{type}", "delta_gsr", "bis_gen_score"), _iris_bis_gen),
)
#: Headline intervals no run prints: the simulations found no method that reaches the coverage bar, and their
#: declarations say so (``Interval.withheld``).
NEVER_PRINTED = {
    task.name: tuple(s.name for s in task.headline_statistics() if s.interval is not None and s.interval.withheld)
    for task in statistics.all_tasks()
}


def test_the_interval_cases_cover_every_headline_interval() -> None:
    covered: dict[str, set[str]] = {}
    for _, task, names, _ in INTERVAL_CASES:
        covered.setdefault(task, set()).update(names)
    for case, task, _ in CASES:
        covered.setdefault(task, set()).update(NEVER_PRINTED[task])
        declared = {s.name for s in statistics.task(task).headline_statistics() if s.interval is not None}
        if task == "fact_or_fair_objective":  # printed from the subjective design (the same declarations)
            declared &= {"s_fact_{axis}"}
        assert declared == covered.get(task, set()), case


@pytest.mark.parametrize(
    ("case", "task", "name", "score"),
    [
        pytest.param(case, task, name, score, id=f"{case}: {name}")
        for case, task, names, score in INTERVAL_CASES
        for name in names
    ],
)
def test_replacing_the_declared_interval_changes_the_printed_interval(
    case: str,
    task: str,
    name: str,
    score: Callable[[], dict[str, Any]],
    baselines: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    statistic = next(s for s in statistics.task(task).headline_statistics() if s.name == name)
    assert statistic.interval is not None
    key = f"interval {case}"
    if key not in baselines:
        baselines[key] = score()
    before = baselines[key]
    ends = [f"{m}_ci_{end}" for m in statistic.members for end in ("low", "high")]
    printed = [e for e in ends if isinstance(before.get(e), float) and np.isfinite(before[e])]
    assert printed, f"{case}: the run prints no interval of {name}: " + str({e: before.get(e) for e in ends})
    _patch_declared(monkeypatch, statistic.interval.computed_by)
    after = score()
    unmoved = [e for e in printed if after.get(e) == before[e]]
    assert not unmoved, f"{case}: replacing {statistic.interval.computed_by} left {unmoved} as they were"


@pytest.mark.parametrize(
    ("case", "task", "score"),
    [pytest.param(*c, id=c[0]) for c in CASES if NEVER_PRINTED[c[1]] and not c[0].endswith("released")],
)
def test_an_interval_declared_never_printed_is_null_with_its_reason(
    case: str, task: str, score: Callable[[], dict[str, Any]]
) -> None:
    from fairness_evals.notes import Notes

    captured: list[Notes] = []
    original = Notes.warn

    def keep(self: Notes, log: Any) -> None:
        captured.append(self)
        original(self, log)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Notes, "warn", keep)
        out = score()
    said = "\n".join(line for notes in captured for line in notes.messages())
    for s in statistics.task(task).headline_statistics():
        if s.interval is not None and s.interval.withheld:
            for member in s.members:
                assert math.isnan(out[f"{member}_ci_low"]) and math.isnan(out[f"{member}_ci_high"]), member
            assert s.interval.withheld[:60] in said, (s.name, said[:500])
