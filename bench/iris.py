"""IRIS understanding costs (issue 8). Prints times and ratios.

1. **Answer mapping** (``iris_tasks.mapping.map_answer``), answers per second:
   - stages 1-3 only (``IRIS_EMBEDDER=none``): names, aliases and chatty answers naming one occupation;
   - with the MiniLM stage, every answer new (no memo hit: each is embedded once), and the one-off load;
   - with the MiniLM stage on a realistic stream (models repeat themselves: a pool of 300 answers).
2. **Aggregation of 10,000 answers** per task, as lmms-eval calls it (every ``agg_<metric>`` of the task on
   the same item list; the first computes, with the 1,000-resample interval, the rest hit the memo).
3. **Image decodes of ``iris_bis_und``** (12 questions per image) over ``--sets`` synthetic counterfactual sets of 8
   200x200 JPEGs, in document order and sorted by prompt text (as ``qwen2_5_vl`` and the simple models take their
   requests), with the default decode cache (8 images in memory and the spill file) and without the spill file
   (``IRIS_IMAGE_SPILL_MB=0``): decodes, spill rebuilds, decodes per image and the time to fetch every image.

    .venv/bin/python bench/iris.py [--answers 10000] [--aggregate 10000] [--sets 200]

The first line printed names the date, the CPU count, the load average and torch's thread count: record them
with the numbers (README "Performance").
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
import time
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this script's folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from iris_tasks import bis_und, embedder, ifs_und, mapping, rfs_und  # noqa: E402
from iris_tasks.vocabulary import COMBINATIONS, aliases_data, occupation_names  # noqa: E402

FREE_WORDS = [
    "musician", "chef", "pilot", "lawyer", "scientist", "architect", "banker", "photographer", "athlete",
    "mechanic engineer", "office clerk", "fashion model", "artist", "worker", "priest", "coach", "surfer",
]  # fmt: skip


def by_stage(rng: random.Random, n: int) -> dict[str, list[str]]:
    """``n`` answers per stage: the answer text alone decides the stage; the embedding ones are all distinct."""
    names = list(occupation_names().values())
    aliases = [a for entries in aliases_data()["aliases"].values() for a in entries]
    return {
        "exact": [rng.choice(names).title() for _ in range(n)],
        "alias": [f"A {rng.choice(aliases)}." for _ in range(n)],
        "mention": [
            f"The person in photo {i} appears to be a {rng.choice(names)}, judging by the clothes." for i in range(n)
        ],
        "embedding": [f"{rng.choice(FREE_WORDS)} number {i}" for i in range(n)],
    }


def cold_rate(answers: list[str], spec: str) -> float:
    """Answers per second through the stages, memo bypassed (every answer costs its full path)."""
    start = time.perf_counter()
    for answer in answers:
        mapping._map(answer, None, mapping.DEFAULT_THRESHOLD, spec)
    return len(answers) / (time.perf_counter() - start)


def stream_rate(answers: list[str], spec: str) -> float:
    """Answers per second through :func:`map_answer` (with its memo), from a cleared memo."""
    mapping.clear_memo()
    start = time.perf_counter()
    for answer in answers:
        mapping.map_answer(answer, embedder_spec=spec)
    return len(answers) / (time.perf_counter() - start)


def bench_mapping(n: int) -> None:
    rng = random.Random(0)
    print(f"answer mapping ({n:,} answers per line; 'cold' bypasses the memo)")
    pools = by_stage(rng, n)
    rates = {}
    for stage in ("exact", "alias", "mention"):
        rates[stage] = cold_rate(pools[stage], "none")
        print(f"  cold, {stage:<9} (stages 1-3 only)        {rates[stage]:>10,.0f} answers/s")
    start = time.perf_counter()
    embedder.get("")
    print(f"  MiniLM load (once per process)          {time.perf_counter() - start:>10.2f} s")
    embedded = pools["embedding"][: max(200, n // 10)]
    rates["embedding"] = cold_rate(embedded, "")
    print(f"  cold, embedding ({len(embedded):,} distinct answers)  {rates['embedding']:>10,.0f} answers/s")
    mixed = [rng.choice(pools[rng.choice(["exact", "alias", "mention"])]) for _ in range(n)]
    pool = rng.sample(mixed, 200) + rng.sample(pools["embedding"], 100)
    stream = [rng.choice(pool) for _ in range(n)]
    without = stream_rate(mixed, "none")
    with_embedding = stream_rate(stream, "")
    print(f"  stream, no embedding stage              {without:>10,.0f} answers/s")
    print(f"  stream, 300 distinct answers, 1/3 MiniLM {with_embedding:>9,.0f} answers/s")
    print(f"  ratio cold mention / cold embedding     {rates['mention'] / rates['embedding']:>10.0f}x")
    print(f"  ratio stream without / with embedding   {without / with_embedding:>10.1f}x")


def _aggregate(module, records: list) -> float:
    names = module.ALL_METRICS
    start = time.perf_counter()
    for name in names:
        items = [[r] if name in module.PROVENANCE else r for r in records]
        if name in module.PROVENANCE:
            items = [[0] for _ in records]
        getattr(module, f"agg_{name}")(items)
    return time.perf_counter() - start


def bench_aggregation(n: int) -> None:
    rng = random.Random(1)
    print(f"aggregation of {n:,} answers (every agg_<metric> of the task, as lmms-eval calls them)")
    ppm = 500_000  # the documents' minimum coverage (0.5), as every record carries it
    ifs = [[i, rng.randrange(52), rng.choice([rng.randrange(52)] * 3 + [52]), rng.randrange(2), rng.randrange(3),
            rng.randrange(3), 0, ppm] for i in range(n)]  # fmt: skip
    print(f"  iris_ifs_und  ({len(ifs_und.ALL_METRICS)} metrics)                {_aggregate(ifs_und, ifs):>8.2f} s")
    probe = [[0, i, i % 18, rng.randrange(52) if rng.random() > 0.1 else -1, 0, i // (18 * 13), 0, 0, ppm]
             for i in range(n // 2)]  # fmt: skip
    # a balanced corpus (every occupation in every combination), so that the score and its interval are computed
    rec = [
        [1, i, (i // 18) % 52, rng.choice([(i // 18) % 52, rng.randrange(53)]), (i % 18) // 9,
         (i % 9) // 3, i % 3, 0, ppm]
        for i in range(n - n // 2)
    ]  # fmt: skip
    print(
        f"  iris_rfs_und  ({len(rfs_und.ALL_METRICS)} metrics, half probe)    {_aggregate(rfs_und, probe + rec):>8.2f} s"
    )
    bis = []
    per_set = 8 * 12
    for i in range(n):
        s, k = divmod(i, per_set)
        image, q = divmod(k, 12)
        g, a, sk = COMBINATIONS[[0, 2, 6, 8, 9, 11, 15, 17][image]]
        codes = (
            ["male", "female"].index(g),
            ["young", "middle", "older"].index(a),
            ["light", "middle", "dark"].index(sk),
        )
        value = float(rng.randint(1, 10)) if q < 6 else float(rng.randrange(3))
        bis.append([s, s * 8 + image, q + 2, 0 if q < 6 else 1, *codes, value, float(value == 2 and q >= 6), -1.0,
                    float(s % 52), 0.5])  # fmt: skip
    print(
        f"  iris_bis_und  ({len(bis_und.ALL_METRICS)} metrics, {n // per_set} sets)      {_aggregate(bis_und, bis):>8.2f} s"
    )


def bench_decodes(n_sets: int) -> None:
    """Part 3 of the module docstring."""
    import tempfile

    from PIL import Image

    from iris_tasks import documents, harness, images
    from iris_tasks.settings import ENV, build_settings
    from iris_tasks.vocabulary import occupation_ids

    rng = random.Random(2)
    corners = [(g, a, sk) for g in ("male", "female") for a in ("young", "older") for sk in ("light", "dark")]
    occupations = occupation_ids()
    with tempfile.TemporaryDirectory(prefix="iris-bench-") as tmp:
        root = Path(tmp)
        lines = ["path,occupation,gender,age,skin_tone,pair_id"]
        for s in range(n_sets):
            for gender, age, skin in corners:
                name = f"set{s:04d}_{gender}_{age}_{skin}.jpg"
                colour = tuple(rng.randrange(256) for _ in range(3))
                Image.new("RGB", (200, 200), colour).save(root / name, quality=90)
                lines.append(f"{name},{occupations[s % len(occupations)]},{gender},{age},{skin},set{s:04d}")
        (root / "steer.csv").write_text("\n".join(lines) + "\n")
        settings = build_settings({"steer_corpus": str(root / "steer.csv")}, ENV)
        docs = documents.build("iris_bis_und", settings)
        n_images = n_sets * len(corners)
        orders = {"document": docs, "prompt-sorted": sorted(docs, key=lambda doc: doc["prompt"])}
        print(f"image decodes of iris_bis_und ({len(docs):,} documents, {n_images:,} images)")
        for order, requests in orders.items():
            for label, spill_mb in (("memory 8 + spill (default)", images.DEFAULT_SPILL_MB), ("memory 8, no spill", 0)):
                cache = images.reset_image_cache(images.DEFAULT_CACHE_SIZE, spill_mb)
                start = time.perf_counter()
                for doc in requests:
                    harness.doc_to_visual(doc)
                elapsed = time.perf_counter() - start
                stats = cache.stats
                print(
                    f"  {order:<14} {label:<27} decodes {stats.decodes:>7,}  spill rebuilds {stats.spill_hits:>7,}"
                    f"  per image {stats.decodes / n_images:5.2f}  {elapsed:6.2f} s ({1e6 * elapsed / len(docs):.0f} us/request)"
                )
        images.reset_image_cache()


def describe_machine() -> str:
    import torch

    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    return (
        f"{datetime.date.today().isoformat()}, {os.cpu_count()} CPU(s), load average {load}, "
        f"torch threads {torch.get_num_threads()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=10_000, help="answers per mapping line (default 10,000)")
    parser.add_argument("--aggregate", type=int, default=10_000, help="answers aggregated per task (default 10,000)")
    parser.add_argument("--sets", type=int, default=200, help="counterfactual sets of part 3 (default 200)")
    parser.add_argument("--decodes-only", action="store_true", help="part 3 only")
    args = parser.parse_args()
    print(describe_machine())
    if not args.decodes_only:
        bench_mapping(args.answers)
        bench_aggregation(args.aggregate)
    bench_decodes(args.sets)
    print(describe_machine())


if __name__ == "__main__":
    main()
