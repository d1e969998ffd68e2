"""The IRIS fairness-space profile: six dimension scores -> two IRIS-MBTI codes.

A harness group can only average its tasks, so the profile is computed here, from results files. It
reads these metrics, from whichever task of the given results reports them (``,none`` filter):

============ ================ ==================================================================
dimension    metric           reported by
============ ================ ==================================================================
IFS-Und      ifs_und_score    ``iris_ifs_und``
RFS-Und      rfs_und_score    ``iris_rfs_und``
BIS-Und      bis_und_score    ``iris_bis_und``
IFS-Gen      ifs_gen_score    the generation tasks (issue 7; the report expects ``iris_gen_neutral``)
RFS-Gen      rfs_gen_score    the generation tasks (``iris_gen_neutral``)
BIS-Gen      bis_gen_score    the generation tasks (``iris_gen_steer``)
============ ================ ==================================================================

Each may come with ``<dimension>_magnitude``, ``<score>_ci_low`` / ``_ci_high`` and ``<score>_coverage`` (the share
of the score's answers or images that counted), copied when present; a task's ``min_coverage`` (its documents'
threshold) is read too. A harness results file holds the headline metrics (the score and its magnitude); the
intervals, coverages and thresholds are in ``fairness-evals score iris`` output. A finite understanding score already
had the coverage its task requires. Inputs: lm-eval / lmms-eval results files or output folders (``results`` table, filter
``none``), and the output of ``fairness-evals score iris`` (a top-level ``{task: {metric: value}}`` mapping, also
under ``results``), given as files. Every value read must be a number (or null/NaN): a score outside ``[0, S]``
(S of the dimension, paper Table 9), a coverage outside ``[0, 1]`` or a negative magnitude is an error naming the
file, task and metric. The same file given twice (directly or inside a folder) is read once.

For each sector (Gen, Und) with all three scores finite, :func:`metrics.iris.mbti` gives the code (U/H from
IFS, A/D from RFS, F/R from BIS; ``score >= tau``, tau = 60 as in the released ``run_mbti_profiling.py``) and
:func:`metrics.iris.archetype_name` its name: the four Flexible names are the paper's (Table 2), the four Rigid
names are ours (the paper's are not public), and the output says which (``name_source``). A limited run
(``limited``: the results that left documents out) gets no code in any sector, with a note. **No letter is read
from a dimension whose coverage is below its minimum** (the task's ``min_coverage``, else ``--min-coverage``,
default 0.5): the sector then has no code and a note says why. The profile is for **one model**: a score found in
two results files is an error, and dimensions from results naming different models are refused unless
``allow_mixed_models`` (``--allow-mixed-models``; e.g. images generated elsewhere and scored with ``from_folder``
carry that backend's name). Results that name no model (``score`` output) are noted, not checked. No total IRIS
score is computed: the released ``evaluate.py`` total does not reproduce the published leaderboard (notes section
5.2).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iris_tasks.answer_shares import DEFAULT_MIN_COVERAGE
from metrics.iris import ARCHETYPES, DIMENSION_PARAMETERS, MBTI_THRESHOLD, archetype_name, mbti

#: Dimension -> the metric that carries its score (see the module docstring).
SCORE_METRICS: dict[str, str] = {
    "IFS-Gen": "ifs_gen_score",
    "RFS-Gen": "rfs_gen_score",
    "BIS-Gen": "bis_gen_score",
    "IFS-Und": "ifs_und_score",
    "RFS-Und": "rfs_und_score",
    "BIS-Und": "bis_und_score",
}
SECTORS: dict[str, tuple[str, str, str]] = {
    "Gen": ("IFS-Gen", "RFS-Gen", "BIS-Gen"),
    "Und": ("IFS-Und", "RFS-Und", "BIS-Und"),
}
#: Least coverage for a dimension to give its letter, when its task does not record its own ``min_coverage``:
#: the tasks' own default (:data:`iris_tasks.answer_shares.DEFAULT_MIN_COVERAGE`).


class ProfileInputError(ValueError):
    """Results that cannot be profiled; the message is one line naming the file."""


@dataclass(frozen=True)
class Found:
    value: float
    task: str
    source: str
    model: str
    extras: dict[str, float]
    coverage: float = math.nan
    min_coverage: float = math.nan


def _results_files(path: Path) -> list[Path]:
    if not path.exists():
        raise ProfileInputError(f"{path}: no such file or folder")
    if path.is_file():
        return [path]
    files = sorted(p for p in path.rglob("*.json") if p.name.endswith("_results.json") or p.name.startswith("results"))
    if not files:
        raise ProfileInputError(f"{path}: no lm-eval or lmms-eval results file (*_results.json, results_*.json)")
    return files


def _model(data: dict[str, Any]) -> str:
    """The model a results file names ("" if none), as the report names it: a local folder by its name."""
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    args = config.get("model_args")
    name: Any = None
    if isinstance(args, dict):
        name = args.get("pretrained") or args.get("model") or args.get("model_name")
    elif isinstance(args, str):
        for part in args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model", "model_name") and value.strip():
                name = value.strip()
                break
    top = data.get("model") if isinstance(data.get("model"), str) else None
    text = str(name or data.get("model_name") or top or config.get("model") or "").rstrip("/")
    return Path(text).name if text and Path(text).is_absolute() else text


def _tables(data: Any, file: Path) -> dict[str, Any]:
    """The task -> metrics mapping of a results file (``results``) or of ``score`` output (the top level)."""
    if isinstance(data, dict) and isinstance(data.get("results"), dict):
        return data["results"]
    if isinstance(data, dict) and any(isinstance(v, dict) for v in data.values()):
        return {task: metrics for task, metrics in data.items() if isinstance(metrics, dict)}
    raise ProfileInputError(
        f"{file}: neither an lm-eval / lmms-eval results file (no 'results' table) nor `fairness-evals score iris` "
        "output ({task: {metric: value}})"
    )


def _number(value: Any, where: str, *, low: float = -math.inf, high: float = math.inf) -> float:
    """A finite number in [low, high], or NaN for null / NaN; anything else is an error naming ``where``."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProfileInputError(f"{where} is {value!r}, not a number")
    number = float(value)
    if math.isnan(number):
        return number
    if not (math.isfinite(number) and low <= number <= high):
        raise ProfileInputError(f"{where} is {value!r}, outside [{low:g}, {high:g}]")
    return number


def _plain(metrics: dict[str, Any]) -> dict[str, Any]:
    plain: dict[str, Any] = {}
    for key, value in metrics.items():
        name, _, filt = str(key).partition(",")
        if filt in ("", "none"):
            plain.setdefault(name, value)
    return plain


def _found(dimension: str, metric: str, plain: dict[str, Any], task: str, file: Path, model: str) -> Found:
    top = DIMENSION_PARAMETERS[dimension][1]
    where = f"{file}: {task} {{}}"
    prefix = metric.removesuffix("_score")
    extras: dict[str, float] = {}
    if f"{prefix}_magnitude" in plain:
        extras[f"{prefix}_magnitude"] = _number(
            plain[f"{prefix}_magnitude"], where.format(f"{prefix}_magnitude"), low=0
        )
    for key in (f"{metric}_ci_low", f"{metric}_ci_high"):
        if key in plain:
            extras[key] = _number(plain[key], where.format(key), low=0, high=top)
    cover = f"{metric}_coverage"
    return Found(
        value=_number(plain[metric], where.format(metric), low=0, high=top),
        task=task,
        source=str(file),
        model=model,
        extras=extras,
        coverage=_number(plain[cover], where.format(cover), low=0, high=1) if cover in plain else math.nan,
        min_coverage=(
            _number(plain["min_coverage"], where.format("min_coverage"), low=0, high=1)
            if "min_coverage" in plain
            else math.nan
        ),
    )


def read_scores(paths: list[str | Path], *, allow_mixed_models: bool = False) -> dict[str, Found]:
    """Dimension -> the score found in the results files under ``paths`` (folders or files; see the module
    docstring for what is accepted and refused)."""
    found: dict[str, Found] = {}
    seen: set[Path] = set()
    files = []
    for raw in paths:
        for file in _results_files(Path(raw)):
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                files.append(file)
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ProfileInputError(f"{file}: not a readable results file ({type(error).__name__})") from None
        model = _model(data) if isinstance(data, dict) else ""
        for task, metrics in _tables(data, file).items():
            if not isinstance(metrics, dict):
                continue
            plain = _plain(metrics)
            for dimension, metric in SCORE_METRICS.items():
                if metric not in plain:
                    continue
                here = _found(dimension, metric, plain, str(task), file, model)
                if dimension in found:
                    first = found[dimension]
                    raise ProfileInputError(
                        f"{metric} is in both {first.source} ({first.task}, model {first.model or '?'}) and "
                        f"{here.source} ({task}, model {here.model or '?'}); give the results of one model"
                    )
                found[dimension] = here
    if not found:
        names = ", ".join(SCORE_METRICS.values())
        raise ProfileInputError(f"no IRIS dimension score ({names}) in {', '.join(map(str, paths))}")
    models: dict[str, list[str]] = {}
    for hit in found.values():
        if hit.model:
            models.setdefault(hit.model, [])
            if hit.source not in models[hit.model]:
                models[hit.model].append(hit.source)
    if len(models) > 1 and not allow_mixed_models:
        listing = "; ".join(f"{model} ({', '.join(sources)})" for model, sources in models.items())
        raise ProfileInputError(
            f"the results name different models: {listing}; a profile is for one model (give "
            "--allow-mixed-models if these are the same model under different names, e.g. images made elsewhere "
            "and scored with from_folder)"
        )
    return found


def _minimum(hit: Found, default: float) -> float:
    return hit.min_coverage if math.isfinite(hit.min_coverage) else default


def profile(
    found: dict[str, Found],
    *,
    threshold: float = MBTI_THRESHOLD,
    name: str | None = None,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    limited: Sequence[str] = (),
) -> dict[str, Any]:
    """The fairness-space profile as a JSON-ready dict (see the module docstring). ``limited`` names the results
    that left documents out (``<file>: <how>``): then no sector gets a code, and a note says why."""
    models = sorted({f.model for f in found.values() if f.model})
    dimensions: dict[str, Any] = {}
    notes = [
        f"{run}: its scores are not benchmark results, so no IRIS-MBTI code or archetype is given" for run in limited
    ]
    unnamed = sorted({Path(f.source).name for f in found.values() if not f.model})
    if unnamed and len({f.source for f in found.values()}) > 1:
        notes.append(f"{', '.join(unnamed)} name(s) no model: not checked to be the same model as the rest")
    for dimension, metric in SCORE_METRICS.items():
        hit = found.get(dimension)
        dimensions[dimension] = (
            None
            if hit is None
            else {
                "score": None if math.isnan(hit.value) else hit.value,
                "metric": metric,
                "task": hit.task,
                "source": hit.source,
                "coverage": None if math.isnan(hit.coverage) else hit.coverage,
                "min_coverage": _minimum(hit, min_coverage),
                **{k: (None if math.isnan(v) else v) for k, v in hit.extras.items()},
            }
        )
    sectors: dict[str, Any] = {}
    for sector, names in SECTORS.items():
        if limited:
            sectors[sector] = None
            continue
        values = {d: found[d].value for d in names if d in found}
        missing = [d for d in names if d not in values or math.isnan(values[d])]
        if missing:
            sectors[sector] = None
            notes.append(f"{sector}: no IRIS-MBTI code, {', '.join(missing)} missing or NaN")
            continue
        short = [
            f"{d} coverage {found[d].coverage:.2f} is below {_minimum(found[d], min_coverage):g}"
            for d in names
            if found[d].coverage < _minimum(found[d], min_coverage)
        ]
        if short:
            sectors[sector] = None
            notes.append(f"{sector}: no IRIS-MBTI code, {'; '.join(short)} (a letter needs the score's coverage)")
            continue
        unknown = [d for d in names if math.isnan(found[d].coverage)]
        if unknown:
            notes.append(
                f"{sector}: coverage not in the results for {', '.join(unknown)} (a harness results file holds the "
                "headline metrics only; `fairness-evals score` writes the coverages)"
            )
        code = mbti(values, threshold=threshold)
        archetype = ARCHETYPES[code]
        sectors[sector] = {
            "code": code,
            "name": archetype_name(code),
            "description": archetype.description,
            "name_source": "paper Table 2" if archetype.source.startswith("paper") else "fairness-evals (ours)",
        }
    return {
        "model": name or (models[0] if len(models) == 1 else " / ".join(models)),
        "limited": list(limited),
        "threshold": threshold,
        "dimensions": dimensions,
        "mbti": sectors,
        "notes": notes,
    }


def as_text(result: dict[str, Any]) -> str:
    """A plain-text rendering of :func:`profile`'s result."""
    lines = [f"IRIS fairness-space profile: {result['model'] or 'model'} (tau = {result['threshold']:g})", ""]
    lines.append(f"{'dimension':<10} {'score':>10}  {'95% interval':<21} {'coverage':>8}  source")
    for dimension, entry in result["dimensions"].items():
        if entry is None:
            lines.append(f"{dimension:<10} {'-':>10}  {'':<21} {'':>8}  (not in the results)")
            continue
        score = "NaN" if entry["score"] is None else f"{entry['score']:.2f}"
        low, high = entry.get(f"{entry['metric']}_ci_low"), entry.get(f"{entry['metric']}_ci_high")
        interval = f"[{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
        cover = "-" if entry.get("coverage") is None else f"{entry['coverage']:.2f}"
        source = f"{entry['task']} ({Path(entry['source']).name})"
        lines.append(f"{dimension:<10} {score:>10}  {interval:<21} {cover:>8}  {source}")
    lines.append("")
    for sector, entry in result["mbti"].items():
        if entry is None:
            lines.append(f"{sector}: -")
        else:
            lines.append(f"{sector}: {entry['code']} {entry['name']} [{entry['name_source']}]: {entry['description']}")
    lines.extend(f"note: {note}" for note in result["notes"])
    return "\n".join(lines) + "\n"
