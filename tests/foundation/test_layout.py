"""The package layout: what the wheel installs, and the layers (README "Layout").

- The wheel adds exactly five packages and the start-up hook to a user's environment.
- ``metrics`` imports with every harness, torch, the datasets library and our other packages unimportable.
- The import graph of our modules (every ``import``, also those inside functions) has no circle, and every
  edge goes down the layers, which are folders: ``metrics`` imports only itself; ``fairness_evals``' shared parts
  import ``metrics`` and themselves; its command layer (``fairness_evals/commands/``) imports those and itself; a
  benchmark package imports ``metrics``, the shared parts and itself, never another benchmark and never a command.
  Shared code reaches a benchmark only through the registry (``tests/foundation/test_registry.py``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from harness import REPO

PACKAGES = ("fairness_evals", "metrics", "fact_fair_tasks", "fairlens_tasks", "iris_tasks")
BENCHMARKS = ("fact_fair_tasks", "fairlens_tasks", "iris_tasks")
#: ``fairness_evals`` modules of the top layer (the command line, the report, the comparisons, the gate).
TOP = ("cli", "__main__", "run_files", "detail", "check", "compare", "report", "inspect")


def test_the_wheel_installs_five_packages_and_the_hook(installed_bin: Path) -> None:
    (wheel,) = (installed_bin.parents[1] / "dist").glob("fairness_evals-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {*PACKAGES, "_fairness_evals_hook.py", "fairness_evals_autoload.pth"}
    for moved in ("corpus", "faces", "generation"):  # the shared machinery lives under fairness_evals/
        assert f"fairness_evals/{moved}/__init__.py" in names, moved
    assert "fairness_evals/faces/README.md" in names and "fairness_evals/generation/README.md" in names


def test_metrics_imports_with_the_harnesses_and_our_other_packages_unimportable() -> None:
    blocked = ("lm_eval", "lmms_eval", "torch", "transformers", "datasets", "accelerate", *PACKAGES[:1], *BENCHMARKS)
    code = f"""
import importlib, pkgutil, sys
BLOCKED = {blocked!r}
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{{name}} is blocked in this test")
        return None
sys.meta_path.insert(0, Block())
import metrics
names = sorted(m.name for m in pkgutil.walk_packages(metrics.__path__, "metrics."))
for name in names:
    importlib.import_module(name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not loaded, loaded
print(len(names))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, env={"PYTHONPATH": str(REPO)}
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout) >= 10  # every module of metrics/ was imported, not just the package


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports anywhere in its code (its own package's ``__init__`` aside)."""
    modules = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                targets = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                found = resolve(target)
                if found is not None and found != module and not module.startswith(found + "."):
                    graph[module].add(found)
    return graph


def layer(module: str) -> str:
    """The layer of ``module``: its folder."""
    parts = module.split(".")
    if parts[0] in ("metrics", *BENCHMARKS):
        return parts[0]
    return "commands" if parts[1:2] in (["commands"], ["__main__"]) else "shared"


ALLOWED = {
    "metrics": {"metrics"},
    "shared": {"metrics", "shared"},
    "commands": {"metrics", "shared", "commands"},
    **{benchmark: {"metrics", "shared", benchmark} for benchmark in BENCHMARKS},
}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_our_modules_import_in_no_circle() -> None:
    assert cycles(import_graph()) == []


def test_cycles_finds_a_circle() -> None:  # the detector itself
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_import_goes_down_the_layers() -> None:
    graph = import_graph()
    assert {"fairness_evals.corpus", "fairness_evals.faces", "fairness_evals.generation"} <= set(graph)
    wrong = sorted(
        f"{module} ({layer(module)}) imports {target} ({layer(target)})"
        for module, targets in graph.items()
        for target in targets
        if layer(target) not in ALLOWED[layer(module)]
    )
    assert wrong == []
    assert layer("fairlens_tasks.judging.command") == "fairlens_tasks" and layer("fairness_evals.report") == "shared"
    assert layer("fairness_evals.commands.check") == "commands" and layer("iris_tasks.gen_harness") == "iris_tasks"


def test_the_sdist_holds_every_tracked_file(tmp_path: Path) -> None:
    from hatchling.builders.sdist import SdistBuilder

    (archive,) = SdistBuilder(str(REPO)).build(directory=str(tmp_path))
    with tarfile.open(archive) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    missing = sorted(name for name in tracked if name not in names and name != ".gitignore")
    assert missing == []
