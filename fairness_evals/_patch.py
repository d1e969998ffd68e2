"""What the autoload hook does once a harness's task manager is imported (see :mod:`._autoload`)."""

from __future__ import annotations

import functools
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from fairness_evals._autoload_switches import debug, enabled
from fairness_evals.paths import task_paths

_PACKAGES = {"lm-eval": "lm_eval", "lmms-eval": "lmms_eval"}
_MARK = "__fairness_evals_wrapped__"


@functools.cache
def native_task_plugins(harness: str) -> bool:
    """True when ``harness`` itself discovers task folders from installed packages.

    lm-eval PR #4015 proposes an entry-point group named ``lm_eval.tasks``; a harness that reads such
    a group names it in its task-loading code. We look for that group name, quoted, in the harness's
    ``tasks`` package and registry modules. When it is there, our declared entry points
    (pyproject ``[project.entry-points."lm_eval.tasks"]``) do the work and the hook does nothing.
    """
    package = _PACKAGES[harness]
    module = sys.modules.get(package)
    if module is None or not getattr(module, "__file__", None):
        return False
    root = Path(module.__file__).parent
    quoted = re.compile(r"""["']""" + re.escape(f"{package}.tasks") + r"""["']""")
    candidates = [*sorted((root / "tasks").glob("*.py")), root / "api" / "registry.py"]
    return any(source_mentions(path, quoted) for path in candidates)


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
        original(self, *args, **kwargs)

    setattr(__init__, _MARK, True)
    cls.__init__ = __init__
    debug(f"registered with {harness} ({module.__name__}.TaskManager)")


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
