"""Reading the three kinds of face corpus into labelled entries, noting every bad item by name.

- a **UTKFace folder**: every image file below it (``.jpg .jpeg .png .bmp .webp``, any case), labels
  parsed from the file name; or exactly the images of a FairLens ``images_metadata.json``;
- a **manifest**: CSV (header row) or JSON lines (``.jsonl``; ``.json`` holds a list of objects) with
  ``path, gender, race, age`` and any extra attributes; relative paths are relative to the manifest;
- a **Hugging Face dataset** ``hf:NAME``: image and label columns mapped by ``FAIRLENS_HF_COLUMNS``.

A reader returns the entries it could label and a :class:`Problem` for each one it could not.
Image bytes are not read here (see :mod:`fairlens_tasks.corpus`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairlens_tasks.labels import Demographics, LabelError, parse_demographics, parse_utkface_name
from fairlens_tasks.settings import Settings, SettingsError
from fairness_evals.corpus import sources
from fairness_evals.corpus.sources import MANIFEST_SUFFIXES, Problem, Scan

__all__ = ["Entry", "Problem", "Scan", "scan"]

MANIFEST_LABELS = ("gender", "race", "age")
_LIST_NAME_FIELDS = ("filename", "file_name", "file", "image", "image_path", "path", "name")


@dataclass(frozen=True, kw_only=True)
class Entry(sources.Entry):
    """A FairLens image: its demographics, and a manifest's extra columns (``attributes``)."""

    demographics: Demographics
    attributes: tuple[tuple[str, str], ...] = ()


def corpus_kind(settings: Settings) -> str:
    if settings.is_hf:
        return "hf"
    path = Path(settings.corpus)
    if path.is_dir():
        return "utkface"
    if path.is_file():
        if path.suffix.lower() in MANIFEST_SUFFIXES:
            return "manifest"
        raise SettingsError(
            f"{settings.names['corpus']}={settings.corpus}: a manifest must end in {', '.join(MANIFEST_SUFFIXES)}"
        )
    raise SettingsError(f"{settings.names['corpus']}={settings.corpus}: no such folder or file")


def scan(settings: Settings) -> Scan:
    kind = corpus_kind(settings)
    if kind == "hf":
        return scan_hf(settings)
    if kind == "manifest":
        return scan_manifest(settings)
    if settings.image_list:
        return scan_image_list(settings)
    return scan_utkface(settings)


# --------------------------------------------------------------------------- UTKFace folder
def scan_utkface(settings: Settings) -> Scan:
    root = Path(settings.corpus)
    files, problems = sources.image_files(root)
    links_outside = len(problems)
    entries = []
    for path in files:
        relative = path.relative_to(root).as_posix()
        _add_entry(entries, problems, relative, relative, path, functools.partial(parse_utkface_name, path.name))
    return Scan("utkface", entries, problems, found=len(files) + links_outside)


def _add_entry(
    entries: list[Entry],
    problems: list[Problem],
    item: str,
    relative: str,
    path: Path,
    labels: Callable[[], Demographics],
) -> None:
    """Add the image at ``path`` with its ``labels()``, or, when they cannot be read, a problem naming ``item``."""
    try:
        demographics = labels()
    except LabelError as error:
        problems.append(Problem(item, str(error)))
        return
    entries.append(Entry(image_id=relative, demographics=demographics, path=str(path)))


def _list_records(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for key in ("images", "data", "records", "items"):
            if isinstance(data.get(key), list):
                return data[key]
        if all(isinstance(v, dict) for v in data.values()):
            return [{"filename": k, **v} for k, v in data.items()]
    raise SettingsError("the image list must be a JSON list of file names or of objects with a file name")


def _outside(root: Path, name: str) -> bool:
    """Whether the list entry ``name`` is absolute, climbs out with ``..``, or resolves (links) outside ``root``."""
    written = Path(name)
    if written.is_absolute() or written.drive or ".." in written.parts:
        return True
    target = root / written
    return target.exists() and not target.resolve().is_relative_to(root.resolve())


def scan_image_list(settings: Settings) -> Scan:
    """Exactly the images named in a FairLens ``images_metadata.json``, found in the UTKFace folder."""
    root = Path(settings.corpus)
    list_path = Path(settings.image_list or "")
    what = f"{settings.names['image_list']}={list_path}"
    text = sources.read_text(list_path, "image list", settings.names["image_list"])
    try:
        records = _list_records(json.loads(text))
    except json.JSONDecodeError as error:
        raise SettingsError(f"{what}: not valid JSON ({error.msg} at line {error.lineno})") from None
    except SettingsError as error:
        raise SettingsError(f"{what}: {error}") from None
    files, links = sources.image_files(root)
    by_name: dict[str, list[Path]] = {}
    for path in files:
        by_name.setdefault(path.name, []).append(path)
    linked_out = {Path(link.item).name for link in links}
    entries, problems, seen = [], [], set()
    label_map = settings.label_map_dict()
    for number, record in enumerate(records, start=1):
        item = f"{list_path.name} entry {number}"
        if isinstance(record, str):
            record = {"filename": record}
        name = next((record.get(f) for f in _LIST_NAME_FIELDS if isinstance(record, dict) and record.get(f)), None)
        if not name:
            problems.append(Problem(item, "names no image file"))
            continue
        name = str(name)
        item = f"{list_path.name} entry {number} ({name})"
        if _outside(root, name) or (not (root / name).is_file() and Path(name).name in linked_out):
            problems.append(
                Problem(
                    item, f"names a file outside the corpus folder {root}; give a path relative to it or a file name"
                )
            )
            continue
        candidates = [root / name] if (root / name).is_file() else by_name.get(Path(name).name, [])
        if not candidates:
            problems.append(Problem(item, f"no such image under {root}"))
            continue
        if len(candidates) > 1:
            problems.append(Problem(item, f"ambiguous: {len(candidates)} files of that name under {root}"))
            continue
        path = candidates[0]
        relative = path.relative_to(root).as_posix()
        if relative in seen:
            problems.append(Problem(item, "listed twice"))
            continue
        seen.add(relative)
        if all(record.get(k) is not None for k in MANIFEST_LABELS):
            labels = functools.partial(parse_demographics, record["gender"], record["race"], record["age"], label_map)
        else:
            labels = functools.partial(parse_utkface_name, path.name)
        _add_entry(entries, problems, item, relative, path, labels)
    return Scan("utkface", entries, problems, found=len(records), from_list=True)


# --------------------------------------------------------------------------- manifests
def _require_columns(manifest: Path) -> Callable[[list[str]], None]:
    def check(header: list[str]) -> None:
        missing = [c for c in ("path", *MANIFEST_LABELS) if c not in header]
        if missing:
            raise SettingsError(
                f"manifest {manifest} has no {', '.join(missing)} column (columns: {', '.join(header)})"
            )

    return check


def scan_manifest(settings: Settings) -> Scan:
    manifest = Path(settings.corpus)
    base = manifest.parent
    entries, problems = [], []
    first_line: dict[str, str] = {}
    label_map = settings.label_map_dict()
    found = 0
    for item, row, error in sources.manifest_rows(manifest, settings.names["corpus"], _require_columns(manifest)):
        found += 1
        if row is None:
            problems.append(Problem(item, error or "unreadable row"))
            continue
        raw_path = row.get("path")
        if raw_path is None or not str(raw_path).strip():
            problems.append(Problem(item, "missing path"))
            continue
        written = str(raw_path).strip()
        if written in first_line:
            problems.append(Problem(item, f"{written} is listed again (first at {first_line[written]})"))
            continue
        first_line[written] = item
        try:
            demographics = parse_demographics(row.get("gender"), row.get("race"), row.get("age"), label_map)
        except LabelError as error:
            problems.append(Problem(f"{item} ({written})", str(error)))
            continue
        path = Path(written).expanduser()
        path = path if path.is_absolute() else base / path
        extra = tuple(
            sorted((str(k), "" if v is None else str(v)) for k, v in row.items() if k not in ("path", *MANIFEST_LABELS))
        )
        entries.append(Entry(image_id=written, demographics=demographics, path=str(path), attributes=extra))
    return Scan("manifest", entries, problems, found=found)


# --------------------------------------------------------------------------- Hugging Face datasets
def scan_hf(settings: Settings) -> Scan:
    from fairlens_tasks.images import SPLIT_SETTING

    name = settings.hf_name
    dataset = sources.open_hf(name, settings.hf_split, SPLIT_SETTING, settings.names["corpus"])
    columns = {role: settings.column(role) for role in ("image", *MANIFEST_LABELS)}
    sources.require_hf_columns(dataset, name, columns, settings.names["hf_columns"])
    label_columns = {role: columns[role] for role in MANIFEST_LABELS}
    labels = dataset.select_columns(list(label_columns.values())).to_dict()
    decoded = sources.decoded_labels(dataset, labels, label_columns)
    entries, problems = [], []
    label_map = settings.label_map_dict()
    for index in range(len(dataset)):
        image_id = f"row-{index}"
        try:
            demographics = parse_demographics(
                decoded["gender"][index], decoded["race"][index], decoded["age"][index], label_map
            )
        except LabelError as error:
            problems.append(Problem(f"hf:{name} {image_id}", str(error)))
            continue
        entries.append(Entry(image_id=image_id, demographics=demographics, index=index))
    return Scan("hf", entries, problems, found=len(dataset))
