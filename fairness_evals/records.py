"""A task's per-document records as one array: what every scoring pipeline reads them as."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

import numpy as np


def records_array(
    records: Iterable[Sequence[Any]] | np.ndarray, widths: int | Collection[int], dtype: Any = np.int64
) -> np.ndarray:
    """``records`` (an array, or one list of numbers per document) as a 2-D array of ``dtype`` with one of the
    ``widths`` (the first when there is no record). Records of different lengths, of another width or holding what is
    not a number are a ValueError saying what records must be."""
    widths = (widths,) if isinstance(widths, int) else tuple(widths)
    kind = "integers" if np.issubdtype(dtype, np.integer) else "numbers"
    what = f"records must be lists of {widths[0]} {kind}, each of one length"
    try:
        if isinstance(records, np.ndarray):
            array = records.astype(dtype, copy=False)
        elif type(records) is list and all(type(r) in (list, tuple) for r in records):
            array = np.asarray(records, dtype=dtype)  # without copying every record to a list
        else:
            array = np.asarray([list(r) for r in records], dtype=dtype)
    except (TypeError, ValueError):
        raise ValueError(what) from None
    if array.size == 0:
        return np.empty((0, widths[0]), dtype=dtype)
    if array.ndim != 2 or array.shape[1] not in widths:
        raise ValueError(f"{what}, got shape {array.shape}")
    return array
