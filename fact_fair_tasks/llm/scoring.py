"""What ``!function scoring.<name>`` in the YAMLs beside this file resolves to: :mod:`fact_fair_tasks.scoring`.

lm-eval 0.4.11 resolves ``!function module.name`` only as a file next to the YAML (0.4.12 added installed
modules), so the YAMLs name this file and it forwards every attribute to the package module.
"""

from __future__ import annotations

from typing import Any

from fact_fair_tasks import scoring as _target


def __getattr__(name: str) -> Any:
    return getattr(_target, name)
