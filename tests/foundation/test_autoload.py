"""The start-up hook's finder and patch, in-process, on fake task managers."""

from __future__ import annotations

import contextlib
import importlib
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path
from unittest.mock import ANY

import pytest

import _fairness_evals_hook as hook
from fairness_evals import _autoload, _patch
from fairness_evals.paths import task_paths

REPO = Path(__file__).resolve().parents[2]
PTH = REPO / "fairness_evals_autoload.pth"


class FakeTaskManager:
    def __init__(self, verbosity: str | None = None, include_path=None, include_defaults: bool = True) -> None:
        self.include_path = include_path
        self.include_defaults = include_defaults


def _fake_module(name: str = "fake_tm") -> object:
    module = type(sys)(name)
    module.TaskManager = type("TaskManager", (FakeTaskManager,), {})
    return module


@pytest.fixture(autouse=True)
def _no_native_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_patch, "native_task_plugins", lambda harness: False)
    monkeypatch.delenv("FAIRNESS_EVALS_AUTOLOAD", raising=False)


def test_lm_eval_order_puts_user_paths_last_so_they_win(tmp_path: Path) -> None:
    module = _fake_module()
    _patch.patch_task_manager(module, "lm-eval")
    manager = module.TaskManager(include_path=str(tmp_path))
    assert manager.include_path == [*task_paths("lm-eval"), str(tmp_path)]
    assert module.TaskManager(None, [str(tmp_path)]).include_path[-1] == str(tmp_path)  # positional too


def test_lmms_eval_order_puts_user_paths_first_so_they_win(tmp_path: Path) -> None:
    module = _fake_module()
    _patch.patch_task_manager(module, "lmms-eval")
    manager = module.TaskManager("INFO", include_path=[str(tmp_path)])
    assert manager.include_path == [str(tmp_path), *task_paths("lmms-eval")]


def test_our_folder_given_explicitly_is_not_added_twice() -> None:
    module = _fake_module()
    _patch.patch_task_manager(module, "lm-eval")
    ours = task_paths("lm-eval")[0]
    assert module.TaskManager(include_path=ours + "/").include_path == [ours + "/"]


def test_include_defaults_false_and_env_off_leave_the_call_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _fake_module()
    _patch.patch_task_manager(module, "lm-eval")
    assert module.TaskManager(include_path="/x", include_defaults=False).include_path == "/x"
    monkeypatch.setenv("FAIRNESS_EVALS_AUTOLOAD", "0")
    assert module.TaskManager(include_path="/x").include_path == "/x"


def test_native_plugins_make_the_hook_step_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_patch, "native_task_plugins", lambda harness: True)
    module = _fake_module()
    _patch.patch_task_manager(module, "lm-eval")
    assert module.TaskManager(include_path=None).include_path is None


def test_native_plugin_detection_reads_the_harness_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # the real detector
    detect = _patch.native_task_plugins.__wrapped__
    package = tmp_path / "lm_eval"
    (package / "tasks").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tasks" / "manager.py").write_text("class TaskManager: pass\n")
    fake = type(sys)("lm_eval")
    fake.__file__ = str(package / "__init__.py")
    monkeypatch.setitem(sys.modules, "lm_eval", fake)
    assert detect("lm-eval") is False
    (package / "tasks" / "plugins.py").write_text("eps = entry_points(group='lm_eval.tasks')\n")
    # the group is read; the hook steps aside once our entry points resolve to our task folders
    # (tests/foundation/test_entry_points.py applies the resolution rule to what pyproject.toml declares)
    monkeypatch.setattr(_patch, "declared_task_dirs", lambda harness: [Path(p).resolve() for p in task_paths(harness)])
    assert detect("lm-eval") is True
    # the installed harnesses have no native task plugins
    monkeypatch.delitem(sys.modules, "lm_eval")
    import lm_eval

    assert lm_eval is not None and detect("lm-eval") is False


def test_patch_is_idempotent_and_never_raises() -> None:
    module = _fake_module()
    _patch.patch_task_manager(module, "lm-eval")
    wrapped = module.TaskManager.__init__
    _patch.patch_task_manager(module, "lm-eval")
    assert module.TaskManager.__init__ is wrapped
    odd = type(sys)("odd")

    class TaskManager:  # no include_path parameter at all: binding fails, the call goes through
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.args, self.kwargs = args, kwargs

    odd.TaskManager = TaskManager
    _patch.patch_task_manager(odd, "lm-eval")
    assert odd.TaskManager(1, b=2).kwargs == {"b": 2}
    _patch.patch_task_manager(type(sys)("empty"), "lm-eval")  # no TaskManager: nothing happens


def test_finder_ignores_other_modules_and_patches_watched_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert hook.find_spec("json") is None and hook.find_spec("lm_eval") is None
    (tmp_path / "fake_harness_manager.py").write_text(
        "class TaskManager:\n"
        "    def __init__(self, include_path=None, include_defaults=True):\n"
        "        self.include_path = include_path\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(hook, "WATCHED", hook.WATCHED | {"fake_harness_manager"})
    monkeypatch.setitem(_autoload._HARNESSES, "fake_harness_manager", "lm-eval")
    monkeypatch.setattr(sys, "meta_path", [hook, *[f for f in sys.meta_path if f is not hook]])
    sys.modules.pop("fake_harness_manager", None)
    module = importlib.import_module("fake_harness_manager")
    try:
        assert isinstance(module.__spec__.loader, _autoload._PatchingLoader)
        assert module.__loader__.get_filename("fake_harness_manager").endswith("fake_harness_manager.py")
        assert module.TaskManager(include_path="/user").include_path == [*task_paths("lm-eval"), "/user"]
    finally:
        sys.modules.pop("fake_harness_manager", None)
    assert _autoload.harness_spec("no_such_module_anywhere") is None


def _site(tmp_path: Path, hook_source: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter whose ``site`` processes a site dir holding our .pth and the given hook module."""
    site_dir = tmp_path / "site-packages"
    site_dir.mkdir(exist_ok=True)
    shutil.copy(PTH, site_dir / PTH.name)
    (site_dir / "_fairness_evals_hook.py").write_text(hook_source)
    code = (
        f"import site; site.addsitedir({str(site_dir)!r}); import sys; "
        "print(getattr(sys.meta_path[0], '__name__', '-')); print('user code ran')"
    )
    return subprocess.run(
        [sys.executable, "-S", "-c", code], env={**os.environ, **env}, capture_output=True, text=True, cwd=tmp_path
    )


def test_pth_line_installs_the_finder_and_a_broken_hook_never_stops_the_interpreter(tmp_path: Path) -> None:
    assert PTH.read_text() == "import _fairness_evals_hook\n"  # one plain import: nothing compiled at start-up
    real = (REPO / "_fairness_evals_hook.py").read_text()
    ok = _site(tmp_path, real)
    assert ok.returncode == 0 and ok.stdout.split() == ["_fairness_evals_hook", "user", "code", "ran"]
    assert ok.stderr == ""
    off = _site(tmp_path, real, FAIRNESS_EVALS_AUTOLOAD="0")
    assert off.returncode == 0 and off.stdout.split()[0] != "_fairness_evals_hook" and off.stderr == ""
    # A corrupt install: `site` reports the line and carries on; the user's program still runs.
    broken = _site(tmp_path, "raise RuntimeError('boom')\n")
    assert broken.returncode == 0 and "user code ran" in broken.stdout and "boom" in broken.stderr


def test_a_broken_autoload_module_never_breaks_a_harness_import(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(_autoload, "harness_spec", boom)
    assert hook.find_spec("lm_eval.tasks.manager") is None  # the import system carries on without us


def test_lmms_eval_indexes_its_tasks_with_the_c_yaml_loader_to_the_same_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """lmms-eval reads its ~2,000 task YAMLs with PyYAML's pure-Python loader (9 of the 10 s each start spends
    indexing); the hook has it read them with libyaml's C loader while it indexes, to the same index."""
    import yaml
    from lmms_eval import tasks, utils

    _patch.patch_task_manager(tasks, "lmms-eval")
    loads: list[object] = []
    full_load = _patch._CYaml.full_load
    monkeypatch.setattr(
        _patch._CYaml, "full_load", staticmethod(lambda stream: loads.append(stream) or full_load(stream))
    )
    fast = tasks.TaskManager()
    assert len(loads) > 1000 and utils.yaml is yaml  # the C loader read them, and lmms-eval has its module back
    monkeypatch.setattr(_patch, "_c_yaml", lambda harness: contextlib.nullcontext())
    plain = tasks.TaskManager()
    assert fast._task_index == plain._task_index
    assert any(name.startswith("fairlens") for name in fast._task_index)  # our folders, indexed the same way


def test_lm_eval_takes_its_own_unchanged_task_files_from_the_cache_to_the_same_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lm-eval 0.4.13 parses its ~14,000 task YAMLs at every start; the hook keeps what its reader returned for each
    of its own files. A first index reads them all and writes the cache; a second reads none of them (only our
    folders, which are never cached) and builds the same index; lm-eval's reader has its name back. ``lm_eval ls
    tasks`` (``list_all_tasks``) reads every task's file again for its output type: from the cache too, to the same
    listing."""
    import lm_eval
    import pytablewriter
    from lm_eval import tasks
    from lm_eval.tasks import _index, manager

    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path))
    _patch.patch_task_manager(tasks, "lm-eval")
    reads: list[str] = []
    load_yaml = _index.load_yaml

    def reader(path: object, *, resolve_func: bool = True, recursive: bool = True, _seen: object = None) -> object:
        reads.append(str(path))
        return load_yaml(path, resolve_func=resolve_func, recursive=recursive, _seen=_seen)

    monkeypatch.setattr(_index, "load_yaml", reader)
    monkeypatch.setattr(manager, "load_yaml", reader)
    own = str(Path(tasks.__file__).parent) + os.sep
    cold = tasks.TaskManager()
    assert sum(path.startswith(own) for path in reads) > 10_000 and _index.load_yaml is reader
    version = f"lm-eval-{lm_eval.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    assert [file.name for file in (tmp_path / "task-index").iterdir()] == [version]
    reads.clear()
    warm = tasks.TaskManager()
    assert reads and not any(path.startswith(own) for path in reads)  # our folders only
    assert warm._index == cold._index and len(warm._index) > 14_000
    assert any(name.startswith("fact_or_fair") for name in warm._index)

    tables: list[Table] = []

    class Table:  # lm-eval's markdown writer without its formatting (seconds for 14,000 rows)
        def __init__(self) -> None:
            self.headers: list[str] = []
            self.value_matrix: list[list[str]] = []
            tables.append(self)

        def dumps(self) -> str:
            return ""

    monkeypatch.setattr(pytablewriter, "MarkdownTableWriter", Table)
    reads.clear()
    warm.list_all_tasks()
    assert not any(path.startswith(own) for path in reads) and manager.load_yaml is reader
    (rows,) = [table.value_matrix for table in tables if table.headers == ["Task", "Config Location", "Output Type"]]
    assert len(rows) > 10_000 and ["fact_or_fair_objective", ANY, "generate_until"] in rows
    for task, _, output_type in rows[::250]:  # a cached read is lm-eval's read (the index above: all of them)
        path = warm._index[task].yaml_path
        assert output_type == (load_yaml(path, resolve_func=False).get("output_type", "") if path else ""), task


def test_the_task_file_cache_reads_again_what_changed_and_forgets_what_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry is used while every file its read opened (the task file and what it includes) has the size and
    modification time it had; a changed include is read again, a new file is read, a removed one leaves the cache,
    and lm-eval's refusals (an include cycle) are never cached."""
    from lm_eval.tasks._yaml_loader import load_yaml

    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "tasks"
    root.mkdir()
    (root / "_template_yaml").write_text("output_type: generate_until\nmetadata:\n  version: 1\n")
    for name in ("a", "b"):
        (root / f"{name}.yaml").write_text(f"task: {name}\ninclude: _template_yaml\n")
    (root / "cycle.yaml").write_text("task: cycle\ninclude: cycle.yaml\n")
    read: list[str] = []

    def reader(path: object, **kw: object) -> object:
        read.append(Path(str(path)).name)
        return load_yaml(path, **kw)

    def index() -> dict[str, object]:
        cache = _patch._ReadCache(root, type(sys)("lm_eval"))
        configs = {}
        for file in sorted(root.glob("*.yaml")):
            with contextlib.suppress(ValueError):
                configs[file.name] = cache.read(str(file), True, reader)
        cache.save()
        return configs

    first = index()
    assert first["a.yaml"] == {"output_type": "generate_until", "metadata": {"version": 1}, "task": "a"}
    assert sorted(read) == ["a.yaml", "b.yaml", "cycle.yaml"] and "cycle.yaml" not in first
    read.clear()
    assert index() == first and read == ["cycle.yaml"]  # from the cache, but the refused one
    (root / "_template_yaml").write_text("output_type: loglikelihood\nmetadata:\n  version: 2\n")
    (root / "c.yaml").write_text("task: c\n")
    (root / "b.yaml").unlink()
    read.clear()
    again = index()
    assert again["a.yaml"]["output_type"] == "loglikelihood" and set(again) == {"a.yaml", "c.yaml"}
    assert sorted(read) == ["a.yaml", "c.yaml", "cycle.yaml"]
    cache = _patch._ReadCache(root, type(sys)("lm_eval"))
    assert sorted(Path(path).name for path, _ in cache.entries) == ["a.yaml", "c.yaml"]
    # A cache file that is not ours (another shape, or not marshal at all) is read as empty: every file is read again
    for junk in (marshal.dumps(5), marshal.dumps({(str(root / "a.yaml"), True): ("x", 5)}), b"\x00junk"):
        cache.file.write_bytes(junk)
        read.clear()
        assert index() == again and sorted(read) == ["a.yaml", "c.yaml", "cycle.yaml"]


def test_an_unwritable_task_file_cache_leaves_lm_eval_to_read_as_it_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lm_eval import tasks
    from lm_eval.tasks import _index

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(blocker))
    own = next(Path(tasks.__file__).parent.glob("*/*.yaml"))
    with _patch._cached_reads("lm-eval"):
        config = _index.load_yaml(own, resolve_func=False, recursive=True)
    assert config and _index.load_yaml.__module__ == "lm_eval.tasks._yaml_loader"
