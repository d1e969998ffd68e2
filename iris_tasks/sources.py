"""Reading an IRIS image corpus into labelled entries, naming every bad item.

Three kinds (README "Corpora"):

- **FACET**: its ``annotations.csv`` (one row per annotated person) and the image folder. Written from the
  published format description (columns ``person_id, filename, class1, gender_presentation_{masc, fem,
  non_binary, na}, age_presentation_{young, middle, older, na}, skin_tone_{1..10, na}`` with annotator
  counts, ``bounding_box`` as ``{"x", "y", "width", "height"}`` in pixels) and tested on a synthetic file in
  that format, since FACET cannot be downloaded here. A person's label is the unique largest count among
  the masculine/feminine (resp. young/middle/older) columns; ties, non-binary or "na" majorities leave the
  person out of IRIS's binary-gender, three-age label sets (*excluded*, counted, not an error). Skin tone:
  the annotators' Monk Skin Tone counts summed per IRIS group (MST 1-5 light, 6-7 middle, 8-10 dark, the
  project's mapping in :data:`fairness_evals.faces.labels.MST_TO_SKIN_GROUP`), unique largest group; no count is
  excluded. The person is cropped to the bounding box.
- **manifest**: CSV (header row), JSON lines (``.jsonl``) or a JSON list (``.json``) with ``path,
  occupation, gender, age, skin_tone`` (also accepted: ``filename``/``file_name``/``image``,
  ``gender_label``, ``age_label``, ``skin``/``skin_label``: IRIS's own ``annotations.csv`` names), an
  optional ``bounding_box``, ``pair_id`` (set id; required for counterfactual sets) and, for the objective
  questions of ``iris_bis_und``, optional truth columns named by the question key (``accessories``...).
  Relative paths are relative to the manifest.
- **Hugging Face dataset** ``hf:NAME``: columns mapped by ``IRIS_HF_COLUMNS`` / ``IRIS_STEER_HF_COLUMNS``.

A reader returns the entries it could label, the excluded ones, and a :class:`Problem` per bad item.
Image bytes are not read here (:mod:`iris_tasks.corpus` checks the sampled images).
"""

from __future__ import annotations

import ast
import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairness_evals.corpus import sources
from fairness_evals.corpus.sources import MANIFEST_SUFFIXES, Problem, Scan
from iris_tasks.settings import HF_PREFIX, Settings, SettingsError
from iris_tasks.vocabulary import LabelError, Person, parse_person, task_questions

__all__ = ["Entry", "Problem", "Scan", "facet_labels", "objective_keys", "parse_box", "scan"]

FACET_FILE = "annotations.csv"
FACET_REQUIRED = (
    "filename", "class1", "gender_presentation_masc", "gender_presentation_fem", "age_presentation_young",
    "age_presentation_middle", "age_presentation_older", *(f"skin_tone_{i}" for i in range(1, 11)),
)  # fmt: skip
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "path": ("path", "filename", "file_name", "image", "image_path", "file"),
    "occupation": ("occupation", "class1"),
    "gender": ("gender", "gender_label"),
    "age": ("age", "age_label", "age_group"),
    "skin_tone": ("skin_tone", "skin", "skin_label", "skin_group"),
    "pair_id": ("pair_id", "set_id", "pair", "counterfactual_set"),
}
_TRUE = {"yes", "y", "true", "t", "1"}
_FALSE = {"no", "n", "false", "f", "0"}


def objective_keys() -> tuple[str, ...]:
    """Truth-column names of the objective (DHR) questions."""
    return tuple(q.key for q in task_questions("iris_bis_und", "yes_no"))


@dataclass(frozen=True, kw_only=True)
class Entry(sources.Entry):
    """An IRIS image: the person it shows, optionally a crop box, its counterfactual set and its annotations."""

    person: Person
    box: tuple[float, float, float, float] | None = None  # left, top, right, bottom in pixels
    pair_id: str = ""
    truths: tuple[tuple[str, int], ...] = ()  # (objective question key, 0/1) for annotated keys


def corpus_kind(corpus: str, name: str) -> str:
    if corpus.startswith(HF_PREFIX):
        return "hf"
    path = Path(corpus)
    if path.is_dir():
        if (path / FACET_FILE).is_file():
            return "facet"
        raise SettingsError(f"{name}={corpus}: a folder must hold FACET's {FACET_FILE}")
    if not path.is_file():
        raise SettingsError(f"{name}={corpus}: no such folder or file")
    if path.suffix.lower() not in MANIFEST_SUFFIXES:
        raise SettingsError(f"{name}={corpus}: a manifest must end in {', '.join(MANIFEST_SUFFIXES)}")
    if path.suffix.lower() == ".csv":
        first = sources.read_text(path, "manifest", name).partition("\n")[0]
        header = {h.strip() for h in next(csv.reader(io.StringIO(first)), [])}
        if {"class1", "gender_presentation_masc"} <= header:
            return "facet"
    return "manifest"


# --------------------------------------------------------------------------- shared helpers
def parse_box(raw: object) -> tuple[float, float, float, float] | None:
    """``{"x", "y", "width", "height"}`` (JSON or a Python dict literal, FACET's spelling) -> (l, t, r, b).

    ``None`` for an empty value; ``ValueError`` for anything else that is not a box of positive size.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()) or (isinstance(raw, float) and raw != raw):
        return None
    value: Any = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(raw.strip())
            except (ValueError, SyntaxError):
                raise ValueError(f"bounding_box {raw!r} is not a {{x, y, width, height}} object") from None
    if not isinstance(value, Mapping) or not {"x", "y", "width", "height"} <= set(value):
        raise ValueError(f"bounding_box {raw!r} lacks x, y, width or height")
    try:
        x, y, w, h = (float(value[k]) for k in ("x", "y", "width", "height"))
    except (TypeError, ValueError):
        raise ValueError(f"bounding_box {raw!r} has a non-numeric field") from None
    if not all(v == v and abs(v) != float("inf") for v in (x, y, w, h)) or w <= 0 or h <= 0:
        raise ValueError(f"bounding_box {raw!r} has no positive area")
    return (x, y, x + w, y + h)


def parse_truth(value: object) -> int | None:
    """A yes/no annotation as 1/0; ``None`` when empty; ``ValueError`` otherwise."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, bool):
        return int(value)
    text = str(int(value) if isinstance(value, float) and value.is_integer() else value).strip().lower()
    if not text:
        return None
    if text in _TRUE:
        return 1
    if text in _FALSE:
        return 0
    raise ValueError(f"{value!r} is not yes/no (or true/false, 1/0)")


def _pick(row: Mapping[str, Any], role: str) -> Any:
    for column in COLUMN_ALIASES[role]:
        if column in row and row[column] not in (None, ""):
            return row[column]
    return None


def set_id(value: object) -> str:
    """A counterfactual set id as text; ``""`` when missing. An integer id 0 is an id, not a missing one."""
    return "" if value is None else str(value).strip()


def _truths(row: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    out = []
    for key in objective_keys():
        if key in row:
            try:
                value = parse_truth(row[key])
            except ValueError as error:
                raise LabelError(f"{key}: {error}") from None
            if value is not None:
                out.append((key, value))
    return tuple(out)


# --------------------------------------------------------------------------- FACET
def _count(row: Mapping[str, str], column: str) -> float:
    raw = (row.get(column) or "").strip()
    if not raw:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        raise LabelError(f"{column} {raw!r} is not a count") from None
    if value < 0 or value != value:
        raise LabelError(f"{column} {raw!r} is not a count")
    return value


def _unique_max(counts: dict[str, float]) -> str | None:
    top = max(counts.values())
    winners = [k for k, v in counts.items() if v == top]
    return winners[0] if top > 0 and len(winners) == 1 else None


def facet_labels(row: Mapping[str, str]) -> tuple[str | None, str | None, str | None, str]:
    """(gender, age, skin tone or None when excluded, reason) of one FACET person row."""
    from fairness_evals.faces.labels import MST_TO_SKIN_GROUP

    gender = _unique_max(
        {
            "male": _count(row, "gender_presentation_masc"),
            "female": _count(row, "gender_presentation_fem"),
            "non_binary": _count(row, "gender_presentation_non_binary"),
            "na": _count(row, "gender_presentation_na"),
        }
    )
    age = _unique_max(
        {
            "young": _count(row, "age_presentation_young"),
            "middle": _count(row, "age_presentation_middle"),
            "older": _count(row, "age_presentation_older"),
            "na": _count(row, "age_presentation_na"),
        }
    )
    groups = {"light": 0.0, "middle": 0.0, "dark": 0.0}
    for level in range(1, 11):
        groups[MST_TO_SKIN_GROUP[level]] += _count(row, f"skin_tone_{level}")
    skin = _unique_max(groups)
    reasons = []
    if gender not in ("male", "female"):
        reasons.append("gender not annotated as masculine or feminine by a majority")
        gender = None
    if age not in ("young", "middle", "older"):
        reasons.append("age group not annotated by a majority")
        age = None
    if skin is None:
        reasons.append("no majority skin-tone group")
    return gender, age, skin, "; ".join(reasons)


def _facet_header(csv_path: Path) -> Callable[[list[str]], None]:
    def check(header: list[str]) -> None:
        missing = [c for c in FACET_REQUIRED if c not in header]
        if missing:
            raise SettingsError(f"FACET file {csv_path} has no {', '.join(missing[:4])} column(s)")

    return check


def scan_facet(corpus: str, settings: Settings) -> Scan:
    """Every person row of a FACET ``annotations.csv``; images found under ``IRIS_IMAGE_ROOT``."""
    csv_path = Path(corpus) / FACET_FILE if Path(corpus).is_dir() else Path(corpus)
    root = Path(settings.image_root) if settings.image_root else csv_path.parent
    files, links = sources.image_files(root)
    images: dict[str, list[Path]] = {}
    for path in files:
        images.setdefault(path.name, []).append(path)
    linked_out = {Path(link.item).name: link for link in links}
    entries, problems = [], []
    excluded: Counter[str] = Counter()
    found = 0
    label_map = settings.label_map_dict()
    seen: set[str] = set()
    facet_rows = sources.csv_rows(csv_path, settings.names["corpus"], _facet_header(csv_path), "FACET file")
    for where, cells, _ in facet_rows:
        row = {k: (v or "") for k, v in (cells or {}).items()}
        found += 1
        name = row["filename"].strip()
        person_id = row.get("person_id", "").strip() or str(found)
        image_id = f"{name}#{person_id}"
        if image_id in seen:
            problems.append(Problem(where, f"person {person_id} of {name} is listed again"))
            continue
        seen.add(image_id)
        try:
            gender, age, skin, reason = facet_labels(row)
            if reason:
                excluded[reason] += 1
                continue
            person = parse_person(row["class1"], gender, age, skin, label_map)
            box = parse_box(row.get("bounding_box"))
        except (LabelError, ValueError) as error:
            problems.append(Problem(f"{where} ({image_id})", str(error)))
            continue
        candidates = images.get(Path(name).name, []) if name else []
        if not candidates and Path(name).name in linked_out:
            link = linked_out[Path(name).name]
            problems.append(Problem(f"{where} ({image_id})", f"{link.item} is {link.message}"))
            continue
        if not candidates:
            problems.append(Problem(f"{where} ({image_id})", f"no image {name!r} under {root}"))
            continue
        if len(candidates) > 1:
            problems.append(Problem(f"{where} ({image_id})", f"{len(candidates)} files named {name!r} under {root}"))
            continue
        entries.append(Entry(image_id=image_id, person=person, path=str(candidates[0]), box=box))
    return Scan("facet", entries, problems, found, excluded)


# --------------------------------------------------------------------------- manifests
def _manifest_header(manifest: Path, need_pairs: bool) -> Callable[[list[str]], None]:
    def check(header: list[str]) -> None:
        roles = ("path", "occupation", "gender", "age", "skin_tone", *(("pair_id",) if need_pairs else ()))
        missing = [r for r in roles if not any(c in header for c in COLUMN_ALIASES[r])]
        if missing:
            raise SettingsError(
                f"manifest {manifest} has no {', '.join(missing)} column (columns: {', '.join(header)})"
            )

    return check


def scan_manifest(corpus: str, settings: Settings, *, need_pairs: bool) -> Scan:
    manifest = Path(corpus)
    entries, problems = [], []
    first_line: dict[str, str] = {}
    label_map = settings.label_map_dict()
    found = 0
    setting = settings.names["steer_corpus" if need_pairs else "corpus"]
    rows = sources.manifest_rows(manifest, setting, _manifest_header(manifest, need_pairs))
    for item, row, error in rows:
        found += 1
        if row is None:
            problems.append(Problem(item, error or "unreadable row"))
            continue
        written = _pick(row, "path")
        if written is None or not str(written).strip():
            problems.append(Problem(item, "missing path"))
            continue
        written = str(written).strip()
        pair_id = set_id(_pick(row, "pair_id"))
        key = f"{pair_id}\0{written}"
        if key in first_line:
            problems.append(Problem(item, f"{written} is listed again (first at {first_line[key]})"))
            continue
        first_line[key] = item
        if need_pairs and not pair_id:
            problems.append(Problem(f"{item} ({written})", "missing pair_id (the counterfactual set of the image)"))
            continue
        try:
            person = parse_person(
                _pick(row, "occupation"), _pick(row, "gender"), _pick(row, "age"), _pick(row, "skin_tone"), label_map
            )
            box = parse_box(row.get("bounding_box"))
            truths = _truths(row)
        except (LabelError, ValueError) as error:
            problems.append(Problem(f"{item} ({written})", str(error)))
            continue
        path = Path(written).expanduser()
        path = path if path.is_absolute() else manifest.parent / path
        image_id = f"{pair_id}/{written}" if pair_id else written
        entries.append(Entry(image_id=image_id, person=person, path=str(path), box=box, pair_id=pair_id, truths=truths))
    return Scan("manifest", entries, problems, found)


# --------------------------------------------------------------------------- Hugging Face datasets
def scan_hf(corpus: str, settings: Settings, *, steer: bool) -> Scan:
    name = corpus[len(HF_PREFIX) :]
    split = settings.steer_hf_split if steer else settings.hf_split
    columns = dict(settings.steer_hf_columns if steer else settings.hf_columns)
    split_name = settings.names["steer_hf_split" if steer else "hf_split"]
    columns_name = settings.names["steer_hf_columns" if steer else "hf_columns"]
    dataset = sources.open_hf(name, split, split_name, settings.names["steer_corpus" if steer else "corpus"])
    sources.require_hf_columns(dataset, name, columns, columns_name)
    label_columns = {role: column for role, column in columns.items() if role != "image"}
    truth_keys = [k for k in objective_keys() if k in dataset.column_names] if steer else []
    table = dataset.select_columns([*label_columns.values(), *truth_keys]).to_dict()
    decoded = sources.decoded_labels(dataset, table, label_columns)
    entries, problems = [], []
    label_map = settings.label_map_dict()
    for index in range(len(dataset)):
        item = f"hf:{name} row-{index}"
        pair_id = set_id(decoded["pair_id"][index]) if steer else ""
        if steer and not pair_id:
            problems.append(Problem(item, "missing pair_id (the counterfactual set of the image)"))
            continue
        try:
            person = parse_person(*(decoded[r][index] for r in ("occupation", "gender", "age", "skin_tone")), label_map)
            truths = _truths({k: table[k][index] for k in truth_keys})
        except (LabelError, ValueError) as error:
            problems.append(Problem(item, str(error)))
            continue
        image_id = f"{pair_id}/row-{index}" if pair_id else f"row-{index}"
        entries.append(Entry(image_id=image_id, person=person, index=index, pair_id=pair_id, truths=truths))
    return Scan("hf", entries, problems, len(dataset))


def scan(corpus: str, settings: Settings, *, steer: bool) -> Scan:
    """Read ``corpus`` (IRIS_CORPUS, or IRIS_STEER_CORPUS with ``steer``)."""
    name = settings.names["steer_corpus" if steer else "corpus"]
    kind = corpus_kind(corpus, name)
    if kind == "hf":
        return scan_hf(corpus, settings, steer=steer)
    if kind == "facet":
        if steer:
            raise SettingsError(
                f"{name}={corpus}: FACET has no counterfactual sets; give a manifest or hf:NAME with a pair_id column"
            )
        return scan_facet(corpus, settings)
    return scan_manifest(corpus, settings, need_pairs=steer)
