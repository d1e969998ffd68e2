"""Metrics on synthetic answer policies, checked against hand-computed values; the lmms-eval glue."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml
from faces import make_utkface_folder

from fairlens_tasks import scoring
from fairlens_tasks.documents import documents
from fairlens_tasks.questions import CANNOT_TELL, domain_questions
from fairlens_tasks.settings import ENV, build_settings
from fairness_evals.aggregation import provenance_value

TASKS_DIR = Path(scoring.__file__).resolve().parent


@pytest.fixture(scope="module")
def docs(utk_folder: Path) -> dict[str, list[dict]]:
    """60 images, 2 per stratum: every race has 12 images (6 female), every age band 20 (10 female)."""
    settings = build_settings({"corpus": str(utk_folder), "sample_fraction": 1}, ENV)
    return {d: documents(settings, d) for d in ("hiring", "legal", "healthcare")}


def _score(docs: list[dict], policy) -> dict[str, float]:
    results = [scoring.process_results(doc, [policy(doc)]) for doc in docs]
    return scoring.compute_metrics([r["soundness"] for r in results])


def _harness(docs: list[dict], policy) -> dict[str, object]:
    """Aggregate exactly as lmms-eval does: each metric's aggregation gets its own list of items."""
    results = [scoring.process_results(doc, [policy(doc)]) for doc in docs]
    return {name: getattr(scoring, f"agg_{name}")([r[name] for r in results]) for name in scoring.ALL_METRICS}


# --------------------------------------------------------------------------- policy: always "Cannot tell"
@pytest.mark.parametrize(
    ("domain", "sound", "unparsed"),
    [("hiring", 6 / 21, 15 / 21), ("legal", 8 / 9, 0.0), ("healthcare", 7 / 8, 1 / 8)],
)
def test_always_cannot_tell(docs: dict, domain: str, sound: float, unparsed: float) -> None:
    m = _score(docs[domain], lambda doc: "Cannot tell")
    # Sound where the sound answer is Cannot tell (hiring H13-H18; legal all but L08; healthcare all but C07);
    # unparsed where Cannot tell is not an option (hiring's 15 Yes/No and Likely/Not likely items; C07).
    assert m["soundness"] == pytest.approx(sound)
    assert m["unparsed_rate"] == pytest.approx(unparsed)
    assert m["unparsed"] == round(unparsed * len(docs[domain]))
    assert m["soundness_coverage"] == pytest.approx(1 - unparsed)
    for name in ("soundness_gender_female", "soundness_race_other", "soundness_age_senior"):
        assert m[name] == pytest.approx(sound)
    assert m["association_rate"] == 0.0 and m["association_gap"] == 0.0 and m["association_rate_coverage"] == 1.0
    adverse = [q for q in domain_questions(domain) if q.adverse]
    coverage = sum(q.has_cannot_tell for q in adverse) / len(adverse)
    assert m["parity_gap_coverage"] == pytest.approx(coverage)
    for attribute in ("gender", "race", "age"):
        assert m[f"association_gap_{attribute}"] == 0.0
        if coverage >= 0.5:
            assert m[f"parity_gap_{attribute}"] == 0.0
            assert m[f"rate_ratio_{attribute}"] == 1.0  # every group at rate 0: identical treatment
        else:  # hiring: 2 of 17 adverse items offer Cannot tell; "every rate 0" would be a degenerate perfect score
            assert math.isnan(m[f"parity_gap_{attribute}"]) and math.isnan(m[f"rate_ratio_{attribute}"])
            assert math.isnan(m[f"parity_gap_{attribute}_ci_low"]) and math.isnan(m["adverse_rate_race_asian"])
    # a constant policy has no sampling variability: the interval collapses onto the estimate
    assert m["soundness_ci_low"] == m["soundness_ci_high"] == pytest.approx(sound)
    assert m["answers"] == len(docs[domain]) and m["images_evaluated"] == 60


def test_a_refusing_model_gets_no_fairness_score(docs: dict, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 14: every answer refused must not read as perfectly fair (gaps 0, ratios 1, association 0)."""
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        m = _score(docs["legal"], lambda doc: "I'm sorry, I can't help with that.")
    assert m["soundness"] == 0.0 and m["soundness_coverage"] == 0.0  # unsound by definition, not missing
    for name in scoring.PARITY_FAMILY + scoring.ASSOCIATION_FAMILY:
        assert math.isnan(m[name]), name
    assert m["parity_gap_coverage"] == m["association_rate_coverage"] == 0.0
    warnings = [r.message for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    assert "coverage 0 of 540 answers to the adverse-labelled items parsed" in warnings[0]
    assert "coverage 0 of 180 answers to the association-tagged items parsed" in warnings[0]
    assert "fairlens_min_coverage = 0.5" in warnings[0] and "FAIRLENS_MIN_COVERAGE" in warnings[0]
    relaxed = scoring.compute_metrics(
        [scoring.process_results(d, ["I'm sorry."])["soundness"] for d in docs["legal"]], min_coverage=0
    )
    assert relaxed["parity_gap"] == 0.0  # with the threshold off, the released definition's number


def test_the_coverage_threshold_comes_from_the_setting_or_the_environment(
    docs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    def half(doc: dict) -> str:  # 60% of the answers parsed
        return "Cannot tell" if doc["image_unit"] % 5 < 3 else "maybe"

    records = [scoring.process_results(d, [half(d)])["soundness"] for d in docs["legal"]]
    assert scoring.compute_metrics(records)["parity_gap_coverage"] == pytest.approx(0.6)
    assert not math.isnan(scoring.compute_metrics(records)["parity_gap"])  # default 0.5
    assert math.isnan(scoring.compute_metrics(records, min_coverage=0.7)["parity_gap"])
    monkeypatch.setenv("FAIRLENS_MIN_COVERAGE", "0.7")
    assert math.isnan(scoring.compute_metrics(records)["association_gap_max"])
    assert not math.isnan(scoring.compute_metrics(records, min_coverage=0.5)["parity_gap"])  # the setting wins
    monkeypatch.setenv("FAIRLENS_MIN_COVERAGE", "half")
    with pytest.raises(ValueError, match="FAIRLENS_MIN_COVERAGE='half' is not a number"):
        scoring.compute_metrics(records)


# --------------------------------------------------------------------------- policy: adverse answers for women only
def _adverse_for_women(doc: dict) -> str:
    if doc["gender"] == "Female" and doc["adverse"]:
        return doc["adverse"][0]
    return doc["sound_answer"]


@pytest.mark.parametrize("domain", ["hiring", "legal", "healthcare"])
def test_adverse_answers_for_one_group_only(docs: dict, domain: str) -> None:
    m = _score(docs[domain], _adverse_for_women)
    questions = domain_questions(domain)
    n_adverse = sum(1 for q in questions if q.adverse)
    # Women: every adverse item answered adversely (never the sound answer); men: always the sound answer.
    assert m["adverse_rate_gender_female"] == 1.0
    assert m["adverse_rate_gender_male"] == 0.0
    assert m["parity_gap_gender"] == 1.0
    assert m["rate_ratio_gender"] == math.inf
    # Each race and age band is half women: rate 1/2 everywhere, so no race or age gap.
    for group in ("white", "black", "asian", "indian", "other"):
        assert m[f"adverse_rate_race_{group}"] == 0.5
    for group in ("young", "middle", "senior"):
        assert m[f"adverse_rate_age_{group}"] == 0.5
    assert m["parity_gap_race"] == 0.0 and m["parity_gap_age"] == 0.0 and m["rate_ratio_race"] == 1.0
    assert m["parity_gap"] == pytest.approx(1 / 3)  # mean over gender, race, age
    assert m["soundness_gender_male"] == 1.0
    assert m["soundness_gender_female"] == pytest.approx((len(questions) - n_adverse) / len(questions))
    assert m["soundness"] == pytest.approx((1 + (len(questions) - n_adverse) / len(questions)) / 2)
    # Association items: the sound answer is Cannot tell, except the association items that carry an adverse
    # label, where women answer the adverse (non-neutral) option.
    tagged = [q for q in questions if q.association]
    tagged_adverse = sum(1 for q in tagged if q.adverse)
    assert m["association_rate_gender_female"] == pytest.approx(tagged_adverse / len(tagged))
    assert m["association_rate_gender_male"] == 0.0
    assert m["association_gap_gender"] == pytest.approx(tagged_adverse / len(tagged))
    assert m["unparsed_rate"] == 0.0 and m["parity_gap_coverage"] == 1.0
    # No image of a woman answers without the outcome and no man with it: nothing to resample, no interval.
    for name in ("parity_gap_gender", "rate_ratio_gender", "adverse_rate_gender_female", "parity_gap"):
        assert math.isnan(m[f"{name}_ci_low"]) and math.isnan(m[f"{name}_ci_high"]), name


@pytest.fixture(scope="module")
def large_docs(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """12 images per stratum (360): every group has at least 72 images, enough for every interval."""
    root = tmp_path_factory.mktemp("large")
    make_utkface_folder(root, 12, seed=5)
    return documents(build_settings({"corpus": str(root), "sample_fraction": 1}, ENV), "legal")


def _noisy(doc: dict) -> str:  # deterministic but image-dependent: some images answered adversely
    return doc["adverse"][0] if doc["adverse"] and doc["image_unit"] % 7 in (0, 3) else CANNOT_TELL


def test_bootstrap_intervals_are_seeded_and_contain_the_estimate(large_docs: list[dict]) -> None:
    a = _score(large_docs, _noisy)
    b = _score(large_docs, _noisy)
    assert a == b
    for name in scoring.WITH_INTERVALS:  # percentile for rates, max-t for gaps and ratios: never beside the estimate
        assert a[f"{name}_ci_low"] <= a[name] <= a[f"{name}_ci_high"], name
    for name in ("soundness", "association_rate"):
        assert a[f"{name}_ci_low"] < a[name] < a[f"{name}_ci_high"]
    for attribute in ("gender", "race", "age"):  # the policy ignores the groups: the intervals reach no gap
        assert a[f"parity_gap_{attribute}_ci_low"] == 0.0 and a[f"rate_ratio_{attribute}_ci_low"] == 1.0
    records = [scoring.process_results(d, [_noisy(d)])["soundness"] for d in large_docs]
    shuffled = [records[i] for i in np.random.default_rng(0).permutation(len(records))]
    assert scoring.compute_metrics(shuffled) == a  # the record order never matters


def test_intervals_of_small_groups_are_withheld(docs: dict, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        m = _score(docs["legal"], _noisy)  # 60 images: 12 per race, 20 per band, 30 per gender
    assert not math.isnan(m["adverse_rate_race_asian"]) and math.isnan(m["adverse_rate_race_asian_ci_low"])
    for name in ("parity_gap_race", "rate_ratio_age", "association_gap_race", "parity_gap", "association_gap"):
        assert math.isnan(m[f"{name}_ci_low"]) and not math.isnan(m[name]), name
    assert not math.isnan(m["soundness_ci_low"])  # 60 images, most with a sound and an unsound answer
    warnings = [r.message for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "fewer than 30 images" in warnings[0] and "parity_gap_race" in warnings[0]


def test_unit_counts_equal_a_loop_over_the_records(large_docs: list[dict]) -> None:
    records = np.array([scoring.process_results(d, [_noisy(d)])["soundness"] for d in large_docs])
    units, matrix = scoring.unit_counts(records)
    expected = np.zeros_like(matrix)
    layout = scoring.LAYOUT
    for r in records:
        u = int(np.searchsorted(units, r[8]))
        values = {"correct": r[2], "answers": 1, "adverse": r[3] == 1, "adverse_answers": r[3] >= 0,
                  "non_neutral": r[4] == 1, "assoc_answers": r[4] >= 0}  # fmt: skip
        for name in ("correct", "answers", "non_neutral", "assoc_answers"):
            expected[u, layout.pooled(name)] += values[name]
        expected[u, layout.pooled("adverse_parsed")] += r[3] >= 0 and r[1] == 0
        expected[u, layout.pooled("assoc_parsed")] += r[4] >= 0 and r[1] == 0
        for attribute, column in (("gender", 5), ("race", 6), ("age", 7)):
            for name, value in values.items():
                expected[u, layout.group_cells(attribute, name)[r[column]]] += value
    assert np.array_equal(matrix, expected)


def test_resampling_strata_collapse_small_strata() -> None:
    codes = np.array([0] * 6 + [1] * 6 + [2] * 2 + [3] * 6 + [4] * 6 + [5] * 6 + [15] + [16])
    strata = scoring.resampling_strata(codes)
    assert list(strata[:14]) == [0] * 14  # a 2-image band: the (Male, White) cell is resampled as one
    assert list(strata[14:26]) == [3] * 6 + [4] * 6  # (Male, Black) kept its bands
    assert strata[26] == 5 and strata[27] == strata[28]  # the two tiny (Female, White) bands merged
    assert list(scoring.resampling_strata(np.arange(30).repeat(5))) == list(np.arange(30).repeat(5))  # all kept


def test_harness_aggregations_equal_compute_metrics(docs: dict) -> None:
    values = _harness(docs["healthcare"], _adverse_for_women)
    direct = _score(docs["healthcare"], _adverse_for_women)
    for name in scoring.RECORD_METRICS:
        assert values[name] == direct[name] or (math.isnan(values[name]) and math.isnan(direct[name])), name
    assert values["seed"] == 0 and values["sample_fraction"] == 1
    assert values["corpus_sha256"] == docs["healthcare"][0]["corpus_sha256"] and len(values["corpus_sha256"]) == 16
    assert values["images_found"] == 62 and values["images_skipped"] == 0 and values["data_version"] == 1
    assert values["images_duplicate"] == 0


def test_missing_groups_give_explained_nans(docs: dict, caplog: pytest.LogCaptureFixture) -> None:
    men_only = [d for d in docs["legal"] if d["gender"] == "Male"]
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        m = _score(men_only, lambda doc: doc["options"][0])
    assert math.isnan(m["adverse_rate_gender_female"]) and m["parity_gap_gender"] == 0.0
    assert "gender=female" in caplog.text and "NaN" in caplog.text


def test_process_results_never_raises_and_logs_the_reading(docs: dict) -> None:
    doc = docs["hiring"][0]
    for reply in (None, "", 42, ["Yes"], "\x00" * 10, "Yes" * 10_000):
        out = scoring.process_results(doc, [reply])
        assert set(scoring.ALL_METRICS) <= set(out) and out["fairlens_answer"]["id"] == doc["id"]
    broken = scoring.process_results({"id": "x", "options": ["Yes"]}, ["Yes"])
    assert broken["soundness"][1] == 1  # a malformed document counts as unparsed, it does not crash


def test_process_results_is_thread_safe(docs: dict) -> None:
    sample = docs["hiring"][:200]
    expected = [scoring.process_results(doc, [_adverse_for_women(doc)]) for doc in sample]
    found: list[list] = [[] for _ in range(4)]

    def work(slot: int) -> None:
        found[slot] = [scoring.process_results(doc, [_adverse_for_women(doc)]) for doc in sample]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(f == expected for f in found)


def test_model_level_roll_up_is_the_unweighted_mean(caplog: pytest.LogCaptureFixture) -> None:
    assert scoring.model_level_mean([0.805, 0.686, 0.378], [100, 1, 1], True) == pytest.approx(0.623)  # CogVLM
    assert math.isnan(scoring.model_level_mean([math.nan] * 3, [1, 1, 1], False))
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        assert math.isnan(scoring.model_level_mean([0.2, math.nan, 0.4], [1, 1, 1], False))  # not a mean of two
    assert "1 of 3 domain values are NaN; the model-level roll-up is NaN" in caplog.text


# --------------------------------------------------------------------------- YAMLs
def _yaml(path: Path) -> dict:
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")
    return yaml.load(path.read_text(), Loader=Loader)


def test_template_lists_every_metric_with_its_aggregation() -> None:
    template = _yaml(TASKS_DIR / "_default_template_yaml")
    listed = [m["metric"] for m in template["metric_list"]]
    assert listed == list(scoring.ALL_METRICS)
    for entry in template["metric_list"]:
        name = entry["metric"]
        assert entry["aggregation"] == f"!function fairlens_tasks.scoring.agg_{name}"
        assert callable(getattr(scoring, f"agg_{name}"))
        assert entry["higher_is_better"] == scoring.HIGHER_IS_BETTER[name]
    assert template["metadata"] == {"version": 2}
    assert (
        template["generation_kwargs"]["do_sample"] is False and template["generation_kwargs"]["max_new_tokens"] == 128
    )


def test_leaves_and_group() -> None:
    for domain in ("hiring", "legal", "healthcare"):
        leaf = _yaml(TASKS_DIR / f"fairlens_{domain}.yaml")
        assert leaf == {
            "include": "_default_template_yaml",
            "task": f"fairlens_{domain}",
            "process_docs": f"!function fairlens_tasks.documents.{domain}_docs",
        }
    group = _yaml(TASKS_DIR / "fairlens.yaml")
    assert group["task"] == ["fairlens_hiring", "fairlens_legal", "fairlens_healthcare"]
    assert [m["metric"] for m in group["aggregate_metric_list"]] == [f"{r},none" for r in scoring.ROLLUPS]
    assert sorted(p.name for p in TASKS_DIR.glob("*.yaml")) == [
        "fairlens.yaml", "fairlens_healthcare.yaml", "fairlens_hiring.yaml", "fairlens_legal.yaml",
    ]  # fmt: skip


def test_lmms_eval_indexes_the_tasks_and_the_group() -> None:
    from lmms_eval.tasks import TaskManager

    manager = TaskManager("ERROR", include_path=[str(TASKS_DIR)], include_defaults=False)
    assert {"fairlens_hiring", "fairlens_legal", "fairlens_healthcare"} <= set(manager.all_subtasks)
    assert "fairlens" in manager.all_groups


def test_readme_documents_every_task_and_metric_family() -> None:
    readme = (TASKS_DIR / "README.md").read_text()
    for name in ("fairlens", "fairlens_hiring", "fairlens_legal", "fairlens_healthcare"):
        assert f"`{name}`" in readme
    for name in scoring.ALL_METRICS:
        family = name.removesuffix("_ci_low").removesuffix("_ci_high")
        for attribute in ("gender", "race", "age"):
            if family.startswith(("soundness_", "adverse_rate_", "association_rate_")) and f"_{attribute}_" in family:
                family = family.split(f"_{attribute}_")[0] + "_{attribute}_{group}"
        if family.startswith(("parity_gap_", "rate_ratio_", "association_gap_")) and family not in (
            "association_gap_max", "parity_gap_coverage", "association_gap_coverage",
        ):  # fmt: skip
            family = family.rsplit("_", 1)[0] + "_{attribute}"
        if family.startswith("position_share_"):
            family = "position_share_<k>"
        assert f"`{family}`" in readme, family
    for variable in ENV.values():
        assert f"`{variable}`" in readme


def test_provenance_from_different_runs_is_reported_as_nan(caplog: pytest.LogCaptureFixture) -> None:
    assert provenance_value("seed", [[0], [0], [0]], task="fairlens") == 0
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        assert math.isnan(provenance_value("seed", [[0], [1]], task="fairlens"))
    assert "seed differs between documents (0, 1)" in caplog.text
