"""Input checks shared by the metric modules: one-dimensional labels and 0/1 indicator flags.

Each raises ``ValueError`` naming the argument and, for labels, the first bad position, so a user calling a
metric on their own data learns what is wrong without reading a traceback into numpy.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray


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
