"""Checks of what a person reads after a harness run (issue "Results a person can read"): the printed table, the
values in the results file, and the bytes our fields add to each ``--log_samples`` line."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The keys of a results entry that are not metrics (the harnesses' own bookkeeping).
NOT_METRICS = {"alias", "name", "sample_len", "sample_count", " "}


def _table_rows(stdout: str) -> Iterator[tuple[str, str, list[str], list[str]]]:
    """Each data row of the harness's printed Markdown tables: ``(table, task or group, header, cells)``, with table
    ``"Tasks"`` or ``"Groups"``; a continued row (empty name) keeps the name above it, a subtask's ``- `` is cut."""
    table = current = ""
    header: list[str] = []
    for line in stdout.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("Tasks", "Groups"):
            table, header = cells[0], cells
            continue
        current = cells[0].removeprefix("- ").strip() or current
        yield table, current, header, cells


def printed_rows(stdout: str) -> dict[tuple[str, str], list[tuple[str, str, str]]]:
    """The rows of the harness's printed Markdown tables, ``{(table, task or group): [(metric, value, stderr), ...]}``
    with table ``"Tasks"`` or ``"Groups"`` (lm-eval prints a group in both: its rows in the hierarchical Tasks table
    and again in the Groups table).

    Both harnesses print ``|name|...|Metric|arrow|Value|±|Stderr|...``; a continued row leaves the name empty, a
    subtask is indented with ``- ``."""
    rows: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for table, current, header, cells in _table_rows(stdout):
        stderr = cells[header.index("Stderr")] if "Stderr" in header else ""
        rows.setdefault((table, current), []).append(
            (cells[header.index("Metric")], cells[header.index("Value")], stderr)
        )
    return rows


def printed_arrows(stdout: str) -> dict[tuple[str, str], dict[str, str]]:
    """The direction column of the harness's printed tables, ``{(table, task or group): {metric: arrow}}`` (``"↑"``,
    ``"↓"`` or ``""``): the unnamed column after ``Metric``, which lm-eval fills from ``higher_is_better``."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for table, current, header, cells in _table_rows(stdout):
        metric = header.index("Metric")
        out.setdefault((table, current), {})[cells[metric]] = cells[metric + 1]
    return out


def metric_values(entry: dict[str, Any]) -> dict[str, Any]:
    """``{metric: value}`` of one results entry, without the harness's bookkeeping and without ``*_stderr*`` (the
    harnesses write ``"N/A"`` there for every metric they cannot bootstrap themselves)."""
    out = {}
    for key, value in entry.items():
        if key in NOT_METRICS:
            continue
        metric = key.split(",")[0]
        if re.search(r"_stderr(_clt|_clustered)?$", metric):
            continue
        out[metric] = value
    return out


def string_values(results: dict[str, Any]) -> list[str]:
    """``task:metric`` for every metric value in ``results`` (tasks and groups) that is not a number."""
    bad = []
    for section in ("results", "groups"):
        for task, entry in results.get(section, {}).items():
            for metric, value in metric_values(entry).items():
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    bad.append(f"{task}:{metric}={value!r}")
    return bad


def sample_bytes(path: Path) -> tuple[int, int, int]:
    """``(lines, our bytes, the harness's bytes)`` of a ``--log_samples`` file: ours are the ``doc`` and our metric
    values (the keys the line's ``metrics`` names), the harness's everything else on the line."""
    ours = theirs = lines = 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        mine = {"doc": row.get("doc"), **{m: row[m] for m in row.get("metrics", []) if m in row}}
        size = len(json.dumps(mine, ensure_ascii=False).encode())
        ours += size
        theirs += len(line.encode()) - size
        lines += 1
    return lines, ours, theirs


def finite(value: str) -> bool:
    """Whether a printed table value is a finite number."""
    try:
        return math.isfinite(float(value))
    except ValueError:
        return False
