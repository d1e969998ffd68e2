"""IRIS metrics (Zhao et al., "Fair in Mind, Fair in Action? A Synchronous Benchmark for
Understanding and Generation in UMLLMs", arXiv 2603.00590v1, ICLR 2026).

Plain functions, numpy in, Python floats out; no harness imports, no I/O. Everything is importable
from ``metrics.iris``; the submodules group it by IRIS dimension:

- :mod:`metrics.iris.representation` - RD [M1] (IFS-Gen), its finite-sample floor, JSD [M4, M5]
  (RFS-Gen, RFS-Und);
- :mod:`metrics.iris.understanding` - AD [M2], SPD [M3] (IFS-Und), Stereotype Drift Score [M6]
  (RFS-Und; our versioned reconstruction), the counterfactual pair sums of AC_diff [M10] and DHR [M11]
  (BIS-Und);
- :mod:`metrics.iris.steerability` - Delta-GSR [M7], penalties [M8, M9] (BIS-Gen), AC_diff [M10],
  DHR [M11] from labels;
- :mod:`metrics.iris.scoring` - magnitudes (IFS-Und's and RFS-Und's own forms), ``S exp(-K m)`` dimension
  scores, IRIS-MBTI profiles and archetype names.

Typical pipeline (one model)::

    rd = representation_disparities(occ, gender, age, skin)          # 7 granular RD values
    score = dimension_score(magnitude(rd), "IFS-Gen")                 # paper Table 23
    mbti({"IFS-Gen": score, "RFS-Gen": ..., "BIS-Gen": ...})          # e.g. "UAF"
"""

from metrics.iris._common import (
    AGES,
    ATTRIBUTE_CATEGORIES,
    COMPARISONS,
    GENDERS,
    LEVELS,
    SKIN_TONES,
    UNMAPPABLE,
)
from metrics.iris.representation import (
    attribute_js_divergences,
    expected_representation_disparity,
    js_divergence,
    js_divergence_from_counts,
    mean_js_divergence,
    mean_js_divergence_from_counts,
    mean_representation_disparity,
    mean_representation_disparity_from_counts,
    rd_finite_sample_floor,
    representation_disparities,
    representation_disparity,
    representation_disparity_from_counts,
)
from metrics.iris.scoring import (
    ARCHETYPES,
    DIMENSION_PARAMETERS,
    DIMENSIONS,
    MBTI_THRESHOLD,
    Archetype,
    archetype_name,
    dimension_score,
    ifs_und_magnitude,
    magnitude,
    mbti,
    rfs_und_magnitude,
    rfs_und_magnitude_from_norms,
)
from metrics.iris.steerability import (
    answer_consistency_difference,
    delta_gsr_from_rates,
    delta_gsr_penalty,
    differential_hallucination_rate,
    level_values,
    mean_difference_penalty,
    pairwise_comparison_means,
)
from metrics.iris.understanding import (
    SDS_DEFINITION_VERSION,
    accuracy_disparity,
    accuracy_disparity_from_counts,
    counterfactual_pair_sums,
    group_counts,
    ifs_und_disparities_from_counts,
    ifs_und_metrics,
    statistical_parity_difference,
    statistical_parity_difference_from_counts,
    stereotype_drift_scores,
    stereotype_drift_scores_from_counts,
)

__all__ = [
    "AGES",
    "ARCHETYPES",
    "ATTRIBUTE_CATEGORIES",
    "COMPARISONS",
    "DIMENSIONS",
    "DIMENSION_PARAMETERS",
    "GENDERS",
    "LEVELS",
    "MBTI_THRESHOLD",
    "SDS_DEFINITION_VERSION",
    "SKIN_TONES",
    "UNMAPPABLE",
    "Archetype",
    "accuracy_disparity",
    "accuracy_disparity_from_counts",
    "answer_consistency_difference",
    "archetype_name",
    "attribute_js_divergences",
    "counterfactual_pair_sums",
    "delta_gsr_from_rates",
    "delta_gsr_penalty",
    "differential_hallucination_rate",
    "dimension_score",
    "expected_representation_disparity",
    "group_counts",
    "ifs_und_disparities_from_counts",
    "ifs_und_magnitude",
    "ifs_und_metrics",
    "js_divergence",
    "js_divergence_from_counts",
    "level_values",
    "magnitude",
    "mbti",
    "mean_difference_penalty",
    "mean_js_divergence",
    "mean_js_divergence_from_counts",
    "mean_representation_disparity",
    "mean_representation_disparity_from_counts",
    "pairwise_comparison_means",
    "rd_finite_sample_floor",
    "representation_disparities",
    "representation_disparity",
    "representation_disparity_from_counts",
    "rfs_und_magnitude",
    "rfs_und_magnitude_from_norms",
    "statistical_parity_difference",
    "statistical_parity_difference_from_counts",
    "stereotype_drift_scores",
    "stereotype_drift_scores_from_counts",
]
