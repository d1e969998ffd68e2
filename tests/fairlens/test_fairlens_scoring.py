"""Metrics on synthetic answer policies, checked against hand-computed values; the lmms-eval glue."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pytest
import yaml

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
    for name in ("soundness_gender_female", "soundness_race_other", "soundness_age_senior"):
        assert m[name] == pytest.approx(sound)
    assert m["association_rate"] == 0.0 and m["association_gap"] == 0.0
    for attribute in ("gender", "race", "age"):
        assert m[f"parity_gap_{attribute}"] == 0.0
        assert m[f"rate_ratio_{attribute}"] == 1.0  # every group at rate 0: identical treatment
        assert m[f"association_gap_{attribute}"] == 0.0
    assert m["adverse_rate_race_asian"] == 0.0
    # a constant policy has no sampling variability: the interval collapses onto the estimate
    assert m["soundness_ci_low"] == m["soundness_ci_high"] == pytest.approx(sound)
    assert m["answers"] == len(docs[domain]) and m["images_evaluated"] == 60


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
    assert m["unparsed_rate"] == 0.0
    low, high = m["parity_gap_gender_ci_low"], m["parity_gap_gender_ci_high"]
    assert low == high == 1.0  # every resample keeps the all-or-nothing split between the groups


def test_bootstrap_intervals_are_seeded_and_bracket_the_estimate(docs: dict) -> None:
    def noisy(doc: dict) -> str:  # deterministic but image-dependent: some images answered adversely
        return doc["adverse"][0] if doc["adverse"] and doc["image_unit"] % 3 == 0 else CANNOT_TELL

    a = _score(docs["legal"], noisy)
    b = _score(docs["legal"], noisy)
    assert a == b
    for name in scoring.WITH_INTERVALS:  # (a percentile interval of a gap may lie beside its estimate)
        assert a[f"{name}_ci_low"] <= a[f"{name}_ci_high"]
    for name in ("soundness", "association_rate"):
        assert a[f"{name}_ci_low"] < a[name] < a[f"{name}_ci_high"]


def test_harness_aggregations_equal_compute_metrics(docs: dict) -> None:
    values = _harness(docs["healthcare"], _adverse_for_women)
    direct = _score(docs["healthcare"], _adverse_for_women)
    for name in scoring.RECORD_METRICS:
        assert values[name] == direct[name] or (math.isnan(values[name]) and math.isnan(direct[name])), name
    assert values["seed"] == 0 and values["sample_fraction"] == 1
    assert values["corpus_sha256"] == docs["healthcare"][0]["corpus_sha256"] and len(values["corpus_sha256"]) == 16
    assert values["images_found"] == 62 and values["images_skipped"] == 0 and values["data_version"] == 1


def test_missing_groups_give_explained_nans(docs: dict, caplog: pytest.LogCaptureFixture) -> None:
    men_only = [d for d in docs["legal"] if d["gender"] == "Male"]
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        m = _score(men_only, lambda doc: "Yes")
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


def test_model_level_roll_up_is_the_unweighted_mean() -> None:
    assert scoring.model_level_mean([0.805, 0.686, 0.378], [100, 1, 1], True) == pytest.approx(0.623)  # CogVLM
    assert math.isnan(scoring.model_level_mean([math.nan] * 3, [1, 1, 1], False))
    assert scoring.model_level_mean([0.2, math.nan, 0.4], [1, 1, 1], False) == pytest.approx(0.3)


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
    assert template["metadata"] == {"version": 1}
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
        if family.startswith(("parity_gap_", "rate_ratio_", "association_gap_")) and family != "association_gap_max":
            family = family.rsplit("_", 1)[0] + "_{attribute}"
        assert f"`{family}`" in readme, family
    for variable in ENV.values():
        assert f"`{variable}`" in readme


def test_provenance_from_different_runs_is_reported_as_nan(caplog: pytest.LogCaptureFixture) -> None:
    assert provenance_value("seed", [[0], [0], [0]], task="fairlens") == 0
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        assert math.isnan(provenance_value("seed", [[0], [1]], task="fairlens"))
    assert "seed differs between documents (0, 1)" in caplog.text
