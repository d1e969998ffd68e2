"""Reading one label value of a corpus, through the user's label map (FairLens and IRIS alike)."""

from __future__ import annotations

import math
from collections.abc import Mapping


def is_missing(value: object) -> bool:
    """None, NaN (an empty cell of a dataset) or blank text."""
    return (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or (isinstance(value, str) and not value.strip())
    )


def label_text(value: object) -> str:
    """The value as text to look up: ``True`` -> "1", ``34.0`` -> "34", text stripped."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def mapped_label(attribute: str, value: object, label_map: Mapping[str, Mapping[str, str]] | None) -> object:
    """``value`` renamed by the label map of ``attribute`` (case-insensitive), or unchanged when it has no entry."""
    if not label_map or attribute not in label_map or is_missing(value):
        return value
    table = {str(k).strip().lower(): v for k, v in label_map[attribute].items()}
    return table.get(label_text(value).lower(), value)
