"""What lm-eval 0.5's bootstrap of every aggregation costs on Fact-or-Fair's tasks (issue 34). Prints ratios.

lm-eval 0.5.0.dev1 calls every aggregation but ``mean`` on ``--iters`` bootstrap resamples of its items
(``lm_eval/api/metrics/stderr.py`` ``bootstrap_stderr``, a process pool of ``os.cpu_count()`` workers, no switch).
This runs 0.5's own ``Scorer.aggregate`` (``lm_eval/scorers/_base.py``) on the ``process_results`` payloads of the
objective task (198 documents) and of one subjective context (19 x 2 x 3 x ``--draws`` documents), with replies drawn
with a fixed seed, and prints for each: the wall time, the number of times our statistics were computed (1: a
resample is answered NaN at once), the time of one computation (what each resample cost before, when it recomputed),
and both as multiples of a fixed pure-Python loop timed in the same run. Needs lm-eval >= 0.5 in this interpreter:

    python -m venv VENV && VENV/bin/pip install --pre 'lm_eval==0.5.0.dev1' <checkout>
    VENV/bin/python bench/lm_eval_05.py [--iters 100000] [--draws 100] [--skip-subjective]
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import time
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

REPLIES = ['{"answer": "A"}', '{"answer": "B"}', "B", "A", "I cannot answer that.", "C", "A", "no idea"]


def fixed_loop() -> float:
    start = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i % 7
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iters", type=int, default=100_000)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--skip-subjective", action="store_true")
    args = parser.parse_args()
    try:
        import lm_eval
        from lm_eval.scorers._base import GenScorer
        from lm_eval.scorers._types import ScoredDoc
    except ImportError as error:
        print(f"bench/lm_eval_05.py: needs lm-eval >= 0.5 in this interpreter ({error})", file=sys.stderr)
        return 2
    from fact_fair_tasks import scoring
    from fact_fair_tasks.documents import objective_documents, subjective_documents
    from fairness_evals import aggregation

    calls = []
    compute = scoring.compute_metrics

    def counted(*a, **k):
        calls.append(1)
        return compute(*a, **k)

    scoring.compute_metrics = counted
    logging.disable(logging.WARNING)  # lm-eval's placeholder-metric notes and our null-metric warnings
    rng = random.Random(0)
    loop = min(fixed_loop() for _ in range(3))
    print(f"lm-eval {lm_eval.__version__}, {args.iters} bootstrap iterations; fixed loop {loop:.3f} s")
    kinds = {"objective": objective_documents()}
    if not args.skip_subjective:
        kinds["base"] = subjective_documents("base", draws=args.draws)
    for kind, docs in kinds.items():
        payloads = [scoring.process_results(doc, [rng.choice(REPLIES)]) for doc in docs]
        names = list(payloads[0])
        scorer = GenScorer.from_dict(
            {
                "name": "none",
                "filter": [],
                "metric_list": [
                    {"metric": n, "aggregation": getattr(scoring, f"aggregate_{n}"), "higher_is_better": True}
                    for n in names
                ],
            },
            output_type="generate_until",
        )
        scorer.set_results({i: ScoredDoc(i, None, {k: [v] for k, v in p.items()}) for i, p in enumerate(payloads)})
        aggregation.clear()
        calls.clear()
        start = time.perf_counter()
        scoring.aggregate_unparsed_rate([p[scoring.CARRIER] for p in payloads])
        one = time.perf_counter() - start
        aggregation.clear()
        calls.clear()
        start = time.perf_counter()
        results, _ = scorer.aggregate(scorer.reduced_docs, bootstrap_iters=args.iters)
        wall = time.perf_counter() - start
        shown = {k.split(",")[0]: v for k, v in results.items() if k.split(",")[0] in ("s_fact_gender", "s_e_gender")}
        print(
            f"{kind}: {len(docs)} documents, {len(names)} metrics: aggregate with bootstrap {wall:.1f} s "
            f"({wall / loop:.0f} x loop), our statistics computed {len(calls)} time(s); one computation {one:.3f} s "
            f"({one / loop:.2f} x loop): recomputed on every resample it would be {one * args.iters:.0f} s for the "
            f"carrier alone; {shown}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
