"""Former name of :mod:`iris_tasks.answer_shares` (the answer shares and the minimum coverage), kept only for the
modules that still import it (``iris_tasks.gen_settings``, ``tests/support/coverage_iris.py``); it goes once they
import :mod:`iris_tasks.answer_shares`. (``metrics/coverage.py`` is the interval-coverage simulation.)"""

from __future__ import annotations

from iris_tasks.answer_shares import DEFAULT_MIN_COVERAGE, MIN_COVERAGE_KEY, PPM

__all__ = ["DEFAULT_MIN_COVERAGE", "MIN_COVERAGE_KEY", "PPM"]
