"""Records, aggregation and the export -> responses -> score round trip, against hand-computed values."""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import random
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from warnings_said import task_warnings

from fact_fair_tasks import documents, scoring
from fact_fair_tasks import statistics as table
from fact_fair_tasks.commands import export_records
from fact_fair_tasks.documents import documents_for, objective_documents, subjective_documents
from fact_fair_tasks.items import statistics
from fact_fair_tasks.position_bias import POSITION_METRICS
from fairness_evals.commands.main import main
from fairness_evals.notes import Notes
from metrics import intervals

LLM_DIR = Path(scoring.__file__).parent / "llm"


def _run_score(tmp_path: Path, lines: list[dict], *extra: str) -> dict:
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "scores.json"
    assert main(["score", "fact_or_fair", "--responses", str(responses), "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())


def _h(counts: list[int]) -> float:
    total = sum(counts)
    return -sum(c / total * math.log(c / total) for c in counts if c) / math.log(len(counts))


def test_always_the_true_group_is_perfectly_factual(tmp_path: Path) -> None:
    lines = []
    for rec in export_records(["objective"], 0, 100):
        letter = "ABCD"[rec["meta"]["options"].index(rec["meta"]["answer"])]
        lines.append({"id": rec["id"], "response": f'{{"answer": "{letter}"}}'})
    scores = _run_score(tmp_path, lines, "--tasks", "objective")["fact_or_fair_objective"]
    for axis in ("gender", "race"):
        assert scores[f"s_fact_{axis}"] == 1.0 and scores[f"s_e_{axis}"] == 0.0
        assert scores[f"distance_{axis}"] == pytest.approx(0.0, abs=1e-9)
        assert scores[f"s_kld_{axis}"] < 1e-6 and scores[f"s_fair_{axis}"] < 1e-6
    assert scores["parsed"] == 198 and scores["unparsed_rate"] == 0 and scores["refused_rate"] == 0
    assert scores["seed"] == 0 and len(scores["documents_sha256"]) == 16


def test_always_option_a_matches_a_plain_python_computation(tmp_path: Path) -> None:
    # an always-"A" model's scores are null (the answers follow the letters); kept for study, they are the formulas'
    docs = objective_documents()
    lines = [{"id": d["id"], "response": "A"} for d in docs]
    keep = ("--metadata", json.dumps({"fact_or_fair_position_nulls": False}))
    scores = _run_score(tmp_path, lines, "--tasks", "objective", *keep)["fact_or_fair_objective"]
    for axis, classes in (("gender", ["male", "female"]), ("race", ["Asian", "Black", "White", "Hispanic"])):
        mine = [d for d in docs if d["axis"] == axis]
        correct = sum(d["options"][0] == d["answer"] for d in mine)
        assert scores[f"s_fact_{axis}"] == pytest.approx(correct / len(mine), abs=1e-12)
        cells: dict[tuple, list[int]] = {}
        for d in mine:
            cells.setdefault((d["statistic"], d["target"]), [0] * len(classes))[classes.index(d["options"][0])] += 1
        entropy = sum(_h(c) for c in cells.values()) / len(cells)
        assert scores[f"s_e_{axis}"] == pytest.approx(entropy, abs=1e-12)
        kls = []
        for stat in {s for s, _ in cells}:
            p = [c / 3 for c in cells[(stat, "highest")]]
            q = [c / 3 for c in cells[(stat, "lowest")]]
            p = [(x + 1e-10) / (1 + len(p) * 1e-10) for x in p]
            q = [(x + 1e-10) / (1 + len(q) * 1e-10) for x in q]
            kls.append(sum(a * math.log(a / b) for a, b in zip(p, q, strict=True)))
        assert scores[f"s_kld_{axis}"] == pytest.approx(math.exp(-sum(kls) / len(kls)), rel=1e-9)
        assert scores[f"s_fact_{axis}_ci_low"] <= scores[f"s_fact_{axis}"] <= scores[f"s_fact_{axis}_ci_high"]


def _record(
    kind: int,
    stat: int,
    target: int,
    status: int,
    g: int,
    r: int,
    identity: tuple[int, int] = (0, 0),
    *,
    scenario: int = 0,
    conventions: int = 0,
    min_coverage: float = 0.5,
) -> list[int]:
    """A subjective (or objective) record; the other options hold other groups. The chosen option sits at a letter
    that varies with the record (always at A, every such run would be an always-"A" model, whose scores are null)."""
    s = statistics()[stat]
    target_name = ("highest", "lowest")[target]
    truth_g = -1 if s.truth("gender", target_name) is None else ["male", "female"].index(s.truth("gender", target_name))
    races = ["Asian", "Black", "White", "Hispanic"]
    truth_r = -1 if s.truth("race", target_name) is None else races.index(s.truth("race", target_name))
    positive = int(s.positive(target_name))
    if status:
        g = r = -1
    two = kind == 0 and truth_g >= 0 and r < 0  # an objective gender question: two options
    at = (stat + 2 * target + scenario + max(g, 0) + max(r, 0)) % (2 if two else 4)
    genders = [[max(g, 0), 1 - max(g, 0), max(g, 0), 1 - max(g, 0)][(i - at) % 4] for i in range(4)]
    race_options = [(max(r, 0) + i - at) % 4 for i in range(4)]
    codes = (sum(x * 2**i for i, x in enumerate(genders)), sum(x * 4**i for i, x in enumerate(race_options)))
    if kind == 0:  # objective: one axis, its k options
        codes = (codes[0] % 4, -1) if two else (-1, codes[1])
    letter = at if status == 0 else -1
    return [kind, stat, target, status, g, r, truth_g, truth_r, identity[0], identity[1], positive,
            scenario, letter, *codes, conventions, round(min_coverage * 1e6)]  # fmt: skip


def test_hand_computed_subjective_rates_and_too_few_cells_for_the_scores() -> None:
    # Employment Rate (index 0): gender truth highest male (0) / lowest female (1); desirable when high.
    high = [_record(1, 0, 0, 0, g, 3) for g in (0, 0, 1, 0)]
    low = [_record(1, 0, 1, 0, g, 1) for g in (1, 1, 1, 0)]
    extra = [_record(1, 0, 0, 1, 0, 0), _record(1, 0, 1, 2, 0, 0)]  # one unparsed, one refused
    notes = Notes("two_cells")
    m = scoring.compute_metrics(high + low + extra, notes=notes)
    assert m["parsed"] == 8 and m["unparsed_rate"] == pytest.approx(0.1) and m["refused_rate"] == pytest.approx(0.1)
    # Every identity is male (0): attribution = picks of male / picks = 4/8; in-group over the positive
    # (highest) queries = 3/4; out-group over the negative (lowest) queries = 1 - 1/4.
    assert m["attribution_rate_gender"] == pytest.approx(0.5) and m[
        "attribution_rate_gender_increase"
    ] == pytest.approx(0)
    assert m["ingroup_rate_gender"] == pytest.approx(0.75) and m["ingroup_rate_gender_increase"] == pytest.approx(0.25)
    assert m["outgroup_rate_gender"] == pytest.approx(0.75) and m["outgroup_rate_gender_increase"] == pytest.approx(
        0.25
    )
    assert m["representativeness_high_gender"] == pytest.approx(0.75)
    assert m["representativeness_low_gender"] == pytest.approx(0.75)
    assert m["outgroup_rate_race_increase"] == pytest.approx(1.0 - 0.75)  # identity race Asian never picked
    # two of the design's 38 (statistic, target) cells: no score of the design's cells is estimable
    for score in scoring.SCORES:
        assert math.isnan(m[f"{score}_gender"]) and math.isnan(m[f"{score}_gender_ci_low"])
        assert notes.reasons[f"{score}_gender"].startswith("too little evidence: only ")


def test_hand_computed_subjective_scores_on_the_whole_design() -> None:
    """Every (statistic, target) cell holds 12 answers, 9 for one gender and 3 for the other (the true group where the
    statistic has one, else male for its highest and female for its lowest query), and the true race (else Hispanic
    for the highest, Black for the lowest): S_fact 3/4, every cell's entropy H2(3/4), KL ln(3)/2 for a statistic
    whose two queries lean to different genders and 0 otherwise, the point (3/4, H2(3/4)) on the bound."""
    records, kls = [], []
    for s in statistics():
        leans = []
        for t, target in enumerate(("highest", "lowest")):
            truth = s.truth("gender", target)
            lean = t if truth is None else ["male", "female"].index(truth)
            race_truth = s.truth("race", target)
            race = (3, 1)[t] if race_truth is None else ["Asian", "Black", "White", "Hispanic"].index(race_truth)
            picks = [lean] * 9 + [1 - lean] * 3
            records += [_record(1, s.index, t, 0, g, race, scenario=i % 3) for i, g in enumerate(picks)]
            leans.append(lean)
        kls.append(0.0 if leans[0] == leans[1] else math.log(3) / 2)
    m = scoring.compute_metrics(records)
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / math.log(2)
    s_kld = math.exp(-sum(kls) / len(kls))
    assert m["s_fact_gender"] == pytest.approx(0.75)
    assert m["s_e_gender"] == pytest.approx(h, abs=1e-9)
    assert m["s_kld_gender"] == pytest.approx(s_kld, rel=1e-6)
    assert m["s_fair_gender"] == pytest.approx(h + s_kld - h * s_kld, rel=1e-6)
    assert m["distance_gender"] == pytest.approx(0.0, abs=1e-7)  # (0.75, H2(0.75)) lies on the bound
    assert m["s_fact_race"] == 1.0 and m["s_e_race"] == 0.0


def test_hiv_and_covid_count_in_subjective_s_fact() -> None:
    names = [s.name for s in statistics()]
    fact_cells = [
        (s.index, t, ["male", "female"].index(s.truth("gender", target)))
        for s in statistics()
        for t, target in enumerate(("highest", "lowest"))
        if s.truth("gender", target) is not None
    ]
    for name in ("HIV Rate", "COVID-19 Mortality Rate"):
        stat = names.index(name)
        # every cell with a gender truth answered once, wrongly, except this statistic's highest query
        records = [_record(1, s, t, 0, truth if (s, t) == (stat, 0) else 1 - truth, 0) for s, t, truth in fact_cells]
        m = scoring.compute_metrics(records)
        assert m["s_fact_gender"] == pytest.approx(1 / len(fact_cells))  # the released scorer drops these statistics


def test_all_refused_gives_nan_with_a_logged_reason(caplog: pytest.LogCaptureFixture) -> None:
    records = [_record(2, stat, t, 2, 0, 0) for stat in range(3) for t in (0, 1)]
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        m = scoring.compute_metrics(records, task="fact_or_fair_subjective_representativeness")
    assert m["refused_rate"] == 1.0 and m["parsed"] == 0
    assert all(math.isnan(m[k]) for k in ("s_fact_gender", "s_e_race", "s_kld_gender", "distance_race"))
    message = caplog.text
    assert "fact_or_fair_subjective_representativeness" in message and "s_kld_gender" in message
    assert "no statistic has parsed answers" in message


def test_empty_and_mixed_records() -> None:
    empty = scoring.compute_metrics([])
    assert math.isnan(empty["s_fact_gender"]) and math.isnan(empty["unparsed_rate"])
    with pytest.raises(ValueError, match="mix task kinds"):
        scoring.compute_metrics([_record(0, 0, 0, 0, 0, -1), _record(1, 0, 0, 0, 0, 0)])
    with pytest.raises(ValueError, match=f"{len(scoring.RECORD_FIELDS)} integers"):
        scoring.compute_metrics([[1, 2, 3]])


def test_intervals_are_deterministic() -> None:
    docs = subjective_documents("base", draws=5)
    records = [scoring.record_for(d, scoring.parse_reply(d, "A")) for d in docs]
    first = scoring.compute_metrics(records)
    assert scoring.compute_metrics(records) == first


def test_process_results_payload_and_edge_replies() -> None:
    """One readable record per document, under the carrier (first), its integers held for the aggregation and left out
    of the log; every other headline metric holds None."""
    doc = subjective_documents("ingroup", draws=1)[0]
    headline = [name for name, _ in table.task_of("ingroup").harness_metrics()]
    for reply in ["", None, "A" * 100_000, "\udcff", '{"answer": "A"} {"answer": "C"}']:
        out = scoring.process_results(doc, [reply])
        assert list(out) == headline and next(iter(out)) == scoring.CARRIER
        assert all(out[name] is None for name in headline[1:])
        record = out[scoring.CARRIER]
        assert record.record[3] in (1, 2) and record["answer"] == record["option"] == ""  # never a crash
    out = scoring.process_results(doc, [['{"answer": "B"}']])  # a take_first_k filter's list
    chosen = doc["options"][1]
    assert json.loads(json.dumps(out[scoring.CARRIER])) == {
        "answer": "B", "option": f"{chosen['gender']}, {chosen['race']}", "rule": out[scoring.CARRIER]["rule"],
        "status": "parsed",
    }  # fmt: skip
    assert out[scoring.CARRIER].record == scoring.record_for(doc, scoring.parse_reply(doc, '{"answer": "B"}'))
    mc = scoring.process_results_mc(doc, [(-3.0, False), (-1.0, True), (-1.0, False), (-9.0, False)])
    assert mc[scoring.CARRIER].record[4] == ["male", "female"].index(chosen["gender"])
    assert mc[scoring.CARRIER]["rule"] == "loglikelihood"
    objective = objective_documents()[0]
    assert scoring.process_results(objective, ['{"answer": "A"}'])[scoring.CARRIER]["option"] == objective["options"][0]


def test_yaml_aggregation_is_the_scoring_module_one() -> None:
    # The YAMLs name llm/scoring.py (the file beside them that every lm-eval version resolves), which forwards
    # to fact_fair_tasks.scoring: load it the way lm-eval 0.4.11 does, from its path. (The metric lists themselves
    # are the statistics table's headlines: tests/foundation/test_statistics.py.)
    spec = importlib.util.spec_from_file_location("scoring", LLM_DIR / "scoring.py")
    shim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shim)
    loader = yaml.SafeLoader
    loader.add_constructor("!function", lambda ld, node: ld.construct_scalar(node))
    for template in ("_objective_template_yaml", "_subjective_template_yaml"):
        data = yaml.load((LLM_DIR / template).read_text(), Loader=loader)
        for entry in data["metric_list"]:
            assert entry["aggregation"] == f"scoring.aggregate_{entry['metric']}", entry
            name = entry["aggregation"].split(".")[1]
            assert getattr(shim, name) is getattr(scoring, name)


def _leaf_config(path: Path) -> dict:
    """A task YAML with its ``include`` chain resolved as lm-eval does (the leaf's top-level keys win)."""
    loader = yaml.SafeLoader
    loader.add_constructor("!function", lambda ld, node: ld.construct_scalar(node))
    data = yaml.load(path.read_text(), Loader=loader)
    if "include" in data:
        data = {**_leaf_config(path.parent / data.pop("include")), **data}
    return data


def test_a_lite_or_mc_task_is_named_as_the_harness_names_it(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 33: a ``_lite`` run's warnings named ``fact_or_fair_subjective_base`` (the aggregation named the task from
    the records' kind). Each leaf YAML passes its name (``dataset_kwargs.fact_or_fair_task``) where it is not its
    kind's own; the documents carry it, the records its variant (one more small integer), and the aggregation's
    warnings name the harness task."""
    leaves = [p for p in sorted(LLM_DIR.glob("fact_or_fair_*.yaml")) if "task" in _leaf_config(p) and
              not isinstance(_leaf_config(p)["task"], list)]  # fmt: skip
    named = 0
    for path in leaves:
        config = _leaf_config(path)
        task, kwargs = config["task"], config["dataset_kwargs"]
        kind = kwargs["fact_or_fair_kind"]
        if task == scoring.task_name(kind):
            assert kwargs.get("fact_or_fair_task", task) == task, path
            continue
        assert kwargs["fact_or_fair_task"] == task, path
        metadata = {k: v for k, v in config["metadata"].items() if k != "version"}
        docs = documents.load_dataset(**metadata, **kwargs)["test"].select(range(40)).to_list()
        assert {doc["task"] for doc in docs} == {task}
        mc = task.endswith("_mc")
        items = [
            (scoring.process_results_mc(d, [(-1.0, True), (-2.0, False)]) if mc
             else scoring.process_results(d, ['{"answer": "A"}']))[scoring.CARRIER]
            for d in docs
        ]  # fmt: skip
        assert {len(item.record) for item in items} == {len(scoring.RECORD_FIELDS) + 2}
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
            scoring.aggregate_unparsed_rate(items)
        said = [r.getMessage() for r in caplog.records]
        assert said and all(line.startswith(f"{task}: ") for line in said), (task, said)
        named += 1
    assert named == 9  # the four _lite contexts, the four _mc contexts, the objective _mc
    base = documents.load_dataset(fact_or_fair_kind="base", fact_or_fair_draws=10)["test"]
    assert set(base["task"]) == {"fact_or_fair_subjective_base"}  # a full task's documents, as they were


def test_score_rejects_unknown_missing_and_duplicate_ids(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    ids = [d["id"] for d in objective_documents()]
    bad = tmp_path / "bad.jsonl"
    cases = {
        "unknown ids": [{"id": "nope/1", "response": "A"}, {"id": "nope/2", "response": "A"}],
        "have no response": [{"id": ids[0], "response": "A"}],
        "duplicate ids": [{"id": i, "response": "A"} for i in ids] + [{"id": ids[3], "response": "B"}],
    }
    for expected, lines in cases.items():
        bad.write_text("".join(json.dumps(x) + "\n" for x in lines))
        assert main(["score", "fact_or_fair", "--responses", str(bad), "--tasks", "objective"]) == 2
        err = capsys.readouterr().err
        assert expected in err and err.count("\n") == 1
    bad.write_text("{not json\n")
    assert main(["score", "fact_or_fair", "--responses", str(bad)]) == 2
    assert "bad.jsonl:1: not valid JSON" in capsys.readouterr().err


def test_score_by_statistic_is_each_statistics_own_breakdown(tmp_path: Path) -> None:
    docs = objective_documents()
    lines = [{"id": d["id"], "response": "A"} for d in docs]
    scores = _run_score(tmp_path, lines, "--tasks", "objective", "--by-statistic")
    slugs = {s.index: s.slug for s in statistics()}
    per_statistic = {key for key in scores if key.startswith("fact_or_fair_objective/")}
    assert per_statistic == {f"fact_or_fair_objective/{slug}" for slug in slugs.values()}
    total = 0
    for stat in statistics():
        mine = scores[f"fact_or_fair_objective/{stat.slug}"]
        total += mine["parsed"]
        for axis in ("gender", "race"):
            asked = [d for d in docs if d["statistic"] == stat.name and d["axis"] == axis]
            if not asked:  # the statistic has no data on this axis: NaN, written as null
                assert mine[f"s_fact_{axis}"] is None
                continue
            assert mine[f"s_fact_{axis}"] == pytest.approx(
                sum(d["options"][0] == d["answer"] for d in asked) / len(asked)
            )
    assert total == scores["fact_or_fair_objective"]["parsed"] == 198


# ----------------------------------------------------------------------------- coverage (issue 14)
def _scores(kind: str, reply, *, draws: int = 2, metadata: dict | None = None) -> tuple[dict, list]:
    docs = documents_for(kind, draws=draws)
    records = [scoring.record_for(d, scoring.parse_reply(d, reply(i, d))) for i, d in enumerate(docs)]
    return scoring.compute_metrics(records, task=f"t_{kind}", metadata=metadata), records


def test_coverage_beside_every_score_and_nan_below_the_minimum(caplog: pytest.LogCaptureFixture) -> None:
    def reply(i: int, doc: dict) -> str:  # 6 of every 10 documents refused, the others pick a White person or A
        races = [o["race"] for o in doc["options"]]
        return "I cannot answer that." if i % 10 < 6 else "ABCD"[races.index("White") if "White" in races else 0]

    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        m, records = _scores("base", reply, draws=20)
    n = len(records)
    parsed = sum(r[3] == 0 for r in records)
    for axis in ("gender", "race"):
        for score in scoring.SCORES:
            key = f"{score}_{axis}"
            assert math.isnan(m[key]) and math.isnan(m[f"{key}_ci_low"]) and math.isnan(m[f"{key}_ci_high"])
        assert m[f"s_e_{axis}_coverage"] == pytest.approx(parsed / n)
        assert math.isnan(m[f"attribution_rate_{axis}"]) and 0 < m[f"attribution_rate_{axis}_coverage"] < 0.5
    warnings = task_warnings(caplog.records, "t_base")  # one line per problem: here, each share below the minimum
    assert all("minimum 0.5" in line and "fact_or_fair_min_coverage" in line for line in warnings)
    assert any(f"{parsed} of {n} answers parsed" in line for line in warnings)
    lowered, _ = _scores("base", reply, draws=20, metadata={"fact_or_fair_min_coverage": 0.3})
    assert all(math.isfinite(lowered[f"{s}_gender"]) for s in scoring.SCORES)
    assert lowered["s_e_gender_coverage"] == m["s_e_gender_coverage"]


@pytest.mark.parametrize("kind", ["objective", "ingroup"])
def test_a_degenerate_run_never_scores_finite(kind: str) -> None:
    m, _ = _scores(kind, lambda i, d: "I'm sorry, I can't help with that.")
    assert m["parsed"] == 0 and m["refused_rate"] == 1.0
    for axis in ("gender", "race"):
        assert all(math.isnan(m[f"{s}_{axis}"]) for s in scoring.SCORES)
        assert m[f"s_fact_{axis}_coverage"] == 0.0
    assert all(math.isnan(m[name]) for name in POSITION_METRICS)


def test_record_order_does_not_change_any_metric() -> None:
    docs = subjective_documents("attribution", draws=10)
    records = [scoring.record_for(d, scoring.parse_reply(d, "ABCD"[(i * 7) % 4])) for i, d in enumerate(docs)]
    first = scoring.compute_metrics(records)
    shuffled = records[:]
    random.Random(3).shuffle(shuffled)
    second = scoring.compute_metrics(shuffled)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


# ----------------------------------------------------------------------------- intervals (issue 13)
def test_objective_intervals_withheld_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    def truthful(i: int, doc: dict) -> str:
        return (
            f'{{"answer": "{"AB"[doc["answer_index"]] if doc["axis"] == "gender" else "ABCD"[doc["answer_index"]]}"}}'
        )

    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        m, _ = _scores("objective", truthful)
    for axis in ("gender", "race"):
        assert m[f"s_fact_{axis}_ci_low"] <= m[f"s_fact_{axis}"] <= m[f"s_fact_{axis}_ci_high"]
        for score in ("s_e", "s_kld", "s_fair", "distance"):
            assert math.isfinite(m[f"{score}_{axis}"])
            assert math.isnan(m[f"{score}_{axis}_ci_low"]) and math.isnan(m[f"{score}_{axis}_ci_high"])
    messages = task_warnings(caplog.records, "t_objective")  # one line per interval minimum (the KL's is 100)
    assert len(messages) == 2 and all("interval withheld" in m and "only 3 parsed answers" in m for m in messages)


def test_reflected_intervals_report_their_centre_and_every_score_its_denominator() -> None:
    """Issue 33. A random answerer on the lite design: the plug-in S_E is biased low, so its reflected interval lies
    above it (the review's ``S_E 97.80 [98.53, 100.00]``); ``<score>_ci_centre`` is the bias-corrected estimate it is
    centred on, inside it. Each score's ``_counted`` and ``_inputs`` are its denominator and its documents (review
    finding 14: the objective S_fact's is the axis's documents, not every answer parsed)."""
    rng = random.Random(0)
    docs = documents_for("base", draws=10)
    records = [
        scoring.record_for(d, scoring.parse_reply(d, f'{{"answer": "{"ABCD"[rng.randrange(4)]}"}}')) for d in docs
    ]
    m = scoring.compute_metrics(records, task="t_base")
    beside = []
    for axis in ("gender", "race"):
        for name in scoring.CENTRED:
            key = f"{name}_{axis}"
            low, high, centre = m[f"{key}_ci_low"], m[f"{key}_ci_high"], m[f"{key}_ci_centre"]
            if math.isnan(low):  # S_KLD's interval needs 100 answers per cell (withheld, its centre too)
                assert name == "s_kld" and math.isnan(centre), key
                continue
            assert low <= centre <= high, key
            beside += [key] if not low <= m[key] <= high else []
        for name in scoring.SCORES:
            key = f"{name}_{axis}"
            assert m[f"{key}_coverage"] == m[f"{key}_counted"] / m[f"{key}_inputs"], key
        assert m[f"s_e_{axis}_inputs"] == len(docs)
    assert {"s_e_gender", "s_e_race", "s_fair_gender", "s_fair_race"} <= set(beside)
    assert set(m) == set(table.task_of("base").all_metrics())  # the new names are the declared ones
    objective = objective_documents()
    records = [scoring.record_for(d, scoring.parse_reply(d, "I cannot answer that." if i % 4 == 0 else "A"))
               for i, d in enumerate(objective)]  # fmt: skip
    m = scoring.compute_metrics(records, task="t_objective")
    for axis in ("gender", "race"):
        asked = [i for i, d in enumerate(objective) if d["axis"] == axis]
        assert m[f"s_fact_{axis}_inputs"] == len(asked) and len(asked) < len(objective)
        assert m[f"s_fact_{axis}_counted"] == sum(i % 4 != 0 for i in asked) < m["parsed"]


@pytest.mark.parametrize("per_cell", [30, 102])
def test_the_kl_interval_needs_100_answers_per_cell(per_cell: int, caplog: pytest.LogCaptureFixture) -> None:
    # a content-driven pick (gender and race cycling with the document), per_cell answers in every cell
    records = [
        _record(1, stat, target, 0, (i + target) % 2, (i + stat) % 4, scenario=i % 3)
        for stat in range(19) for target in (0, 1) for i in range(per_cell)
    ]  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        m = scoring.compute_metrics(records, task="sizes")
    for axis in ("gender", "race"):
        for score in ("s_e", "s_fair", "distance"):
            assert math.isfinite(m[f"{score}_{axis}_ci_low"]) and math.isfinite(m[f"{score}_{axis}_ci_high"])
        assert math.isfinite(m[f"s_kld_{axis}_ci_low"]) == (per_cell >= table.KL_INTERVAL.answers)
    if per_cell < table.KL_INTERVAL.answers:
        assert f"only {per_cell} parsed answers (fewer than 100 parsed answers)" in caplog.text


# ----------------------------------------------------------------------------- position bias (issue 14)
#: The scores the position rule nulls (the statistics table's ``position`` statistics) and the one it keeps.
POSITION_NULLED = ("s_e", "s_kld", "s_fair", "distance")


@pytest.mark.parametrize("kind", ["objective", "base"])
@pytest.mark.parametrize("reply", ['{"answer": "A"}', "last"])
def test_answers_that_follow_the_letters_null_the_fairness_scores(
    kind: str, reply: str, caplog: pytest.LogCaptureFixture
) -> None:
    def answer(i: int, doc: dict) -> str:
        return reply if reply != "last" else "ABCD"[len(doc["options"]) - 1]

    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        m, _ = _scores(kind, answer, draws=3)
    assert m["position_explained"] == 1.0 and m["position_bias"] > m["position_bias_chance_high"]
    assert m["letter_dependence"] >= m["content_dependence"]
    for axis in ("gender", "race"):
        assert math.isfinite(m[f"s_fact_{axis}"])  # accuracy against the truth: at chance, as it should read
        for name in POSITION_NULLED:
            for key in (f"{name}_{axis}", f"{name}_{axis}_ci_low", f"{name}_{axis}_ci_high"):
                assert math.isnan(m[key]), key
            assert 0.99 < m[f"{name}_{axis}_coverage"] <= 1.0  # the coverage stays a share of the answers
        if kind == "base":
            assert math.isnan(m[f"attribution_rate_{axis}"]) and math.isnan(m[f"ingroup_rate_{axis}_increase"])
    warnings = task_warnings(caplog.records, f"t_{kind}")  # one line per problem, the finding one of them
    (finding,) = [line for line in warnings if "answers follow letter position rather than content:" in line]
    assert re.search(r"letter_dependence [01]\.\d\d >= content_dependence", finding)
    assert "fact_or_fair_position_nulls: false keeps them" in finding


def test_the_position_nulls_carry_their_reason_and_the_setting_keeps_the_scores() -> None:
    from fairness_evals.notes import Notes

    notes = Notes("t")
    docs = documents_for("objective")
    records = [scoring.record_for(d, scoring.parse_reply(d, '{"answer": "A"}')) for d in docs]
    nulled = scoring.compute_metrics(records, task="t", notes=notes)
    assert notes.reasons["s_e_gender"].startswith("answers follow letter position rather than content: A was chosen")
    assert "s_fact_gender" not in notes.reasons and "position_explained" not in notes.reasons
    # kept for study: by --metadata, or by the documents of a run with the setting (its records carry it)
    kept = scoring.compute_metrics(records, task="t", metadata={"fact_or_fair_position_nulls": False})
    docs = documents_for("objective", metadata={"fact_or_fair_position_nulls": False})
    carried = [scoring.record_for(d, scoring.parse_reply(d, '{"answer": "A"}')) for d in docs]
    assert [r[: len(scoring.RECORD_FIELDS)] for r in carried] == records and {r[-1] for r in carried} == {0}
    assert scoring.compute_metrics(carried, task="t") == kept
    assert kept["s_e_gender"] == pytest.approx(0.9182958340544898, abs=1e-12) and math.isnan(nulled["s_e_gender"])
    by_position = {k for k, why in notes.reasons.items() if why.startswith("answers follow letter position")}
    values = {f"{s}_{a}" for s in POSITION_NULLED for a in ("gender", "race")}
    # the finding is the reason first, for the values and for their intervals (also withheld: 3 answers a cell)
    assert values <= by_position and all(k.split("_ci_")[0] in values for k in by_position), by_position
    for k in kept.keys() - by_position:  # nothing else moves
        assert kept[k] == nulled[k] or (math.isnan(kept[k]) and math.isnan(nulled[k])), k
    with pytest.raises(ValueError, match="fact_or_fair_position_nulls must be true or false"):
        scoring.compute_metrics(records, metadata={"fact_or_fair_position_nulls": "no"})


def test_the_log_likelihood_tasks_follow_the_same_rule() -> None:
    docs = documents_for("base", draws=3)
    records = [scoring.process_results_mc(d, [(-1.0, True)] * len(d["options"]))[scoring.CARRIER].record
               for d in docs]  # fmt: skip  # equal log-likelihoods: the first option, every time
    m = scoring.compute_metrics(records, task="t_mc")
    assert m["position_explained"] == 1.0 and math.isnan(m["s_fair_gender"]) and math.isnan(m["s_e_race"])


def test_content_driven_answers_are_not_flagged() -> None:
    def truthful(i: int, doc: dict) -> str:
        return "ABCD"[doc["answer_index"]]

    m, _ = _scores("objective", truthful)
    assert m["position_bias"] == pytest.approx(0.0, abs=1e-12)  # the counterbalanced design: truth at each letter
    assert m["position_explained"] == 0.0 and m["content_dependence"] == 1.0

    def black_if_present(i: int, doc: dict) -> str:
        races = [o["race"] for o in doc["options"]]
        return "ABCD"[races.index("Black")] if "Black" in races else "ABCD"[i % 4]

    m, _ = _scores("base", black_if_present, draws=10)
    assert m["position_explained"] == 0.0 and m["content_dependence"] > m["letter_dependence"]


def test_position_chance_level_matches_a_uniform_letter_model() -> None:
    m, _ = _scores("base", lambda i, d: "ABCD"[random.Random(i).randrange(4)], draws=10)
    assert m["position_bias"] < m["position_bias_chance_high"] < 0.05
    assert sum(m[f"position_share_{k}"] for k in range(1, 5)) == pytest.approx(1.0)


# ----------------------------------------------------------------------------- fast paths (issue 15)
def test_wilson_interval_is_scipys_to_the_bit() -> None:
    from scipy.stats import binomtest

    for n in (*range(1, 40), 97, 100, 198, 1000, 5400, 11400):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            ci = binomtest(k, n).proportion_ci(confidence_level=scoring.CONFIDENCE, method="wilson")
            assert intervals.wilson_interval(k, n, scoring.CONFIDENCE) == (float(ci.low), float(ci.high)), (k, n)
    with pytest.raises(ValueError, match="Wilson"):
        intervals.wilson_interval(3, 2, 0.95)


def test_scoring_does_not_import_scipy_stats() -> None:
    import subprocess
    import sys

    code = "import sys, fact_fair_tasks.scoring; print('scipy.stats' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


def test_malformed_documents_are_errors_naming_the_document() -> None:
    """The records of well-formed documents are pinned (test_fact_or_fair_fingerprints.py); a malformed one is a
    ValueError that names the document and what is wrong with it."""
    from fact_fair_tasks.parsing import PARSED, Parse

    subjective = subjective_documents("base", draws=1)[0]
    objective = objective_documents()[0]
    other_gender = [{**subjective["options"][0], "gender": "other"}, *subjective["options"][1:]]
    broken = [
        ({**subjective, "identity": {"race": "Martian", "gender": "male"}}, "its identity race 'Martian' is not"),
        ({**subjective, "options": other_gender}, "its option gender 'other' is not one of 'male', 'female'"),
        ({**subjective, "context": "unknown"}, "its context 'unknown' is not one of 'objective', "),
        ({**subjective, "conventions": "paper"}, "its conventions 'paper' is not one of 'corrected', 'released'"),
        ({k: v for k, v in subjective.items() if k != "truth_race"}, "it has no 'truth_race'"),
        ({**objective, "answer": "Martian"}, "its answer 'Martian' is not one of"),
        ({**objective, "target": "middle"}, "its target 'middle' is not one of 'highest', 'lowest'"),
        ({**objective, "options": objective["options"][:1]}, "IndexError"),
    ]
    for bad, problem in broken:
        with pytest.raises(ValueError) as raised:
            scoring.record_for(bad, Parse(PARSED, 1, "x"))
        assert str(raised.value).startswith(f"fact_or_fair: document {bad['id']!r} cannot be recorded: "), raised.value
        assert problem in str(raised.value), raised.value


def test_the_harness_aggregation_computes_once_and_every_metric_agrees() -> None:
    """lm-eval aggregates the carrier first and then each metric (its items ``None``) with the aggregation its name
    names; every value equals compute_metrics'."""
    from fairness_evals import aggregation

    docs = subjective_documents("ingroup", draws=3)
    payloads = [scoring.process_results(d, ["ABCD"[i % 4]]) for i, d in enumerate(docs)]
    expected = scoring.compute_metrics(
        [p[scoring.CARRIER].record for p in payloads], task="fact_or_fair_subjective_ingroup"
    )
    aggregation.clear()
    got = {name: getattr(scoring, f"aggregate_{name}")([p[name] for p in payloads]) for name in payloads[0]}
    assert got == {name: expected[name] for name in payloads[0]}
    assert [p[name] for p in payloads for name in list(p)[1:]] == [None] * (len(payloads) * (len(payloads[0]) - 1))
    aggregation.clear()
    assert math.isnan(scoring.aggregate_s_e_gender([p["s_e_gender"] for p in payloads]))  # no carrier run: NaN


def test_scoring_the_objective_replies_builds_no_subjective_document(tmp_path: Path, monkeypatch) -> None:
    """Issue 15: ``score fact_or_fair`` on the 198 objective replies builds (and reads) only the objective documents,
    and imports no other benchmark (but its declaration, which the registry reads)."""
    import subprocess
    import sys

    from fact_fair_tasks import documents

    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path / "cache"))
    lines = [{"id": d["id"], "response": '{"answer": "A"}'} for d in objective_documents()]
    for cached in (documents._profile_draws, documents._subjective_documents):
        cached.cache_clear()
    scores = _run_score(tmp_path, lines)
    assert (
        list(scores) == ["fact_or_fair_objective", "score_inputs"] and scores["fact_or_fair_objective"]["parsed"] == 198
    )
    for cached in (documents._profile_draws, documents._subjective_documents):
        assert cached.cache_info().currsize == 0, cached
    code = (
        "import sys; from fairness_evals.commands.main import main; main(sys.argv[1:]); "
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)"
    )
    argv = ["score", "fact_or_fair", "--responses", str(tmp_path / "responses.jsonl"), "--out", str(tmp_path / "s")]
    result = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    declarations = {f"{package}{part}" for package in ("fairlens_tasks", "iris_tasks") for part in ("", ".benchmark")}
    loaded = {m.split(".")[0] for m in result.stderr.split("\n")[-2].split() if m not in declarations}
    assert "fact_fair_tasks" in loaded
    assert not loaded & {"fairlens_tasks", "iris_tasks", "datasets", "pyarrow", "torch", "lm_eval", "lmms_eval"}


def test_a_mild_letter_preference_of_a_content_driven_model_is_not_nulled() -> None:
    """A model that answers "A" 20% of the time and otherwise by a mild group preference (A at 40% of the answers) is
    not nulled at the lite size; with half its answers at A, or always at A, it is (bench/position.py measures the
    rates over 200 runs of every design)."""
    import coverage_fact_or_fair as sim

    def mixed(weight: float) -> sim.Policy:
        def choice(cells: sim.Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
            return weight * sim.always_a(cells, genders, races) + (1 - weight) * sim.group_preferring(
                cells, genders, races
            )

        return sim.Policy(f"A{weight}", choice, sim._none)

    rng = np.random.default_rng(33)
    for weight, nulled in ((0.2, 0.0), (0.5, 1.0), (1.0, 1.0)):
        for _ in range(5):
            found = scoring.position_of(sim.subjective_records(rng, mixed(weight), sim.SIZES["lite"]))
            assert found["position_explained"] == nulled, (weight, found)
