"""Reading corpus items that FairLens and IRIS share: an entry and a scan, a bad item, the folder scan, manifests
and Hugging Face datasets.

A reader names every bad item with a :class:`Problem` instead of stopping at the first; unless told to skip
them, a run with bad items stops with one message that lists them (:func:`bad_input_message`). Each benchmark
subclasses :class:`Entry` with its own labels (FairLens's demographics, IRIS's person, box and set) and keeps only
what differs: which columns it reads and how it parses their values.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals import jsonio
from fairness_evals.corpus.settings import SettingsError, json_value

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
MANIFEST_SUFFIXES = (".csv", ".jsonl", ".json")
MAX_LISTED_PROBLEMS = 8


@dataclass(frozen=True)
class Entry:
    """One labelled image of a corpus: a file (``path``) or a dataset row (``index``), named by ``image_id``.

    The benchmarks add their labels as keyword-only fields (``@dataclass(frozen=True, kw_only=True)``).
    """

    image_id: str
    path: str | None = None
    index: int | None = None


@dataclass
class Scan:
    """What a reader found: the entries it could label, a problem per bad item, and ``found`` items in all.

    ``excluded`` counts the items left out by reason without being errors (IRIS: FACET persons outside its label
    sets); ``from_list`` says the entries are exactly those of a FairLens image list (no filter, no sampling).
    """

    kind: str
    entries: list[Any]
    problems: list[Problem]
    found: int
    excluded: Counter[str] = field(default_factory=Counter)
    from_list: bool = False


@dataclass(frozen=True)
class Problem:
    """A bad item: ``item`` names it (file, manifest line, dataset row), ``message`` says what is wrong."""

    item: str
    message: str

    def __str__(self) -> str:
        return f"{self.item}: {self.message}"


def bad_input_message(corpus: str, problems: list[str], skip: str) -> str:
    """The error that stops a run on bad input: ``corpus`` names it ("FairLens corpus /data/x"), the first
    :data:`MAX_LISTED_PROBLEMS` problems are listed, and ``skip`` is the setting that skips them instead."""
    shown = "; ".join(f"({i}) {p}" for i, p in enumerate(problems[:MAX_LISTED_PROBLEMS], start=1))
    more = f"; and {len(problems) - MAX_LISTED_PROBLEMS} more" if len(problems) > MAX_LISTED_PROBLEMS else ""
    return (
        f"{corpus}: {len(problems)} bad input item(s); nothing was sent to the model. "
        f"Fix them, or set {skip} to skip and count them: {shown}{more}"
    )


def read_text(path: Path, what: str, setting: str) -> str:
    """The UTF-8 text of ``path``, a ``what`` ("manifest", "image list") given by ``setting``, without a byte-order
    mark; :class:`SettingsError` naming the setting and the file (and line) when it cannot be read or is not UTF-8
    (:func:`fairness_evals.jsonio.read_text`)."""
    try:
        return jsonio.read_text(path, what).removeprefix("\ufeff")
    except ValueError as error:
        raise SettingsError(f"{setting}: {error}") from None


def image_files(root: Path) -> tuple[list[Path], list[Problem]]:
    """The image files below ``root`` (:data:`IMAGE_SUFFIXES`, any case), sorted by their path relative to it, and a
    problem for each file link whose target lies outside ``root`` (named by the link's relative path).

    Links to folders are not followed (``Path.rglob``); a link to a file inside ``root`` is kept.
    """
    inside_root = root.resolve()
    files, outside = [], []
    for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
        if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file():
            continue
        if path.is_symlink() and not path.resolve().is_relative_to(inside_root):
            relative = path.relative_to(root).as_posix()
            outside.append(Problem(relative, f"a link to {path.resolve()}, outside the corpus folder {root}"))
            continue
        files.append(path)
    return files, outside


def csv_rows(
    path: Path, setting: str, check_header: Callable[[list[str]], None] | None = None, what: str = "manifest"
) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """(item name, row, None) for each data row of a CSV file with a header row (a ``what`` given by ``setting``),
    keys stripped.

    ``check_header`` sees the stripped header before any row and raises :class:`SettingsError` for a missing
    column; cells beyond the header are dropped.
    """
    reader = csv.DictReader(io.StringIO(read_text(path, what, setting), newline=""))
    header = [h.strip() for h in (reader.fieldnames or [])]
    if check_header is not None:
        check_header(header)
    for row in reader:
        clean = {(k or "").strip(): v for k, v in row.items() if k is not None}
        yield f"{path.name} line {reader.line_num}", clean, None


def manifest_rows(
    path: Path, setting: str, check_header: Callable[[list[str]], None] | None = None
) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """(item name, row or None, error) for each row of a CSV (:func:`csv_rows`), JSON-lines or JSON manifest given
    by ``setting``."""
    if path.suffix.lower() == ".csv":
        return csv_rows(path, setting, check_header)
    return json_manifest_rows(path, setting)


def json_manifest_rows(path: Path, setting: str) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """(item name, row or None, error) for each row of a JSON list (``.json``) or JSON-lines manifest given by
    ``setting``.

    A ``.json`` file that is not a list of rows stops the run (:class:`SettingsError`); a row that is not a
    JSON object, or a line that is not JSON, is a bad item.
    """
    text = read_text(path, "manifest", setting)
    if path.suffix.lower() == ".json":
        data = json_value(text, f"manifest {path}")
        if not isinstance(data, list):
            raise SettingsError(f"manifest {path}: a .json manifest must hold a list of objects (use .jsonl for lines)")
        for number, row in enumerate(data, start=1):
            if isinstance(row, dict):
                yield f"{path.name} item {number}", row, None
            else:
                yield f"{path.name} item {number}", None, "not a JSON object"
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            yield f"{path.name} line {number}", None, f"not valid JSON ({error.msg})"
            continue
        if isinstance(row, dict):
            yield f"{path.name} line {number}", row, None
        else:
            yield f"{path.name} line {number}", None, "not a JSON object"


def open_hf(name: str, split: str | None, split_setting: str, corpus_setting: str) -> Any:
    """The dataset of an ``hf:name`` corpus (:func:`fairness_evals.corpus.hub.hf_dataset`), which has rows;
    :class:`SettingsError` naming ``corpus_setting`` when it cannot be opened or has no rows."""
    from fairness_evals.corpus.hub import EmptyDatasetError, hf_dataset

    try:
        return hf_dataset(name, split, split_setting=split_setting)
    except (FileNotFoundError, ConnectionError, OSError) as error:
        raise SettingsError(f"{corpus_setting}=hf:{name}: cannot open the dataset ({error})") from None
    except EmptyDatasetError as error:
        raise SettingsError(f"{corpus_setting}={error}; a corpus needs at least one image") from None
    except ValueError as error:
        raise SettingsError(str(error)) from None


def require_hf_columns(dataset: Any, name: str, columns: Mapping[str, str], option: str) -> None:
    """:class:`SettingsError` unless ``hf:name`` has every column of ``columns`` (role -> column name)."""
    missing = [f"{role}={col}" for role, col in columns.items() if col not in dataset.column_names]
    if missing:
        raise SettingsError(
            f"hf:{name} lacks the column(s) {', '.join(missing)} (it has {', '.join(dataset.column_names)}); "
            f"map them with {option}"
        )


def decoded_labels(dataset: Any, table: Mapping[str, list[Any]], columns: Mapping[str, str]) -> dict[str, list[Any]]:
    """Per role, the values of its column in ``table``; a ``ClassLabel`` column's integers become their names
    (``None`` for an integer outside the class range)."""
    import datasets

    decoded: dict[str, list[Any]] = {}
    for role, column in columns.items():
        values = table[column]
        feature = dataset.features[column]
        if isinstance(feature, datasets.ClassLabel):
            values = [
                feature.int2str(v) if isinstance(v, int) and 0 <= v < feature.num_classes else None for v in values
            ]
        decoded[role] = values
    return decoded
