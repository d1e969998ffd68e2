"""Our warnings in the harness's own log format.

The benchmarks log through Python's ``logging`` under ``fairness_evals.*``. Run inside a harness, those records would
reach no handler and Python would print them bare. :func:`attach` (called when a task module is loaded by a
harness) hands them to the harness's own output: lm-eval's handler on the ``lm_eval`` logger (its
``date LEVEL [module:line] message`` lines), or lmms-eval's loguru logger. Idempotent; does nothing outside a harness.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence

_LOGGER = "fairness_evals"
_MARK = "_fairness_evals_harness"


class _ToLoguru(logging.Handler):
    """Forwards a record to loguru, the logger lmms-eval prints through."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            from loguru import logger

            logger.opt(depth=6, exception=record.exc_info).log(record.levelname, record.getMessage())
        except Exception:  # never let logging break a run
            self.handleError(record)


def attach() -> None:
    """Route ``fairness_evals.*`` records to the harness that imported us (lm-eval's handlers, else lmms-eval's
    loguru); nothing when no harness is loaded or when it is done already."""
    ours = logging.getLogger(_LOGGER)
    if any(getattr(h, _MARK, False) for h in ours.handlers):
        return
    handlers: list[logging.Handler] = []
    if "lm_eval" in sys.modules:
        handlers = list(logging.getLogger("lm_eval").handlers)
    if not handlers and sys.modules.get("lmms_eval") is not None and sys.modules.get("loguru") is not None:
        handlers = [_ToLoguru()]
    for handler in handlers:
        setattr(handler, _MARK, True)
        ours.addHandler(handler)


@contextlib.contextmanager
def silenced(loggers: Sequence[str]) -> Iterator[None]:
    """Raise the named loggers to ERROR for the duration, and give them their levels back (each replicate of a
    simulation would log its warnings; a command that reads a scored run carries each null's reason already)."""
    saved = [(logging.getLogger(name), logging.getLogger(name).level) for name in loggers]
    for logger, _ in saved:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)
