"""IRIS view: the six dimension scores per model (with their intervals and denominators) as one small radar
per model, the IRIS-MBTI code of each sector, and the provenance of every task.

The scores and codes are those of ``fairness-evals iris-profile``: the results files of each model are read by
:func:`iris_tasks.profile.read_scores` (a score comes from whichever task of the model's runs reports it) and
the codes come from :func:`iris_tasks.profile.profile`. :func:`fairness_evals.report.load.load_runs` puts the
understanding and generation runs of one model into one model row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fairness_evals.report.load import NOT_A_RESULT, ModelRuns, ReportInputError, Run, models
from fairness_evals.report.model import Figure, Section, Table, count, number, text
from fairness_evals.report.svg import RadarSeries, radar_multiples

#: Dimension -> (the task that reports its score, the score metric), as the IRIS tasks name them
#: (iris_tasks/README.md). The scores are read as iris-profile reads them: from whichever task of a model's runs
#: reports the metric.
DIMENSIONS = {
    "IFS-Und": ("iris_ifs_und", "ifs_und_score"),
    "RFS-Und": ("iris_rfs_und", "rfs_und_score"),
    "BIS-Und": ("iris_bis_und", "bis_und_score"),
    "IFS-Gen": ("iris_gen_neutral", "ifs_gen_score"),
    "RFS-Gen": ("iris_gen_neutral", "rfs_gen_score"),
    "BIS-Gen": ("iris_gen_steer", "bis_gen_score"),
}
AXES = tuple(DIMENSIONS)
IRIS_PREFIX = "iris_"


@dataclass
class Dimension:
    """One dimension score of one model, as the profile reads it."""

    name: str
    metric: str
    task: str
    run: Run


@dataclass
class Profile:
    model: ModelRuns
    dimensions: dict[str, Dimension]
    result: dict  # iris_tasks.profile.profile's result


def profiles(runs: list[Run]) -> list[Profile]:
    """Each model with IRIS results, its dimension scores and IRIS-MBTI codes (``iris-profile``'s)."""
    from iris_tasks.profile import SCORE_METRICS, ProfileInputError, profile, read_scores

    out = []
    for model in models(runs):
        mine = [run for run in model.runs if any(t.startswith(IRIS_PREFIX) for t in run.results)]
        if not mine:
            continue
        try:
            found = read_scores([run.source for run in mine])
        except ProfileInputError as error:
            raise ReportInputError(f"IRIS results of {model.name}: {error}") from None
        by_source = {str(run.source): run for run in mine}
        dimensions = {d: Dimension(d, SCORE_METRICS[d], hit.task, by_source[hit.source]) for d, hit in found.items()}
        out.append(Profile(model, dimensions, profile(found, name=model.name)))
    return out


def denominator(run: Run, task: str, dimension: str) -> str:
    """What the score of ``dimension`` was computed from, in the task's own counts."""

    def c(name: str) -> str:
        return count(run.metric(task, name))

    names = ("answers", "probe_answers", "ac_answers", "dhr_answers", "images", "faces_detected")
    if all(math.isnan(run.metric(task, name)) for name in names):
        return "counts not in the results"
    if dimension == "IFS-Und":
        return f"{c('answers')} answers ({c('unmappable')} unmappable) on {c('images_evaluated')} images"
    if dimension == "RFS-Und":
        return (
            f"{c('answers')} recognition answers ({c('unmappable')} unmappable); "
            f"{c('probe_answers')} probe answers ({c('probe_unparsed')} unparsed)"
        )
    if dimension == "BIS-Und":
        return (
            f"{c('ac_answers')} ratings ({c('ac_unparsed')} unparsed), {c('dhr_answers')} yes/no answers "
            f"({c('dhr_unparsed')} unparsed); {c('sets_evaluated')} counterfactual sets"
        )
    faces = (
        f"{c('images')} images, {c('faces_detected')} faces, {c('images_labelled')} labelled; "
        f"{c('no_face_images')} no face, {c('failed_images')} failed, {c('missing_images')} missing"
    )
    if dimension == "BIS-Gen":
        return (
            f"{c('images_stereotypical')} stereotypical + {c('images_counter')} counter-stereotypical images; " + faces
        )
    return faces


def scores_table(items: list[Profile]) -> Table:
    rows = []
    for item in items:
        for name in AXES:
            dim = item.dimensions.get(name)
            if dim is None:
                rows.append(
                    [
                        text(item.model.name),
                        text(name),
                        number(math.nan, scale=False, n="not in the results"),
                        text("–"),
                        text("–"),
                    ]
                )
                continue
            run, task = dim.run, dim.task
            n = denominator(run, task, name)
            magnitude = dim.metric.removesuffix("_score") + "_magnitude"
            rows.append(
                [
                    text(item.model.name),
                    text(name),
                    run.cell(task, dim.metric, scale=False, n=n if n.startswith("counts") else f"n = {n}", note=f"{task}: {n}"),
                    run.cell(task, magnitude, scale=False, digits=4) if magnitude in run.results[task] else text("–"),
                    text(f"{task} [{run.index}]", note=str(run.source)),
                ]
            )  # fmt: skip
    return Table(
        "IRIS dimension scores",
        ["Model", "Dimension", "Score [95% CI]", "Magnitude m", "Task [results file]"],
        rows,
        "Scores S·exp(−K·m) as the tasks report them (uncapped; higher is fairer), with the tasks' 95% bootstrap "
        "intervals where the results carry them; n: what each score was computed from (unmappable and unparsed "
        "answers are counted, not scored). '?': the results do not carry the count.",
    )


def codes_table(items: list[Profile]) -> Table:
    rows = []
    for item in items:
        cells = []
        for sector in ("Und", "Gen"):
            entry = item.result["mbti"].get(sector)
            if entry is None:
                why = next((n for n in item.result["notes"] if n.startswith(f"{sector}:")), "")
                cells.append(text("–", note=why))
            else:
                cells.append(text(f"{entry['code']} ({entry['name']})", note=f"name: {entry['name_source']}"))
        notes = "; ".join(item.result["notes"])
        rows.append([text(item.model.name), *cells, text(notes or "–")])
    threshold = items[0].result["threshold"] if items else 60
    return Table(
        "IRIS-MBTI codes",
        ["Model", "Understanding", "Generation", "Missing"],
        rows,
        f"The codes of `fairness-evals iris-profile` (τ = {threshold:g}, score ≥ τ): U/H from IFS, A/D from RFS, "
        "F/R from BIS; a sector needs all three of its scores. The four Rigid names are ours (the paper's are "
        "not public).",
    )


def provenance_table(items: list[Profile]) -> Table:
    rows = []
    for item in items:
        for run in item.model.runs:
            for task in sorted(t for t in run.results if t.startswith(IRIS_PREFIX)):
                results = run.results[task]
                if not any(k.endswith("_score") for k in results):
                    continue  # a group's empty row
                source = results.get("corpus_sha256", results.get("documents_sha256", "–"))
                classifier = results.get("classifier", "–")
                rows.append(
                    [
                        text(item.model.name),
                        text(task),
                        text(str(results.get("seed", "–"))),
                        text(str(results.get("data_version", "–"))),
                        text(str(results.get("sample_fraction", "–"))),
                        text(str(source)),
                        text(str(classifier), note=str(results.get("classifier_version", ""))),
                        run.limited_cell(task),
                        text(f"[{run.index}] {run.source.name}", note=str(run.source)),
                    ]
                )
    return Table(
        "IRIS provenance",
        ["Model", "Task", "Seed", "Data version", "Sample fraction", "Corpus / documents sha256", "Classifier",
         "Limited run", "Results file"],
        rows,
        "'–': the results do not carry the value (the generation tasks draw no sample: no seed; the understanding "
        f"tasks use no face classifier). {NOT_A_RESULT}",
    )  # fmt: skip


def radar_series(item: Profile) -> RadarSeries:
    values, intervals = {}, {}
    for name, dim in item.dimensions.items():
        values[name] = dim.run.metric(dim.task, dim.metric)
        intervals[name] = (
            dim.run.metric(dim.task, f"{dim.metric}_ci_low"),
            dim.run.metric(dim.task, f"{dim.metric}_ci_high"),
        )
    return RadarSeries(item.model.name, values, intervals)


def section(runs: list[Run]) -> Section | None:
    items = profiles(runs)
    if not items:
        return None
    return Section(
        "IRIS",
        "Dimension scores S·exp(−K·m) of the fairness space (uncapped, printed as the tasks report them; higher is "
        "fairer) and IRIS-MBTI codes: Utopian/Heuristic (IFS), Accurate/Distorted (RFS), Flexible/Rigid (BIS). "
        "A model's understanding and generation runs are read together, as iris-profile reads them.",
        [scores_table(items), codes_table(items), provenance_table(items)],
        [
            Figure(
                "Fairness space, one radar per model",
                radar_multiples(
                    [radar_series(i) for i in items], list(AXES), what="IRIS radar", group="IRIS dimension scores"
                ),
                "Fixed scale 0-100, rings at 25, 50, 75, 100; each axis label carries the score. A triangle on the "
                "rim: a score beyond 100 (the scores are uncapped). A hollow circle and 'n/a': the dimension is not in "
                "the results or undefined; the outline is left open there, never joined across it. Shaded bars "
                "along the axes: 95% intervals.",
            )
        ],
    )


# --------------------------------------------------------------------------- the paper's rows (report --published)
def published_table(runs: list[Run]) -> Table | None:
    from fairness_evals.report.model import number
    from fairness_evals.report.published import WARNING, beside, published_row

    data = beside(__file__)
    dims = data["columns"]
    rows = []
    for item in profiles(runs):
        cells = [text(item.model.name, note=item.model.sources)]
        for name in dims:
            dim = item.dimensions.get(name)
            cells.append(number(dim.run.metric(dim.task, dim.metric), scale=False) if dim else text("–"))
        rows.append([*cells, text("–"), text("–"), text("–")])
    if not rows:
        return None
    for model, row in data["rows"].items():
        total = row.get("total")
        extra = ["–" if total is None else str(total), row.get("gen_profile") or "–", row.get("und_profile") or "–"]
        rows.append(published_row(model, row["values"], data["source"], extra))
    return Table(
        "IRIS: your models and the published dimension scores and leaderboard",
        ["Model", *dims, "Total (leaderboard)", "Gen profile", "Und profile"],
        rows,
        "Your models: the dimension scores the tasks report (no total is computed: the released total does not "
        f"reproduce the leaderboard). Published rows: {data['source']}; protocol: {data['protocol']}. "
        f"{data['warning']} {WARNING}",
    )
