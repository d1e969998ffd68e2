"""Reading lm-eval and lmms-eval results files into :class:`Run` records."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUR_PREFIXES = ("fact_or_fair", "fairlens", "iris")


class ReportInputError(ValueError):
    """A folder or file that cannot be reported; the message is one line naming it."""


@dataclass
class Run:
    """One harness results file."""

    source: Path
    harness: str  # "lm-eval" or "lmms-eval"
    model: str
    date: str
    limit: float | None
    results: dict[str, dict[str, Any]]  # task or group -> metric -> value ("metric,none" keys stripped)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    n_samples: dict[str, dict[str, int]] = field(default_factory=dict)
    index: int = 0  # position in the report's list of sources

    def source_of(self, task: str, name: str) -> str:
        """Where a copied number comes from, for the HTML ``data-source`` attribute."""
        return f"{self.index}|{task}|{name}" if self.has(task) and name in self.results[task] else ""

    def cell(self, task: str, name: str, note: str = "", scale: bool = True):
        """The metric with its ``_ci_low``/``_ci_high`` interval when the results carry one."""
        from fairness_evals.report.model import number

        has_interval = f"{name}_ci_low" in self.results.get(task, {})
        low = self.metric(task, f"{name}_ci_low") if has_interval else None
        high = self.metric(task, f"{name}_ci_high") if has_interval else None
        return number(self.metric(task, name), low, high, note=note, scale=scale, source=self.source_of(task, name))

    def metric(self, task: str, name: str) -> float:
        """A numeric metric, NaN when the task or metric is absent or not a number."""
        value = self.results.get(task, {}).get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return math.nan
        return float(value)

    def has(self, task: str) -> bool:
        return task in self.results

    def metadata(self, task: str) -> dict[str, Any]:
        meta = self.configs.get(task, {}).get("metadata", {})
        return meta if isinstance(meta, dict) else {}


def _is_results_file(path: Path) -> bool:
    name = path.name
    return name.endswith(".json") and (name.startswith("results") or name.endswith("_results.json"))


def _model_name(data: dict[str, Any]) -> str:
    config = data.get("config", {}) if isinstance(data.get("config"), dict) else {}
    args = config.get("model_args")
    pretrained = None
    if isinstance(args, dict):
        pretrained = args.get("pretrained") or args.get("model") or args.get("model_name")
    elif isinstance(args, str):
        for part in args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model", "model_name") and value:
                pretrained = value.strip()
                break
    name = str(pretrained or data.get("model_name") or config.get("model") or "unknown model").rstrip("/")
    return Path(name).name if Path(name).is_absolute() else name  # a local folder: its name; a hub id: as is


def _strip(metrics: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in metrics.items():
        name, _, filt = key.partition(",")
        if filt in ("", "none"):
            out.setdefault(name, value)
    return out


def load_results_file(path: Path) -> Run:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReportInputError(f"{path}: not a readable results file ({type(error).__name__}: {error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ReportInputError(f"{path}: not an lm-eval or lmms-eval results file (no 'results' table)")
    results = {task: _strip(m) for task, m in data["results"].items() if isinstance(m, dict)}
    for group, metrics in (data.get("groups") or {}).items():
        if isinstance(metrics, dict):
            results.setdefault(group, {}).update(_strip(metrics))
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    harness = "lmms-eval" if "lmms_eval_version" in data or path.name.endswith("_results.json") else "lm-eval"
    limit = config.get("limit")
    return Run(
        source=path,
        harness=harness,
        model=_model_name(data),
        date=str(data.get("date", "")),
        limit=float(limit) if isinstance(limit, (int, float)) else None,
        results=results,
        configs={k: v for k, v in (data.get("configs") or {}).items() if isinstance(v, dict)},
        n_samples={k: v for k, v in (data.get("n-samples") or {}).items() if isinstance(v, dict)},
    )


def load_runs(paths: list[str | Path]) -> list[Run]:
    """Every results file under the given folders (or files) that holds at least one task of ours.

    Raises :class:`ReportInputError` for a path that does not exist, a folder without results files, a
    broken results file, or results of unrelated tasks only.
    """
    runs: list[Run] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise ReportInputError(f"{path}: no such file or folder")
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*.json") if _is_results_file(p))
        if not files:
            raise ReportInputError(f"{path}: no lm-eval or lmms-eval results file (results_*.json, *_results.json)")
        found = [load_results_file(f) for f in files]
        ours = [run for run in found if any(task.startswith(OUR_PREFIXES) for task in run.results)]
        if not ours:
            tasks = sorted({task for run in found for task in run.results})
            shown = ", ".join(tasks[:5]) + (", ..." if len(tasks) > 5 else "")
            raise ReportInputError(f"{path}: no fairness-evals task in its results (tasks: {shown or 'none'})")
        runs.extend(ours)
    _disambiguate(runs)
    for index, run in enumerate(runs):
        run.index = index
    return runs


def _disambiguate(runs: list[Run]) -> None:
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.model] = seen.get(run.model, 0) + 1
    for run in runs:
        if seen[run.model] > 1:
            stamp = re.search(r"(\d{4}-\d\d-\d\d)T(\d\d)[-:](\d\d)[-:](\d\d)", run.source.name)
            when = f"{stamp.group(1)} {stamp.group(2)}:{stamp.group(3)}:{stamp.group(4)}" if stamp else run.source.stem
            run.model = f"{run.model} @ {when}"
