"""The image-generation aggregations give the same numbers whatever order their records arrive in.

A data-parallel run gathers records rank by rank, so their order changes with the number of processes; the harness
runs of ``test_scale_data_parallel.py`` check the rest end to end, but there the tiny diffusion model's images hold
no face and these tasks' intervals are withheld. Here the aggregations get records with faces and enough images per
prompt for finite intervals (the generation tests' hand-made records, repeated over several documents), in
several orders.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable

import pytest

from fact_fair_tasks import t2i_scoring
from iris_tasks import bis_gen
from tests.generation.test_generation_metrics import ff_records, steer_records


def _steer() -> list[dict]:
    """The hand-made steering records for 6 occupations (distinct documents), 8 copies of each image."""
    records = []
    for occupation in range(6):
        for i, record in enumerate(steer_records()):
            record = copy.deepcopy(record)
            record.update(doc_index=10 * occupation + i, occupation=occupation, doc_sha=f"{occupation}/{i}")
            record["images"] = record["images"] * 8
            records.append(record)
    return records


def _fact_or_fair() -> list[dict]:
    records = copy.deepcopy(ff_records())
    for record in records:
        record["images"] = record["images"] * 6
    return records


def _same(a: object, b: object) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize(
    ("compute", "records"),
    [(bis_gen.compute_metrics, _steer), (t2i_scoring.compute_metrics, _fact_or_fair)],
    ids=["iris_gen_steer", "fact_or_fair_t2i"],
)
def test_same_numbers_in_any_record_order(compute: Callable[..., dict], records: Callable[[], list[dict]]) -> None:
    given = records()
    expected = compute(given, n_resamples=200)
    finite = [k for k, v in expected.items() if "_ci_" in k and isinstance(v, float) and math.isfinite(v)]
    assert finite, "no interval was computed: the check could not fail"
    for seed in (1, 2, 3):
        shuffled = list(given)
        random.Random(seed).shuffle(shuffled)
        out = compute(shuffled, n_resamples=200)
        differences = [
            f"{k}: {expected[k]!r} != {out.get(k)!r}" for k in expected if not _same(expected[k], out.get(k))
        ]
        assert not differences, f"order {seed}: " + "; ".join(differences)
