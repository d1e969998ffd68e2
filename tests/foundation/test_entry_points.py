"""Our task entry points, read the way lm-eval PR #4015 ("plugin task registration") reads them.

The PR takes each ``lm_eval.tasks`` entry point's module part, locates it without calling anything, and indexes every
``*.yaml`` below that module's folder. Applied to the entry points pyproject.toml declares, that rule must find
exactly our task YAMLs for each harness (the same check for an ``lmms_eval.tasks`` group, should lmms-eval adopt the
design); and the start-up hook must step aside only when the harness reads the group and our entry points resolve to
our task folders.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import tomllib
import yaml

from fairness_evals import _patch, paths, statistics

REPO = Path(__file__).resolve().parents[2]


def _declared(group: str) -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return project["entry-points"][group]


def _names(folder: Path) -> set[str]:
    """The task, group and tag names of every ``*.yaml`` below ``folder`` (what the harness would index)."""
    names: set[str] = set()
    for path in folder.rglob("*.yaml"):
        config = yaml.load(path.read_text(), Loader=yaml.BaseLoader) or {}
        names |= {config[key] for key in ("task", "group") if isinstance(config.get(key), str)}
    return names


@pytest.mark.parametrize("harness", paths.HARNESSES)
def test_declared_entry_points_resolve_to_our_task_folders_by_the_pr_rule(harness: str) -> None:
    entries = _declared(paths.ENTRY_POINT_GROUPS[harness])
    folders = [paths.entry_point_task_dir(value) for value in entries.values()]
    assert None not in folders, entries
    assert {f.resolve() for f in folders} == {Path(p).resolve() for p in paths.task_paths(harness)}, entries
    found = set().union(*(_names(folder) for folder in folders))
    expected = {t.name for t in statistics.all_tasks() if t.harness == harness}
    assert expected <= found, sorted(expected - found)
    # and nothing of the other harness is indexed: no lmms-eval task reaches lm-eval, nor the other way round
    other = {t.name for t in statistics.all_tasks() if t.harness != harness}
    assert not found & other, sorted(found & other)


def test_the_old_entry_point_form_resolves_to_a_folder_without_tasks() -> None:
    """What was declared before (a function in fairness_evals/paths.py): the PR's rule indexes fairness_evals/,
    which holds no task YAML, so lm-eval would have found nothing."""
    folder = paths.entry_point_task_dir("fairness_evals.paths:lm_eval_task_paths")
    assert folder == (REPO / "fairness_evals").resolve() and not _names(folder)
    assert paths.entry_point_task_dir("no_such_module_here:x") is None


def _fake_harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads_group: bool) -> None:
    package = tmp_path / "lm_eval"
    (package / "tasks").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    source = "GROUP = 'lm_eval.tasks'\n" if reads_group else "GROUP = None\n"
    (package / "tasks" / "manager.py").write_text(source)
    fake = type(sys)("lm_eval")
    fake.__file__ = str(package / "__init__.py")
    monkeypatch.setitem(sys.modules, "lm_eval", fake)
    _patch.native_task_plugins.cache_clear()


def test_the_hook_steps_aside_only_when_the_harness_would_find_our_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = [Path(p).resolve() for p in paths.task_paths("lm-eval")]
    try:
        _fake_harness(tmp_path, monkeypatch, reads_group=True)
        monkeypatch.setattr(_patch, "declared_task_dirs", lambda harness: list(ours))
        assert _patch.native_task_plugins("lm-eval") is True
        _patch.native_task_plugins.cache_clear()  # the group read, but our entry point resolves elsewhere
        monkeypatch.setattr(_patch, "declared_task_dirs", lambda harness: [(REPO / "fairness_evals").resolve()])
        assert _patch.native_task_plugins("lm-eval") is False
        _patch.native_task_plugins.cache_clear()  # our folders, but a harness that does not read the group
        monkeypatch.setattr(_patch, "declared_task_dirs", lambda harness: list(ours))
        _fake_harness(tmp_path / "other", monkeypatch, reads_group=False)
        assert _patch.native_task_plugins("lm-eval") is False
    finally:
        _patch.native_task_plugins.cache_clear()
