"""Zero-flag discovery: make ``lm_eval --tasks fact_or_fair`` and ``lmms-eval --tasks fairlens`` just work.

Neither harness version we support lets an installed package add task folders (lm-eval PR #4015 is
open; lmms-eval's ``LMMS_EVAL_PLUGINS`` is read after its task index is built). So the wheel ships two
files at the top of site-packages: ``fairness_evals_autoload.pth``, one line that ``site`` runs at start-up,
and the module it imports, ``_fairness_evals_hook``, which puts itself on ``sys.meta_path``. That finder
returns ``None`` after one set lookup for every import except ``lm_eval.tasks.manager`` (lm-eval >= 0.4.12),
``lm_eval.tasks`` (where lm-eval 0.4.11 defines ``TaskManager``; later versions re-export it, and patching is
idempotent) and ``lmms_eval.tasks``; for those it calls :func:`harness_spec` here (this module is imported only then).

:func:`harness_spec` lets the normal finders locate the module and wraps its loader so that, right after
the harness module has executed, :func:`fairness_evals._patch.patch_task_manager` wraps
``TaskManager.__init__`` to index our task folders with lower precedence than the user's ``--include_path``.

Guarantees: nothing new is imported at start-up; no exception leaves the hook (``FAIRNESS_EVALS_AUTOLOAD_DEBUG=1``
prints them to stderr); ``FAIRNESS_EVALS_AUTOLOAD=0`` switches it off, read at start-up and again each time a
``TaskManager`` is built; and it steps aside when the harness discovers task plugins natively.
"""

import sys

from fairness_evals._autoload_switches import debug, enabled

__all__ = ["debug", "enabled", "harness_spec", "patch_loaded_harnesses"]

_HARNESSES = {"lm_eval.tasks.manager": "lm-eval", "lm_eval.tasks": "lm-eval", "lmms_eval.tasks": "lmms-eval"}


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


def _is_our_finder(finder: object) -> bool:
    return getattr(finder, "__name__", None) == "_fairness_evals_hook" or getattr(finder, "_fairness_evals", False)


def harness_spec(name: str, path=None, target=None):
    """The spec the other finders give for a harness task-manager module, with a patching loader.

    ``None`` (let the import system continue) for modules we do not watch or that nobody can find.
    """
    harness = _HARNESSES.get(name)
    if harness is None:
        return None
    try:
        for finder in sys.meta_path:
            if _is_our_finder(finder):
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader, harness)
        return spec
    except Exception as error:
        debug(f"finder failed for {name}: {error!r}")
        return None


def patch_loaded_harnesses() -> None:
    """Patch harness task managers imported before the hook was installed (e.g. from an interactive session)."""
    for name, harness in _HARNESSES.items():
        module = sys.modules.get(name)
        if module is not None:
            try:
                from fairness_evals import _patch

                _patch.patch_task_manager(module, harness)
            except Exception as error:
                debug(f"could not register tasks with {harness}: {error!r}")
