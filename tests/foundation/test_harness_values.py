"""What our aggregations hand the harnesses: the values their tables print."""

from __future__ import annotations

import math

from fairness_evals import aggregation


def _run(values: dict[str, float], names: list[str], documents: int = 3) -> dict[str, object]:
    aggregation.clear()
    out = {"carrier": aggregation.aggregate("toy", [{"record": i} for i in range(documents)], lambda _: values,
                                            "carrier")}  # fmt: skip
    for name in names:
        out[name] = aggregation.aggregate("toy", [name] * documents, lambda _: values, "carrier")
    return out


def test_a_null_standard_error_is_written_as_the_harnesses_write_theirs() -> None:
    """lm-eval and lmms-eval write "N/A" for a standard error they do not have; a null one of ours is written the
    same way, so the ± column has one spelling (a NaN printed as "nan", and as "NaN" in group rows)."""
    values = {"carrier": 0.0, "s": math.nan, "s_stderr": math.nan, "t": 0.5, "t_stderr": 0.05, "u_stderr": None}
    out = _run(values, ["s", "s_stderr", "t", "t_stderr", "u_stderr"])
    assert out["s_stderr"] == out["u_stderr"] == aggregation.NO_STDERR == "N/A"
    assert math.isnan(out["s"])  # a null score stays a number: NaN
    assert (out["t"], out["t_stderr"]) == (0.5, 0.05)
