"""Metrics on synthetic answer policies, checked against hand-computed values; the lmms-eval glue (one readable
record per document under the carrier, each metric naming its aggregation, the reasons for every null)."""

from __future__ import annotations

import dataclasses
import math
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml
from faces import make_utkface_folder
from warnings_said import task_warnings

from fairlens_tasks import scoring
from fairlens_tasks import statistics as table
from fairlens_tasks.documents import documents
from fairlens_tasks.questions import CANNOT_TELL, domain_questions
from fairlens_tasks.settings import ENV, build_settings
from fairness_evals import aggregation, evidence
from fairness_evals.notes import Notes

TASKS_DIR = Path(scoring.__file__).resolve().parent


@pytest.fixture(scope="module")
def docs(utk_folder: Path) -> dict[str, list[dict]]:
    """60 images, 2 per stratum: every race has 12 images (6 female), every age band 20 (10 female)."""
    settings = build_settings({"corpus": str(utk_folder), "sample_fraction": 1}, ENV)
    return {d: documents(settings, d) for d in ("hiring", "legal", "healthcare")}


def _records(docs: list[dict], policy) -> list[list[int]]:
    return [scoring.process_results(doc, [policy(doc)])[scoring.CARRIER]["record"] for doc in docs]


def _score(docs: list[dict], policy) -> dict[str, float]:
    return scoring.compute_metrics(_records(docs, policy))


def _harness(docs: list[dict], policy) -> dict[str, object]:
    """Aggregate exactly as lmms-eval does: each metric of the YAML gets its own list of items, in the order
    ``process_results`` returned them (the carrier first), and each names its own aggregation."""
    results = [scoring.process_results(doc, [policy(doc)]) for doc in docs]
    return {name: getattr(scoring, f"aggregate_{name}")([r[name] for r in results]) for name in results[0]}


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
    coverage = sum(CANNOT_TELL in q.options for q in adverse) / len(adverse)
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
    scores = (
        *table.ADVERSE_RATES,
        table.PARITY_GAPS,
        table.PARITY_GAP,
        table.RATE_RATIOS,
        table.ASSOCIATION_RATE,
        *table.ASSOCIATION_BY_GROUP,
        table.ASSOCIATION_GAPS,
        table.ASSOCIATION_GAP,
        table.ASSOCIATION_GAP_MAX,
    )
    for name in (member for s in scores for member in s.members):
        assert math.isnan(m[name]) and math.isnan(m.get(f"{name}_ci_low", math.nan)), name
    assert m["parity_gap_coverage"] == m["association_rate_coverage"] == 0.0
    warnings = task_warnings(caplog.records, "fairlens_legal")  # one line per problem
    said = "\n".join(warnings)
    assert "coverage 0 of 540 answers to the adverse-labelled items parsed" in said
    assert "coverage 0 of 180 answers to the association-tagged items parsed" in said
    assert "below the minimum 0.5 (fairlens_min_coverage: --metadata, or FAIRLENS_MIN_COVERAGE" in said
    relaxed = scoring.compute_metrics(_records(docs["legal"], lambda d: "I'm sorry."), min_coverage=0)
    assert relaxed["parity_gap"] == 0.0  # with the threshold off, the released definition's number


def test_the_coverage_rule_nulls_what_the_statistics_table_declares(
    docs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The declaration is the computation: below their coverage every statistic that declares the parity or the
    association coverage (its own, or among ``nulled_by``) is null with that reason, and no other; a statistic whose
    declaration no longer names the coverage keeps its value."""
    refused = _records(docs["legal"], lambda doc: "I'm sorry, I can't help with that.")
    notes = Notes("fairlens_legal")
    scoring.compute_metrics(refused, notes=notes)
    by_coverage = {name for name, why in notes.reasons.items() if why.startswith("coverage 0 of")}
    declared = [table.PARITY_INPUTS, table.ASSOCIATION_INPUTS]
    assert by_coverage == {n for c in declared for n in evidence.covered_names(table.CLOSED_STATISTICS, c)}
    assert "adverse_rate_race_asian" in by_coverage and "soundness" not in by_coverage
    kept = tuple(
        dataclasses.replace(s, nulled_by=()) if s.name == "adverse_rate_race_{group}" else s
        for s in table.CLOSED_STATISTICS
    )
    monkeypatch.setattr(table, "CLOSED_STATISTICS", kept)
    m = scoring.compute_metrics(refused)
    assert m["adverse_rate_race_asian"] == 0.0 and math.isnan(m["adverse_rate_gender_male"])


def test_every_null_has_its_reason_in_the_notes(docs: dict) -> None:
    """The caller's Notes hold the reason of every null metric (``fairness-evals score`` writes them)."""
    notes = Notes("fairlens_legal")
    m = scoring.compute_metrics(_records(docs["legal"], lambda d: "I'm sorry."), notes=notes)
    nulls = [name for name, value in m.items() if isinstance(value, float) and math.isnan(value)]
    assert nulls and set(nulls) <= set(notes.reasons)
    assert notes.reasons["parity_gap"].startswith("coverage 0 of 540 answers to the adverse-labelled items parsed")
    assert notes.reasons["parity_gap_ci_low"] == notes.reasons["parity_gap"]
    assert notes.reasons["position_bias"] == "no parsed answer"
    assert "soundness" not in notes.reasons  # 0.0, unsound by definition
    small = Notes("fairlens_legal")
    m = scoring.compute_metrics(_records(docs["legal"], _noisy), notes=small)  # 60 images: 12 per race
    assert "fewer than 30 images" in small.reasons["parity_gap_race_ci_low"] and not math.isnan(m["parity_gap_race"])
    assert all(name in small.reasons for name, v in m.items() if isinstance(v, float) and math.isnan(v))


def test_the_coverage_threshold_is_the_one_the_records_carry_never_the_environment_at_aggregation(
    docs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    def half(doc: dict) -> str:  # 60% of the answers parsed
        return "Cannot tell" if doc["image_unit"] % 5 < 3 else "maybe"

    records = _records(docs["legal"], half)
    assert scoring.compute_metrics(records)["parity_gap_coverage"] == pytest.approx(0.6)
    assert not math.isnan(scoring.compute_metrics(records)["parity_gap"])  # default 0.5
    assert math.isnan(scoring.compute_metrics(records, min_coverage=0.7)["parity_gap"])
    monkeypatch.setenv("FAIRLENS_MIN_COVERAGE", "0.7")  # read when lmms-eval builds the documents, not here
    assert not math.isnan(scoring.compute_metrics(records)["association_gap_max"])

    def built(min_coverage: float) -> list[dict]:  # documents lmms-eval built under the setting
        return [{**doc, "fairlens_min_coverage": min_coverage} for doc in docs["legal"]]

    strict = built(0.7)
    assert scoring.process_results(strict[0], ["x"])[scoring.CARRIER]["provenance"]["fairlens_min_coverage"] == 0.7
    monkeypatch.setenv("FAIRLENS_MIN_COVERAGE", "0.1")
    assert math.isnan(_harness(strict, half)["parity_gap"])  # the records' 0.7, whatever the environment
    assert not math.isnan(_harness(built(0.5), half)["parity_gap"])
    mixed = built(0.5)[:100] + strict[100:]  # two runs' records are never pooled
    with pytest.raises(ValueError, match=r"two fairlens_min_coverage settings \(0\.5 and 0\.7\)"):
        scoring._compute_for_items([scoring.process_results(d, [half(d)])[scoring.CARRIER] for d in mixed])


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
    records = _records(large_docs, _noisy)
    shuffled = [records[i] for i in np.random.default_rng(0).permutation(len(records))]
    assert scoring.compute_metrics(shuffled) == a  # the record order never matters


def test_intervals_of_small_groups_are_withheld(docs: dict, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        m = _score(docs["legal"], _noisy)  # 60 images: 12 per race, 20 per band, 30 per gender
    assert not math.isnan(m["adverse_rate_race_asian"]) and math.isnan(m["adverse_rate_race_asian_ci_low"])
    for name in ("parity_gap_race", "rate_ratio_age", "association_gap_race", "parity_gap", "association_gap"):
        assert math.isnan(m[f"{name}_ci_low"]) and not math.isnan(m[name]), name
    assert not math.isnan(m["soundness_ci_low"])  # 60 images, most with a sound and an unsound answer
    warnings = task_warnings(caplog.records, "fairlens_legal")  # one line per problem
    assert any("fewer than 30 images" in line and "parity_gap" in line for line in warnings)


def test_unit_counts_equal_a_loop_over_the_records(large_docs: list[dict]) -> None:
    records = np.array(_records(large_docs, _noisy))
    design = scoring.unit_counts(records)
    units, matrix = design.units, design.matrix
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
    assert list(values) == list(scoring.HEADLINE_METRICS) and next(iter(values)) == scoring.CARRIER
    for name, value in values.items():
        assert value == direct[name] or (math.isnan(value) and math.isnan(direct[name])), name


def test_a_metric_aggregated_without_its_carrier_is_nan(docs: dict, caplog: pytest.LogCaptureFixture) -> None:
    """A metric's items are None: its value is the carrier's run of the same documents, never a guess."""
    aggregation.clear()
    results = [scoring.process_results(doc, ["Cannot tell"]) for doc in docs["legal"]]
    with caplog.at_level("ERROR", logger="fairness_evals"):
        assert math.isnan(scoring.aggregate_soundness([r["soundness"] for r in results]))
    assert "cannot report soundness" in caplog.text
    assert scoring.aggregate_unparsed_rate([r[scoring.CARRIER] for r in results]) == 0.0
    assert scoring.aggregate_soundness([r["soundness"] for r in results]) == pytest.approx(8 / 9)


def test_provenance_comes_from_the_documents(docs: dict, caplog: pytest.LogCaptureFixture) -> None:
    values = scoring.provenance(docs["healthcare"])
    assert list(values) == list(scoring.PROVENANCE)
    assert values["seed"] == 0 and values["sample_fraction"] == 1
    assert values["corpus_sha256"] == docs["healthcare"][0]["corpus_sha256"] and len(values["corpus_sha256"]) == 16
    assert values["images_found"] == 62 and values["images_skipped"] == 0 and values["data_version"] == 1
    assert values["images_duplicate"] == 0
    mixed = [docs["legal"][0], {**docs["legal"][1], "seed": 1}]
    with caplog.at_level("WARNING", logger="fairness_evals"):
        assert math.isnan(scoring.provenance(mixed)["seed"])
    assert "seed differs between documents (0, 1)" in caplog.text
    assert not set(scoring.PROVENANCE) & set(scoring.ALL_METRICS)  # provenance is no metric


def test_missing_groups_give_explained_nans(docs: dict, caplog: pytest.LogCaptureFixture) -> None:
    men_only = [d for d in docs["legal"] if d["gender"] == "Male"]
    with caplog.at_level("WARNING", logger="fairness_evals.fairlens"):
        m = _score(men_only, lambda doc: doc["options"][-1])  # Cannot tell (always the first: position, all null)
    assert math.isnan(m["adverse_rate_gender_female"]) and m["parity_gap_gender"] == 0.0
    assert "no evaluated image of the group gender=female" in caplog.text
    assert "adverse_rate_gender_female" in caplog.text


def test_process_results_never_raises_and_logs_the_reading(docs: dict) -> None:
    doc = docs["hiring"][0]
    for reply in (None, "", 42, ["Yes"], "\x00" * 10, "Yes" * 10_000):
        out = scoring.process_results(doc, [reply])
        assert list(out) == list(scoring.HEADLINE_METRICS) and out[scoring.CARRIER]["id"] == doc["id"]
    broken = scoring.process_results({"id": "x", "options": ["Yes"]}, ["Yes"])
    assert broken[scoring.CARRIER]["record"][1] == 1  # a malformed document counts as unparsed, it does not crash


def test_one_readable_record_per_document_with_one_type_per_field(docs: dict) -> None:
    """The carrier holds the record once; every other metric holds its own name (never a number, which lmms-eval
    would give a meaningless ``_stderr_clt``); each field keeps one JSON type, as W&B's tables require."""
    replies = ["Yes", "I'm sorry.", "cannot", "No", ""]
    outs = [scoring.process_results(doc, [replies[i % 5]]) for i, doc in enumerate(docs["hiring"][:40])]
    for out in outs:
        record = out[scoring.CARRIER]
        assert list(record) == ["id", "option", "rule", "record", "provenance"]
        assert [type(record[k]) for k in record] == [str, str, str, list, dict] and len(record["record"]) == 10
        assert record["provenance"] == {name: docs["hiring"][0][name] for name in scoring.RECORD_PROVENANCE}
        assert all(type(v) is int for v in record["record"])
        assert all(out[name] is None for name in scoring.HEADLINE_METRICS[1:])
    unparsed = next(o[scoring.CARRIER] for o in outs if o[scoring.CARRIER]["record"][1] == 1)
    assert unparsed["option"] == "" and unparsed["rule"] in ("empty", "unparsed")
    assert {o[scoring.CARRIER]["option"] for o in outs} >= {"Yes", "No", ""}


def test_logged_record_reads_this_and_the_previous_sample_format() -> None:
    record = [0, 0, 1, -1, -1, 0, 0, 0, 7, 0]
    carried = {scoring.CARRIER: {"id": "a.jpg/H01", "option": "Yes", "rule": "exact", "record": record}}
    assert scoring.logged_record(carried) == ("a.jpg/H01", record)
    version_2 = {"fairlens_answer": {"id": "a.jpg/H01"}, "soundness": record, "parity_gap": record}
    assert scoring.logged_record(version_2) == ("a.jpg/H01", record)
    assert scoring.logged_record({"soundness": record}) is None
    assert scoring.logged_record({scoring.CARRIER: "unparsed_rate"}) is None


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


def test_template_lists_the_headline_each_with_its_aggregation() -> None:
    template = _yaml(TASKS_DIR / "_default_template_yaml")
    expected = table.task_of("fairlens_legal").harness_metrics()
    assert [(m["metric"], m["higher_is_better"]) for m in template["metric_list"]] == [
        (name, {"higher": True, "lower": False}.get(direction)) for name, direction in expected
    ]
    assert [name for name, _ in expected] == list(scoring.HEADLINE_METRICS)
    assert [m["aggregation"] for m in template["metric_list"]] == [
        f"!function fairlens_tasks.scoring.aggregate_{m['metric']}" for m in template["metric_list"]
    ]
    assert len(template["metric_list"]) <= 12
    assert template["metadata"] == {"version": 3} and template["tag"] == "fairness_evals"
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
    # Table 2's model-level numbers
    expected = ["soundness,none", "parity_gap,none", "association_rate,none", "association_gap,none"]
    assert [m["metric"] for m in group["aggregate_metric_list"]] == expected
    assert group["metadata"] == {"version": 3}
    assert sorted(p.name for p in TASKS_DIR.glob("*.yaml")) == [
        "fairlens.yaml", "fairlens_healthcare.yaml", "fairlens_hiring.yaml", "fairlens_legal.yaml",
    ]  # fmt: skip
    open_template = _yaml(TASKS_DIR / "open_ended" / "_open_template_yaml")
    assert "tag" not in open_template  # the closed tasks carry fairness_evals: the tag runs FairLens once


def test_lmms_eval_indexes_the_tasks_and_the_group() -> None:
    from lmms_eval.tasks import TaskManager

    manager = TaskManager("ERROR", include_path=[str(TASKS_DIR)], include_defaults=False)
    assert {"fairlens_hiring", "fairlens_legal", "fairlens_healthcare"} <= set(manager.all_subtasks)
    assert "fairlens" in manager.all_groups


def test_readme_documents_every_task_and_variable() -> None:
    readme = (TASKS_DIR / "README.md").read_text()
    for name in ("fairlens", "fairlens_hiring", "fairlens_legal", "fairlens_healthcare"):
        assert f"`{name}`" in readme
    for variable in ENV.values():
        assert f"`{variable}`" in readme


def test_a_limit_20_run_prints_no_comparison_of_groups(docs: dict[str, list[dict]]) -> None:
    """``--limit 20`` of a domain: the first 20 documents are 1-3 images (1-2 per group of each attribute they reach),
    so no gap, ratio or mean of gaps is estimable (declared minimum: 10 images in every group present, half the groups
    present); each is null with its reason. The full corpus of the same documents (12-30 images per group) prints them."""
    for domain in ("hiring", "legal"):
        notes = Notes(f"fairlens_{domain}")
        m = scoring.compute_metrics(_records(docs[domain][:20], _noisy), notes=notes)
        assert m["images_evaluated"] <= 3
        for name in ("parity_gap", "association_gap", "association_gap_max", *(
            f"{prefix}_{a}" for prefix in ("parity_gap", "association_gap", "rate_ratio")
            for a in ("gender", "race", "age")
        )):  # fmt: skip
            assert math.isnan(m[name]), (domain, name)
            assert notes.reasons[name].startswith("too little evidence: "), (domain, name, notes.reasons[name])
    full = scoring.compute_metrics(_records(docs["legal"], _noisy))  # (the hiring answers are mostly unparsed)
    assert all(math.isfinite(full[f"parity_gap_{a}"]) for a in ("gender", "race", "age"))
    assert math.isfinite(full["parity_gap"]) and math.isfinite(full["association_gap"])
