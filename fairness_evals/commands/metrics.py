"""``fairness-evals metrics [--task T] [NAME ...] [--json]``: what every metric of every task and group is.

The map a user reaches for when a results file says ``AbsSDS_age_middle_EU``: a one-line definition, the direction,
the paper and section, the interval method and the unit it resamples, the coverage rule and its threshold, the
evidence the value and its interval need to be printed (the declared minima), and
``computed_by``, the importable function whose docstring has the formula. Read from the benchmarks' statistics tables
(:mod:`fairness_evals.statistics`); names may be shell-style patterns (``'s_fair_*'``).
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import sys

from fairness_evals import benchmarks, statistics


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="metric names or patterns (default: every metric)")
    parser.add_argument(
        "--task", action="append", metavar="T", help="only the metrics of this task or group (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="a JSON list of objects, one per metric")
    parser.add_argument(
        "--markdown", metavar="BENCHMARK", choices=sorted(benchmarks.names()),
        help="the metric table of a benchmark's README (one row per statistic; families by their pattern)",
    )  # fmt: skip


def _chosen(args: argparse.Namespace) -> list[statistics.Explanation]:
    tasks = None
    if args.task:
        try:
            tasks = [statistics.task(name) for name in args.task]
        except KeyError as error:
            raise ValueError(f"--task: {error.args[0]}") from None
    entries = statistics.explain(tasks)
    if not args.names:
        return entries
    chosen: list[statistics.Explanation] = []
    for pattern in args.names:
        found = [e for e in entries if fnmatch.fnmatchcase(e.name, pattern)]
        if not found:
            near = difflib.get_close_matches(pattern, sorted({e.name for e in entries}), n=3)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise ValueError(f"no metric {pattern!r}{' of ' + ', '.join(args.task) if args.task else ''}{hint}")
        chosen.extend(e for e in found if e not in chosen)
    return chosen


_DIRECTION = {"higher": "higher is better", "lower": "lower is better", "neither": "no direction"}


def _listed(names: tuple[str, ...]) -> str:
    return ", ".join(names) if len(names) <= 4 else f"{', '.join(names[:3])} and {len(names) - 3} more"


def _describe(e: statistics.Explanation) -> str:
    others = tuple(t for t in e.tasks if t not in e.printed_by)
    where = [f"printed by the harness in {_listed(e.printed_by)}"] if e.printed_by else []
    if others:
        where.append(f"{'also ' if e.printed_by else ''}computed (fairness-evals score only) in {_listed(others)}")
    lines = [f"{e.name}  ({e.benchmark}; {'; '.join(where)})", f"  {e.definition}"]
    lines.append(f"  {_DIRECTION[e.direction]}; {e.paper}")
    if e.interval:
        lines.append(f"  interval: {e.interval}; resampling {e.resampled}")
    if e.coverage:
        rule = f"; null below {e.threshold}" if e.threshold else ""
        lines.append(f"  coverage: {e.coverage}{rule}")
    if e.nulled_below:
        lines.append(f"  null below {e.nulled_below}")
    if e.minimum:
        lines.append(f"  printed from: {e.minimum}")
    if e.interval_minimum:
        lines.append(f"  interval printed from: {e.interval_minimum}")
    lines.append(f"  computed by {e.computed_by}")
    if e.released_by:
        lines.append(f"  under released conventions computed by {e.released_by}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        sys.stdout.write(statistics.markdown(args.markdown))
        return 0
    entries = _chosen(args)
    if args.json:
        json.dump([e.as_json() for e in entries], sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.names:
        print("\n\n".join(_describe(e) for e in entries))
    else:
        # The second column says where a name is shown: "printed" in the harness's table (of the chosen tasks, with
        # --task), else "score": computed and written by `fairness-evals score` only.
        width = max((len(e.name) for e in entries), default=0)
        for e in entries:
            arrow = {"higher": "↑", "lower": "↓", "neither": " "}[e.direction]
            shown = "printed" if e.printed_by else "score"
            print(f"{e.name:<{width}}  {arrow}  {shown:<7}  {e.benchmark:<12}  {e.definition}")
    return 0
