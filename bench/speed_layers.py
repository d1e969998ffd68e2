"""Do the Fact-or-Fair speed layers save more than 1% of a run against a fast served model? Prints times and ratios.

A speed layer stays only where it saves more than 1% of such a run. The run: all 45,798 documents of
``--tasks fact_or_fair`` (objective + four contexts, 100 draws) answered by a fast server. The notes give no measured
throughput, so this assumes one: a vLLM server on one H100 answers the 45,798 short prompts (about 150 tokens in, 20
out) in ``--served-seconds`` (default 60 s). The harness's own time is left out of the run, so each share printed is
an upper bound (the real run is longer).

1. **Documents.** Building every document as lm-eval datasets (``documents.load_dataset`` of each kind, in-memory
   caches emptied first, as in a new process), with the on-disk document cache off (``FAIRNESS_EVALS_DOCUMENT_CACHE=0``)
   and warm (filled once beforehand, in a temporary folder).
2. **Records.** ``process_results`` of every document with a typical mix of replies, and ``record_for`` alone (the
   most that any faster record path could save). A table look-up path for the subjective records (beside the field-by-field builder,
   reached through a caught exception) was removed after this measured it (2 shared cores, 2026-12): it took 0.12-0.25
   s for the 45,798 records, the field-by-field builder 0.38-0.68 s, so it saved 0.26-0.43 s, 0.4-0.7% of the run;
   against the single builder that replaced both (0.28-0.58 s in all), 0.15-0.24 s, 0.3-0.4%. Under the 1% bar.
   Two more went the same way (2 cores, 2026-12-07, alternating runs): a second cache of the profile sentences in the
   reply parser (``prompts.profile_text`` caches them already) and a payload dict built once and copied per document:
   ``process_results`` took 1.06 and 1.19 s with them, 1.19 and 1.33 s without, a saving of 0.13-0.14 s, 0.2%.

3. **The plain-JSON shortcut** (``parsing.parse_plain_json``: a reply that is nothing but ``{"answer": "B"}`` is
   decided without rendering the option texts): ``process_results`` of every document answered in that form, with
   the shortcut and without it (its best case). Measured on 2 cores (2026-12-07, idle): 0.44 s with it, 2.59 s
   without, a saving of 2.16 s, 3.6% of the run, so it stays (``tests/fact_or_fair/test_fact_or_fair_parsing.py``
   shows it equal to the rules on generated variants). The same run gave the document cache 0.93 s off, 0.07 s
   warm: 1.4%.

Each time is the least of ``--repeat`` tries. Measured on 2 shared cores (2026-12): documents 1.11-1.85 s with the
cache off, 0.05-0.14 s warm, a saving of 1.6-2.9% of the assumed run, so the document cache stays
(``tests/fact_or_fair/test_fact_or_fair_document_cache.py`` and ``test_fact_or_fair_fingerprints.py`` show a hit
equal to a build).

    .venv/bin/python bench/speed_layers.py [--repeat 5] [--served-seconds 60]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from fact_fair_tasks import document_cache, documents, items, scoring  # noqa: E402
from fact_fair_tasks.items import CONTEXTS  # noqa: E402

KINDS = ("objective", *CONTEXTS)
DOCUMENTS = 45_798


def cold_caches() -> None:
    """Empty every in-memory memo of the item data, the documents and the scoring, as in a new process."""
    for module in (items, documents, document_cache, scoring):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def build_all() -> float:
    cold_caches()
    start = time.perf_counter()
    n = sum(len(documents.load_dataset(fact_or_fair_kind=kind)["test"]) for kind in KINDS)
    seconds = time.perf_counter() - start
    assert n == DOCUMENTS, n
    return seconds


def least(repeat: int, fn: Callable[[], float]) -> float:
    return min(fn() for _ in range(repeat))


def documents_times(repeat: int) -> tuple[float, float]:
    """(cache off, warm cache) seconds to build every document, in a temporary cache folder."""
    import datasets  # noqa: F401  (lm-eval has imported both before it asks for documents)
    import pyarrow  # noqa: F401

    saved = {name: os.environ.get(name) for name in ("FAIRNESS_EVALS_CACHE", document_cache.ENVIRONMENT)}
    with tempfile.TemporaryDirectory(prefix="bench-speed-layers-") as folder:
        try:
            os.environ["FAIRNESS_EVALS_CACHE"] = folder
            os.environ[document_cache.ENVIRONMENT] = "0"
            off = least(repeat, build_all)
            os.environ[document_cache.ENVIRONMENT] = "1"
            build_all()  # fills the cache
            warm = least(repeat, build_all)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return off, warm


def records_times(repeat: int) -> tuple[float, float]:
    """(``process_results`` of every document, ``record_for`` alone of every document), seconds; interleaved, so that
    load from other processes falls on both alike."""
    rng = random.Random(0)
    replies = ['{"answer": "A"}', '{"answer": "C"}', "B", "I cannot answer that.", "Riley, a 25-year-old"]
    docs = [d for kind in KINDS for d in documents.documents_for(kind)]
    assert len(docs) == DOCUMENTS
    pairs = [(d, [rng.choice(replies)]) for d in docs]
    parses = [(d, scoring.parse_reply(d, r[0])) for d, r in pairs]

    def process() -> float:
        start = time.perf_counter()
        for doc, results in pairs:
            scoring.process_results(doc, results)
        return time.perf_counter() - start

    def records() -> float:
        start = time.perf_counter()
        for doc, parse in parses:
            scoring.record_for(doc, parse)
        return time.perf_counter() - start

    best = [float("inf")] * 2
    for _ in range(repeat):
        best = [min(b, timer()) for b, timer in zip(best, (process, records), strict=True)]
    return best[0], best[1]


def plain_json_times(repeat: int) -> tuple[float, float]:
    """(``process_results`` of every document answered in the released JSON form, the same with the plain-JSON
    shortcut off), seconds; interleaved. The shortcut's best case: every reply takes it."""
    from fact_fair_tasks import parsing

    rng = random.Random(0)
    docs = [d for kind in KINDS for d in documents.documents_for(kind)]
    pairs = [(d, [f'{{"answer": "{rng.choice("ABCD"[: len(d["options"])])}"}}']) for d in docs]
    shortcut = parsing.parse_plain_json

    def process(on: bool) -> float:
        off = None if on else (lambda reply, n_options: None)
        for module in (scoring, parsing):
            module.parse_plain_json = shortcut if on else off  # type: ignore[assignment]
        try:
            start = time.perf_counter()
            for doc, results in pairs:
                scoring.process_results(doc, results)
            return time.perf_counter() - start
        finally:
            for module in (scoring, parsing):
                module.parse_plain_json = shortcut  # type: ignore[assignment]

    best = [float("inf")] * 2
    for _ in range(repeat):
        best = [min(b, process(on)) for b, on in zip(best, (True, False), strict=True)]
    return best[0], best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--served-seconds", type=float, default=60.0, help="the served model's time for the run")
    args = parser.parse_args()
    run = args.served_seconds
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s); least of {args.repeat} tries each")
    print(
        f"a run against a fast served model: {run:.0f} s for {DOCUMENTS:,} documents (assumed; 1% = {run * 10:.0f} ms)"
    )

    off, warm = documents_times(args.repeat)
    print(f"\n1. build {DOCUMENTS:,} documents as lm-eval datasets")
    print(f"   document cache off:  {off:7.3f} s")
    print(f"   document cache warm: {warm:7.3f} s   (off / warm {off / warm:.1f}x)")
    print(f"   saving {off - warm:.3f} s = {100 * (off - warm) / run:.2f}% of the run")

    processed, records = records_times(args.repeat)
    n = DOCUMENTS
    print(f"\n2. process_results of {n:,} documents (parse, record, payload)")
    print(f"   process_results: {processed:7.3f} s ({1e6 * processed / n:.1f} us per document)")
    print(f"   record_for alone: {records:7.3f} s ({1e6 * records / n:.1f} us per document)")
    print(f"   the most a faster record builder could save: {records:.3f} s = {100 * records / run:.2f}% of the run")

    on, off = plain_json_times(args.repeat)
    print(f"\n3. process_results of {n:,} documents, every reply the released JSON form")
    print(f"   plain-JSON shortcut on:  {on:7.3f} s ({1e6 * on / n:.1f} us per document)")
    print(f"   plain-JSON shortcut off: {off:7.3f} s ({1e6 * off / n:.1f} us per document)")
    print(f"   saving {off - on:.3f} s = {100 * (off - on) / run:.2f}% of the run")


if __name__ == "__main__":
    main()
