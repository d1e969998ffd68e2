"""The ten Monk Skin Tone swatches of :data:`fairness_evals.faces.skin.MST_SWATCHES_HEX`, as colours and ITAs."""

from __future__ import annotations

import numpy as np

from fairness_evals.faces.skin import MST_SWATCHES_HEX, ita_degrees, srgb_to_lab


def swatch_rgb() -> np.ndarray:
    """The ten MST swatches as a ``(10, 3)`` uint8 RGB array, MST 1..10."""
    return np.array([[int(h[i : i + 2], 16) for i in (1, 3, 5)] for h in MST_SWATCHES_HEX], dtype=np.uint8)


def swatch_ita() -> np.ndarray:
    """The ITA of each MST swatch, degrees, MST 1..10."""
    lab = srgb_to_lab(swatch_rgb())
    return ita_degrees(lab[:, 0], lab[:, 2])
