"""FairLens open-ended views: the judged bias scores of each domain and the model level, and what they were computed
from (answers, judged and unjudged, declined) with the judge and prompt version that scored them.

Two kinds of run carry them. A ``fairness-evals judge --out`` file holds every statistic (intervals, gaps, counts,
judge): all are shown. A harness run judged inside lmms-eval (``FAIRLENS_JUDGE``) reports the headlines only
(``oe_bias_mean``, ``oe_flag_rate``, ``unjudged_rate``); its samples give the answers and which of them decline, but
not the judgements, so the rest of the row says where to get it (judge the run's samples, then report that file).
"""

from __future__ import annotations

import math

from fairness_evals.report.load import ModelRuns, Run, models
from fairness_evals.report.model import Cell, Table, count, number, text

DOMAIN_TASKS = ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")
GROUP = "fairlens_open"
TASKS = (*DOMAIN_TASKS, GROUP)
ATTRIBUTES = ("gender", "race", "age")
#: The ``harness`` of a judge output's run (:func:`fairness_evals.report.load.load_judge_output`).
JUDGE = "fairness-evals judge"
#: What a harness run of an open-ended task leaves out, and how to get it.
IN_THE_JUDGE_OUTPUT = (
    "not in the harness results (they hold the headlines only): `fairness-evals judge <run folder> --judge ... --out "
    "judged.json` writes every statistic (judgements come from the cache), and `fairness-evals report judged.json` "
    "shows them"
)


def _items(runs: list[Run]) -> list[tuple[ModelRuns, str, Run]]:
    """(model, task, the run that reports it) for every open-ended task of each model, in table order."""
    out = []
    for model in models(runs):
        for task in TASKS:
            run = model.run_of(task)
            if run is not None:
                out.append((model, task, run))
    return out


def _judged(run: Run) -> bool:
    return run.harness == JUDGE


def _headline(run: Run, task: str, name: str, n: str) -> Cell:
    """A headline of ``task``: from a judge output with its interval and coverage; from a harness run as the harness
    printed it (its samples' recount, made without the judgements, has no coverage or interval of the judged score)."""
    if _judged(run):
        return run.cell(task, name, n=n)
    value = run.metric(task, name)
    reason = run.nan_reason(task, name) if math.isnan(value) else ""
    return number(value, note=reason, source=run.source_of(task, name), n=n, reason=reason)


def _detail(run: Run, task: str, name: str, *, scale: bool = True, digits: int = 2) -> Cell:
    """A statistic only a judge output holds."""
    if not _judged(run):
        return text("–", note=IN_THE_JUDGE_OUTPUT)
    return run.cell(task, name, scale=scale, digits=digits)


def _n(run: Run, task: str) -> str:
    if _judged(run):
        return f"n = {count(run.metric(task, 'judged'))} judged of {count(run.metric(task, 'answers'))}"
    return f"n = {count(run.metric(task, 'answers'))} answers"


def scores_table(items: list[tuple[ModelRuns, str, Run]]) -> Table:
    rows = []
    for model, task, run in items:
        group = task == GROUP
        rows.append(
            [
                text(model.name, note=model.sources), text(task),
                _headline(run, task, "oe_bias_mean", _n(run, task)),
                _headline(run, task, "oe_flag_rate", _n(run, task)),
                *[text("", note="the model level pools the domains' means; the gaps are per domain") if group
                  else _detail(run, task, f"oe_bias_gap_{a}") for a in ATTRIBUTES],
            ]
        )  # fmt: skip
    return Table(
        "Open-ended bias (paper Tables 2-3, %; judged by an LLM)",
        ["Model", "Task", "Bias mean", "Flag rate", "Gap gender (pp)", "Gap race (pp)", "Gap age (pp)"],
        rows,
        "Bias mean: the judge's score (biased opinions / opinions, 0 with none) averaged over the judged answers, the "
        "released code's bias rate; flag rate: share of judged answers scoring above 0.5; gaps: max - min of the group "
        "means. Lower is better. An answer that declines (an apology, 'No comment', another language) is scored 0 "
        "as released but is not covered: when such answers or unjudged ones leave the coverage below "
        "fairlens_min_judged (0.8), every bias score is null. fairlens_open pools the domains, weighted by answers.",
    )


def counts_table(items: list[tuple[ModelRuns, str, Run]]) -> Table:
    rows = []
    for model, task, run in items:
        unjudged = run.metric(task, "unjudged_rate")
        rows.append(
            [
                text(model.name), text(task),
                run.cell(task, "answers", scale=False, digits=0),
                _detail(run, task, "judged", scale=False, digits=0),
                number(unjudged, source=run.source_of(task, "unjudged_rate"),
                       reason=run.nan_reason(task, "unjudged_rate") if math.isnan(unjudged) else ""),
                run.cell(task, "declined", scale=False, digits=0),
                run.cell(task, "declined_rate"),
                text(str(run.results[task].get("judge", "–")) if _judged(run) else "–",
                     note="" if _judged(run) else "judged in the harness: the results do not record the judge (its "
                     "log does, FAIRLENS_JUDGE); " + IN_THE_JUDGE_OUTPUT),
                text(str(run.results[task].get("judge_prompt_version", "–")) if _judged(run) else "–"),
                text(f"[{run.index}] {run.source.name}", note=f"{run.harness}: {run.source}"),
            ]
        )  # fmt: skip
    return Table(
        "Open-ended answers: judged, unjudged and declined",
        ["Model", "Task", "Answers", "Judged", "Unjudged (%)", "Declined", "Declined (%)", "Judge", "Prompt version",
         "Results file"],
        rows,
        "Unjudged: answers without a valid judgement (invalid replies, failed calls, judge refusals, no judge); "
        "declined: answers that do not answer (blank, 'N/A', an apology or refusal with nothing else, not in the "
        "question's language; fairlens_tasks/README.md 'Declined answers'), counted from the answers themselves. A "
        "harness run holds the headlines only; `fairness-evals judge` writes every count.",
    )  # fmt: skip


def tables(runs: list[Run]) -> list[Table]:
    """The open-ended tables, none when no run holds an open-ended task."""
    items = _items(runs)
    return [scores_table(items), counts_table(items)] if items else []
