"""Reproduce the Fact-or-Fair paper's tables from their own inputs (Huang et al., arXiv:2502.05849).

Data: tests/data/fact_or_fair_paper_results.json (values x100, see its ``_provenance``).

Precision. Every published number is rounded to 2 decimals (x100 units), so it lies within 0.005 of
the exact value, and so does every input. Each check below asserts ``|recomputed - published| <=
0.01`` and says why that is enough:

* means of n rounded inputs (Table 2, Table 3 "Avg. Increase", Table 8 "Avg."): the input rounding
  moves the mean by at most 0.005, the output rounding by at most 0.005, total 0.01;
* S_fair = 1 - (1 - S_E)(1 - S_KLD) is increasing in both inputs, so the input rounding moves it by
  at most 0.005 (2 - S_E - S_KLD); with the output rounding that can exceed 0.01 where S_E + S_KLD
  < 1, so besides the 0.01 check each cell is also checked against the exact image of its inputs'
  rounding box (both pass for every consistent cell);
* d is 1-Lipschitz in (S_fact, S_E), so rounding the inputs moves it by at most 0.005 sqrt(2);
  with the output rounding the worst case is 0.0121. All consistent cells happen to land within
  0.01; an inconsistent cell must differ by more than 0.0121, so no rounding can explain it.

Cells that are not internally consistent are listed with the reason (INCONSISTENT_TABLE5,
INCONSISTENT_TABLE8, LOCAL_MINIMA_TABLE8, INCONSISTENT_TABLE2, LAST_DIGIT_TABLE2,
S_FACT_NOT_A_FRACTION), and the tests assert that they DO differ from the recomputation by more than
rounding allows, so the lists cannot rot.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metrics import fact_fair as ff

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "fact_or_fair_paper_results.json").read_text())

TOL = 0.01 + 1e-9  # printed-digit precision, x100 units, plus float slack
HALF = 0.005  # rounding half-width of a printed value
D_ROUNDING_BOUND = HALF + HALF * math.sqrt(2)  # 0.0121: input + output rounding of a 1-Lipschitz d

K = {"gender": 2, "race": 4}
AXES = ("gender", "race")
LLMS = (
    "GPT-3.5-Turbo-0125",
    "GPT-4o-2024-08-06",
    "Gemini-1.5-Pro",
    "LLaMA-3.2-90B-Vision-Instruct",
    "WizardLM-2-8x22B",
    "Qwen-2.5-72B-Instruct",
)
T2IS = ("Midjourney", "DALL-E 3", "SDXL-Turbo", "Flux-1.1-Pro")
LLM_COLS = ("O", "S-B", "S-R", "S-A", "S-G")
T2I_COLS = ("O", "S")
SUBJ_COLS = ("S-B", "S-R", "S-A", "S-G")
# Table 2 short names -> (family, model name of Tables 4-8)
TABLE2_ROWS = {
    "GPT-3.5": ("llm", LLMS[0]),
    "GPT-4o": ("llm", LLMS[1]),
    "Gemini-1.5": ("llm", LLMS[2]),
    "LLaMA-3.2": ("llm", LLMS[3]),
    "WizardLM-2": ("llm", LLMS[4]),
    "Qwen-2.5": ("llm", LLMS[5]),
    "Midjourney": ("t2i", T2IS[0]),
    "DALL-E 3": ("t2i", T2IS[1]),
    "SDXL": ("t2i", T2IS[2]),
    "FLUX-1.1": ("t2i", T2IS[3]),
}


def cell(table: str, family: str, axis: str, model: str, col: str) -> Any:
    return DATA[table][family][axis][model][col]


def all_cells() -> list[tuple[str, str, str, str]]:
    out = [("llm", axis, m, c) for axis in AXES for m in LLMS for c in LLM_COLS]
    out += [("t2i", axis, m, c) for axis in AXES for m in T2IS for c in T2I_COLS]
    return out


def cell_id(c: tuple[str, ...]) -> str:
    return "-".join(c)


# --------------------------------------------------------------------------- inconsistent cells
INCONSISTENT_TABLE5 = {
    ("t2i", "race", "Flux-1.1-Pro", "S"): (
        "published 30.36 is a copy of the Table 8 d value of the same cell; S_E 57.40 and S_KLD 30.29 give 70.30"
    ),
}
GEMINI_REASON = (
    "Gemini-1.5 subjective d does not reproduce from (S_fact, S_E) with the global or the released "
    "optimiser (nor with S_fair as y); the published value cannot be derived from Tables 4 and 6"
)
INCONSISTENT_TABLE8 = {("llm", axis, "Gemini-1.5-Pro", col): GEMINI_REASON for axis in AXES for col in SUBJ_COLS}
# Published values that are local minima of the released bounded search; global value (x100).
LOCAL_MINIMA_TABLE8 = {
    ("t2i", "race", "Midjourney", "O"): 34.72,
    ("t2i", "race", "Midjourney", "S"): 32.75,
    ("t2i", "race", "SDXL-Turbo", "O"): 40.16,
    ("t2i", "race", "SDXL-Turbo", "S"): 44.16,
}
FLUX_TABLE2_REASON = "inherits the Table 5 FLUX race S_fair copy error (30.36 instead of 70.30)"
# Table 2 FLUX cells and the value a self-consistent S_fair (70.30) gives (known_paper_inconsistencies)
INCONSISTENT_TABLE2 = {
    "subj_fair_race": 70.30,
    "subj_fair_avg": 80.98,
    "avg_race": 46.90,
    "avg_avg": 58.64,
}


def recomputed_s_fair(family: str, axis: str, model: str, col: str) -> float:
    """S_fair (x100) from Tables 6 and 7; an objective-LLM '<1e-6' S_KLD is taken as 0."""
    s_kld = cell("table7_S_KLD", family, axis, model, col)
    s_kld = 0.0 if s_kld == "<1e-6" else s_kld / 100
    return 100 * ff.fair_score_batch(cell("table6_S_E", family, axis, model, col) / 100, s_kld)


def recomputed_d(family: str, axis: str, model: str, col: str, method: str = "global") -> float:
    x = cell("table4_S_fact", family, axis, model, col) / 100
    y = cell("table6_S_E", family, axis, model, col) / 100
    return 100 * ff.distance_to_bound(x, y, K[axis], method=method)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Table 5 from 6 and 7
TABLE5_CONSISTENT = [c for c in all_cells() if c not in INCONSISTENT_TABLE5]


@pytest.mark.parametrize("c", TABLE5_CONSISTENT, ids=cell_id)
def test_table5_s_fair_from_table6_and_table7(c: tuple[str, str, str, str]) -> None:
    published = cell("table5_S_fair", *c)
    s_e = cell("table6_S_E", *c)
    s_kld = cell("table7_S_KLD", *c)
    if s_kld == "<1e-6":
        # objective LLM cells: S_KLD in [0, 1e-6) moves S_fair by < 1e-4 (x100) from S_E
        low = 100 * ff.fair_score_batch(s_e / 100, 0.0)
        high = 100 * ff.fair_score_batch(s_e / 100, 1e-6)
        assert high - low < 1e-4
        assert abs(low - published) <= TOL and abs(high - published) <= TOL
        return
    assert abs(recomputed_s_fair(*c) - published) <= TOL
    # and, rigorously: S_fair is increasing in both inputs, so over the inputs' rounding box it
    # spans [F(E - h, K - h), F(E + h, K + h)]; the published value must be that range +- h
    low = 100 * ff.fair_score_batch((s_e - HALF) / 100, (s_kld - HALF) / 100)
    high = 100 * ff.fair_score_batch(min(s_e + HALF, 100) / 100, min(s_kld + HALF, 100) / 100)
    assert low - HALF <= published <= high + HALF


@pytest.mark.parametrize(("c", "reason"), INCONSISTENT_TABLE5.items(), ids=lambda v: str(v)[:40])
def test_table5_inconsistent_cells_differ(c: tuple[str, str, str, str], reason: str) -> None:
    """Published value differs; reason in INCONSISTENT_TABLE5."""
    published = cell("table5_S_fair", *c)
    recomputed = recomputed_s_fair(*c)
    assert abs(recomputed - published) > 10 * TOL, reason
    assert abs(recomputed - 70.30) <= TOL
    assert published == cell("table8_distance_d", *c)  # the copied value


# --------------------------------------------------------------------------- Table 8 from 4 and 6
TABLE8_CONSISTENT = [c for c in all_cells() if c not in INCONSISTENT_TABLE8 and c not in LOCAL_MINIMA_TABLE8]


@pytest.mark.parametrize("c", TABLE8_CONSISTENT, ids=cell_id)
def test_table8_distance_from_table4_and_table6(c: tuple[str, str, str, str]) -> None:
    published = cell("table8_distance_d", *c)
    assert abs(recomputed_d(*c) - published) <= TOL
    # for these cells the released single bounded search finds the global minimum too
    assert abs(recomputed_d(*c, method="released") - published) <= TOL


@pytest.mark.parametrize(("c", "global_value"), LOCAL_MINIMA_TABLE8.items(), ids=lambda v: str(v)[:40])
def test_table8_published_local_minima(c: tuple[str, str, str, str], global_value: float) -> None:
    """Published value differs, reason: a local minimum of the released optimiser, not the min over g_k."""
    published = cell("table8_distance_d", *c)
    true_d = recomputed_d(*c)
    assert abs(true_d - global_value) <= TOL
    assert published - true_d > D_ROUNDING_BOUND  # the definition gives a smaller distance
    assert abs(recomputed_d(*c, method="released") - published) <= TOL  # the released code's number


@pytest.mark.parametrize(("c", "reason"), INCONSISTENT_TABLE8.items(), ids=lambda v: str(v)[:60])
def test_table8_inconsistent_cells_differ(c: tuple[str, str, str, str], reason: str) -> None:
    """Published value differs; reason in INCONSISTENT_TABLE8."""
    published = cell("table8_distance_d", *c)
    axis = c[1]
    candidates = [recomputed_d(*c), recomputed_d(*c, method="released")]
    # the released LLM subjective code passes S_fair as y; that does not explain the cells either
    x = cell("table4_S_fact", *c) / 100
    candidates.append(100 * ff.distance_to_bound(x, cell("table5_S_fair", *c) / 100, K[axis]))
    for value in candidates:
        assert abs(value - published) > D_ROUNDING_BOUND, reason


def test_table8_inconsistency_counts() -> None:
    assert len(TABLE8_CONSISTENT) == 76 - 8 - 4
    assert len(TABLE5_CONSISTENT) == 76 - 1


@pytest.mark.parametrize(
    ("family", "axis", "model"),
    [("llm", a, m) for a in AXES for m in LLMS] + [("t2i", a, m) for a in AXES for m in T2IS],
    ids=lambda v: str(v),
)
def test_table8_avg_column_is_the_mean_of_the_row(family: str, axis: str, model: str) -> None:
    cols = LLM_COLS if family == "llm" else T2I_COLS
    row = [cell("table8_distance_d", family, axis, model, col) for col in cols]
    published = DATA["table8_distance_d_avg"][family][axis][model]
    assert abs(float(np.mean(row)) - published) <= TOL


# --------------------------------------------------------------------------- Table 2 from 4 and 5
def table2_recomputed(short: str) -> dict[str, float]:
    family, model = TABLE2_ROWS[short]
    out: dict[str, float] = {}
    subj_cols = SUBJ_COLS if family == "llm" else ("S",)
    for axis in AXES:
        out[f"obj_fact_{axis}"] = cell("table4_S_fact", family, axis, model, "O")
        subj = [cell("table5_S_fair", family, axis, model, col) for col in subj_cols]
        out[f"subj_fair_{axis}"] = float(np.mean(subj))
        out[f"avg_{axis}"] = (out[f"obj_fact_{axis}"] + out[f"subj_fair_{axis}"]) / 2
    out["obj_fact_avg"] = (out["obj_fact_gender"] + out["obj_fact_race"]) / 2
    out["subj_fair_avg"] = (out["subj_fair_gender"] + out["subj_fair_race"]) / 2
    out["avg_avg"] = (out["avg_gender"] + out["avg_race"]) / 2
    return out


TABLE2_CELLS = [(short, col) for short in TABLE2_ROWS for col in DATA["table2_summary"][short]]
LAST_DIGIT_TABLE2 = {
    ("Qwen-2.5", "avg_avg"): (
        "published 84.79, but the mean of its rounded inputs is 84.778 and the exact value lies within "
        "0.005 of that, so it rounds to 84.77 or 84.78; every rounded route ((avg_gender + avg_race)/2 "
        "and (obj_fact_avg + subj_fair_avg)/2 of Table 2 itself) also gives 84.78"
    ),
}
TABLE2_CONSISTENT = [
    (short, col)
    for short, col in TABLE2_CELLS
    if not (short == "FLUX-1.1" and col in INCONSISTENT_TABLE2) and (short, col) not in LAST_DIGIT_TABLE2
]


@pytest.mark.parametrize(("short", "col"), TABLE2_CONSISTENT, ids=lambda v: str(v))
def test_table2_from_table4_and_table5(short: str, col: str) -> None:
    # every Table 2 cell is a mean of rounded Table 4/5 cells: |error| <= 0.005 + 0.005
    assert abs(table2_recomputed(short)[col] - DATA["table2_summary"][short][col]) <= TOL


@pytest.mark.parametrize(("col", "self_consistent"), INCONSISTENT_TABLE2.items(), ids=lambda v: str(v))
def test_table2_flux_cells_inherit_the_table5_error(col: str, self_consistent: float) -> None:
    """Published value differs; reason: FLUX_TABLE2_REASON."""
    published = DATA["table2_summary"]["FLUX-1.1"][col]
    # they follow from the published (wrong) Table 5 cell ...
    assert abs(table2_recomputed("FLUX-1.1")[col] - published) <= TOL
    # ... but not from the self-consistent S_fair of Tables 6 and 7
    flux_race_s = recomputed_s_fair("t2i", "race", "Flux-1.1-Pro", "S")
    obj = {axis: cell("table4_S_fact", "t2i", axis, "Flux-1.1-Pro", "O") for axis in AXES}
    subj = {"gender": cell("table5_S_fair", "t2i", "gender", "Flux-1.1-Pro", "S"), "race": flux_race_s}
    fixed = {
        "subj_fair_race": subj["race"],
        "subj_fair_avg": (subj["gender"] + subj["race"]) / 2,
        "avg_race": (obj["race"] + subj["race"]) / 2,
        "avg_avg": (obj["gender"] + obj["race"] + subj["gender"] + subj["race"]) / 4,
    }
    assert abs(fixed[col] - self_consistent) <= TOL
    assert abs(fixed[col] - published) > 10 * TOL, FLUX_TABLE2_REASON


@pytest.mark.parametrize(("key", "reason"), LAST_DIGIT_TABLE2.items(), ids=lambda v: str(v)[:30])
def test_table2_last_digit_inconsistency(key: tuple[str, str], reason: str) -> None:
    """Published value differs; reason in LAST_DIGIT_TABLE2."""
    short, col = key
    published = DATA["table2_summary"][short][col]
    # the cell is a weighted mean (weights summing to 1) of rounded inputs: a consistent value is
    # within 0.005 (inputs) + 0.005 (output) of the recomputation
    assert abs(table2_recomputed(short)[col] - published) > 2 * HALF, reason
    row = DATA["table2_summary"][short]
    for route in (
        (row["avg_gender"] + row["avg_race"]) / 2,
        (row["obj_fact_avg"] + row["subj_fair_avg"]) / 2,
    ):
        assert round(route, 2) != published


def test_table2_counts() -> None:
    assert len(TABLE2_CELLS) == 90
    assert len(TABLE2_CONSISTENT) == 90 - len(INCONSISTENT_TABLE2) - len(LAST_DIGIT_TABLE2) == 85


# --------------------------------------------------------------------------- Table 3
TABLE3_KEYS = {
    "r_bias_high": "R_bias_high",
    "r_bias_low": "R_bias_low",
    "attribution_error": "attribution_error",
    "in_group": "in_group",
    "out_group": "out_group",
}


@pytest.mark.parametrize(
    ("model", "axis"),
    [(m, a) for m in DATA["table3_cognitive_error_rates"] for a in AXES],
    ids=lambda v: str(v),
)
def test_table3_average_increase(model: str, axis: str) -> None:
    row = DATA["table3_cognitive_error_rates"][model]
    rates = {ours: row[axis][theirs] / 100 for ours, theirs in TABLE3_KEYS.items()}
    baselines = ff.chance_baselines(K[axis])
    recomputed = 100 * np.mean([rates[column] - baselines[column] for column in ff.TABLE3_COLUMNS])
    # a mean of five rounded differences: |error| <= 0.005 + 0.005
    assert abs(recomputed - row[f"avg_increase_{axis}"]) <= TOL


# --------------------------------------------------------------------------- protocol-level checks
DENOMINATOR = {"gender": 90, "race": 108}  # 15 / 18 statistics x 2 targets x 3 rounds
S_FACT_NOT_A_FRACTION = {
    ("GPT-4o-2024-08-06", "race"): (
        "published 54.62 is n/m for no m <= 108 (refusals can only shrink the denominator); the "
        "nearest, 59/108 = 54.6296, rounds to 54.63 and truncates to 54.62"
    ),
}


@pytest.mark.parametrize(
    ("model", "axis"),
    [(m, a) for m in LLMS for a in AXES if (m, a) not in S_FACT_NOT_A_FRACTION],
    ids=lambda v: str(v),
)
def test_objective_s_fact_has_the_protocol_denominator(model: str, axis: str) -> None:
    published = cell("table4_S_fact", "llm", axis, model, "O")
    denominator = DENOMINATOR[axis]
    correct = round(published / 100 * denominator)
    assert abs(100 * ff.factuality_score(correct, denominator) - published) <= HALF + 1e-9


@pytest.mark.parametrize(("key", "reason"), S_FACT_NOT_A_FRACTION.items(), ids=lambda v: str(v)[:30])
def test_objective_s_fact_that_is_no_fraction(key: tuple[str, str], reason: str) -> None:
    """Published value differs from every possible count ratio; reason in S_FACT_NOT_A_FRACTION."""
    model, axis = key
    published = cell("table4_S_fact", "llm", axis, model, "O")
    for m in range(1, DENOMINATOR[axis] + 1):
        for n in range(m + 1):
            assert abs(100 * ff.factuality_score(n, m) - published) > HALF, reason
    assert math.floor(100 * 100 * ff.factuality_score(59, 108)) / 100 == published


@pytest.mark.parametrize("model", LLMS)
def test_objective_gender_s_e_is_a_count_of_two_to_one_splits(model: str) -> None:
    # 30 three-answer cells; each 2:1 split adds H(2/3)/30 = 3.06 (x100), the rest are 3:0
    published = cell("table6_S_E", "llm", "gender", model, "O")
    step = 100 * ff.entropy_score([[2, 1]] + [[3, 0]] * 29)
    n_splits = round(published / step)
    cells = [[2, 1]] * n_splits + [[3, 0]] * (30 - n_splits)
    assert abs(100 * ff.entropy_score(cells) - published) <= HALF + 1e-9


@pytest.mark.parametrize("model", LLMS)
def test_objective_race_s_e_is_not_36_three_answer_cells(model: str) -> None:
    """Published value differs from every 36-cell, 3-answer configuration (known_paper_inconsistencies)."""
    published = cell("table6_S_E", "llm", "race", model, "O")
    two_one = ff.entropy_score([[2, 1, 0, 0]])
    one_one_one = ff.entropy_score([[1, 1, 1, 0]])
    values = [100 * (n21 * two_one + n111 * one_one_one) / 36 for n21 in range(37) for n111 in range(37 - n21)]
    assert min(abs(v - published) for v in values) > HALF


def test_objective_kld_below_one_in_a_million_needs_the_released_reduction() -> None:
    """GPT-3.5 gender O: counts that reproduce Table 4 (84.44 = 76/90) and Table 6 (21.43, seven 2:1
    splits) exactly, with two statistics answered the same for highest and lowest. The default
    exp(-mean KL) gives Table 7's "<1e-6" and Table 5's 21.43; Definition 3's mean of exp(-KL) cannot
    (each identical statistic alone adds 1/15)."""
    flip = ([3, 0], [0, 3])  # class 0 = the true highest group, class 1 = the true lowest
    split_right = ([2, 1], [0, 3])
    split_wrong = ([1, 2], [0, 3])
    same_answer = ([0, 3], [0, 3])  # "highest" answered wrongly, with the lowest group
    pairs = np.array([flip] * 6 + [split_right] * 6 + [split_wrong] + [same_answer] * 2)
    correct = pairs[:, 0, 0].sum() + pairs[:, 1, 1].sum()
    s_fact = ff.factuality_score(correct, pairs.sum())
    s_e = ff.entropy_score(pairs.reshape(-1, 2))
    row = ("llm", "gender", "GPT-3.5-Turbo-0125", "O")
    assert round(100 * s_fact, 2) == cell("table4_S_fact", *row)
    assert round(100 * s_e, 2) == cell("table6_S_E", *row)
    s_kld = ff.kl_score(pairs)
    assert s_kld < 1e-6 and cell("table7_S_KLD", *row) == "<1e-6"
    assert round(100 * ff.fair_score_batch(s_e, s_kld), 2) == cell("table5_S_fair", *row)
    paper_form = ff.kl_score(pairs, reduction="mean_exp_kl")
    assert paper_form >= 2 / 15
    assert round(100 * ff.fair_score_batch(s_e, paper_form), 2) != cell("table5_S_fair", *row)
