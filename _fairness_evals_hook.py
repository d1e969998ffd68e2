# The start-up half of fairness-evals' zero-flag task discovery (the rest: fairness_evals/_autoload.py).
#
# fairness_evals_autoload.pth imports this module when Python starts (one plain `import` line: a line that
# `site` has to compile, such as a try/except, costs more than the import itself). It must cost next to
# nothing, so it imports nothing new (os and sys are loaded by `site` already), defines no class, and is
# itself the meta-path finder: `find_spec` below returns None after one set lookup for every module except
# the two harness task managers. For those it hands over to fairness_evals._autoload, imported only then.
# FAIRNESS_EVALS_AUTOLOAD=0 (or false/no/off) keeps it off sys.meta_path. Nothing here raises; should the
# file itself be broken (a corrupt install), `site` prints the error and the interpreter carries on.
import os
import sys

WATCHED = frozenset(("lm_eval.tasks.manager", "lm_eval.tasks", "lmms_eval.tasks"))


def find_spec(name, path=None, target=None):
    if name not in WATCHED:
        return None
    try:
        from fairness_evals._autoload import harness_spec

        return harness_spec(name, path, target)
    except Exception:
        return None


def enabled():
    return os.environ.get("FAIRNESS_EVALS_AUTOLOAD", "1").strip().lower() not in ("0", "false", "no", "off")


if enabled() and sys.modules[__name__] not in sys.meta_path:
    sys.meta_path.insert(0, sys.modules[__name__])
    if not WATCHED.isdisjoint(sys.modules):  # a harness imported before us (unusual): patch it now
        try:
            from fairness_evals._autoload import patch_loaded_harnesses

            patch_loaded_harnesses()
        except Exception:
            pass
