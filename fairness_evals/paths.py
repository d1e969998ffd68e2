"""Where our task folders are, for each harness.

lm-eval's and lmms-eval's ``TaskManager`` both accept a list of folders, and the autoload hook passes
:func:`task_paths`. Their command lines take a single ``--include_path``; :func:`tasks_dir` returns one
folder: the only folder where there is one, else a copy of the task files (YAML and data, no code but the
modules a YAML's ``!function`` names beside it) under the cache, named by a hash of their content, rebuilt whenever
their content changes, and checked file by file on every use (a copy with a file edited, deleted or added is
rebuilt). The folders are every registered benchmark's ``task_folders`` (:mod:`fairness_evals.benchmarks`). A YAML
may name a function as an installed module (``package.module.function``) or as a file beside it
(``module.function``: ``module.py`` next to the YAML, the only form lm-eval 0.4.11 resolves); the copy holds those
files (:func:`_task_files`), so it works whichever form a benchmark uses.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from fairness_evals import __version__
from fairness_evals.cache import cache_dir, file_lock

HARNESSES = ("lm-eval", "lmms-eval")


_SKIP_SUFFIXES = (".py", ".pyc", ".pyo")


class UnknownHarnessError(ValueError):
    """Raised for a harness name other than "lm-eval" or "lmms-eval"."""


def _check(harness: str) -> str:
    normalised = harness.strip().lower().replace("_", "-")
    if normalised not in HARNESSES:
        raise UnknownHarnessError(f"unknown harness {harness!r}; expected one of {', '.join(HARNESSES)}")
    return normalised


def task_modules(harness: str) -> list[str]:
    """The modules whose folders hold the task YAMLs of ``harness``: every registered benchmark's ``task_folders``, in
    registry order."""
    from fairness_evals import benchmarks

    harness = _check(harness)
    return [module for b in benchmarks.registry().values() for module in b.task_folders.get(harness, ())]


def _labelled_folders(harness: str) -> list[tuple[str, Path]]:
    """``(label, folder)`` of every task module of ``harness`` whose folder exists; the label (the module's name,
    dots as underscores) names the folder in a copy."""
    found: list[tuple[str, Path]] = []
    for module in task_modules(harness):
        folder = entry_point_task_dir(module)
        if folder is not None and folder.is_dir() and all(folder != f for _, f in found):
            found.append((module.replace(".", "_"), folder))
    return found


def task_paths(harness: str) -> list[str]:
    """Absolute paths of the folders holding the task YAMLs of ``harness`` (:func:`task_modules`, each located by
    :func:`entry_point_task_dir`), in index order. Folders that do not exist are left out."""
    return [str(folder) for _, folder in _labelled_folders(harness)]


#: The entry-point group in which each harness would read task folders from installed packages: lm-eval PR #4015
#: ("plugin task registration") proposes ``lm_eval.tasks``; lmms-eval has no such group yet, and ``lmms_eval.tasks``
#: is the name the same design would take there. pyproject.toml declares one entry point per task folder.
ENTRY_POINT_GROUPS = {"lm-eval": "lm_eval.tasks", "lmms-eval": "lmms_eval.tasks"}
DISTRIBUTION = "fairness-evals"


def entry_point_task_dir(value: str) -> Path | None:
    """The folder a harness indexes for a task entry point, by the rule of lm-eval PR #4015: the module part of
    ``value`` (``package.module`` or ``package.module:attribute``) is located, never called; a package gives its
    folder, a plain module the folder that holds its file. Every ``*.yaml`` below that folder is then a task
    config. None when the module cannot be located."""
    import importlib.util

    module = value.split(":", 1)[0].strip()
    if not module:
        return None
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return Path(locations[0]).resolve()
    if spec.origin and spec.origin not in ("built-in", "frozen"):
        return Path(spec.origin).resolve().parent
    return None


def declared_task_dirs(harness: str) -> list[Path | None]:
    """The folders our installed entry points of ``harness``'s group resolve to (:func:`entry_point_task_dir`), in
    declaration order; None for an entry point that resolves to nothing."""
    import importlib.metadata

    group = ENTRY_POINT_GROUPS[_check(harness)]
    found = []
    for entry in importlib.metadata.entry_points(group=group):
        dist = getattr(entry, "dist", None)
        if dist is not None and dist.metadata["Name"].lower().replace("_", "-") != DISTRIBUTION:
            continue
        found.append(entry_point_task_dir(entry.value))
    return found


#: A task file's ``!function <module>.<name>``: the harnesses load ``<module>.py`` beside that file.
_FUNCTION = re.compile(r"!function\s+([\w.]+)\.\w+")


def _task_files(folder: Path) -> list[Path]:
    """The files of a copy of ``folder``: every file but code, and the modules its YAMLs (``*.yaml`` and included
    templates such as ``_default_template_yaml``) name beside them with ``!function``."""
    files = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix in _SKIP_SUFFIXES:
            continue
        files.append(path)
    named = {
        path.parent / f"{module}.py"
        for path in files
        if path.name.endswith("yaml")
        for module in _FUNCTION.findall(path.read_text(encoding="utf-8", errors="replace"))
    }
    return sorted([*files, *(path for path in named if path.is_file())])


def tasks_dir(harness: str) -> str:
    """One folder with every task of ours for ``harness``: for ``--include_path`` and ``TaskManager``."""
    folders = _labelled_folders(_check(harness))
    if len(folders) == 1:
        return str(folders[0][1])
    return str(_materialise(_check(harness), folders))


#: A cached copy unused for this long (its folder's mtime, refreshed on every use) is removed when a new one is built.
STALE_AFTER_S = 7 * 24 * 3600


def _touch(folder: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(folder)


def _prune(root: Path, harness: str) -> None:
    """Remove copies for ``harness`` unused for :data:`STALE_AFTER_S` (older package versions or task files);
    recent ones stay, as a run that started from one may still read its data files."""
    cutoff = time.time() - STALE_AFTER_S
    for old in root.glob(f"{harness}-*"):
        try:
            if old.is_dir() and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass


def remove_abandoned_staging(folder: Path, prefix: str) -> list[Path]:
    """Remove the staging folders ``<prefix><8 characters>`` that killed runs left in ``folder``; return them.

    Call it only while holding the lock under which those staging folders are made (the task-roots lock, the
    model's conversion lock): a run creates its staging folder, fills it and renames or removes it, all under
    that lock, so while we hold it no live run owns one. Whatever is there was left by a run that died
    (SIGKILL, SIGTERM, power loss) before its cleanup could run. Other names, files, and staging folders of other
    prefixes (another harness, another model version, under their own locks) are left alone.
    """
    pattern = re.compile(re.escape(prefix) + r"[A-Za-z0-9_]{8}")
    removed = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for entry in entries:
        if pattern.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _differs(target: Path, plan: list[tuple[bytes, Path]]) -> str | None:
    """How the copy ``target`` differs from ``plan`` ((content, relative path) of every task file): the first file
    missing, changed or extra, or None when it holds exactly those files with exactly those bytes."""
    wanted = {relative.as_posix(): data for data, relative in plan}
    try:
        present = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file() or p.is_symlink()}
        for name, data in wanted.items():
            if name not in present:
                return f"{name} is missing"
            path = target / name
            if path.is_symlink() or path.read_bytes() != data:
                return f"{name} was changed"
    except OSError as error:
        return f"it cannot be read ({error.strerror or error})"
    extra = sorted(present - set(wanted))
    return f"{extra[0]} was added" if extra else None


def _materialise(harness: str, folders: list[tuple[str, Path]]) -> Path:
    """Copy the task files of ``folders`` into one cache folder named by their content hash.

    A copy is reused only while it holds exactly those files with exactly those bytes (checked on every use);
    one that was edited, lost a file or gained one is rebuilt in place, with a warning naming the difference.
    """
    digest = hashlib.sha256(__version__.encode())
    plan: list[tuple[bytes, Path]] = []
    for label, folder in folders:
        for source in _task_files(folder):
            relative = Path(label) / source.relative_to(folder)
            data = source.read_bytes()
            digest.update(str(relative).encode())
            digest.update(data)
            plan.append((data, relative))
    root = cache_dir() / "task-roots"
    target = root / f"{harness}-{digest.hexdigest()[:16]}"
    if target.is_dir() and _differs(target, plan) is None:
        _touch(target)
        return target
    with file_lock(root / f".{harness}.lock"):
        difference = _differs(target, plan) if target.is_dir() else None
        if target.is_dir() and difference is None:
            _touch(target)
            return target
        _prune(root, harness)
        remove_abandoned_staging(root, f".{harness}-")
        staging = Path(tempfile.mkdtemp(prefix=f".{harness}-", dir=root))
        staging.chmod(0o755)
        try:
            for data, relative in plan:
                (staging / relative).parent.mkdir(parents=True, exist_ok=True)
                (staging / relative).write_bytes(data)
            if difference is not None:  # an edited copy: set it aside (removed below) and put the new one in place
                warning = f"fairness-evals: the task folder copy {target} differs from our task files ({difference})"
                print(f"{warning}; rebuilt it", file=sys.stderr)
                stale = Path(tempfile.mkdtemp(prefix=f".{harness}-", dir=root))
                os.replace(target, stale / "old")
                shutil.rmtree(stale, ignore_errors=True)
            os.replace(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target
