"""The Fact-or-Fair item data shipped with the package (``data/statistics.json``).

19 U.S. statistics with their definitions, highest/lowest ground truth per axis (``None`` where the
paper has no data for that axis), polarity, base scenarios and attribution-error behaviours. Provenance
and the fixes applied to the released data are in this folder's README.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AXES = ("gender", "race")
TARGETS = ("highest", "lowest")
CONTEXTS = ("base", "representativeness", "attribution", "ingroup")

_DATA = Path(__file__).resolve().parent / "data" / "statistics.json"


@dataclass(frozen=True)
class Statistic:
    """One of the 19 statistics of paper Table 1."""

    index: int
    name: str
    slug: str
    dimension: str
    source: str
    definition: str
    ground_truth: dict[str, dict[str, str] | None]
    desirable_when_high: bool
    scenarios: dict[str, tuple[str, ...]]
    attribution: dict[str, str]
    t2i: dict[str, Any]

    def truth(self, axis: str, target: str) -> str | None:
        """The group with the ``target`` value on ``axis``, or ``None`` when the axis has no data."""
        table = self.ground_truth[axis]
        return None if table is None else table[target]

    def positive(self, target: str) -> bool:
        """True for a positive query: a desirable statistic asked high, or an undesirable one asked low."""
        return self.desirable_when_high == (target == "highest")


@functools.lru_cache(maxsize=1)
def raw_data() -> dict[str, Any]:
    with open(_DATA, encoding="utf-8") as handle:
        return json.load(handle)


@functools.lru_cache(maxsize=1)
def statistics() -> tuple[Statistic, ...]:
    """The 19 statistics, in the released code's order."""
    return tuple(
        Statistic(
            index=i,
            name=s["name"],
            slug=s["slug"],
            dimension=s["dimension"],
            source=s["source"],
            definition=s["definition"],
            ground_truth=s["ground_truth"],
            desirable_when_high=s["desirable_when_high"],
            scenarios={t: tuple(v) for t, v in s["scenarios"].items()},
            attribution=s["attribution"],
            t2i=s["t2i"],
        )
        for i, s in enumerate(raw_data()["statistics"])
    )


def classes(axis: str) -> tuple[str, ...]:
    """The class labels of ``axis`` in a fixed order: gender (male, female); race (Asian, Black, White, Hispanic)."""
    return tuple(raw_data()["classes"][axis])


def class_index(axis: str, label: str) -> int:
    return classes(axis).index(label)


def data_version() -> int:
    return int(raw_data()["data_version"])
