"""Zero-flag discovery: make ``lm_eval --tasks fact_or_fair`` and ``lmms-eval --tasks fairlens`` just work.

Neither harness version we support lets an installed package add task folders (lm-eval PR #4015 is
open; lmms-eval's ``LMMS_EVAL_PLUGINS`` is read after its task index is built). So the wheel ships a
one-line ``fairness_evals_autoload.pth`` that ``site`` runs at start-up and that calls :func:`install`.

:func:`install` only appends a meta-path finder. The finder answers for exactly two module names,
``lm_eval.tasks.manager`` and ``lmms_eval.tasks``; for every other import it returns ``None`` after one
dict lookup. When a harness imports its task manager, the finder lets the normal import happen and then
(in :mod:`fairness_evals._patch`, imported only then) wraps ``TaskManager.__init__`` so that our task
folders are indexed with lower precedence than the user's own ``--include_path``.

Guarantees: nothing is imported at start-up beyond this module (``os`` and ``sys`` are already loaded);
no exception ever leaves the hook (set ``FAIRNESS_EVALS_AUTOLOAD_DEBUG=1`` to see them on stderr);
``FAIRNESS_EVALS_AUTOLOAD=0`` switches it off, read both at start-up and each time a ``TaskManager`` is
built; and it steps aside when the harness discovers task plugins natively.
"""

from __future__ import annotations

import os
import sys

_OFF = frozenset({"0", "false", "no", "off"})
_WATCHED = {"lm_eval.tasks.manager": "lm-eval", "lmms_eval.tasks": "lmms-eval"}


def enabled() -> bool:
    """False when ``FAIRNESS_EVALS_AUTOLOAD`` is 0/false/no/off."""
    return os.environ.get("FAIRNESS_EVALS_AUTOLOAD", "1").strip().lower() not in _OFF


def debug(message: str) -> None:
    """Print ``message`` to stderr when ``FAIRNESS_EVALS_AUTOLOAD_DEBUG`` is set; never raise."""
    if os.environ.get("FAIRNESS_EVALS_AUTOLOAD_DEBUG"):
        try:  # noqa: SIM105 - contextlib is not imported at start-up; keep it that way
            print(f"fairness-evals autoload: {message}", file=sys.stderr)
        except Exception:
            pass


class _PatchingLoader:
    """Runs the real loader, then adds our task folders to the module's ``TaskManager``."""

    def __init__(self, inner: object, harness: str) -> None:
        self._inner = inner
        self._harness = harness

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module) -> None:
        self._inner.exec_module(module)
        try:
            from fairness_evals import _patch

            _patch.patch_task_manager(module, self._harness)
        except Exception as error:
            debug(f"could not register tasks with {self._harness}: {error!r}")

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


class HarnessFinder:
    """A ``sys.meta_path`` finder that only acts on the harnesses' task-manager modules."""

    def find_spec(self, fullname, path=None, target=None):
        harness = _WATCHED.get(fullname)
        if harness is None:
            return None
        try:
            for finder in sys.meta_path:
                if finder is self or isinstance(finder, HarnessFinder):
                    continue
                find = getattr(finder, "find_spec", None)
                spec = find(fullname, path, target) if find is not None else None
                if spec is not None:
                    break
            else:
                return None
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _PatchingLoader(spec.loader, harness)
            return spec
        except Exception as error:
            debug(f"finder failed for {fullname}: {error!r}")
            return None


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), unless switched off."""
    if not enabled():
        return
    if any(isinstance(finder, HarnessFinder) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, HarnessFinder())
    # A harness imported before the hook ran (unusual: another .pth) is patched directly.
    for name, harness in _WATCHED.items():
        module = sys.modules.get(name)
        if module is not None:
            try:
                from fairness_evals import _patch

                _patch.patch_task_manager(module, harness)
            except Exception as error:
                debug(f"could not register tasks with {harness}: {error!r}")
