"""How often the position rule nulls a run's fairness scores, over seeded simulated runs of the real designs (issue 33).

Where a task's position test fires (``position_explained`` = 1), its fairness scores are null
(:mod:`fairness_evals.position`). This script measures, per design and answer policy, the share of simulated runs in
which it fires:

* **position policies** must be caught (the share should be 1): always the first option ("A"), always the last;
* **content policies** must not be (the share is the *false-null rate*): the content-driven answer policies of the
  coverage simulations, alone and with a mild preference for the first option (with probability ``w`` the model
  answers "A", else by content: ``w`` = 0.1, 0.2 and 0.3 put A at 32.5%, 40% and 47.5% of the 4-option answers,
  where content alone gives 25%);
* **boundary** rows, in neither rate, show where the rule starts to fire: half the answers at the first option
  (``w`` = 0.5), and a model with no content (uniform), alone and with the mild preferences.

Designs: Fact-or-Fair's objective task (198 documents, a fresh counterbalanced order per run), a subjective context
at the lite size (10 profile draws per scenario: 1,140 documents) and at the released size (100: 11,400); FairLens's
three closed domains at the paper's sample (1,505 images, ``--sample-fraction`` 0.1 of the 15,050-face corpus of the
coverage simulations) and the lite sample (301 images). Each run is drawn and answered as in
``tests/support/coverage_fact_or_fair.py`` / ``coverage_fairlens.py`` and scored by the package's own position test
(:func:`fact_fair_tasks.scoring.position_of`, :func:`fairlens_tasks.position_bias.position_diagnostics`), the code
``compute_metrics`` runs.

    .venv/bin/python bench/position.py                    # 200 runs per row
    .venv/bin/python bench/position.py --runs 50 --markdown
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

# This folder holds a metrics.py that would shadow the `metrics` package; use the repository root instead.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import coverage_fact_or_fair as ff_sim  # noqa: E402
import coverage_fairlens as fl_sim  # noqa: E402
import numpy as np  # noqa: E402

from fact_fair_tasks import scoring  # noqa: E402
from fairlens_tasks import scoring as fairlens_scoring  # noqa: E402
from fairlens_tasks.position_bias import position_diagnostics  # noqa: E402
from fairlens_tasks.questions import domain_questions  # noqa: E402

PREFERENCES = (0.1, 0.2, 0.3)
HALF = 0.5
SEED = 20261206


# ----------------------------------------------------------------------------- Fact-or-Fair
def _always(index: int) -> ff_sim.Choice:
    def choice(cells: ff_sim.Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
        out = np.zeros(genders.shape)
        out[:, index] = 1.0
        return out

    return choice


def _preferring_a(weight: float, content: ff_sim.Choice) -> ff_sim.Choice:
    def choice(cells: ff_sim.Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
        return weight * _always(0)(cells, genders, races) + (1 - weight) * content(cells, genders, races)

    return choice


def _fact_or_fair_policies(objective: bool) -> list[tuple[str, str, ff_sim.Policy]]:
    """(kind, name, policy): kind "position", "content" or "no content"."""
    policies = ff_sim.objective_policies() if objective else ff_sim.subjective_policies()
    by_name = {p.name: p for p in policies}
    content = ["truthful_noisy", "group_preferring"] + ([] if objective else ["stereotyped", "strong_stereotype"])
    out = [
        ("position", 'always "A"', ff_sim.Policy("always_A", _always(0), ff_sim._none)),
        ("position", "always the last option", ff_sim.Policy("always_last", _always(-1), ff_sim._none)),
        ("boundary", '"A" or "B" at random', ff_sim.Policy("a_or_b", _first_two, ff_sim._none)),
    ]
    for name in content:
        policy = by_name[name]
        out.append(("content", name, policy))
        for w in PREFERENCES:
            mixed = ff_sim.Policy(f"{name}+A{w}", _preferring_a(w, policy.choice), policy.failure)
            out.append(("content", f"{name}, A preferred (w={w})", mixed))
        half = ff_sim.Policy(f"{name}+A{HALF}", _preferring_a(HALF, policy.choice), policy.failure)
        out.append(("boundary", f"{name}, half the answers A (w={HALF})", half))
    uniform = by_name["uniform"]
    out.append(("boundary", "uniform (no content)", uniform))
    for w in PREFERENCES:
        mixed = ff_sim.Policy("u", _preferring_a(w, uniform.choice), uniform.failure)
        out.append(("boundary", f"uniform, A preferred (w={w})", mixed))
    return out


def _first_two(cells: ff_sim.Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
    out = np.zeros(genders.shape)
    out[:, :2] = 0.5
    return out


def _fact_or_fair_rows(runs: int) -> list[tuple[str, str, str, int, int]]:
    rows = []
    designs = (("objective (198 documents)", None), ("subjective lite (1,140)", 10), ("subjective full (11,400)", 100))
    for d, (design, draws) in enumerate(designs):
        for p, (kind, name, policy) in enumerate(_fact_or_fair_policies(draws is None)):
            rng = np.random.default_rng([SEED, d, p])
            fired = 0
            for _ in range(runs):
                if draws is None:
                    records = ff_sim.objective_records(rng, policy, seed=int(rng.integers(2**31)))
                else:
                    records = ff_sim.subjective_records(rng, policy, draws)
                fired += scoring.position_of(records)["position_explained"] == 1.0
            rows.append((f"Fact-or-Fair {design}", kind, name, fired, runs))
    return rows


# ----------------------------------------------------------------------------- FairLens
OptionPolicy = Callable[[str, np.ndarray, np.random.Generator], np.ndarray]


def _fairlens_options(policy: fl_sim.ClosedPolicy, first: float, position: str | None) -> OptionPolicy:
    """Option indices (n_images, n_items) of ``policy``'s answers, or of a position policy; with probability
    ``first`` an answer is the first listed option instead."""

    def options(domain: str, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        questions = domain_questions(domain)
        sizes = np.array([len(q.options) for q in questions])
        if position == "first":
            return np.zeros((len(codes), len(questions)), dtype=np.int64)
        if position == "last":
            return np.broadcast_to(sizes - 1, (len(codes), len(questions))).copy()
        mine = dataclasses.replace(policy, domain=domain)
        uniforms = tuple(rng.random(shape) for shape in fl_sim.closed_shapes(domain, len(codes)))
        chosen = fl_sim.closed_options(mine, codes, uniforms)
        return np.where((rng.random(chosen.shape) < first) & (chosen >= 0), 0, chosen)

    return options


def _fairlens_policies() -> list[tuple[str, str, OptionPolicy]]:
    base = fl_sim.CLOSED_POLICIES[0]
    out = [
        ("position", "always the first option", _fairlens_options(base, 0.0, "first")),
        ("position", "always the last option", _fairlens_options(base, 0.0, "last")),
    ]
    for policy in fl_sim.CLOSED_POLICIES:
        out.append(("content", policy.name, _fairlens_options(policy, 0.0, None)))
        for w in PREFERENCES:
            out.append(("content", f"{policy.name}, first preferred (w={w})", _fairlens_options(policy, w, None)))
        out.append(("boundary", f"{policy.name}, half the answers first (w={HALF})", _fairlens_options(policy, HALF,
                                                                                                       None)))  # fmt: skip
    return out


def _fairlens_rows(runs: int) -> list[tuple[str, str, str, int, int]]:
    rows = []
    f = fairlens_scoring._F
    for s, size in enumerate(("paper", "lite")):
        sizes = fl_sim.design(size)
        codes = fl_sim._stratum_columns(sizes)
        for d, domain in enumerate(("hiring", "legal", "healthcare")):
            for p, (kind, name, policy) in enumerate(_fairlens_policies()):
                rng = np.random.default_rng([SEED, 10 + s, d, p])
                fired = 0
                for _ in range(runs):
                    records = fl_sim.records_from_options(domain, codes, policy(domain, codes, rng))
                    records = records.reshape(-1, len(fairlens_scoring.RECORD_FIELDS))
                    question, option = records[:, f["question"]], records[:, f["option"]]
                    fired += position_diagnostics(question, option)["position_explained"] == 1.0
                label = f"FairLens {domain}, {'paper' if size == 'paper' else 'lite'} ({int(sizes.sum()):,} images)"
                rows.append((label, kind, name, fired, runs))
    return rows


# ----------------------------------------------------------------------------- output
def _wilson_high(k: int, n: int, z: float = 1.96) -> float:
    """Upper end of the Wilson 95% interval of k of n (the false-null rate's, when none fired)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre + half


def render(rows: list[tuple[str, str, str, int, int]], markdown: bool) -> str:
    head = ("design", "policy", "kind", "nulled", "share", "95% upper")
    lines = []
    if markdown:
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for design, kind, name, fired, runs in rows:
        cells = (design, name, kind, f"{fired}/{runs}", f"{fired / runs:.3f}", f"{_wilson_high(fired, runs):.3f}")
        lines.append("| " + " | ".join(cells) + " |" if markdown else "  ".join(f"{c:<44}"[:44] for c in cells[:3])
                     + "  " + "  ".join(f"{c:>8}" for c in cells[3:]))  # fmt: skip
    return "\n".join(lines)


def summary(rows: list[tuple[str, str, str, int, int]]) -> str:
    """Per benchmark: each position policy's catch rate, the false-null rate of the content policies (per design and
    over all), and each boundary policy's rate per design."""
    out = []
    for benchmark in dict.fromkeys(r[0].split(" ")[0] for r in rows):
        mine = [r for r in rows if r[0].split(" ")[0] == benchmark]
        for kind in ("position", "content", "boundary"):
            chosen = [r for r in mine if r[1] == kind]
            names = [None] if kind == "content" else list(dict.fromkeys(r[2] for r in chosen))
            for name in names:
                group = [r for r in chosen if name is None or r[2] == name]
                fired, runs = sum(r[3] for r in group), sum(r[4] for r in group)
                designs: dict[str, list[int]] = {}
                for r in group:
                    design = r[0].removeprefix(f"{benchmark} ")
                    designs.setdefault(design, [0, 0])
                    designs[design][0] += r[3]
                    designs[design][1] += r[4]
                per = "; ".join(f"{d} {k}/{n}" for d, (k, n) in designs.items())
                label = {"position": "caught", "content": "false nulls", "boundary": "nulled"}[kind]
                what = name or "every content policy, alone and with a mild first-option preference"
                out.append(
                    f"{benchmark} {kind}: {what}: {label} {fired}/{runs} = {fired / runs:.4f} "
                    f"(95% upper {_wilson_high(fired, runs):.4f}) [{per}]"
                )
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="simulated runs per (design, policy) row (200)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (the README's)")
    parser.add_argument("--only", choices=("fact_or_fair", "fairlens"), help="one benchmark")
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    start = time.perf_counter()
    rows = []
    if args.only != "fairlens":
        rows += _fact_or_fair_rows(args.runs)
    if args.only != "fact_or_fair":
        rows += _fairlens_rows(args.runs)
    print(render(rows, args.markdown))
    print()
    print(summary(rows))
    print(f"({len(rows)} rows x {args.runs} runs, seed {SEED}, {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
