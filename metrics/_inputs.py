"""Input checks shared by the metric modules: whole numbers, one-dimensional labels, 0/1 indicator flags, and the per-attribute
labels, reference rows and label counts of the metrics that compare a model's attribute shares with a reference
table (the IRIS JSD and stereotype drift scores).

Each raises ``ValueError`` naming the argument and, for labels, the first bad position, so a user calling a
metric on their own data learns what is wrong without reading a traceback into numpy.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray


def whole_number(value: object, name: str, *, minimum: int, meaning: str | None = None) -> int:
    """``value`` as an int if it is an integer (Python or numpy, not a bool) of at least ``minimum``, else ValueError
    naming it ("must be a non-negative integer", "a positive integer", "an integer >= m", then ``meaning``)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        kind = {0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
        raise ValueError(f"{name} must be {kind}{f' ({meaning})' if meaning else ''}, got {value!r}")
    return int(value)


def labels_1d(values: ArrayLike | Sequence[Hashable], name: str) -> list[Hashable]:
    """A list of hashable, non-missing labels from a one-dimensional input (tuple labels, e.g. intersections,
    stay whole)."""
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name} must be a one-dimensional sequence of labels, not a string")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
        out: list[Hashable] = values.tolist()
    else:
        try:
            out = list(values)
        except TypeError:
            raise ValueError(f"{name} must be a one-dimensional sequence of labels") from None
    for i, label in enumerate(out):
        if label is None or (isinstance(label, float) and np.isnan(label)):
            raise ValueError(f"{name} has a missing label at position {i}")
        if not isinstance(label, Hashable):
            raise ValueError(f"{name} has an unhashable label at position {i}")
    return out


def flags_1d(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """A one-dimensional array of 0/1 indicators (booleans or numbers equal to 0 or 1) as float64."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.float64)
    try:
        out = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold booleans or 0/1 values") from None
    if not np.all((out == 0.0) | (out == 1.0)):
        raise ValueError(f"{name} must hold booleans or 0/1 values")
    return out


def attribute_labels(
    keys: Sequence[Hashable], attributes: Mapping[str, ArrayLike | Sequence[Hashable]], keys_name: str
) -> dict[str, list[Hashable]]:
    """``{attribute: labels}`` of a non-empty mapping of per-record labels, each as :func:`labels_1d` and as long as
    ``keys`` (named ``keys_name`` in the error), e.g. the occupations of the same images."""
    if not isinstance(attributes, Mapping) or len(attributes) == 0:
        raise ValueError("attributes must be a non-empty mapping from attribute name to labels")
    out = {}
    for attribute, raw in attributes.items():
        name = f"attributes[{attribute!r}]"
        labels = labels_1d(raw, name)
        if len(labels) != len(keys):
            raise ValueError(f"{name} must have the same length as {keys_name} ({len(keys)}), got {len(labels)}")
        out[attribute] = labels
    return out


def reference_rows(
    reference: Mapping[Hashable, Mapping[str, Mapping[str, float]]], attribute: str
) -> tuple[dict[Hashable, Mapping[str, float]], list[str]]:
    """The rows of a reference table (occupation -> attribute -> category -> share) that have ``attribute``, and its
    categories in the first row's order (``({}, [])`` when no row has it); every row must have the same categories."""
    if not isinstance(reference, Mapping) or len(reference) == 0:
        raise ValueError("reference must be a non-empty mapping occupation -> attribute -> share")
    rows = {o: row[attribute] for o, row in reference.items() if isinstance(row, Mapping) and attribute in row}
    if not rows:
        return {}, []
    categories = list(next(iter(rows.values())))
    for o, distribution in rows.items():
        if set(distribution) != set(categories):
            raise ValueError(
                f"reference[{o!r}][{attribute!r}] has categories {sorted(distribution)}, expected {sorted(categories)}"
            )
    return rows, categories


def category_counts(
    keys: Sequence[Hashable], labels: Sequence[Hashable], categories: Sequence[Hashable]
) -> dict[Hashable, NDArray[np.float64]]:
    """``{key: counts}``: how many records of each key (in order of first appearance) carry each category (in the
    order of ``categories``); every label must be one of them."""
    index = {c: i for i, c in enumerate(categories)}
    out: dict[Hashable, NDArray[np.float64]] = {}
    for key, label in zip(keys, labels, strict=True):
        if key not in out:
            out[key] = np.zeros(len(categories))
        out[key][index[label]] += 1.0
    return out
