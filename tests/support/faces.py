"""Synthetic face-corpus fixtures: tiny JPEGs with UTKFace names, manifests, a Hugging Face dataset.

The pictures are flat colour patches with a stripe, not faces: the tests check reading, labelling,
sampling and decoding, never what a model sees. :func:`real_photo` returns a real photograph that
ships with scikit-learn (a dependency of lmms-eval's sentence-transformers), to exercise a camera JPEG.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from PIL import Image, ImageDraw

# One age per band inside 25-65, plus ages the filter must drop.
BAND_AGES = {"young": (25, 29), "middle": (30, 59), "senior": (60, 65)}


def utkface_name(age: int, gender: int, race: int, stamp: int) -> str:
    return f"{age}_{gender}_{race}_{20170101000000000 + stamp}.jpg.chip.jpg"


def write_jpeg(path: Path, seed: int, size: tuple[int, int] = (48, 48)) -> Path:
    rng = random.Random(seed)
    image = Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3)))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, size[1] // 3, size[0], size[1] // 2), fill=tuple(rng.randrange(256) for _ in range(3)))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, format="JPEG", quality=85)
    return path


def make_utkface_folder(
    root: Path,
    per_stratum: int | Sequence[int] = 2,
    *,
    extra_ages: Iterable[int] = (),
    seed: int = 0,
    size: tuple[int, int] = (48, 48),
) -> list[Path]:
    """``per_stratum`` images in each of the 30 gender x race x band strata (an int, or 30 counts in
    gender-major, race, band order), plus one image per age in ``extra_ages`` (male, White)."""
    counts = [per_stratum] * 30 if isinstance(per_stratum, int) else list(per_stratum)
    rng = random.Random(seed)
    paths = []
    stamp = 0
    i = 0
    for gender in range(2):
        for race in range(5):
            for low, high in BAND_AGES.values():
                for _ in range(counts[i]):
                    stamp += 1
                    name = utkface_name(rng.randint(low, high), gender, race, stamp)
                    paths.append(write_jpeg(root / name, seed * 100_003 + stamp, size))
                i += 1
    for age in extra_ages:
        stamp += 1
        paths.append(write_jpeg(root / utkface_name(age, 0, 0, stamp), seed * 100_003 + stamp, size))
    return paths


def corrupt(path: Path) -> Path:
    """Cut a JPEG in half (a truncated file)."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def write_manifest(path: Path, rows: Sequence[dict], kind: str | None = None) -> Path:
    kind = kind or path.suffix.lstrip(".")
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        fields: list[str] = []
        for row in rows:
            fields.extend(k for k in row if k not in fields)
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
    elif kind == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        path.write_text(json.dumps(list(rows)), encoding="utf-8")
    return path


def manifest_rows_for(folder: Path, paths: Sequence[Path], *, relative_to: Path | None = None) -> list[dict]:
    """Manifest rows (gender/race as words, age as a number) for UTKFace-named ``paths``."""
    from fairlens_tasks.labels import parse_utkface_name

    rows = []
    for path in paths:
        d = parse_utkface_name(path.name)
        shown = path.relative_to(relative_to) if relative_to else path
        rows.append(
            {"path": str(shown), "gender": d.gender.lower(), "race": d.race, "age": d.age, "camera": "synthetic"}
        )
    return rows


def make_hf_dataset(folder: Path, paths: Sequence[Path], *, save: str = "disk") -> Path:
    """A dataset with columns ``img`` (Image), ``sex`` (ClassLabel male/female), ``ethnicity`` (str), ``years``.

    ``save="disk"`` writes it with ``save_to_disk``; ``"parquet"`` writes a data folder that
    ``datasets.load_dataset(folder)`` reads.
    """
    import datasets

    from fairlens_tasks.labels import parse_utkface_name

    labels = [parse_utkface_name(p.name) for p in paths]
    features = datasets.Features(
        {
            "img": datasets.Image(),
            "sex": datasets.ClassLabel(names=["male", "female"]),
            "ethnicity": datasets.Value("string"),
            "years": datasets.Value("int32"),
        }
    )
    dataset = datasets.Dataset.from_dict(
        {
            "img": [{"bytes": p.read_bytes(), "path": None} for p in paths],
            "sex": [0 if d.gender == "Male" else 1 for d in labels],
            "ethnicity": [d.race for d in labels],
            "years": [d.age for d in labels],
        },
        features=features,
    )
    if save == "disk":
        dataset.save_to_disk(str(folder))
    else:
        (folder / "data").mkdir(parents=True, exist_ok=True)
        dataset.to_parquet(str(folder / "data" / "test-00000-of-00001.parquet"))
    return folder


def real_photo() -> Path:
    """A real camera photograph (JPEG, 640x427) shipped with scikit-learn."""
    import importlib.util

    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("scikit-learn is not installed; it ships the sample photograph")
    return Path(spec.submodule_search_locations[0]) / "datasets" / "images" / "china.jpg"
