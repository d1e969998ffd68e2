"""Fact-or-Fair costs that users wait for (issues 4 and 15). Prints times and ratios.

1. Building all 45,798 documents (objective + 4 contexts x 11,400) as lm-eval datasets, three ways: built in the
   process (the document cache off), built and stored in an empty document cache (a first run), and loaded from it
   (every later run). ``datasets`` and ``pyarrow`` are imported first, as lm-eval has imported them by then.
2. Scoring 45,600 replies (parse + records + every metric with 1,000-resample intervals).
   Target (issue 15): 1 and 2 together <= 2 s on this 2-core machine.
3. The share of a real SmolLM2-135M-Instruct run (``lm_eval.simple_evaluate``, 50 documents of
   ``fact_or_fair_subjective_base``, greedy, CPU) spent in our code: document building, prompt text,
   parsing and aggregation, timed by wrapping our functions. Target: < 1%. Each timed run starts with cold
   in-memory caches (:func:`cold_caches`) and the document cache off, so it pays the full document build (all
   11,400 documents of the task, as a first ``lm_eval`` process does), not a lookup of documents that steps 1-2
   already built.
4. Generation vs log-likelihood variant wall time on the same 50 documents.

    .venv/bin/python bench/fact_or_fair.py [--docs 50] [--skip-model]
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from fact_fair_tasks import document_cache, documents, items, scoring  # noqa: E402
from fact_fair_tasks.items import CONTEXTS  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)


def clock(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] += time.perf_counter() - start

    return wrapper


def cold_caches() -> list[str]:
    """Empty every memo of the item data, the documents and the scoring, as in a fresh process; returns their names."""
    cleared: dict[int, str] = {}
    for module in (items, documents, document_cache, scoring):
        for name, value in vars(module).items():
            if callable(getattr(value, "cache_clear", None)) and id(value) not in cleared:
                value.cache_clear()
                cleared[id(value)] = f"{value.__module__}.{name}"
    assert documents._subjective_documents.cache_info().currsize == 0
    return list(cleared.values())


def build_all() -> float:
    cold_caches()
    start = time.perf_counter()
    n = len(documents.load_dataset(fact_or_fair_kind="objective")["test"])
    for context in CONTEXTS:
        n += len(documents.load_dataset(fact_or_fair_kind=context)["test"])
    assert n == 45_798
    return time.perf_counter() - start


def build_three_ways() -> dict[str, float]:
    """:func:`build_all` with the document cache off, into an empty cache, and from that cache (a temporary folder:
    the user's cache is left alone)."""
    import datasets  # noqa: F401  (lm-eval has imported both before it asks for documents)
    import pyarrow  # noqa: F401

    times = {}
    saved = {name: os.environ.get(name) for name in ("FAIRNESS_EVALS_CACHE", "FAIRNESS_EVALS_DOCUMENT_CACHE")}
    with tempfile.TemporaryDirectory(prefix="bench-fact-or-fair-") as folder:
        try:
            os.environ["FAIRNESS_EVALS_CACHE"] = folder
            os.environ["FAIRNESS_EVALS_DOCUMENT_CACHE"] = "0"
            times["built in the process (document cache off)"] = build_all()
            os.environ["FAIRNESS_EVALS_DOCUMENT_CACHE"] = "1"
            times["built and stored (a first run)"] = build_all()
            times["loaded from the document cache (later runs)"] = build_all()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return times


def score_all() -> float:
    rng = random.Random(0)
    replies = ['{"answer": "' + rng.choice("ABCD") + '"}', "B", "I cannot answer that.", "Riley, a 25-year-old"]
    docs = {c: documents.subjective_documents(c) for c in CONTEXTS}
    start = time.perf_counter()
    for context in CONTEXTS:
        records = [scoring.record_for(d, scoring.parse_reply(d, rng.choice(replies))) for d in docs[context]]
        scoring.compute_metrics(records)
    return time.perf_counter() - start


def instrument() -> None:
    documents.load_dataset = clock("documents", documents.load_dataset)
    scoring.doc_to_text = clock("prompts", scoring.doc_to_text)
    scoring.doc_to_text_mc = clock("prompts", scoring.doc_to_text_mc)
    scoring.process_results = clock("parsing + records", scoring.process_results)
    scoring.process_results_mc = clock("parsing + records", scoring.process_results_mc)
    for name in scoring.ALL_METRICS:
        attr = f"agg_{name}"
        if hasattr(scoring, attr):
            setattr(scoring, attr, clock("aggregation", getattr(scoring, attr)))


def run(task: str, limit: int, model_dir: str) -> float:
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    start = time.perf_counter()
    simple_evaluate(
        model="hf",
        model_args=f"pretrained={model_dir},dtype=float32",
        tasks=[task],
        limit=limit,
        batch_size=8,
        device="cpu",
        apply_chat_template=task.endswith("_mc") is False,
        task_manager=TaskManager(),
        bootstrap_iters=0,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--skip-model", action="store_true", help="only steps 1-2 (no SmolLM2 runs)")
    args = parser.parse_args()
    builds = build_three_ways()
    for label, seconds in builds.items():
        print(f"build 45,798 documents as lm-eval datasets, {label}: {seconds:.2f} s")
    scored = score_all()
    print(
        f"score 45,600 replies with 1,000-resample intervals: {scored:.2f} s ({1e3 * scored / 45_600:.3f} ms per reply)"
    )
    for label, seconds in builds.items():
        print(f"documents {label.split(' (')[0]} + scoring: {seconds + scored:.2f} s (target <= 2 s)")
    if args.skip_model:
        return

    from fairness_evals.model import ensure_default_model

    model_dir = str(ensure_default_model())
    instrument()
    os.environ["FAIRNESS_EVALS_DOCUMENT_CACHE"] = "0"
    cleared = cold_caches()
    print(f"timed runs start cold: cleared {', '.join(cleared)}; each run builds its task's documents itself")
    SPENT.clear()
    gen = run("fact_or_fair_subjective_base", args.docs, model_dir)
    ours = sum(SPENT.values())
    detail = ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in sorted(SPENT.items()))
    print(
        f"SmolLM2 generation run, {args.docs} documents (cold document build included): wall {gen:.1f} s; "
        f"our code {ours:.2f} s = {100 * ours / gen:.2f}% ({detail})"
    )
    cold_caches()
    SPENT.clear()
    mc = run("fact_or_fair_subjective_base_mc", args.docs, model_dir)
    ours_mc = sum(SPENT.values())
    print(f"SmolLM2 log-likelihood run, same documents (cold): wall {mc:.1f} s; our code {100 * ours_mc / mc:.2f}%")
    print(f"generation / log-likelihood wall time: {gen / mc:.2f}x")


if __name__ == "__main__":
    main()
