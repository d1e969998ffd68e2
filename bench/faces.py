"""Face detector calibration (issue 18): how many faces each detector setting finds on labelled images.

The labelled set is ``tests/support/face_calibration.py`` (LFW faces and non-faces from scikit-image, the
astronaut, natural photos without people, composites of 2-4 people; each as PNG, JPEG, greyscale and
enlarged copies). For every detector configuration the candidates are collected once at a permissive
threshold (cached on disk: the CNN takes seconds per image on a CPU), then every selection rule (score
threshold, minimum face size relative to the image, overlap suppression) is applied to them. Printed per
configuration and rule: one face per one-person image, recall, extra faces, false faces on images
without a person, exact counts on several-person images, format/colour/size invariance, seconds per
image; and the rule that meets the targets (one face >= 99 %, false faces <= 1 %, identical counts in
every variant) with the most headroom. ``--markdown`` prints the README table.

    .venv/bin/python bench/faces.py                       # every configuration (the CNN ones take ~1 h each)
    .venv/bin/python bench/faces.py --detectors hog       # HOG only (a few minutes)
    .venv/bin/python bench/faces.py --quick               # 20 LFW faces and non-faces, PNG and JPEG only
    .venv/bin/python bench/faces.py --markdown --cache ~/.cache/fairness-evals/faces
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from face_calibration import (  # noqa: E402
    VARIANTS,
    CalibrationImage,
    DetectorConfig,
    Measurement,
    RawDetections,
    Rule,
    calibration_set,
    measure,
    raw_detections,
)

CONFIGS = {
    "hog": [DetectorConfig("hog", 0), DetectorConfig("hog", 0, 512), DetectorConfig("hog", 1, 512)],
    "cnn": [DetectorConfig("cnn", 0, 512), DetectorConfig("cnn", 0, 800)],
}  # fmt: skip
SCORES = {"hog": (0.0, 0.1, 0.2, 0.3, 0.5), "cnn": (0.0, 0.3, 0.5, 0.9)}
SIZES = (0.0, 0.05, 0.1)
OVERLAPS = (1.0, 0.3)


def _cache_file(cache: Path, config: DetectorConfig, quick: bool) -> Path:
    import dlib

    tag = f"{config.kind}-up{config.upsample}-{config.resize_longest or 'native'}-dlib{dlib.__version__}"
    return cache / f"{tag}{'-quick' if quick else ''}.json"


def collect(
    config: DetectorConfig, images: list[CalibrationImage], cache: Path | None, quick: bool
) -> list[RawDetections]:
    """The raw candidates of ``config`` on every image, read from / written to ``cache`` by image name."""
    known: dict[str, RawDetections] = {}
    path = _cache_file(cache, config, quick) if cache else None
    if path and path.exists():
        known = {d["name"]: RawDetections.from_dict(d) for d in json.loads(path.read_text(encoding="utf-8"))}
    out = []
    start = time.perf_counter()
    for i, image in enumerate(images):
        if image.name not in known:
            known[image.name] = raw_detections(config, image)
            if path and i % 25 == 0:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps([r.to_dict() for r in known.values()]), encoding="utf-8")
        out.append(known[image.name])
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([r.to_dict() for r in known.values()]), encoding="utf-8")
    print(f"# {config.label}: {len(images)} images ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return out


def rules(kind: str) -> list[Rule]:
    return [Rule(s, z, o) for s in SCORES[kind] for z in SIZES for o in OVERLAPS]


def _fmt(value: float, digits: int = 3) -> str:
    return "–" if isinstance(value, float) and math.isnan(value) else f"{value:.{digits}f}"


HEAD = ["detector", "rule", "one face", "recall", "extra/img", "false img", "false/img", "several exact",
        "several recall", "invariant", "s/img"]  # fmt: skip


def cells(m: Measurement) -> list[str]:
    return [m.detector, m.rule, _fmt(m.one_face), _fmt(m.one_person_recall), _fmt(m.extra_faces),
            _fmt(m.false_face_images), _fmt(m.false_faces), _fmt(m.several_exact), _fmt(m.several_recall),
            _fmt(m.invariant), _fmt(m.seconds_per_image, 2)]  # fmt: skip


def render(rows: list[Measurement], markdown: bool) -> str:
    body = [cells(m) for m in rows]
    if markdown:
        lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in body)]) + "\n"
    widths = [max(len(x) for x in col) for col in zip(HEAD, *body, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(HEAD, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detectors", nargs="*", choices=sorted(CONFIGS), default=sorted(CONFIGS))
    parser.add_argument("--quick", action="store_true", help="20 LFW faces/non-faces, PNG and JPEG only")
    parser.add_argument("--lfw", type=int, default=100, help="LFW faces and non-faces for HOG (each; default all 100)")
    parser.add_argument(
        "--cnn-lfw",
        type=int,
        default=30,
        help="LFW faces and non-faces for the CNN (default 30: it takes 3-8 s an image)",
    )
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                        / "fairness-evals" / "face-calibration", help="raw detections, by configuration")  # fmt: skip
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--all-rules", action="store_true", help="print every rule, not only the best per setting")
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    args = parser.parse_args(argv)
    sets = {
        kind: calibration_set(n_lfw=20, variants=("png", "jpeg"), groups=2) if args.quick
        else calibration_set(n_lfw=args.lfw if kind == "hog" else args.cnn_lfw)
        for kind in args.detectors
    }  # fmt: skip
    for kind, images in sets.items():
        kinds = {im.kind for im in images}
        print(f"{kind}: {len(images)} images: "
              + ", ".join(f"{sum(im.kind == k for im in images)} {k}" for k in sorted(kinds))
              + f"; variants {', '.join(VARIANTS if not args.quick else ('png', 'jpeg'))}")  # fmt: skip
    measured: list[Measurement] = []
    shown: list[Measurement] = []
    notes: list[str] = []
    for kind in args.detectors:
        images = sets[kind]
        for config in CONFIGS[kind]:
            raws = collect(config, images, None if args.no_cache else args.cache, args.quick)
            rows = [measure(images, raws, rule, detector=config.label) for rule in rules(kind)]
            measured.extend(rows)
            plain = [m for m, rule in zip(rows, rules(kind), strict=True) if rule.min_size == 0 and rule.overlap == 1.0]
            shown.extend(rows if args.all_rules else plain)
            for m, rule in zip(rows, rules(kind), strict=True):
                base = next(p for p in plain if p.rule == Rule(rule.min_score).label)
                if m is not base and cells(m)[2:10] != cells(base)[2:10]:
                    notes.append(f"{config.label}: {m.rule} differs from {base.rule}")
            meeting = [m.rule for m in rows if m.meets_targets()]
            notes.append(f"{config.label}: rules meeting every target (one face >= 0.99, <= 0.01 false faces per "
                         f"image, identical counts in every variant): {', '.join(meeting) or 'none'}")  # fmt: skip
    print(render(shown, args.markdown))
    if not any("differs" in n for n in notes):
        print("No minimum face size (5 or 10 % of the shorter side) or overlap suppression (IoU 0.3) beyond dlib's "
              "own changes any number above.")  # fmt: skip
    print("\n".join(notes))
    from fairness_evals.faces.detection import DETECTOR_DEFAULTS

    defaults = {f"score>{DETECTOR_DEFAULTS[kind]['min_score']:g}" for kind in args.detectors}
    print("The default threshold of each detector is " + ", ".join(
        f"{kind} {DETECTOR_DEFAULTS[kind]['min_score']:g}" for kind in args.detectors) + ".")  # fmt: skip
    for m in shown:
        if m.variant_changes and m.rule in defaults:
            print(f"{m.detector} [{m.rule}] counts change between variants of: {', '.join(m.variant_changes[:12])}"
                  + (" ..." if len(m.variant_changes) > 12 else ""))  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps([m.row() for m in measured], indent=1, allow_nan=False, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
