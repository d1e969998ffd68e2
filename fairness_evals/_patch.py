"""What the autoload hook does once a harness's task manager is imported (see :mod:`._autoload`)."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import inspect
import logging
import marshal
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from fairness_evals._autoload_switches import debug, enabled
from fairness_evals.cache import cache_dir, store
from fairness_evals.paths import ENTRY_POINT_GROUPS, declared_task_dirs, task_paths

_PACKAGES = {"lm-eval": "lm_eval", "lmms-eval": "lmms_eval"}
_MARK = "__fairness_evals_wrapped__"


@functools.cache
def native_task_plugins(harness: str) -> bool:
    """True when ``harness`` itself indexes every one of our task folders from our installed entry points.

    Two things must hold. The harness reads a task entry-point group: lm-eval PR #4015 names ``lm_eval.tasks``
    in its task-loading code, so we look for that name, quoted, in the harness's ``tasks`` package and registry
    modules. And our entry points in that group, resolved by the PR's rule (:func:`fairness_evals.paths.
    entry_point_task_dir`: the module part's folder, scanned for ``*.yaml``), are exactly our task folders for
    that harness (:func:`fairness_evals.paths.task_paths`). Only then does the hook step aside; otherwise it keeps
    adding our folders, so a harness that reads the group but would not find our tasks still runs them.
    """
    package = _PACKAGES[harness]
    module = sys.modules.get(package)
    if module is None or not getattr(module, "__file__", None):
        return False
    root = Path(module.__file__).parent
    quoted = re.compile(r"""["']""" + re.escape(ENTRY_POINT_GROUPS[harness]) + r"""["']""")
    candidates = [*sorted((root / "tasks").glob("*.py")), root / "api" / "registry.py"]
    if not any(source_mentions(path, quoted) for path in candidates):
        return False
    declared = declared_task_dirs(harness)
    ours = {Path(p).resolve() for p in task_paths(harness)}
    return bool(ours) and None not in declared and set(declared) == ours


def source_mentions(path: Path, pattern: re.Pattern[str]) -> bool:
    try:
        return bool(pattern.search(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def _as_list(include_path: Any) -> list[Any]:
    """The user's include paths as a list. ``None``, ``""`` and an empty list mean none: the harnesses test
    ``if include_path:``, so an empty string must not become ``[""]``, which they would index as the current
    folder."""
    if not include_path:
        return []
    if isinstance(include_path, (list, tuple)):
        return list(include_path)
    return [include_path]


def _same(a: Any, b: Any) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except (OSError, TypeError, ValueError):
        return False


def merged_include_path(harness: str, user_paths: Any) -> list[Any]:
    """The user's include paths plus ours, ordered so that the user's win on a name clash.

    lm-eval indexes paths in order and a later path overrides an earlier one, so ours go first;
    lmms-eval keeps the first definition it sees, so ours go last.
    """
    user = _as_list(user_paths)
    ours = [p for p in task_paths(harness) if not any(_same(p, u) for u in user)]
    return [*ours, *user] if harness == "lm-eval" else [*user, *ours]


def patch_task_manager(module: Any, harness: str) -> None:
    """Wrap ``module.TaskManager.__init__`` to index our task folders too (idempotent)."""
    cls = getattr(module, "TaskManager", None)
    if cls is None or getattr(cls.__init__, _MARK, False):
        return
    original = cls.__init__
    signature = inspect.signature(original)

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            args, kwargs = _add_our_paths(harness, signature, self, args, kwargs)
        except Exception as error:
            debug(f"left {harness} TaskManager unchanged: {error!r}")
        with _c_yaml(harness), _cached_reads(harness):
            original(self, *args, **kwargs)

    setattr(__init__, _MARK, True)
    cls.__init__ = __init__
    listing = getattr(cls, "list_all_tasks", None)
    if harness == "lm-eval" and callable(listing):

        @functools.wraps(listing)
        def list_all_tasks(self: Any, *args: Any, **kwargs: Any) -> Any:
            with _cached_reads(harness):
                return listing(self, *args, **kwargs)

        cls.list_all_tasks = list_all_tasks
    _wrap_match_tasks(cls, harness)
    debug(f"registered with {harness} ({module.__name__}.TaskManager)")


@contextlib.contextmanager
def _c_yaml(harness: str) -> Iterator[None]:
    """While lmms-eval indexes its task folders, its YAML files are read with libyaml's C loader.

    lmms-eval 0.7 reads every task YAML with ``yaml.full_load``, PyYAML's pure-Python loader: about 9 of the
    10 seconds each ``lmms-eval`` start spends indexing its ~2,000 tasks (``bench/task_index.py``). ``yaml.CFullLoader``
    builds the same objects with the same ``FullConstructor`` (its scanner and parser are libyaml's), so the index is
    the same (``tests/foundation/test_autoload.py`` compares them). lmms-eval's module keeps its own ``yaml`` name;
    only that name is swapped, for the duration of the indexing, and only where PyYAML has libyaml and lmms-eval
    loads YAML as 0.7 does. lm-eval already uses the C loader."""
    utils = sys.modules.get("lmms_eval.utils")
    if harness != "lmms-eval" or not enabled() or utils is None or getattr(utils, "yaml", None) is not yaml:
        yield
        return
    if not hasattr(yaml, "CFullLoader") or not callable(getattr(utils, "load_yaml_config", None)):
        yield
        return
    utils.yaml = _CYaml()
    try:
        yield
    finally:
        utils.yaml = yaml


@contextlib.contextmanager
def _cached_reads(harness: str) -> Iterator[None]:
    """While lm-eval indexes its task folders, a task YAML of its own folder that is unchanged since an earlier index
    read it, with every file it includes, is taken from a cache instead of being parsed again.

    lm-eval 0.4.13 parses its ~14,000 task YAMLs at every start, and each file a YAML includes again for each
    includer: about 6 of the 7.5 seconds an ``lm_eval`` command spends before it reads a document
    (``bench/task_index.py``). The hook keeps what lm-eval's reader returned for each of them (functions unresolved,
    as the index reads them) with the size and modification time of every file that read opened, in
    ``cache_dir()/task-index/`` (one file per lm-eval version and Python version, written atomically); an entry is
    used only while all those files are as they were, the others are read by lm-eval and the cache rewritten with
    the files this index asked for. Only lm-eval's own folder (installed files: the user's and our folders are read
    as lm-eval reads them), and only where the index reads through ``lm_eval.tasks._index.load_yaml`` with 0.4.13's
    signature. The index is the same (``tests/foundation/test_autoload.py``). ``lm_eval ls tasks`` reads each task's
    file once more for its output type (``TaskManager.list_all_tasks``, through the manager module's ``load_yaml``):
    those reads are served by the same cache."""
    index = sys.modules.get("lm_eval.tasks._index")
    original = getattr(index, "load_yaml", None)
    if harness != "lm-eval" or not enabled() or original is None or getattr(original, _MARK, False):
        yield
        return
    if list(inspect.signature(original).parameters) != ["path", "resolve_func", "recursive", "_seen"]:
        yield
        return
    cache = _ReadCache(Path(index.__file__).parent, sys.modules["lm_eval"])

    def load_yaml(path: Any, *, resolve_func: bool = True, recursive: bool = True, _seen: Any = None) -> Any:
        if resolve_func or _seen is not None or not str(path).startswith(cache.prefix):
            return original(path, resolve_func=resolve_func, recursive=recursive, _seen=_seen)
        return cache.read(str(path), recursive, original)

    setattr(load_yaml, _MARK, True)
    readers = [
        m for m in (index, sys.modules.get("lm_eval.tasks.manager")) if getattr(m, "load_yaml", None) is original
    ]
    for module in readers:
        module.load_yaml = load_yaml
    try:
        yield
    finally:
        for module in readers:
            module.load_yaml = original
        try:
            cache.save()
        except OSError as error:
            debug(f"kept no lm-eval task-index cache: {error!r}")


_Stamp = tuple[int, int] | None


class _ReadCache:
    """lm-eval's reads of its own task files (see :func:`_cached_reads`): ``(path, recursive)`` to the marshalled
    configuration and the ``(file, (mtime_ns, size))`` of each file the read opened."""

    def __init__(self, root: Path, lm_eval: Any) -> None:
        self.prefix = str(root) + os.sep
        version = getattr(lm_eval, "__version__", "unknown")
        self.file = cache_dir() / "task-index" / f"lm-eval-{version}-py{sys.version_info[0]}{sys.version_info[1]}"
        self.fresh: dict = {}
        self.stamps: dict[str, _Stamp] = {}

    @functools.cached_property
    def entries(self) -> dict:
        """The cache file's entries, read at the first file of lm-eval's folder (an index without lm-eval's own
        tasks never reads it); a file of another shape reads as empty."""
        try:
            entries = marshal.loads(self.file.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def stamp(self, file: str) -> _Stamp:
        if file not in self.stamps:
            try:
                found = os.stat(file)
                self.stamps[file] = (found.st_mtime_ns, found.st_size)
            except OSError:
                self.stamps[file] = None
        return self.stamps[file]

    def read(self, path: str, recursive: bool, original: Any) -> Any:
        key = (path, recursive)
        entry = self.entries.get(key)
        with contextlib.suppress(TypeError, ValueError, EOFError, IndexError):  # an entry of another shape: read again
            if entry is not None and all(self.stamp(file) == tuple(stamp) for file, stamp in entry[1]):
                return marshal.loads(entry[0])
        seen: set[Path] = set()
        config = original(path, resolve_func=False, recursive=recursive, _seen=seen)
        with contextlib.suppress(ValueError):  # a value marshal cannot hold (a YAML date): read by lm-eval each time
            self.fresh[key] = marshal.dumps(config), tuple((str(file), self.stamp(str(file))) for file in sorted(seen))
        return config

    def save(self) -> None:
        """Rewrite the cache when a file was read again or an entry's file is gone."""
        if "entries" not in self.__dict__:  # no file of lm-eval's folder was asked for
            return
        kept = {key: entry for key, entry in self.entries.items() if self.stamp(key[0]) is not None}
        if not self.fresh and len(kept) == len(self.entries):
            return
        kept.update(self.fresh)
        store(self.file, marshal.dumps(kept))


class _CYaml:
    """The ``yaml`` module as lmms-eval's indexing sees it: ``full_load`` with the C loader, and ``add_constructor``
    (the ``!function`` tag) registered on the C loader as well as on the loaders PyYAML registers it on."""

    def __getattr__(self, name: str) -> Any:
        return getattr(yaml, name)

    @staticmethod
    def full_load(stream: Any) -> Any:
        return yaml.load(stream, Loader=yaml.CFullLoader)

    @staticmethod
    def add_constructor(tag: str, constructor: Any, Loader: Any = None) -> None:
        yaml.add_constructor(tag, constructor, Loader)
        if Loader is None:
            yaml.add_constructor(tag, constructor, yaml.CFullLoader)


def _wrap_match_tasks(cls: Any, harness: str) -> None:
    """After ``TaskManager.match_tasks`` (both harnesses' CLIs resolve ``--tasks`` through it), say in one line when
    a name it did not find is one of our tasks for the other harness."""
    original = getattr(cls, "match_tasks", None)
    if original is None or getattr(original, _MARK, False):
        return

    @functools.wraps(original)
    def match_tasks(self: Any, task_list: Any, *args: Any, **kwargs: Any) -> Any:
        matched = original(self, task_list, *args, **kwargs)
        try:
            for line in other_harness_hints(harness, task_list, matched):
                logging.getLogger(f"{_PACKAGES[harness]}.fairness_evals").warning(line)
        except Exception as error:
            debug(f"no other-harness hint: {error!r}")
        return matched

    setattr(match_tasks, _MARK, True)
    cls.match_tasks = match_tasks


def other_harness_hints(harness: str, requested: Any, matched: Any) -> list[str]:
    """One line for each requested name that ``harness`` did not find and that is our task, group or tag for the
    other harness (``fairlens`` asked of lm-eval), naming the extra to install when that harness is missing. The
    lmms-eval tasks are never indexed by lm-eval, nor the lm-eval tasks by lmms-eval."""
    names = [requested] if isinstance(requested, str) else list(requested or [])
    missing = [n for n in names if isinstance(n, str) and n not in set(matched or [])]
    if not missing:
        return []
    from fairness_evals import extras, statistics

    other = next(h for h in _PACKAGES if h != harness)
    ours = {t.name for t in statistics.all_tasks() if t.harness == other}
    lines = []
    for name in missing:
        if name not in ours:
            continue
        what = f"{name} is a fairness-evals task for {other}, not {harness}"
        try:
            installed = importlib.util.find_spec(_PACKAGES[other]) is not None
        except (ImportError, ValueError):
            installed = False
        optional = _PACKAGES[other] in extras.PROVIDERS  # lmms-eval is an extra; lm-eval always installed
        lines.append(
            extras.message(f"{what}: running it", _PACKAGES[other])
            if optional and not installed
            else f"{what}: run it with {other}"
        )
    return lines


def _add_our_paths(
    harness: str, signature: inspect.Signature, self: Any, args: tuple, kwargs: dict
) -> tuple[tuple, dict]:
    if not enabled() or native_task_plugins(harness):
        return args, kwargs
    bound = signature.bind(self, *args, **kwargs)
    bound.apply_defaults()
    if not bound.arguments.get("include_defaults", True):
        # The caller asked for their folders only; respect that.
        return args, kwargs
    bound.arguments["include_path"] = merged_include_path(harness, bound.arguments.get("include_path"))
    return bound.args[1:], bound.kwargs
