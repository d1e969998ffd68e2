"""A benchmark is one unit: shared code finds the benchmarks through one registry and knows none of them.

- Nothing under ``fairness_evals/`` imports or names a benchmark package: no ``import``, no importlib string, no
  docstring or comment (the scan reads every module's text and its import statements).
- The registry reads the entry-point group ``fairness_evals.benchmarks``; a broken registration is one clear error.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest
from harness import REPO

from fairness_evals import benchmarks

SHARED = REPO / "fairness_evals"


def benchmark_packages() -> set[str]:
    """The top-level packages of the registered benchmarks (their declarations name them)."""
    found = set()
    for benchmark in benchmarks.registry().values():
        modules = [benchmark.statistics, *(m for ms in benchmark.task_folders.values() for m in ms)]
        found |= {module.split(".")[0] for module in modules}
    return found


def naming(source: str, packages: set[str]) -> list[str]:
    """Where ``source`` imports or names one of ``packages``: ``line: what``."""
    out = []
    words = re.compile(rf"\b({'|'.join(map(re.escape, sorted(packages)))})\b")
    for number, line in enumerate(source.splitlines(), 1):
        out += [f"{number}: names {m.group(1)}" for m in words.finditer(line)]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            targets = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            targets = [node.value.split(":")[0]]  # an importlib or entry-point string: "package.module:attribute"
        else:
            continue
        out += [f"{node.lineno}: imports {t}" for t in targets if t.split(".")[0] in packages]
    return out


def test_the_registry_holds_the_three_benchmarks_each_with_its_own_package() -> None:
    registered = benchmarks.registry()
    assert list(registered) == ["fact_or_fair", "fairlens", "iris"]
    assert benchmark_packages() == {"fact_fair_tasks", "fairlens_tasks", "iris_tasks"}
    assert benchmarks.of_task("fairlens_open_legal").name == "fairlens"
    assert benchmarks.of_task("fact_or_fair_t2i_objective").name == "fact_or_fair"
    assert benchmarks.of_task("iris") is registered["iris"] and benchmarks.of_task("mmlu") is None
    assert benchmarks.task_pattern().fullmatch("iris_und") and not benchmarks.task_pattern().fullmatch("irisx")


def test_nothing_under_fairness_evals_imports_or_names_a_benchmark_package() -> None:
    packages = benchmark_packages()
    found = {
        str(path.relative_to(REPO)): problems
        for path in sorted(SHARED.rglob("*.py"))
        if (problems := naming(path.read_text(encoding="utf-8"), packages))
    }
    assert found == {}


def test_the_scan_finds_an_import_a_string_and_a_docstring() -> None:  # the detector itself
    source = (
        '"""Reads :mod:`iris_tasks.profile`."""\n'
        "import importlib\n"
        "from fairlens_tasks import scoring\n"
        "module = importlib.import_module('fact_fair_tasks' + '.cli')\n"
        "other = 'fairlens_tasksx'\n"
    )
    problems = naming(source, {"fact_fair_tasks", "fairlens_tasks", "iris_tasks"})
    assert "1: names iris_tasks" in problems and "3: imports fairlens_tasks" in problems
    assert "4: imports fact_fair_tasks" in problems and not [p for p in problems if p.startswith("5:")]


class _Point:
    def __init__(self, name: str, value: object) -> None:
        self.name, self.value, self._loaded = name, f"somewhere:{name}", value

    def load(self) -> object:
        if isinstance(self._loaded, Exception):
            raise self._loaded
        return self._loaded


@pytest.fixture
def points(monkeypatch: pytest.MonkeyPatch):
    """Replace the installed entry points of the group with the given ones for one test."""

    def use(*given: _Point) -> None:
        monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: list(given))
        benchmarks.registry.cache_clear()

    yield use
    benchmarks.registry.cache_clear()


def test_a_broken_registration_is_one_error_naming_the_entry_point(points) -> None:
    toy = benchmarks.Benchmark(name="toy", title="Toy", statistics="toy_tasks.statistics")
    points(_Point("toy", toy), _Point("zed", benchmarks.Benchmark(name="zed", title="Z", statistics="z.s")))
    assert benchmarks.names() == ("toy", "zed") and benchmarks.get("toy") is toy
    with pytest.raises(KeyError, match="no benchmark 'nope' \\(registered: toy, zed\\)"):
        benchmarks.get("nope")
    points(_Point("toy", "not a benchmark"))
    with pytest.raises(benchmarks.RegistryError, match=r"entry point toy = 'somewhere:toy'.*is not a Benchmark"):
        benchmarks.registry()
    points(_Point("toy", ImportError("No module named 'toy_tasks'")))
    with pytest.raises(benchmarks.RegistryError, match=r"entry point toy .*No module named 'toy_tasks'"):
        benchmarks.registry()
    other = benchmarks.Benchmark(name="toy", title="Another", statistics="elsewhere.statistics")
    points(_Point("toy", toy), _Point("toy2", other))
    with pytest.raises(benchmarks.RegistryError, match="two benchmarks are registered as 'toy'"):
        benchmarks.registry()


def test_every_declared_hook_resolves() -> None:
    """Each ``"module:attribute"`` of every declaration names something importable (a typo fails here, not in a
    user's run)."""
    for benchmark in benchmarks.registry().values():
        for which in ("commands", "provenance", "compare", "report", "published", "inspect", "inspect_tasks"):
            if getattr(benchmark, which) is not None:
                assert benchmark.hook(which) is not None, (benchmark.name, which)
        for module in [*benchmark.score_outputs.values(), *(m for _, m in benchmark.more_commands.values())]:
            assert benchmarks.load(module) is not None, (benchmark.name, module)
        assert all(Path(p).is_dir() for p in [str(benchmarks.load(m).__path__[0]) for ms in
                                              benchmark.task_folders.values() for m in ms])  # fmt: skip


def test_each_threshold_is_a_declared_setting_with_its_default() -> None:
    """A statistic's coverage threshold is one of its benchmark's settings, with the default the benchmark declares
    (the tables read it from the declaration); every coverage setting is one some statistic uses."""
    from fairness_evals import statistics

    for name, tasks in statistics.tables().items():
        declared = benchmarks.get(name)
        used = set()
        for task in tasks:
            for statistic in task.statistics:
                coverage = statistic.coverage
                if coverage is None or coverage.threshold is None:
                    continue
                used.add(coverage.threshold)
                assert coverage.default == declared.settings[coverage.threshold], (name, statistic.name)
        assert used == set(declared.coverage_settings), name


def test_loading_every_benchmark_for_inspect_leaves_scipy_stats_unimported() -> None:
    """Inspect's registry loads every benchmark's hooks at each ``inspect`` start; scipy.stats (most of a second to
    import) is imported only by the statistic that needs it (IRIS's finite-sample floor of RD), when it runs."""
    program = "import sys, fairness_evals.inspect._registry; print('scipy.stats' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split() == ["False"], out.stderr[-2000:]
