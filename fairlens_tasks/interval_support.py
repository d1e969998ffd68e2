"""When a FairLens interval is printed: enough images behind every group it depends on.

The coverage simulations (``tests/support/coverage_fairlens.py``; README "Intervals") show the bootstrap
intervals of a group's rate falling below their nominal coverage when the group has few images (79-88% for the
17 "Other" and 22 senior images of a 301-image run) or when the outcome rests on few images (81% for a 1.8%
adverse rate over 34 images). An interval is therefore printed only when each group it depends on has at
least :data:`MIN_GROUP_IMAGES` images, at least :data:`MIN_OUTCOME_IMAGES` of them with the outcome (an
adverse, non-neutral, correct or flagged answer; a positive bias score) and as many with an answer without
it. A gap, ratio or mean of gaps depends on every group of its attribute(s). Otherwise the interval is NaN and
the task's one warning says why (the estimate stays).
"""

from __future__ import annotations

import numpy as np

MIN_GROUP_IMAGES = 30
MIN_OUTCOME_IMAGES = 10

REASON = (
    f"a group it depends on has fewer than {MIN_GROUP_IMAGES} images, or fewer than {MIN_OUTCOME_IMAGES} images "
    "with the outcome or without it (intervals from so few images cover the truth less often than they claim; "
    "fairlens_tasks/README.md, 'Intervals')"
)


def supported(events: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Per group (last axis), whether its rate's interval is backed: ``events`` and ``totals`` are the per-image
    counts (U x k: the outcome's count, and the answers it is a share of, of each image in each group)."""
    e = np.asarray(events, dtype=np.float64)
    t = np.asarray(totals, dtype=np.float64)
    images = (t > 0).sum(axis=0)
    with_outcome = (e > 0).sum(axis=0)
    without = (t - e > 0).sum(axis=0)
    return (images >= MIN_GROUP_IMAGES) & (with_outcome >= MIN_OUTCOME_IMAGES) & (without >= MIN_OUTCOME_IMAGES)
