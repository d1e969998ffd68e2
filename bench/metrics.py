"""Aggregation + 1,000-resample bootstrap intervals: vectorised metrics/ vs a plain-Python loop (issue 3).

* Fact-or-Fair: a full subjective run, 4 contexts x 11,400 documents = 45,600 random answers, scored by
  ``fact_fair_tasks.scoring.compute_metrics`` (S_fact, S_E, S_KLD, S_fair, distance on two axes, each with a
  1,000-resample interval, plus the Table 3 rates).
* FairLens: 1,505 images x 38 answers = 57,190, adverse rates per group, parity gap and rate ratio for three
  attributes with 1,000 resamples of images (metrics.fairlens + metrics.bootstrap).

The plain-Python versions compute the same statistics with dicts and loops (and random.choices resampling);
they run fewer resamples and are scaled to 1,000 (stated in the output). Prints time per 1,000 items and
the ratio.

    .venv/bin/python bench/metrics.py
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import time
from pathlib import Path

# This file is named like the `metrics` package it measures; keep its own folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402

from fact_fair_tasks import scoring  # noqa: E402
from fact_fair_tasks.documents import subjective_documents  # noqa: E402
from fact_fair_tasks.parsing import PARSED, Parse  # noqa: E402
from metrics import bootstrap  # noqa: E402
from metrics import fact_fair as ff  # noqa: E402
from metrics import fairlens as fl  # noqa: E402

RESAMPLES = 1000
PLAIN_RESAMPLES = 20


def timed(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# ----------------------------------------------------------------------------- Fact-or-Fair
def fact_or_fair_records() -> list[list[list[int]]]:
    rng = random.Random(0)
    runs = []
    for context in ("base", "representativeness", "attribution", "ingroup"):
        docs = subjective_documents(context)
        runs.append([scoring.record_for(d, Parse(PARSED, rng.randrange(4), "bench")) for d in docs])
    return runs


def plain_fact_or_fair(records: list[list[int]], resamples: int) -> None:
    """S_fact, S_E, S_KLD, S_fair and the distance to the bound on both axes, each with a loop bootstrap: the
    statistics the vectorised path reports (less the Table 3 rates), one resample at a time in plain Python."""

    def stats(rows: list[list[int]], axis: int) -> tuple[float, ...]:
        k = (2, 4)[axis]
        f = scoring._F
        choice_at, truth_at = f["choice_gender"] + axis, f["truth_gender"] + axis
        status_at, statistic_at, target_at = f["status"], f["statistic"], f["target"]
        cells: dict[tuple[int, int], list[int]] = {}
        correct = total = 0
        for r in rows:
            choice, truth = r[choice_at], r[truth_at]
            if r[status_at] != 0 or choice < 0:
                continue
            cells.setdefault((r[statistic_at], r[target_at]), [0] * k)[choice] += 1
            if truth >= 0:
                total += 1
                correct += choice == truth
        entropies = []
        for c in cells.values():
            n = sum(c)
            entropies.append(-sum(x / n * math.log(x / n) for x in c if x) / math.log(k))
        kls = []
        for stat in {s for s, _ in cells}:
            if (stat, 0) in cells and (stat, 1) in cells:
                p = [(x / sum(cells[(stat, 0)]) + 1e-10) for x in cells[(stat, 0)]]
                q = [(x / sum(cells[(stat, 1)]) + 1e-10) for x in cells[(stat, 1)]]
                p, q = [x / sum(p) for x in p], [x / sum(q) for x in q]
                kls.append(sum(a * math.log(a / b) for a, b in zip(p, q, strict=True)))
        s_fact, s_e, s_kld = correct / total, sum(entropies) / len(entropies), math.exp(-sum(kls) / len(kls))
        return s_fact, s_e, s_kld, s_e + s_kld - s_e * s_kld, ff.distance_to_bound(s_fact, s_e, k)

    for axis in (0, 1):
        stats(records, axis)
        rng = random.Random(axis)
        values = [stats(rng.choices(records, k=len(records)), axis) for _ in range(resamples)]
        for i in range(5):
            ordered = sorted(v[i] for v in values)
            ordered[int(0.025 * len(ordered))], ordered[int(0.975 * len(ordered)) - 1]


def bench_fact_or_fair() -> None:
    runs = fact_or_fair_records()
    n = sum(len(r) for r in runs)

    def vectorised() -> None:
        for records in runs:
            scoring.compute_metrics(records)

    fast = timed(vectorised)
    plain = timed(lambda: [plain_fact_or_fair(r, PLAIN_RESAMPLES) for r in runs], repeat=1)
    plain_scaled = plain * (RESAMPLES + 1) / (PLAIN_RESAMPLES + 1)
    print(f"Fact-or-Fair, {n:,} documents, all metrics on 2 axes with {RESAMPLES} resamples:")
    print(f"  vectorised: {fast:.2f} s  = {1e6 * fast / n:.1f} ms per 1,000 documents")
    print(
        f"  plain Python (2 axes, S_fact/S_E/S_KLD/S_fair/distance, {PLAIN_RESAMPLES} resamples scaled to {RESAMPLES}): "
        f"{plain_scaled:.1f} s = {1e6 * plain_scaled / n:.0f} ms per 1,000 documents"
    )
    print(f"  ratio plain/vectorised: {plain_scaled / fast:.0f}x")


# ----------------------------------------------------------------------------- FairLens
def fairlens_answers() -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(0)
    images = 1505
    groups = {
        "gender": rng.integers(0, 2, images),
        "race": rng.integers(0, 5, images),
        "age": rng.integers(0, 3, images),
    }
    adverse = rng.random((images, 38)) < 0.1  # 38 answers per image
    return groups, adverse


def bench_fairlens() -> None:
    groups, adverse = fairlens_answers()
    images, per_image = adverse.shape
    n = images * per_image
    sizes = {"gender": 2, "race": 5, "age": 3}

    def vectorised() -> None:
        # unit x cell matrix: for each attribute, per-group (adverse, total) counts of each image
        columns = []
        for attribute, labels in groups.items():
            onehot = np.eye(sizes[attribute])[labels]
            columns += [onehot * adverse.sum(axis=1, keepdims=True), onehot * per_image]
        matrix = np.hstack(columns)
        offsets = np.cumsum([0] + [2 * s for s in sizes.values()])

        def gap(attribute_index: int, ratio: bool):
            k = list(sizes.values())[attribute_index]
            lo = offsets[attribute_index]

            def f(counts: np.ndarray) -> np.ndarray:
                events, totals = counts[:, lo : lo + k], counts[:, lo + k : lo + 2 * k]
                return fl.rate_ratio_from_counts(events, totals) if ratio else fl.parity_gap_from_counts(events, totals)

            return f

        functions = {f"{a}_{kind}": gap(i, kind == "ratio") for i, a in enumerate(sizes) for kind in ("gap", "ratio")}
        bootstrap.bootstrap_intervals(matrix, functions, n_resamples=RESAMPLES, seed=0)

    def plain(resamples: int) -> None:
        rows = [(i, int(adverse[i].sum())) for i in range(images)]

        def stats(sample: list[tuple[int, int]]) -> list[float]:
            out = []
            for labels in groups.values():
                events: dict[int, int] = {}
                totals: dict[int, int] = {}
                for i, a in sample:
                    g = int(labels[i])
                    events[g] = events.get(g, 0) + a
                    totals[g] = totals.get(g, 0) + per_image
                rates = [events[g] / totals[g] for g in totals]
                out += [max(rates) - min(rates), max(rates) / min(rates) if min(rates) else math.inf]
            return out

        stats(rows)
        rng = random.Random(0)
        [stats(rng.choices(rows, k=len(rows))) for _ in range(resamples)]

    fast = timed(vectorised)
    slow = timed(lambda: plain(PLAIN_RESAMPLES * 5), repeat=1) * (RESAMPLES + 1) / (PLAIN_RESAMPLES * 5 + 1)
    print(
        f"FairLens, {images:,} images x {per_image} answers = {n:,}, gap + ratio on 3 attributes, {RESAMPLES} resamples:"
    )
    print(f"  vectorised: {fast:.3f} s = {1e6 * fast / n:.2f} ms per 1,000 answers")
    print(
        f"  plain Python ({PLAIN_RESAMPLES * 5} resamples scaled): {slow:.1f} s = {1e6 * slow / n:.1f} ms per 1,000 answers"
    )
    print(f"  ratio plain/vectorised: {slow / fast:.0f}x")


if __name__ == "__main__":
    bench_fact_or_fair()
    bench_fairlens()
