"""Coverage of every reported interval, per benchmark, statistic and size (issue 13).

Each benchmark's seeded simulation designs live in ``tests/support/coverage_<benchmark>.py`` (the
coverage tests use the same designs; every one runs its replicates through ``coverage_simulation.simulate``)
and expose ``coverage_table(size, replicates=...) -> list[coverage_simulation.Coverage]`` with ``size``
"paper" (the paper's sizes) or "lite" (the lite / ``--limit`` sizes the READMEs suggest). A statistic
whose task reports a bootstrap standard error also has a row ``<statistic>_stderr``: the coverage of
``estimate ± 1.96 stderr``.
This script prints, for every interval-bearing statistic: the share of replicates whose interval was
printed, the empirical coverage of the truth among them, the shares missing below / above, the
mean width over the central 95% range of the estimate, and the bias of the printed estimate (mean
estimate - truth). The bar, nominal 95%: coverage >= 0.93 at the paper's sizes and >= 0.90 at lite
sizes, width ratio <= 2; an interval that is withheld (printed 0) must say why in the task's warning.

``--bias`` prints instead, for every benchmark whose design module offers ``bias_table(replicates=...)
-> list[coverage_simulation.Bias]``, the bias of each point estimate (the estimator alone, before any rule
nulls it) by the number of answers (or images) per cell, the largest over the simulated models, and at
each statistic's declared minimum (``fairness_evals.statistics.Minimum``) the measured bias against the
bias the declaration allows.

    .venv/bin/python bench/coverage.py                     # every benchmark, both sizes
    .venv/bin/python bench/coverage.py fairlens --size lite
    .venv/bin/python bench/coverage.py --markdown          # the tables in the READMEs
    .venv/bin/python bench/coverage.py --bias --markdown   # the bias tables in the READMEs
    .venv/bin/python bench/coverage.py --json out.json
    .venv/bin/python bench/coverage.py --size lite --replicates 3   # a quick pass through every simulator
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import time
from collections.abc import Mapping
from pathlib import Path

# This folder holds a metrics.py that would shadow the `metrics` package; use the repository root instead.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from coverage_simulation import Bias, Coverage  # noqa: E402

BENCHMARKS = {
    "fact_or_fair": "coverage_fact_or_fair",
    "fairlens": "coverage_fairlens",
    "iris": "coverage_iris",
    "generation": "coverage_generation",
    "compare": "coverage_compare",
    "compare_groups": "coverage_compare_groups",
}
TARGETS = {"paper": 0.93, "lite": 0.90}
MAX_WIDTH_RATIO = 2.0


def verdict(row: Coverage, size: str, conservative: str | None = None) -> str:
    """The row's verdict: "ok", "withheld" (never printed: the task says why), "conservative: <why>" (wider
    than the bar where the benchmark's README documents why no covering interval can be narrower) or what
    misses the bar."""
    if row.printed == 0:
        return "withheld"
    problems = []
    if not row.coverage >= TARGETS[size]:
        problems.append(f"coverage < {TARGETS[size]}")
    if row.width_ratio > MAX_WIDTH_RATIO:
        if conservative is None:
            problems.append(f"width > {MAX_WIDTH_RATIO}x")
        elif not problems:
            return f"conservative: {conservative}"
    return "; ".join(problems) or "ok"


def _conservative(module: object, row: Coverage) -> str | None:
    """The design module's documented reason why this row's interval is wider than the bar, if any."""
    explain = getattr(module, "conservative", None)
    return explain(row) if explain else None


def _fmt(value: float, digits: int = 2) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _table(title: str, head: list[str], body: list[list[str]], *, markdown: bool) -> str:
    if markdown:
        lines = [f"**{title}**", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
        return "\n".join(lines) + "\n"
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) for row in body]
    return "\n".join(lines) + "\n"


def render(benchmark: str, size: str, rows: list[Coverage], verdicts: list[str], *, markdown: bool) -> str:
    head = ["statistic", "printed", "coverage", "below", "above", "width/spread", "bias", "verdict"]
    body = [
        [r.name, _fmt(r.printed), _fmt(r.coverage), _fmt(r.below), _fmt(r.above), _fmt(r.width_ratio, 1),
         _signed(r.bias), v]
        for r, v in zip(rows, verdicts, strict=True)
    ]  # fmt: skip
    replicates = sorted({r.replicates for r in rows})
    title = (
        f"{benchmark}, {size} size (target coverage >= {TARGETS[size]}, replicates {'/'.join(map(str, replicates))})"
    )
    return _table(title, head, body, markdown=markdown)


def _signed(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:+.3f}"


def bias_summary(rows: list[Bias]) -> list[tuple[str, str, dict[float, Bias], list[Bias]]]:
    """Per (design, statistic): the worst row (largest |bias| over the models) at each size, and the rows measured at
    the statistic's declared minimum. The design is the part of a row's model before "/" ("subjective/uniform")."""
    out: dict[tuple[str, str], tuple[dict[float, Bias], list[Bias]]] = {}
    for row in rows:
        design = row.model.split("/", 1)[0]
        worst, at_minimum = out.setdefault((design, row.name), ({}, []))
        if row.size not in worst or abs(row.bias) > abs(worst[row.size].bias):
            worst[row.size] = row
        if row.allowed is not None:
            at_minimum.append(row)
    return [(design, name, worst, at_minimum) for (design, name), (worst, at_minimum) in out.items()]


def render_bias(benchmark: str, rows: list[Bias], unit: str | Mapping[str, str], *, markdown: bool) -> tuple[str, int]:
    """The bias tables of one benchmark (one per design) and the number of statistics whose bias at the declared
    minimum exceeds what the declaration allows. ``unit`` names the sizes; a mapping names them per design by the
    design's last word (``""``: every other design)."""
    summary = bias_summary(rows)
    failures, parts = 0, []
    for design in dict.fromkeys(d for d, *_ in summary):
        chosen = [entry for entry in summary if entry[0] == design]
        sizes = sorted({size for _, _, worst, _ in chosen for size in worst})
        head = ["statistic", *(f"{size:g}" for size in sizes), "at the minimum", "allowed", "verdict"]
        body = []
        for _, name, worst, at_minimum in chosen:
            cells = [_signed(worst[size].bias) if size in worst else "" for size in sizes]
            if at_minimum:
                top = max(at_minimum, key=lambda r: abs(r.bias))
                ok = all(r.within() for r in at_minimum)
                failures += not ok
                verdict = "ok" if ok else "above the declared bias"
                cells += [
                    f"{_signed(top.bias)} ({top.model.split('/', 1)[-1]}, {top.size:g})",
                    f"±{top.allowed:g}",
                    verdict,
                ]
            else:
                cells += ["", "", "no minimum"]
            body.append([name, *cells])
        replicates = "/".join(map(str, sorted({r.replicates for r in rows if r.model.startswith(design + "/")})))
        title = (
            f"{benchmark}, {design}: bias of the point estimate (mean - truth; the largest over the models) by "
            f"{_unit(unit, design)} (replicates {replicates})"
        )
        parts.append(_table(title, head, body, markdown=markdown))
    return "\n".join(parts), failures


def _unit(unit: str | Mapping[str, str], design: str) -> str:
    """What the sizes of ``design``'s table count."""
    if isinstance(unit, str):
        return unit
    return unit.get(design.split()[-1], unit.get("", "size"))


def _write_json(path: str | None, rows: list[dict]) -> None:
    if path:
        clean = [{k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in r.items()} for r in rows]
        Path(path).write_text(json.dumps(clean, indent=1, allow_nan=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="*", help=f"any of {sorted(BENCHMARKS)} (default: all)")
    parser.add_argument("--size", choices=[*TARGETS, "both"], default="both")
    parser.add_argument("--markdown", action="store_true", help="Markdown tables (as in the READMEs)")
    parser.add_argument("--json", help="also write every row as strict JSON to this file")
    parser.add_argument(
        "--replicates", type=int, help="replicates per design (default: each simulator's own, as in the READMEs)"
    )
    parser.add_argument("--bias", action="store_true", help="the bias of the point estimates by size, instead")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.benchmarks) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {sorted(BENCHMARKS)}")
    if args.replicates is not None and args.replicates < 1:
        parser.error(f"--replicates must be at least 1, got {args.replicates}")
    options = {} if args.replicates is None else {"replicates": args.replicates}
    sizes = list(TARGETS) if args.size == "both" else [args.size]
    failures, out = 0, []
    if args.bias:
        for benchmark in args.benchmarks or list(BENCHMARKS):
            module = importlib.import_module(BENCHMARKS[benchmark])
            if not hasattr(module, "bias_table"):
                continue
            start = time.perf_counter()
            rows = module.bias_table(**options)
            text, failed = render_bias(
                benchmark, rows, getattr(module, "BIAS_UNIT", "answers per cell"), markdown=args.markdown
            )
            print(text)
            print(f"({time.perf_counter() - start:.1f} s)\n")
            failures += failed
            out += [{"benchmark": benchmark, **row.row()} for row in rows]
        _write_json(args.json, out)
        print(f"{failures} statistic(s) above their declared bias")
        return 1 if failures else 0
    for benchmark in args.benchmarks or list(BENCHMARKS):
        module = importlib.import_module(BENCHMARKS[benchmark])
        for size in sizes:
            start = time.perf_counter()
            rows = module.coverage_table(size, **options)
            elapsed = time.perf_counter() - start
            verdicts = [verdict(row, size, _conservative(module, row)) for row in rows]
            print(render(benchmark, size, rows, verdicts, markdown=args.markdown))
            print(f"({elapsed:.1f} s)\n")
            for row, v in zip(rows, verdicts, strict=True):
                failures += not (v in ("ok", "withheld") or v.startswith("conservative"))
                out.append({"benchmark": benchmark, "size": size, **row.row(), "verdict": v})
    _write_json(args.json, out)
    print(f"{failures} statistic(s) below the bar")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
