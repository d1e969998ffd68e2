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

Each may come with ``<dimension>_magnitude`` and ``<score>_ci_low`` / ``_ci_high``, copied when present.
For each sector (Gen, Und) with all three scores finite, :func:`metrics.iris.mbti` gives the code (U/H
from IFS, A/D from RFS, F/R from BIS; ``score >= tau``, tau = 60 as in the released
``run_mbti_profiling.py``) and :func:`metrics.iris.archetype_name` its name: the four Flexible names are
the paper's (Table 2), the four Rigid names are ours (the paper's are not public), and the output says
which (``name_source``). The profile is for **one model**: a score found in two results files is an error.
No total IRIS score is computed: the released ``evaluate.py`` total does not reproduce the published
leaderboard (notes section 5.2).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metrics.iris import ARCHETYPES, MBTI_THRESHOLD, archetype_name, mbti

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


class ProfileInputError(ValueError):
    """Results that cannot be profiled; the message is one line naming the file."""


@dataclass(frozen=True)
class Found:
    value: float
    task: str
    source: str
    model: str
    extras: dict[str, float]


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
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    args = config.get("model_args")
    if isinstance(args, dict):
        return str(args.get("pretrained") or args.get("model") or config.get("model") or "")
    if isinstance(args, str):
        for part in args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model") and value.strip():
                return value.strip()
    return str(data.get("model_name") or config.get("model") or "")


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def read_scores(paths: list[str | Path]) -> dict[str, Found]:
    """Dimension -> the score found in the results files under ``paths`` (folders or files)."""
    found: dict[str, Found] = {}
    files = [f for raw in paths for f in _results_files(Path(raw))]
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ProfileInputError(f"{file}: not a readable results file ({type(error).__name__})") from None
        if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
            raise ProfileInputError(f"{file}: not an lm-eval or lmms-eval results file (no 'results' table)")
        for task, metrics in data["results"].items():
            if not isinstance(metrics, dict):
                continue
            plain = {}
            for key, value in metrics.items():
                name, _, filt = key.partition(",")
                if filt in ("", "none"):
                    plain.setdefault(name, value)
            for dimension, metric in SCORE_METRICS.items():
                if metric not in plain:
                    continue
                prefix = metric.removesuffix("_score")
                extras = {
                    key: _number(plain.get(key))
                    for key in (f"{prefix}_magnitude", f"{metric}_ci_low", f"{metric}_ci_high")
                    if key in plain
                }
                here = Found(_number(plain[metric]), task, str(file), _model(data), extras)
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
    return found


def profile(found: dict[str, Found], *, threshold: float = MBTI_THRESHOLD, name: str | None = None) -> dict[str, Any]:
    """The fairness-space profile as a JSON-ready dict (see the module docstring)."""
    models = sorted({f.model for f in found.values() if f.model})
    dimensions: dict[str, Any] = {}
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
                **{k: (None if math.isnan(v) else v) for k, v in hit.extras.items()},
            }
        )
    sectors: dict[str, Any] = {}
    notes = []
    for sector, names in SECTORS.items():
        values = {d: found[d].value for d in names if d in found}
        missing = [d for d in names if d not in values or math.isnan(values[d])]
        if missing:
            sectors[sector] = None
            notes.append(f"{sector}: no IRIS-MBTI code, {', '.join(missing)} missing or NaN")
            continue
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
        "threshold": threshold,
        "dimensions": dimensions,
        "mbti": sectors,
        "notes": notes,
    }


def as_text(result: dict[str, Any]) -> str:
    """A plain-text rendering of :func:`profile`'s result."""
    lines = [f"IRIS fairness-space profile: {result['model'] or 'model'} (tau = {result['threshold']:g})", ""]
    lines.append(f"{'dimension':<10} {'score':>10}  {'95% interval':<21} source")
    for dimension, entry in result["dimensions"].items():
        if entry is None:
            lines.append(f"{dimension:<10} {'-':>10}  {'':<21} (not in the results)")
            continue
        score = "NaN" if entry["score"] is None else f"{entry['score']:.2f}"
        low, high = entry.get(f"{entry['metric']}_ci_low"), entry.get(f"{entry['metric']}_ci_high")
        interval = f"[{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
        lines.append(f"{dimension:<10} {score:>10}  {interval:<21} {entry['task']} ({Path(entry['source']).name})")
    lines.append("")
    for sector, entry in result["mbti"].items():
        if entry is None:
            lines.append(f"{sector}: -")
        else:
            lines.append(f"{sector}: {entry['code']} {entry['name']} [{entry['name_source']}]: {entry['description']}")
    lines.extend(f"note: {note}" for note in result["notes"])
    return "\n".join(lines) + "\n"
