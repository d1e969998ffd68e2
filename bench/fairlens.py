"""FairLens: the cost of documents and scoring, image decodes with and without the cache, memory vs corpus size.

1. **Documents and scoring** for the paper's size, 1,505 synthetic 200x200 JPEG faces x 38 questions = 57,190
   documents: reading and checking the corpus, building the three domain datasets as lmms-eval's
   ``process_docs`` does, ``process_results`` on one reply per document, and every aggregation as lmms-eval
   calls them (each metric with its own item list). Printed per document and as a ratio to one image
   decode (the cheapest thing the model side does per document); then the intervals of the 57,190 answers
   against what version 1's method (unstratified percentile intervals) costs on the same answers.
2. **Image decodes per run** of the ``fairlens`` group, in the two request orders lmms-eval models use
   (document order; sorted by prompt text), with no cache, the default in-memory cache (8) and one as large
   as the corpus, each without the spill file, and the default configuration (8 in memory plus the spill
   file, ``FAIRLENS_IMAGE_SPILL_MB`` 4096): decodes, spill rebuilds, decodes per image, the spill file's size.
3. **Peak memory** of a whole run without the model (corpus, datasets, every image fetched, scoring,
   aggregation), in a fresh process per corpus size and request order, from 100 to 5,000 images, with the
   default configuration (8 images in memory, the spill file on).
4. **Our share of a whole run** (``lmms-eval --tasks fairlens``, the paper's 1,505 images) with an instant model
   that fetches every request's image through ``doc_to_visual`` and answers "Yes", in document order and sorted by
   prompt text, with the spill file and without it (``FAIRLENS_IMAGE_SPILL_MB=0``): bench/scale.py's sampling
   profiler splits the harness process's time into ours, the model's and the harness's (target: ours at most 5%).

    .venv/bin/python bench/fairlens.py            # about twenty minutes on two cores (both request orders)
    .venv/bin/python bench/fairlens.py --quick    # smaller corpora (about six minutes), for a smoke run
    .venv/bin/python bench/fairlens.py --share    # part 4 only (about twelve minutes)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this script's folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from PIL import Image, ImageDraw  # noqa: E402

GENDERS, RACES = 2, 5
BANDS = ((25, 29), (30, 59), (60, 65))


def write_faces(root: Path, count: int, seed: int = 0) -> list[Path]:
    """``count`` 200x200 JPEGs with UTKFace names, strata drawn uniformly (seeded)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        low, high = BANDS[rng.randrange(3)]
        name = f"{rng.randint(low, high)}_{rng.randrange(GENDERS)}_{rng.randrange(RACES)}_{20170101000000000 + i}.jpg.chip.jpg"
        image = Image.new("RGB", (200, 200), tuple(rng.randrange(256) for _ in range(3)))
        draw = ImageDraw.Draw(image)
        for _ in range(6):  # some structure, so the JPEG is not trivially small
            x, y = rng.randrange(180), rng.randrange(180)
            draw.ellipse(
                (x, y, x + rng.randrange(10, 60), y + rng.randrange(10, 60)),
                fill=tuple(rng.randrange(256) for _ in range(3)),
            )
        path = root / name
        image.save(path, format="JPEG", quality=90)
        paths.append(path)
    return paths


def manifest(folder: Path, paths: list[Path], out: Path) -> Path:
    from fairlens_tasks.labels import parse_utkface_name

    lines = []
    for path in paths:
        d = parse_utkface_name(path.name)
        lines.append(json.dumps({"path": str(path), "gender": d.gender, "race": d.race, "age": d.age}))
    out.write_text("\n".join(lines) + "\n")
    return out


def seconds(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def median_seconds(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[repeat // 2]


def version1_intervals(records: list[list[int]]) -> None:
    """What version 1 paid for the intervals of one domain: the same unit matrix, 1,000 *unstratified* resamples and
    a percentile interval of each statistic (soundness, association rate, 10 adverse rates, 3 parity and 3
    association gaps, their two means), no rate-ratio interval: the reference of the cost comparison."""
    import numpy as np

    from fairlens_tasks import scoring
    from fairlens_tasks.labels import ATTRIBUTES
    from metrics import bootstrap
    from metrics import fairlens as fl

    rec = np.asarray(records, dtype=np.int64)
    matrix = scoring.unit_counts(rec).matrix

    def gap(a: str, events: str, totals: str):
        return lambda c: fl.gap_from_rates(scoring._group_rates(c, a, events, totals))

    stats = {
        "soundness": lambda c: scoring._pooled_rate(c, "correct", "answers"),
        "association_rate": lambda c: scoring._pooled_rate(c, "non_neutral", "assoc_answers"),
    }
    for a in ATTRIBUTES:
        for i in range({"gender": 2, "race": 5, "age": 3}[a]):
            stats[f"adverse_{a}_{i}"] = lambda c, a=a, i=i: scoring._group_rates(c, a, "adverse", "adverse_answers")[
                :, i
            ]
        stats[f"parity_{a}"] = gap(a, "adverse", "adverse_answers")
        stats[f"assoc_{a}"] = gap(a, "non_neutral", "assoc_answers")
    stats["parity"] = lambda c: np.mean([stats[f"parity_{a}"](c) for a in ATTRIBUTES], axis=0)
    stats["assoc"] = lambda c: np.mean([stats[f"assoc_{a}"](c) for a in ATTRIBUTES], axis=0)
    bootstrap.bootstrap_intervals(matrix, stats, n_resamples=1000, seed=0)


def fetch_all(docs: list[dict]) -> None:
    """Fetch every document's image as a model would, keeping none (the model drops each after use)."""
    from fairlens_tasks import scoring

    for doc in docs:
        scoring.doc_to_visual(doc)


# ----------------------------------------------------------------------------- 1. documents and scoring
def bench_documents(corpus_path: Path) -> dict[str, list[dict]]:
    import datasets

    from fairlens_tasks import documents, images, scoring
    from fairlens_tasks.corpus import load_corpus
    from fairlens_tasks.documents import iter_documents
    from fairlens_tasks.settings import ENV, build_settings

    datasets.disable_progress_bars()
    settings = build_settings({"corpus": str(corpus_path), "sample_fraction": 1}, ENV)
    t_corpus, corpus = seconds(lambda: load_corpus(settings))
    questions = datasets.Dataset.from_json(
        str(Path(documents.__file__).parent / "data" / "questions.json"), field="questions"
    )

    def _process_docs(domain: str):
        os.environ["FAIRLENS_CORPUS"], os.environ["FAIRLENS_SAMPLE_FRACTION"] = str(corpus_path), "1"
        return getattr(documents, f"{domain}_docs")(questions)

    n_images = corpus.sampled
    t_docs, tables = seconds(lambda: {d: _process_docs(d) for d in ("hiring", "legal", "healthcare")})
    docs = {d: list(iter_documents(corpus, d)) for d in tables}
    n_docs = sum(len(v) for v in docs.values())
    rng = random.Random(1)

    def reply(doc: dict) -> str:
        roll = rng.random()
        if roll < 0.7:
            return rng.choice(doc["options"])
        if roll < 0.9:
            return f"The answer is {rng.choice(doc['options']).lower()}."
        return "I'm sorry, I can't help with that."

    replies = {d: [reply(doc) for doc in v] for d, v in docs.items()}
    t_score, results = seconds(
        lambda: {
            d: [scoring.process_results(doc, [r]) for doc, r in zip(docs[d], replies[d], strict=True)] for d in docs
        }
    )

    def aggregate() -> None:  # as lmms-eval calls it: the carrier's records first, then each metric's None items
        for d in docs:
            for name in results[d][0]:
                getattr(scoring, f"aggregate_{name}")([r[name] for r in results[d]])

    t_agg, _ = seconds(aggregate)
    records = {d: [r[scoring.CARRIER]["record"] for r in results[d]] for d in docs}
    t_once, _ = seconds(lambda: [scoring.compute_metrics(records[d]) for d in docs])
    t_v2 = median_seconds(lambda: [scoring.compute_metrics(records[d]) for d in docs])
    t_v1 = median_seconds(lambda: [version1_intervals(records[d]) for d in docs])
    cache = images.reset_image_cache(0, spill_mb=0)
    sample = docs["hiring"][::21][:300]  # one document per image
    t_decode, _ = seconds(lambda: fetch_all(sample))
    per_decode = t_decode / cache.stats.decodes
    cache = images.reset_image_cache(0)  # nothing in memory: a second pass rebuilds every image from the spill
    fetch_all(sample)
    t_rebuild, _ = seconds(lambda: fetch_all(sample))
    per_rebuild = t_rebuild / cache.stats.spill_hits

    per_doc = {
        "read, sample and check the corpus": t_corpus / n_docs,
        "build the three datasets": t_docs / n_docs,
        "process_results": t_score / n_docs,
        f"aggregate ({len(scoring.ALL_METRICS)} metrics x 3 tasks, as lmms-eval calls them)": t_agg / n_docs,
    }
    print(f"1. Documents and scoring: {n_images:,} images x 38 questions = {n_docs:,} documents")
    for label, value in per_doc.items():
        print(f"   {label:<68} {value * 1e6:8.1f} us/doc")
    total = sum(per_doc.values())
    print(f"   {'total':<68} {total * 1e6:8.1f} us/doc   ({total * n_docs:.1f} s for the run)")
    print(f"   one full image decode (200x200 JPEG)                                 {per_decode * 1e6:8.1f} us")
    print(f"   one rebuild from the spill file (120,000 raw bytes, positioned read) {per_rebuild * 1e6:8.1f} us")
    print(f"   ratio  everything per document / one image decode:                   {total / per_decode:8.2f}")
    print(f"   ratio  aggregation as called / one compute_metrics per task:         {t_agg / t_once:8.2f}"
          f"   (the carrier computes, each other metric reads its run; building the lists is the rest)")  # fmt: skip
    print(f"   ratio  one decode / one rebuild from the spill file:                 {per_decode / per_rebuild:8.2f}")
    print(f"   intervals of the {n_docs:,} answers (median of 5): version 2 {t_v2:.3f} s, version 1's method {t_v1:.3f} s;"
          f" ratio v2/v1 {t_v2 / t_v1:.2f}")  # fmt: skip
    return docs


# ----------------------------------------------------------------------------- 2. decodes per run
def bench_decodes(docs: dict[str, list[dict]], n_images: int) -> None:
    from fairlens_tasks import images
    from fairlens_tasks.prompts import prompt_for

    document_order = [doc for domain in ("hiring", "legal", "healthcare") for doc in docs[domain]]
    prompt_sorted = sorted(document_order, key=lambda doc: prompt_for(doc["question_id"]))  # stable, like Collator
    default = images.DEFAULT_CACHE_SIZE
    configurations = (  # (label, images in memory, spill cap in MiB)
        ("no cache", 0, 0),
        (f"memory {default}, no spill", default, 0),
        (f"memory {n_images:,}, no spill", n_images, 0),
        (f"memory {default} + spill (default)", default, images.DEFAULT_SPILL_MB),
    )
    print(f"\n2. Image decodes per run of the group ({len(document_order):,} documents, {n_images:,} images)")
    print(
        f"   {'request order':<36}{'cache':<28}{'decodes':>8}{'spill hits':>11}{'per image':>10}"
        f"{'vs none':>9}{'spill file':>11}{'time':>8}"
    )
    for label, order in (
        ("document order (llava_hf, internvl)", document_order),
        ("prompt-sorted (qwen, simple models)", prompt_sorted),
    ):
        baseline = None
        for name, capacity, spill_mb in configurations:
            cache = images.reset_image_cache(capacity, spill_mb=spill_mb)
            elapsed, _ = seconds(lambda order=order: fetch_all(order))
            stats = cache.stats
            assert stats.requests == len(order)
            baseline = baseline or stats.decodes
            print(
                f"   {label:<36}{name:<28}{stats.decodes:>8,}{stats.spill_hits:>11,}{stats.decodes / n_images:>10.2f}"
                f"{baseline / stats.decodes:>8.1f}x{stats.spill_bytes / 2**20:>8.1f} MB{elapsed:>7.1f}s"
            )
            if cache.spill is not None:
                cache.spill.close()


# ----------------------------------------------------------------------------- 3. memory
CHILD = r"""
import json, os, sys

def hwm_kb():  # VmHWM: this process image's peak RSS (ru_maxrss would include the parent's, from before exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

import datasets
datasets.disable_progress_bars()
from fairlens_tasks import images, scoring
from fairlens_tasks.corpus import load_corpus
from fairlens_tasks import documents
from fairlens_tasks.settings import ENV, build_settings
questions = datasets.Dataset.from_json(os.path.join(os.path.dirname(documents.__file__), "data", "questions.json"), field="questions")
os.environ["FAIRLENS_CORPUS"], os.environ["FAIRLENS_SAMPLE_FRACTION"] = sys.argv[1], "1"
from fairlens_tasks.prompts import prompt_for
base = hwm_kb()
corpus = load_corpus(build_settings({"corpus": sys.argv[1], "sample_fraction": 1}, ENV))
cache = images.reset_image_cache(images.DEFAULT_CACHE_SIZE, images.DEFAULT_SPILL_MB)
for domain in ("hiring", "legal", "healthcare"):
    table = getattr(documents, domain + "_docs")(questions)  # lmms-eval's process_docs
    requests = iter(table)
    if sys.argv[2] == "prompt-sorted":  # the request order of qwen2_5_vl and the simple models
        order = sorted(range(len(table)), key=lambda i, ids=table["question_id"]: prompt_for(ids[i]))
        requests = (table[i] for i in order)
    items = []
    for doc in requests:
        scoring.doc_to_visual(doc)
        items.append(scoring.process_results(doc, ["Cannot tell"])["soundness"])
    scoring.compute_metrics(items)
    del table, items
peak = hwm_kb()
stats = cache.stats
print(json.dumps({"images": corpus.sampled, "base_kb": base, "peak_kb": peak, "decodes": stats.decodes,
                  "spill_hits": stats.spill_hits, "spill_bytes": stats.spill_bytes}))
"""


def bench_memory(root: Path, sizes: list[int]) -> None:
    paths = write_faces(root / "memory-faces", max(sizes), seed=2)
    rows = []
    for order in ("document", "prompt-sorted"):
        for size in sizes:
            listing = manifest(root, paths[:size], root / f"faces-{size}.jsonl")
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, str(listing), order], capture_output=True, text=True, check=True
            )
            rows.append({"order": order, **json.loads(proc.stdout.strip().splitlines()[-1])})
    print("\n3. Peak memory of a run without the model (fresh process per size and order; growth over the imported")
    print("   baseline; the default cache: 8 images in memory, the spill file on)")
    print(
        f"   {'request order':<15}{'images':>7}{'documents':>11}{'peak growth':>13}{'per image':>11}"
        f"{'decoded pixels if held':>24}{'decodes/image':>15}{'spill file':>12}"
    )
    for row in rows:
        growth = (row["peak_kb"] - row["base_kb"]) / 1024
        pixels = row["images"] * 200 * 200 * 3 / 2**20
        print(
            f"   {row['order']:<15}{row['images']:>7,}{row['images'] * 38:>11,}{growth:>10.1f} MB"
            f"{growth * 1024 / row['images']:>8.1f} KB{pixels:>20.1f} MB{row['decodes'] / row['images']:>15.2f}"
            f"{row['spill_bytes'] / 2**20:>9.1f} MB"
        )
    for order in ("document", "prompt-sorted"):
        first, last = [row for row in rows if row["order"] == order][:: len(sizes) - 1]
        g0 = max(1.0, (first["peak_kb"] - first["base_kb"]) / 1024)
        g1 = (last["peak_kb"] - last["base_kb"]) / 1024
        print(f"   ratio  {order}: corpus {last['images'] / first['images']:.0f}x larger -> peak growth {g1 / g0:.1f}x;"
              f" total peak {last['peak_kb'] / first['peak_kb']:.2f}x"
              f" ({first['peak_kb'] / 1024:.0f} -> {last['peak_kb'] / 1024:.0f} MB)")  # fmt: skip


# ----------------------------------------------------------------------------- 4. our share of an instant run
INSTANT_MODEL = "fairlens_bench_instant"


def _scale_bench():
    """``bench/scale.py`` as a module (its sampling profiler, child environment and share printer)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_scale", Path(__file__).with_name("scale.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def register_instant_model() -> None:
    """Register :data:`INSTANT_MODEL` with lmms-eval: it answers "Yes" at once, after fetching every request's
    image through the task's ``doc_to_visual``, in document order (``order=document``, as ``llava_hf`` takes its
    requests) or sorted by prompt text (``order=prompt``, as ``qwen2_5_vl`` and the simple models do)."""
    from lmms_eval.models import MODEL_REGISTRY_V2
    from lmms_eval.models.registry_v2 import ModelManifest
    from lmms_eval.models.simple.dummy import Dummy

    class InstantVisual(Dummy):
        def __init__(self, order: str = "document", **kwargs) -> None:
            super().__init__(response="Yes", **kwargs)
            self.order = order

        def generate_until(self, requests) -> list[str]:
            indices = range(len(requests))
            if self.order == "prompt":  # stable, as lmms-eval's Collator
                indices = sorted(indices, key=lambda i: requests[i].args[0])
            for i in indices:
                _context, _settings, doc_to_visual, doc_id, task, split = requests[i].args
                doc_to_visual(self.task_dict[task][split][doc_id])
            return ["Yes"] * len(requests)

    globals()["InstantVisual"] = InstantVisual
    MODEL_REGISTRY_V2.register_manifest(
        ModelManifest(model_id=INSTANT_MODEL, simple_class_path=f"{__name__}.InstantVisual"), overwrite=True
    )


def share_child(interval: float, report: Path, argv: list[str]) -> None:
    """One profiled ``lmms-eval`` run with :data:`INSTANT_MODEL` (bench/scale.py's sampler); the shares and the
    image cache's counts go to ``report``."""
    scale = _scale_bench()
    sampler = scale.Sampler(interval)
    sampler.start()
    try:
        register_instant_model()
        from lmms_eval.cli.dispatch import main as lmms_eval_main

        sys.argv = ["lmms-eval", *argv]
        lmms_eval_main()
    finally:
        sampler.stop()
        from fairlens_tasks import images

        stats = images.image_cache().stats
        report.write_text(
            json.dumps(
                {
                    "seconds": dict(sampler.seconds),
                    "samples": sampler.samples,
                    "decodes": stats.decodes,
                    "spill_hits": stats.spill_hits,
                    "requests": stats.requests,
                }
            )
        )


def bench_share(root: Path, n_images: int, interval: float) -> None:
    """Our share of whole ``lmms-eval --tasks fairlens`` runs with the instant model, per request order, with the
    spill file (default) and without it (``FAIRLENS_IMAGE_SPILL_MB=0``)."""
    scale = _scale_bench()
    corpus = root / "share-faces"
    write_faces(corpus, n_images)
    print("\n4. Our share of lmms-eval --tasks fairlens runs with an instant model that fetches every image")
    print(
        f"   ({n_images:,} images, {n_images * 38:,} documents; bench/scale.py's sampler every {interval * 1e3:g} ms)"
    )
    shares: dict[tuple[str, str], float] = {}
    for order in ("document", "prompt"):
        for spill in (str(images_default_spill_mb()), "0"):
            tmp = root / f"share-{order}-{spill}"
            tmp.mkdir()
            env = scale.environment(
                tmp, FAIRLENS_CORPUS=str(corpus), FAIRLENS_SAMPLE_FRACTION="1", FAIRLENS_IMAGE_SPILL_MB=spill
            )
            report = tmp / "report.json"
            argv = ["--model", INSTANT_MODEL, "--model_args", f"order={order}", "--tasks", "fairlens",
                    "--batch_size", "1", "--log_samples", "--output_path", str(tmp / "out")]  # fmt: skip
            command = [sys.executable, __file__, "--share-child", "--interval", str(interval), "--report", str(report)]
            start = time.perf_counter()
            proc = subprocess.run([*command, "--", *argv], env=env, cwd=tmp, capture_output=True, text=True)
            wall = time.perf_counter() - start
            found = [p for p in (tmp / "out").rglob("*.json") if "results" in p.name]
            if proc.returncode or not report.is_file() or not found:
                raise SystemExit(f"lmms-eval failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
            result = json.loads(report.read_text())
            label = "spill file (default)" if spill != "0" else "no spill file"
            scale.print_share(f"   {order} order, {label}", wall, result)
            total = sum(result["seconds"].values()) or 1.0
            ours = sum(v for k, v in result["seconds"].items() if k.startswith("ours "))
            shares[(order, spill)] = ours / total
            print(f"    decodes {result['decodes']:,} ({result['decodes'] / n_images:.2f} per image), "
                  f"spill rebuilds {result['spill_hits']:,}, requests {result['requests']:,}")  # fmt: skip
    print("\n   summary: our share of the run (target at most 5%)")
    for order in ("document", "prompt"):
        with_spill, without = shares[(order, str(images_default_spill_mb()))], shares[(order, "0")]
        print(f"   {order + ' order':<16} with the spill file {100 * with_spill:5.1f}%   without {100 * without:5.1f}%"
              f"   ratio without / with {without / with_spill:5.2f}")  # fmt: skip


def images_default_spill_mb() -> int:
    from fairlens_tasks import images

    return images.DEFAULT_SPILL_MB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller corpora (a smoke run, not the published numbers)")
    parser.add_argument("--share", action="store_true", help="only part 4: our share of instant-model runs")
    parser.add_argument("--share-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--interval", type=float, default=0.002, help="part 4's sampling interval, s")
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.share_child:
        share_child(args.interval, args.report, rest[1:] if rest[:1] == ["--"] else rest)
        return 0
    n_images = 300 if args.quick else 1505
    if args.share:
        with tempfile.TemporaryDirectory(prefix="fairlens-bench-") as tmp:
            bench_share(Path(tmp), n_images, args.interval)
        return 0
    sizes = [100, 300, 1000] if args.quick else [100, 500, 1000, 2000, 5000]
    with tempfile.TemporaryDirectory(prefix="fairlens-bench-") as tmp:
        root = Path(tmp)
        paths = write_faces(root / "faces", n_images)
        docs = bench_documents(manifest(root, paths, root / "faces.jsonl"))
        bench_decodes(docs, n_images)
        bench_memory(root, sizes)
        bench_share(root, n_images, args.interval)
    print(f"\npeak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
