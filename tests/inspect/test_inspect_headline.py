"""The metric every Inspect task of ours reports (:mod:`fairness_evals.inspect.headline`), in process: a group's
roll-ups and member metrics, the values Inspect cannot hold, epochs, one computation per set of scores, warnings
held back, and the tasks Inspect finds under ``fairness_evals/``."""

from __future__ import annotations

import logging
import math
from importlib.metadata import entry_points

import pytest

from fact_fair_tasks import prompts, scoring
from fact_fair_tasks.documents import documents_for
from fact_fair_tasks.inspect_plan import fact_or_fair_kind
from fairness_evals import benchmarks, statistics
from fairness_evals.inspect import headline
from fairness_evals.inspect.plans import plan
from fairness_evals.notes import Notes
from tests.inspect.runs import mixed_reply

GROUP = "fact_or_fair_lite"


def items_of(task: str) -> list[tuple[str, dict]]:
    """(document id, readable record) of every document of ``task``'s leaves, answered by :func:`mixed_reply`."""
    chosen = plan(task)
    out = []
    for leaf in headline.leaves(task):
        for doc in documents_for(fact_or_fair_kind(leaf), draws=10):
            out.append((doc["id"], chosen.item_of(doc, mixed_reply(prompts.prompt_of(doc)), None)))
    return out


@pytest.fixture(scope="module")
def lite() -> headline.Computed:
    return headline.compute(plan(GROUP), items_of(GROUP))


def test_a_group_reports_its_roll_ups_and_each_members_headline_metrics(lite: headline.Computed) -> None:
    leaves = headline.leaves(GROUP)
    assert leaves == [
        "fact_or_fair_objective",
        *(f"fact_or_fair_subjective_{c}_lite" for c in ("base", "representativeness", "attribution", "ingroup")),
    ]
    for leaf in leaves:  # each member's statistics are its own compute_metrics'
        records = [item["record"] for _, item in items_of(leaf)]
        expected = scoring.compute_metrics(records, task=leaf)
        assert lite.statistics[leaf].keys() == expected.keys()
        assert all(headline.finite(v) == headline.finite(expected[k]) for k, v in lite.statistics[leaf].items())
        for name in headline.headline_names(leaf):
            if headline.finite(expected[name]):
                assert lite.values[f"{leaf}/{name}"] == expected[name]
            else:
                assert f"{leaf}/{name}" not in lite.values
    subjective = leaves[1:]
    for axis in ("gender", "race"):  # paper Table 2: Obj. S_fact, Subj. S_fair (the mean of the four contexts)
        assert lite.values[f"s_fact_{axis}"] == lite.statistics["fact_or_fair_objective"][f"s_fact_{axis}"]
        mean = sum(lite.statistics[leaf][f"s_fair_{axis}"] for leaf in subjective) / 4
        assert math.isclose(lite.values[f"s_fair_{axis}"], mean, rel_tol=1e-15)
    own = [name for name in lite.values if "/" not in name]
    assert own == headline.headline_names(GROUP)


def test_the_metric_holds_finite_numbers_only(lite: headline.Computed) -> None:
    assert all(isinstance(v, float) and math.isfinite(v) for v in lite.values.values())
    withheld = [
        f"{leaf}/{name}"
        for leaf in headline.leaves(GROUP)
        for name in headline.headline_names(leaf)
        if not headline.finite(lite.statistics[leaf][name])
    ]
    assert withheld  # some are null here (small cells withhold intervals) ...
    for name in withheld:  # ... left out, each with its reason
        leaf, metric = name.split("/", 1)
        assert name not in lite.values and metric in lite.notes[leaf].reasons


def test_answers_of_several_epochs_keep_the_values_and_withhold_the_intervals() -> None:
    task = "fact_or_fair_objective"
    once = items_of(task)
    twice = headline.compute(plan(task), once + once)
    single = headline.compute(plan(task), once)
    intervals = set(headline.interval_names(task))
    for name in headline.headline_names(task):  # the scores and shares (the counts double)
        value, pooled = single.statistics[task][name], twice.statistics[task][name]
        if name in intervals:
            assert math.isnan(pooled) and name in twice.notes[task].reasons
        elif name.endswith(("_counted", "_inputs")):  # each answer counts: two epochs count every document twice
            assert pooled == 2 * value, name
        else:
            assert (math.isnan(value) and math.isnan(pooled)) or math.isclose(value, pooled, rel_tol=1e-12), name
    assert "s_fact_gender_ci_low" in single.values and "s_fact_gender_ci_low" not in twice.values
    assert "several epochs" in twice.notes[task].reasons["s_fact_gender_ci_low"]


def test_withholding_for_epochs_needs_more_answers_than_documents() -> None:
    values = {"s_fact_gender": 0.5, "s_fact_gender_ci_low": 0.4, "s_fact_gender_stderr": 0.05}
    notes = Notes("fact_or_fair_objective")
    headline.withhold_for_epochs(values, "fact_or_fair_objective", 10, 10, notes)
    assert values["s_fact_gender_ci_low"] == 0.4 and not notes.reasons
    headline.withhold_for_epochs(values, "fact_or_fair_objective", 20, 10, notes)
    assert values["s_fact_gender"] == 0.5 and math.isnan(values["s_fact_gender_ci_low"])
    assert math.isnan(values["s_fact_gender_stderr"]) and set(notes.reasons) == {
        "s_fact_gender_ci_low",
        "s_fact_gender_stderr",
    }


def test_the_same_scores_are_computed_once_and_their_warning_held_back(caplog: pytest.LogCaptureFixture) -> None:
    task = "fact_or_fair_objective"
    latest = headline.Latest()
    first = [(doc_id, item) for doc_id, item in items_of(task)[:12]]
    with caplog.at_level(logging.WARNING):
        computed = latest.get(plan(task), first)
        assert latest.get(plan(task), list(first)) is computed  # the progress display asks again: not recomputed
    said = [r.getMessage() for r in caplog.records if task in r.getMessage()]
    assert not said, said  # said once, at the end of the task (the hook), not at each computation
    assert computed.warnings and computed.warnings[0].startswith(f"{task}: ")
    assert latest.warnings(task) == computed.warnings and latest.warnings(task) == ()


def test_every_task_but_the_log_likelihood_ones_is_registered_with_inspect_under_our_prefix() -> None:
    from inspect_ai._util.registry import registry_lookup

    (point,) = [ep for ep in entry_points(group="inspect_ai") if ep.name == "fairness_evals"]
    point.load()
    expected = {name for _, tasks in benchmarks.hooks("inspect_tasks") for name in tasks}
    tables = statistics.tables()
    language = {t.name for t in tables["fact_or_fair"] if t.harness == "lm-eval" and not t.name.endswith("_mc")}
    understanding = {t.name for t in tables["iris"] if not t.name.startswith("iris_gen")}
    assert expected == language | {t.name for t in tables["fairlens"]} | understanding
    assert {"iris_und", "fairlens_open_legal", "fact_or_fair_lite", "fact_or_fair_objective"} <= expected
    for name in expected:
        found = registry_lookup("task", f"fairness_evals/{name}")
        assert found is not None and found.__doc__ == statistics.task(name).description, name
