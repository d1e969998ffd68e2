"""The two environment switches of the discovery hook, shared by :mod:`._autoload` and :mod:`._patch`.

``FAIRNESS_EVALS_AUTOLOAD=0`` turns the hook off; ``FAIRNESS_EVALS_AUTOLOAD_DEBUG=1`` prints what it does (and
every error it swallows) to stderr. This module imports only ``os`` and ``sys``, which ``site`` has loaded
already, so the hook stays free at interpreter start-up. Both sides import it; neither imports the other's
names, which keeps the hook's modules free of import circles.
"""

import os
import sys


def enabled() -> bool:
    """False when ``FAIRNESS_EVALS_AUTOLOAD`` is 0/false/no/off."""
    return os.environ.get("FAIRNESS_EVALS_AUTOLOAD", "1").strip().lower() not in ("0", "false", "no", "off")


def debug(message: str) -> None:
    """Print ``message`` to stderr when ``FAIRNESS_EVALS_AUTOLOAD_DEBUG`` is set; never raise."""
    if os.environ.get("FAIRNESS_EVALS_AUTOLOAD_DEBUG"):
        try:  # noqa: SIM105 - keep this module free of imports
            print(f"fairness-evals autoload: {message}", file=sys.stderr)
        except Exception:
            pass
