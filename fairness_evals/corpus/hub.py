"""Hugging Face datasets as face corpora: opened once per process, images read as encoded bytes.

A corpus given as ``hf:NAME`` is a hub name, a ``save_to_disk`` folder or a data folder. The FairLens and
IRIS understanding tasks both read theirs through here; each passes ``split_setting``, the name of its own
split setting, so that a message about a missing or ambiguous split names the setting the user can change.
Images are never decoded here: :func:`hf_image_bytes` returns a row's encoded bytes, which the benchmarks'
decode caches (:mod:`fairness_evals.corpus.images`) and integrity checks (:mod:`fairness_evals.corpus.integrity`)
take from there.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

__all__ = ["EmptyDatasetError", "hf_dataset", "hf_image_bytes", "hf_undecoded"]

#: What a message names when the caller gives no split setting of its own.
SPLIT_SETTING = "the corpus's split setting"

_LOCK = threading.Lock()


class EmptyDatasetError(ValueError):
    """The dataset (or the chosen split) has no rows."""


_DATASETS: dict[tuple[str, str], Any] = {}


def hf_dataset(name: str, split: str | None, *, split_setting: str = SPLIT_SETTING) -> Any:
    """The dataset ``name`` (a hub name, a ``save_to_disk`` folder or a data folder), opened once per process.

    Images are not decoded here. ``split`` None takes the only split, or "test" when there are several;
    ``ValueError`` names ``split_setting`` when neither exists or ``split`` is not there;
    :class:`EmptyDatasetError` when the dataset or the split has no rows.
    """
    key = (name, split or "")
    with _LOCK:
        found = _DATASETS.get(key)
        if found is not None:
            return found
    import datasets

    path = Path(name).expanduser()
    if path.is_dir() and ((path / "state.json").is_file() or (path / "dataset_dict.json").is_file()):
        try:
            loaded = datasets.load_from_disk(str(path))
        except IndexError:  # datasets cannot concatenate the no tables of a dataset saved without rows
            raise EmptyDatasetError(f"hf:{name} has no rows") from None
    else:
        loaded = datasets.load_dataset(str(path) if path.exists() else name)
    if isinstance(loaded, datasets.DatasetDict):
        splits = list(loaded)
        if not splits:
            raise EmptyDatasetError(f"hf:{name} has no splits")
        if split is None:
            if len(splits) == 1:
                split = splits[0]
            elif "test" in splits:
                split = "test"
            else:
                raise ValueError(f"hf:{name} has splits {', '.join(splits)}; choose one with {split_setting}")
        if split not in loaded:
            raise ValueError(f"hf:{name} has no split {split!r}; it has {', '.join(splits)}")
        loaded = loaded[split]
    elif split is not None and str(loaded.split) not in (split, "None"):
        raise ValueError(f"hf:{name} is a single {loaded.split!s} split, not {split!r}")
    if len(loaded) == 0:
        raise EmptyDatasetError(f"hf:{name} has no rows" + (f" in split {split!r}" if split else ""))
    with _LOCK:
        _DATASETS.setdefault(key, loaded)
        return _DATASETS[key]


def hf_undecoded(name: str, split: str | None, column: str, *, split_setting: str = SPLIT_SETTING) -> Any:
    """The dataset with ``column`` left undecoded (``{"bytes", "path"}`` rows), opened once per process."""
    import datasets

    key = (name, f"{split or ''}\0{column}")
    with _LOCK:
        found = _DATASETS.get(key)
        if found is not None:
            return found
    dataset = hf_dataset(name, split, split_setting=split_setting)
    if column not in dataset.column_names:
        raise ValueError(f"hf:{name} has no column {column!r}; it has {', '.join(dataset.column_names)}")
    feature = dataset.features[column]
    if isinstance(feature, datasets.Image) and feature.decode:
        dataset = dataset.cast_column(column, datasets.Image(decode=False))
    with _LOCK:
        _DATASETS.setdefault(key, dataset)
        return _DATASETS[key]


def hf_image_bytes(
    name: str, split: str | None, column: str, index: int, *, split_setting: str = SPLIT_SETTING
) -> bytes:
    """The encoded bytes of row ``index``'s image (no decoding)."""
    value = hf_undecoded(name, split, column, split_setting=split_setting)[int(index)][column]
    if isinstance(value, dict):
        if value.get("bytes"):
            return bytes(value["bytes"])
        if value.get("path"):
            return Path(value["path"]).read_bytes()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return Path(value).read_bytes()
    raise ValueError(f"hf:{name} row {index}: column {column!r} holds no image ({type(value).__name__})")
