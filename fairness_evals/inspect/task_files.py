"""The literal ``@task`` functions at the end of each Inspect task module, generated from its ``TASKS``.

Inspect finds the tasks of a file by reading it for functions decorated ``@task`` (``inspect list tasks
<folder>``, ``inspect eval <module file>@<task>``, an inspect_evals register entry naming the file); a task made at import time is invisible there. A benchmark's tasks are
declared once, in its Inspect module's ``TASKS`` (its ``inspect_tasks``) (``define``: the task's ``-T`` arguments, its description and what it builds), so
each module ends in a generated block: for every declared task, ``@task def <name>(<its -T arguments>) -> Task``
with the description as its docstring, returning ``TASKS[<name>](**locals())``. The entry point of fairness-evals registers
the same ``TASKS`` as ``fairness_evals/<name>`` (:mod:`fairness_evals.inspect._registry`).

    python -m fairness_evals.inspect.task_files          # rewrite the blocks
    python -m fairness_evals.inspect.task_files --check  # exit 1 when a block differs (tests/inspect does this)
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
from pathlib import Path

from fairness_evals import statistics


def modules() -> list[str]:
    """The modules whose tasks are generated: every benchmark's ``inspect_tasks`` module."""
    from fairness_evals import benchmarks

    return [b.inspect_tasks.partition(":")[0] for b in benchmarks.registry().values() if b.inspect_tasks]


BEGIN = "# --------------------------------------------------------------------------- generated: do not edit"
NOTE = "# `python -m fairness_evals.inspect.task_files` writes one literal @task per entry of TASKS, for Inspect's file scan."
END = "# --------------------------------------------------------------------------- end of the generated tasks"


def _literal(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _function(name: str, make: object) -> str:
    parameters = "".join(
        f"    {p.name}: {p.annotation} = {_literal(p.default)},\n" for p in inspect.signature(make).parameters.values()
    )
    doc = statistics.task(name).description  # as it is, on one line: Inspect shows it
    return f'@task\ndef {name}(\n{parameters}) -> Task:\n    """{doc}"""\n    return TASKS[{json.dumps(name)}](**locals())\n'


def block(module: str) -> str:
    """The generated block of ``module``: its markers and one function per task."""
    tasks = importlib.import_module(module).TASKS
    return (
        "\n\n".join([f"{BEGIN}\n{NOTE}\n", *(_function(name, make) for name, make in tasks.items())]) + f"\n\n{END}\n"
    )


def expected(module: str) -> tuple[Path, str]:
    """The module's file and its text with the generated block as it should be (appended when there is none)."""
    path = Path(importlib.import_module(module).__file__ or "")
    text = path.read_text()
    start = text.find(BEGIN)
    if start == -1:
        return path, text.rstrip("\n") + "\n\n\n" + block(module)
    end = text.index(END, start) + len(END) + 1
    return path, text[:start] + block(module) + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1, naming the file, when a block differs")
    args = parser.parse_args(argv)
    stale = []
    for module in modules():
        path, text = expected(module)
        if path.read_text() != text:
            stale.append(path)
            if not args.check:
                path.write_text(text)
    for path in stale:
        print(f"{path}: generated tasks {'differ' if args.check else 'rewritten'}", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
