"""Harness-agnostic fairness mathematics of Fact-or-Fair, FairLens and IRIS.

Plain functions: numpy arrays or sequences in, Python floats out. No harness imports, no I/O.
Fractions are in [0, 1], never percentages.

Modules:
- :mod:`metrics.fact_fair` - Fact-or-Fair (Huang et al.) factuality, entropy, KL, fairness, bound, distance,
  cognitive-error rates.
- :mod:`metrics.fairlens` - FairLens soundness, adverse rates, parity gap, rate ratio, association.
- :mod:`metrics.iris` - IRIS RD, AD, SPD, JS divergence, AC_diff, DHR, magnitudes, dimension scores, MBTI.
- :mod:`metrics.bootstrap` - seeded, vectorised resampling of the sampled unit (within strata where the design has them);
  ``Design``, the design a task declares, which its intervals and ``compare`` resample.
- :mod:`metrics.intervals` - interval methods (percentile, basic, BCa, max-t) and when each is valid.

The coverage simulations that justify each statistic's interval method are the tests' and ``bench/coverage.py``'s
(``tests/support/coverage_simulation.py`` and the benchmarks' simulators beside it).
"""
