"""The Fact-or-Fair item data shipped with the package (``data/statistics.json``).

19 U.S. statistics with their definitions, highest/lowest ground truth per axis (``None`` where the
paper has no data for that axis), polarity, base scenarios and attribution-error behaviours. Provenance
and the fixes applied to the released data are in this folder's README.

Two *conventions* (task metadata ``fact_or_fair_conventions``): ``"corrected"`` (default) is the data with the
fixes of data version 1; ``"released"`` puts back what the released data has where those fixes differ (the
``released`` section of ``data/statistics.json``: Homelessness race ground truth, the seven "lowest" scenarios
that copy their "highest" ones, the Insurance Coverage representativeness sentence, a trailing space), so that
published numbers can be reproduced.
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
CONVENTIONS = ("corrected", "released")

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
    representativeness: str | None = None  # the released sentence where it differs from the table's; else built

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


def check_conventions(conventions: object) -> str:
    """``conventions`` if it is one of :data:`CONVENTIONS`, else a ValueError naming the metadata key."""
    if conventions not in CONVENTIONS:
        raise ValueError(f"fact_or_fair_conventions must be one of {', '.join(CONVENTIONS)}, got {conventions!r}")
    return str(conventions)


@functools.lru_cache(maxsize=2)
def statistics(conventions: str = "corrected") -> tuple[Statistic, ...]:
    """The 19 statistics, in the released code's order, under the given conventions (module docstring)."""
    released = raw_data()["released"] if check_conventions(conventions) == "released" else {}
    out = []
    for i, s in enumerate(raw_data()["statistics"]):
        slug = s["slug"]
        truth = {axis: released.get("ground_truth", {}).get(slug, {}).get(axis, table) for axis, table in
                 s["ground_truth"].items()}  # fmt: skip
        lowest = list(s["scenarios"]["lowest"])
        for position, text in released.get("scenarios_lowest", {}).get(slug, {}).items():
            lowest[int(position)] = text
        out.append(
            Statistic(
                index=i,
                name=s["name"],
                slug=slug,
                dimension=s["dimension"],
                source=s["source"],
                definition=s["definition"],
                ground_truth=truth,
                desirable_when_high=s["desirable_when_high"],
                scenarios={"highest": tuple(s["scenarios"]["highest"]), "lowest": tuple(lowest)},
                attribution={**s["attribution"], **released.get("attribution", {}).get(slug, {})},
                t2i=s["t2i"],
                representativeness=released.get("representativeness", {}).get(slug),
            )
        )
    return tuple(out)


def classes(axis: str) -> tuple[str, ...]:
    """The class labels of ``axis`` in a fixed order: gender (male, female); race (Asian, Black, White, Hispanic)."""
    return tuple(raw_data()["classes"][axis])


def class_index(axis: str, label: str) -> int:
    return classes(axis).index(label)


def data_version() -> int:
    return int(raw_data()["data_version"])
