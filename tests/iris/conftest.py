"""Fixtures for the IRIS tests: clean IRIS_* settings, fresh caches, and small synthetic corpora.

The pictures are flat colour patches, not people: the tests check reading, labelling, cropping, sampling,
pairing and scoring, never what a model sees. The FACET file is synthetic, in FACET's published
``annotations.csv`` format (FACET itself cannot be downloaded here).
"""

from __future__ import annotations

import csv
import json
import os
import random
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from PIL import Image

from iris_tasks import corpus, images
from iris_tasks.settings import ENV, build_settings
from iris_tasks.vocabulary import AGES, GENDERS, SKIN_TONES

TRIPLES = [(g, a, s) for g in GENDERS for a in AGES for s in SKIN_TONES]


@pytest.fixture(autouse=True)
def _clean_iris_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees an IRIS_* variable it did not set itself, or a corpus another test loaded."""
    for name in list(os.environ):
        if name.startswith("IRIS_"):
            monkeypatch.delenv(name, raising=False)
    corpus.clear()
    images.reset_image_cache(images.DEFAULT_CACHE_SIZE)


def write_png(path: Path, seed: int, size: tuple[int, int] = (40, 32)) -> Path:
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, tuple(rng.randrange(256) for _ in range(3))).save(path)
    return path


def write_manifest(path: Path, rows: list[dict]) -> Path:
    if path.suffix == ".csv":
        columns = list(dict.fromkeys(k for row in rows for k in row))
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def image_rows(
    root: Path, occupations: Iterable[str], per_triple: int = 1, *, prefix: str = "img", seed: int = 0
) -> list[dict]:
    """``per_triple`` images of every occupation x 18 attribute triples, written under ``root``."""
    rows = []
    n = 0
    for occupation in occupations:
        for gender, age, skin in TRIPLES:
            for _ in range(per_triple):
                n += 1
                name = f"{prefix}{n:04d}.png"
                write_png(root / name, seed * 10_007 + n)
                rows.append({"path": name, "occupation": occupation, "gender": gender, "age": age, "skin_tone": skin})
    return rows


@pytest.fixture
def settings_for() -> Callable[..., object]:
    def make(**values: object):
        return build_settings({k: (str(v) if isinstance(v, Path) else v) for k, v in values.items()}, ENV)

    return make


@pytest.fixture(scope="session")
def manifest_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """72 images: doctor, nurse, carpenter, teacher x the 18 triples; a CSV manifest."""
    root = tmp_path_factory.mktemp("iris-manifest")
    return write_manifest(root / "images.csv", image_rows(root, ["doctor", "nurse", "carpenter", "teacher"]))


def steer_rows(root: Path, sets: dict[str, str], triples: list[tuple[str, str, str]], *, truths=None) -> list[dict]:
    """One image per (set, triple); ``sets`` maps set id -> occupation."""
    rows = []
    n = 0
    for pair_id, occupation in sets.items():
        for gender, age, skin in triples:
            n += 1
            name = f"{pair_id}_{gender}_{age}_{skin}.png"
            write_png(root / name, 500 + n)
            row = {"path": name, "occupation": occupation, "gender": gender, "age": age, "skin_tone": skin,
                   "pair_id": pair_id}  # fmt: skip
            if truths:
                row.update(truths(pair_id, (gender, age, skin)))
            rows.append(row)
    return rows


CORNERS = [(g, a, s) for g in GENDERS for a in ("young", "older") for s in ("light", "dark")]


@pytest.fixture(scope="session")
def steer_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 counterfactual sets (doctor, nurse, carpenter, teacher) of 8 images: gender x {young, older} x
    {light, dark}, so every set has single, dual and triple pairs."""
    root = tmp_path_factory.mktemp("iris-steer")
    sets = {"set-a": "doctor", "set-b": "nurse", "set-c": "carpenter", "set-d": "teacher"}
    return write_manifest(root / "steer.csv", steer_rows(root, sets, CORNERS))


FACET_COLUMNS = [
    "person_id", "filename", "class1", "class2",
    "gender_presentation_masc", "gender_presentation_fem", "gender_presentation_non_binary", "gender_presentation_na",
    "age_presentation_young", "age_presentation_middle", "age_presentation_older", "age_presentation_na",
    *(f"skin_tone_{i}" for i in range(1, 11)), "skin_tone_na",
    "has_eyeware", "visible_face", "bounding_box",
]  # fmt: skip


def facet_row(person_id: int, filename: str, occupation: str, gender: str, age: str, mst: dict[int, int], box) -> dict:
    row = dict.fromkeys(FACET_COLUMNS, "0")
    row.update(person_id=str(person_id), filename=filename, class1=occupation, class2="")
    row[f"gender_presentation_{ {'male': 'masc', 'female': 'fem'}.get(gender, gender) }"] = "1"
    row[f"age_presentation_{age}"] = "1"
    for level, count in mst.items():
        row[f"skin_tone_{level}"] = str(count)
    row["bounding_box"] = "" if box is None else str({"x": box[0], "y": box[1], "width": box[2], "height": box[3]})
    return row


def write_facet(folder: Path, rows: list[dict], images_folder: Path | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "annotations.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=FACET_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return folder / "annotations.csv"


class Helpers:
    """The corpus builders above, for the test modules (conftest functions are not importable by name)."""

    TRIPLES = TRIPLES
    CORNERS = CORNERS
    write_png = staticmethod(write_png)
    write_manifest = staticmethod(write_manifest)
    image_rows = staticmethod(image_rows)
    steer_rows = staticmethod(steer_rows)
    facet_row = staticmethod(facet_row)
    write_facet = staticmethod(write_facet)


@pytest.fixture(scope="session")
def helpers() -> type[Helpers]:
    return Helpers
