"""The scaffold of the three ``fairness-evals score`` commands (Fact-or-Fair, FairLens, IRIS) and ``judge``.

Each benchmark's command module declares a :class:`Reader` (its name, its ``--metadata`` prefix, the tasks whose
samples it reads) and supplies what differs: its documents, how a line names its document, and its scoring. This
module does the rest, the same way for every benchmark:

* options (:func:`add_arguments`): ``--responses`` (repeatable), ``--model``, ``--run``, ``--metadata``, ``--out``;
* inputs (:meth:`Reader.files`, :func:`input_files`): responses files (JSON lines ``{"id", "response"}``) and
  lm-eval / lmms-eval ``--log_samples`` files or output folders. A samples file is known by its name
  (:func:`samples_name`: lm-eval ``samples_<task>_<date>.jsonl``, lmms-eval ``<date>_samples_<task>.jsonl``); its
  folder is its model, its date its run. Samples of two models, or two runs of one model that answer the same
  task, are an error naming both files, unless ``--model`` / ``--run`` chooses (the error lists the choices). Runs
  of one model that answer different tasks are read together, and said so on standard error;
* reading (:func:`read_lines`): strict UTF-8 and strict JSON, every error naming ``file:line``; inputs without a
  single line are an error (never ``{}`` with exit status 0); a responses line's reply must be text
  (:func:`response_of`: a number, object, ``null`` or ``true`` is an error naming the line, never an answer
  counted as unparsed), and so must a samples line's (:func:`sample_reply`; ``null`` there is a reply the harness
  logged as missing);
* answers (:class:`~fairness_evals.jsonio.Answers`): one reply per (task, document); a second is an error naming both places;
* settings (:func:`metadata`): ``--metadata JSON`` gives task-metadata-style settings (the keys a task's YAML
  ``metadata`` or lm-eval's ``--metadata`` take, e.g. ``{"fact_or_fair_min_coverage": 0.5}``), passed as a dict
  to the benchmark's scoring, which refuses a key it does not take;
* output (:meth:`Reader.write`): strict JSON, ``null`` for NaN and infinities, written whole or not at all
  (:func:`fairness_evals.jsonio.replacing`);
* provenance (:func:`score_inputs`): beside the tasks, one entry ``"score_inputs"`` records what was scored: the
  benchmark, every file read (its absolute path, sha256 and, for a samples file, task, harness, run and model) and
  the settings the documents and scores were built with (:func:`record_options`: the command-line options, local
  paths absolute). ``fairness-evals compare`` rebuilds the per-document records from it (:func:`recorded_files`
  checks the files still match their hashes; :func:`recorded_settings` and :func:`recorded_options` give the
  settings back).

Import-light like :mod:`fairness_evals.jsonio`: no numpy, no benchmark.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fairness_evals import jsonio

# lm-eval 0.4: samples_<task>_<datetime.isoformat() with ':' -> '-'>.jsonl
_LM_EVAL = re.compile(r"^samples_(?P<task>[A-Za-z0-9_.-]+?)_(?P<run>\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d(?:\.\d+)?)\.jsonl$")
# lmms-eval 0.7: <%Y%m%d_%H%M%S>_samples_<task>.jsonl
_LMMS_EVAL = re.compile(r"^(?P<run>\d{8}_\d{6})_samples_(?P<task>[A-Za-z0-9_.-]+)\.jsonl$")
# any other "..._samples_<task>.jsonl" / "samples_<task>.jsonl" (renamed or hand-made): no run stamp
_OTHER = re.compile(r"(?:^|_)samples_(?P<task>[A-Za-z0-9_.-]+)\.jsonl$")


def samples_name(name: str) -> tuple[str, str, str] | None:
    """``(harness, task, run stamp)`` of a ``--log_samples`` file name, None for any other name.

    >>> samples_name("samples_fact_or_fair_objective_2026-12-01T10-00-00.123456.jsonl")
    ('lm-eval', 'fact_or_fair_objective', '2026-12-01T10-00-00.123456')
    >>> samples_name("20261201_100000_samples_fairlens_hiring.jsonl")
    ('lmms-eval', 'fairlens_hiring', '20261201_100000')
    """
    for harness, pattern in (("lm-eval", _LM_EVAL), ("lmms-eval", _LMMS_EVAL), ("", _OTHER)):
        match = pattern.search(name)
        if match:
            return harness, match.group("task"), match.groupdict().get("run") or ""
    return None


@dataclass(frozen=True)
class InputFile:
    """One file to read: a responses file (``task`` None) or a samples file of one task of one run."""

    path: Path
    task: str | None = None
    harness: str = ""
    run: str = ""  # the run's time stamp ("" when the name has none)
    model: str = ""  # the model folder as the user sees it (relative to the folder given), for messages

    @property
    def is_samples(self) -> bool:
        return self.task is not None

    @property
    def folder(self) -> Path:
        """The model's identity: the folder holding the file."""
        return self.path.parent.resolve()

    @property
    def label(self) -> str:
        return f"{self.model} @ {self.run}" if self.run else self.model


@dataclass(frozen=True)
class Reader:
    """What one command that reads runs declares; the reading, choosing and writing are this module's.

    ``benchmark`` names the command on standard error and is the ``score_inputs`` benchmark (how ``compare`` finds
    the code that reads the files again); every ``--metadata`` key starts with ``<benchmark>_``; ``tasks`` matches
    the tasks whose samples files it reads from a folder, which ``harness`` (lm-eval or lmms-eval) writes.
    """

    benchmark: str
    tasks: re.Pattern[str]
    harness: str

    @property
    def prefix(self) -> str:
        return f"{self.benchmark}_"

    @property
    def samples(self) -> str:
        """The samples files, as errors name them."""
        return f"{self.harness} samples_{self.prefix}*.jsonl file"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The command's ``--responses`` (repeatable), ``--model``, ``--run``, ``--metadata`` and ``--out``."""
        parser.add_argument(
            "--responses", action="append", required=True, metavar="PATH",
            help=f'JSON lines {{"id", "response"}}, or an {self.samples} or a folder of them (repeatable)',
        )  # fmt: skip
        add_selection_arguments(parser)
        add_metadata_argument(parser, f'{{"{self.prefix}min_coverage": 0.5}}')
        parser.add_argument("--out", help="write the JSON here instead of standard output")

    def metadata(self, value: str | None) -> dict[str, Any]:
        """The ``--metadata`` settings (:func:`metadata`)."""
        return metadata(value, self.prefix)

    def files(self, names: Iterable[str], *, model: str | None = None, run: str | None = None) -> list[InputFile]:
        """The responses and samples files ``names`` give (:func:`input_files`), of one model and one run per task
        (:func:`select_runs`)."""
        return select_runs(input_files(names, self.tasks, self.samples), model=model, run=run, prog=self.benchmark)

    def note(self, message: str) -> None:
        note(self.benchmark, message)

    def note_unanswered(self, totals: dict[str, int], missing: dict[str, int]) -> None:
        """One line per task with documents left without a response (``totals``: documents per task)."""
        for task, count in missing.items():
            if count:
                total = totals[task]
                self.note(f"{task}: scored {total - count} of {total} documents ({count} without a response)")

    def write(self, results: dict[str, Any], files: list[InputFile], settings: dict[str, Any], out: str | None) -> None:
        """``results`` (``{task: {metric: value}}``) and their :data:`SCORE_INPUTS` entry (``files`` read, the
        ``settings``), as strict JSON to ``out`` (whole or not at all) or standard output."""
        results[SCORE_INPUTS] = score_inputs(self.benchmark, files, settings)
        jsonio.write_json(results, out)


def add_runs_argument(parser: argparse.ArgumentParser, name: str = "paths") -> None:
    """The runs a command reads (``check``, ``report``, ``score OUTPUT_FOLDER``): harness output folders or the
    files in them, Inspect logs or their folders."""
    parser.add_argument(
        name, nargs="+", metavar="OUTPUT_FOLDER",
        help="lm-eval / lmms-eval --output_path folders or their results or samples files, Inspect log folders or logs",
    )  # fmt: skip


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--model`` and ``--run``: which samples to read when a folder holds several models or runs."""
    parser.add_argument(
        "--model", metavar="NAME",
        help="read the samples of this model only, when the folder holds several (its folder name or path)",
    )  # fmt: skip
    parser.add_argument(
        "--run", metavar="STAMP",
        help="read this run only (the time stamp in its samples file names, or its start), when a model has several",
    )  # fmt: skip


def add_metadata_argument(parser: argparse.ArgumentParser, example: str) -> None:
    parser.add_argument(
        "--metadata", metavar="JSON",
        help="task-metadata settings as a JSON object (or a file holding one), as the task YAML's metadata or "
        f"lm-eval's --metadata take them, e.g. '{example}'",
    )  # fmt: skip


def metadata(value: str | None, prefix: str) -> dict[str, Any]:
    """The ``--metadata`` settings: a JSON object given as text or as a file holding it.

    Every key must name a setting of this benchmark (start with ``prefix``, e.g. ``"fact_or_fair_"``); the benchmark
    checks which keys it takes and their values. An error names the key.
    """
    if value is None or not value.strip():
        return {}
    text = value
    looks_like_json = value.lstrip()[:1] in ("{", "[", '"') or value.strip() in ("null", "true", "false")
    if not looks_like_json and Path(value).is_file():
        text = jsonio.read_text(Path(value), "metadata")
    try:
        data = jsonio.loads_strict(text)
    except ValueError as error:
        if not looks_like_json and text is value:
            raise ValueError(f"--metadata: {value!r} is neither a JSON object nor a file holding one") from None
        raise ValueError(f"--metadata: not valid JSON ({getattr(error, 'msg', error)})") from None
    if not isinstance(data, dict):
        raise ValueError(f"--metadata: expected a JSON object, got {type(data).__name__}")
    foreign = [key for key in data if not key.startswith(prefix)]
    if foreign:
        raise ValueError(
            f"--metadata: {', '.join(map(repr, foreign))} {'is not a setting' if len(foreign) == 1 else 'are not settings'}"
            f" of this benchmark (its keys start with {prefix})"
        )
    return data


def share_settings(
    metadata: dict[str, Any], takes: dict[str, str], *, what: str, command: str = "score", hint: str = ""
) -> dict[str, Any]:
    """The keyword arguments that ``--metadata`` gives: ``takes`` maps each key the command takes to its argument.
    A key it does not take, or a value that is not a JSON number, is an error naming the key (the benchmark's
    settings then check the range). ``what`` names the settings in the error, e.g. "a FairLens scoring setting"."""
    unknown = sorted(set(metadata) - set(takes))
    if unknown:
        more = f"; {hint}" if hint else ""
        raise ValueError(
            f"--metadata: {', '.join(map(repr, unknown))}: not {what} ({command} takes {', '.join(takes)}{more})"
        )
    for key, value in metadata.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"--metadata: {key}={json.dumps(value)} is not a number; give a share in [0, 1], e.g. 0.5")
    return {takes[key]: value for key, value in metadata.items()}


def input_files(names: Iterable[str], tasks: re.Pattern[str], what: str) -> list[InputFile]:
    """The files to read for ``names``: each file as given; for a folder, the samples files below it whose task
    matches ``tasks`` (``what`` names them in the error for a folder without any)."""
    files: list[InputFile] = []
    seen: set[Path] = set()

    def add(file: InputFile) -> None:  # a file named twice (itself and its folder) is read once
        key = file.path.resolve()
        if key not in seen:
            seen.add(key)
            files.append(file)

    for name in names:
        path = Path(name)
        if path.is_dir():
            found = []
            for candidate in sorted(path.rglob("*.jsonl")):
                parsed = samples_name(candidate.name)
                if parsed and tasks.fullmatch(parsed[1]) and candidate.is_file():
                    harness, task, run = parsed
                    relative = candidate.parent.relative_to(path)
                    model = str(path / relative) if str(relative) != "." else str(path)
                    found.append(InputFile(candidate, task, harness, run, model))
            if not found:
                raise ValueError(f"{path}: no {what} in this folder (run the harness with --log_samples)")
            for file in found:
                add(file)
        elif path.is_file():
            parsed = samples_name(path.name)
            if parsed and tasks.fullmatch(parsed[1]):
                harness, task, run = parsed
                add(InputFile(path, task, harness, run, str(path.parent)))
            else:
                add(InputFile(path))
        else:
            raise ValueError(f"{path}: no such file or folder")
    return files


def select_runs(
    files: list[InputFile], *, model: str | None = None, run: str | None = None, prog: str = "fairness-evals"
) -> list[InputFile]:
    """The files of one model (and one run per task), or an error naming the files that conflict.

    ``model`` keeps the samples whose model folder is ``model`` (its path or last part); ``run`` those whose run
    stamp is ``run`` or starts with it. Responses files are always kept.
    """
    responses = [f for f in files if not f.is_samples]
    samples = [f for f in files if f.is_samples]
    if model is not None:
        chosen = [f for f in samples if _same_model(f, model)]
        if not chosen:
            raise ValueError(f"--model {model}: no samples of that model; models here: {_listing(samples, 'model')}")
        samples = chosen
    if run is not None:
        chosen = [f for f in samples if f.run and (f.run == run or f.run.startswith(run))]
        if not chosen:
            raise ValueError(f"--run {run}: no samples of that run; runs here: {_listing(samples, 'label')}")
        samples = chosen
    by_model: dict[Path, list[InputFile]] = {}
    for f in samples:
        by_model.setdefault(f.folder, []).append(f)
    if len(by_model) > 1:
        first, second = (group[0] for group in list(by_model.values())[:2])
        raise ValueError(
            f"samples of {len(by_model)} models: {first.path} ({first.model}) and {second.path} ({second.model}); "
            f"score one model at a time with --model NAME (models: {_listing(samples, 'model')})"
        )
    by_task: dict[str, list[InputFile]] = {}
    for f in samples:
        by_task.setdefault(f.task or "", []).append(f)
    for task, group in by_task.items():
        runs = sorted({f.run for f in group})
        if len(runs) > 1:
            first, second = group[0], next(f for f in group if f.run != group[0].run)
            raise ValueError(
                f"two runs answer {task}: {first.path} and {second.path}; choose one with --run STAMP "
                f"(runs: {', '.join(runs)})"
            )
    runs = sorted({f.run for f in samples})
    if len(runs) > 1:
        parts = [f"{r} ({', '.join(sorted(f.task or '' for f in samples if f.run == r))})" for r in runs]
        print(f"{prog}: reading {len(runs)} runs of {samples[0].model}: {'; '.join(parts)}", file=sys.stderr)
    return [*responses, *samples]


def _same_model(f: InputFile, model: str) -> bool:
    wanted = Path(model)
    return f.model == model or f.folder.name == model or (wanted.exists() and wanted.resolve() == f.folder)


def _listing(files: list[InputFile], attribute: str) -> str:
    values = sorted({getattr(f, attribute) for f in files})
    return ", ".join(values) if values else "none"


@dataclass(frozen=True)
class Line:
    """One non-blank line of an input: ``where`` is ``"<file>:<line>"``, ``row`` the parsed JSON value."""

    where: str
    file: InputFile
    row: Any


def read_lines(files: list[InputFile]) -> Iterator[Line]:
    """Every non-blank line of ``files`` in order (strict UTF-8 and JSON, errors naming ``file:line``; a samples file
    may hold the bare ``NaN`` the harnesses write): the one reader of responses and samples lines (``score``,
    ``compare``, ``detail``).

    Inputs without one line are an error naming them, once all are read. The lines of one task from two runs (two
    seeds, data versions, conventions, minimum coverages or corpora) are an error naming two lines that differ
    (:class:`~fairness_evals.jsonio.OneRun`).
    """
    count = 0
    runs = jsonio.OneRun()
    for f in files:
        for where, row in jsonio.response_lines(f.path, allow_nan=f.is_samples):
            count += 1
            if f.is_samples:
                runs.add(f.task or "", row, where)
            yield Line(where, f, row)
    if not count:
        names = ", ".join(str(f.path) for f in files)
        raise ValueError(f"no responses in {names}: {'the file is' if len(files) == 1 else 'the files are'} empty")


def sample_records(
    files: list[InputFile],
    logged: Callable[[str, dict[str, Any]], tuple[str, Any] | None],
    carrier: Callable[[str], str],
    not_ours: Callable[[str], str],
) -> tuple[dict[str, list[Any]], dict[str, dict[str, Any]]]:
    """Per task, the records a harness run's samples ``files`` logged and the provenance the first of its lines
    logged in its carrier metric's item (``carrier(task)``; none when no line did).

    ``logged(task, row)`` is a line's ``(document id, record)``, or None for a line that is not ours: an error
    naming it, ``"<file>:<line>: " + not_ours(task)``. A document answered twice is an error naming both places
    (:class:`~fairness_evals.jsonio.Answers`).
    """
    records: dict[str, list[Any]] = {}
    provenance: dict[str, dict[str, Any]] = {}
    answers = jsonio.Answers()
    for line in read_lines(files):
        task = line.file.task or ""
        row = line.row if isinstance(line.row, dict) else {}
        found = logged(task, row)
        if found is None:
            raise ValueError(f"{line.where}: {not_ours(task)}")
        answers.add((task, found[0]), None, line.where, f"{found[0]!r} of {task}")
        records.setdefault(task, []).append(checked_record(found[1], line.where, found[0]))
        carried = row.get(carrier(task))
        if isinstance(carried, dict) and isinstance(carried.get("provenance"), dict):
            provenance.setdefault(task, dict(carried["provenance"]))
    answers.check()
    return records, provenance


#: A record's values are 64-bit integers or floats (the aggregations' numpy arrays): each lies in [-_INT64, _INT64).
_INT64 = 1 << 63


def checked_record(record: Any, where: str, doc_id: str) -> Any:
    """``record`` (a logged record, the numbers an aggregation reads), or an error naming ``where`` when a value lies
    beyond 64 bits (``1e300``, an infinity), which no aggregation can hold; other malformed records are left to the
    benchmark's reader, which names them."""
    try:
        beyond = max(record) >= _INT64 or min(record) < -_INT64
    except (TypeError, ValueError):  # not all numbers, not a list, or empty
        return record
    if beyond:
        raise ValueError(f"{where}: the logged record of {doc_id!r} holds a number beyond 64 bits: {record!r:.200}")
    return record


def sample_reply(row: dict[str, Any], where: str, doc_id: str = "") -> str | None:
    """The reply of a ``--log_samples`` line: ``filtered_resps`` (else ``resps``), out of its lists; None when the
    line logs none (a request the harness logged as failed). Any other value that is not text (a number, an object,
    ``true``) is an error naming ``where``, as in a responses file (:func:`response_of`): a reply the model did not
    give as text is not an answer to count as unparsed."""
    for key in ("filtered_resps", "resps"):
        if key in row:
            return sample_text(row[key], where, doc_id)
    return None


def sample_text(value: Any, where: str, doc_id: str = "") -> str | None:
    """A logged reply (``filtered_resps``) out of its lists: text or None; anything else an error naming ``where``
    (:func:`sample_reply`)."""
    while isinstance(value, list):
        value = value[0] if value else ""
    if value is None or isinstance(value, str):
        return value
    to = f" to {doc_id!r}" if doc_id else ""
    raise ValueError(
        f"{where}: the logged reply{to} is {json_kind(value)}, not text (a samples file logs each reply as a JSON "
        "string)"
    )


def response_of(line: Line) -> tuple[str, str] | None:
    """``(id, response)`` of a responses line ``{"id", "response"}``, None for any other line. The response must be
    text: a number, an object, a list, ``null``, ``true`` or ``false`` is an error naming the line (a reply the
    model did not give as text is not an answer to count as unparsed)."""
    row = line.row
    if not isinstance(row, dict) or "id" not in row or "response" not in row:
        return None
    doc_id, response = str(row["id"]), row["response"]
    if not isinstance(response, str):
        raise ValueError(
            f"{line.where}: the response to {doc_id!r} is {json_kind(response)}, not text (give each reply as a JSON "
            'string, "" for an empty one)'
        )
    return doc_id, response


def json_kind(value: Any) -> str:
    """How a JSON value is named in an error: ``null``, ``true``, ``false``, a number, an object, a list, text."""
    if value is None or isinstance(value, bool):
        return jsonio.dumps(value)
    if isinstance(value, (int, float)):
        return f"a number ({jsonio.dumps(value)})"
    return {dict: "an object", list: "a list", str: "text"}.get(type(value), type(value).__name__)


def note(prog: str, message: str) -> None:
    """One line on standard error, ``<prog>: <message>``."""
    print(f"{prog}: {message}", file=sys.stderr)


#: The key of the score output that records what was scored (never a task name: tasks start with a benchmark's name).
SCORE_INPUTS = "score_inputs"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def score_inputs(benchmark: str, files: list[InputFile], settings: dict[str, Any]) -> dict[str, Any]:
    """The ``"score_inputs"`` entry of a score output: ``benchmark``, the ``files`` read (absolute path and sha256;
    a samples file's task, harness, run and model too) and the ``settings`` its documents and scores were built
    with (JSON values), so that ``compare`` can rebuild every document's record exactly as ``score`` did."""
    from fairness_evals import __version__

    entries = []
    for f in files:
        entry: dict[str, Any] = {"path": str(f.path.resolve()), "sha256": file_sha256(f.path)}
        if f.is_samples:
            entry.update(task=f.task, harness=f.harness, run=f.run, model=f.model)
        entries.append(entry)
    return {"benchmark": benchmark, "fairness_evals_version": __version__, "responses": entries, "settings": settings}


def recorded_files(recorded: dict[str, Any], where: Path) -> list[InputFile]:
    """The files a score output (``where``) read, as recorded in its ``"score_inputs"``, each checked against its
    sha256. A file is looked for at its recorded path, else by its name beside the score output; a file found
    nowhere, or whose content no longer matches the recorded hash, is an error naming it."""
    entries = recorded.get("responses")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{where}: {SCORE_INPUTS} names no responses file")
    files = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not entry.get("sha256"):
            raise ValueError(f"{where}: {SCORE_INPUTS}: each responses entry needs its path and sha256")
        recorded_path = Path(entry["path"])
        candidates = [recorded_path, where.parent / recorded_path.name]
        path = next((c for c in candidates if c.is_file()), None)
        if path is None:
            raise ValueError(
                f"{where}: its responses file {recorded_path} is not there (nor {candidates[1]}); keep the responses "
                "beside the score output or at the path it was scored from"
            )
        found = file_sha256(path)
        if found != entry["sha256"]:
            raise ValueError(
                f"{where}: {path} no longer matches the responses it was scored from (sha256 {found[:12]}..., "
                f"recorded {str(entry['sha256'])[:12]}...); score the file again"
            )
        task = entry.get("task")
        files.append(
            InputFile(path, task if isinstance(task, str) else None, str(entry.get("harness") or ""),
                      str(entry.get("run") or ""), str(entry.get("model") or ""))
        )  # fmt: skip
    return files


def absolute(value: Any) -> Any:
    """A local path as an absolute one (``hf:`` names, JSON text and other values as given)."""
    if isinstance(value, str) and value and not value.startswith("hf:") and Path(value).exists():
        return str(Path(value).resolve())
    return value


def record_options(args: argparse.Namespace, names: dict[str, str]) -> dict[str, Any]:
    """The options of ``args`` a score output records (``names``: recorded name -> option attribute), local paths
    absolute (:func:`absolute`), so that ``compare`` can build the same documents from anywhere."""
    return {name: absolute(getattr(args, attribute, None)) for name, attribute in names.items()}


def recorded_settings(recorded: dict[str, Any], *required: str) -> dict[str, Any]:
    """The ``settings`` a score output's :data:`SCORE_INPUTS` entry records; an error when there are none, or when
    one of ``required`` is missing."""
    settings = recorded.get("settings")
    if not isinstance(settings, dict):
        raise ValueError(f"{SCORE_INPUTS} records no settings")
    missing = [name for name in required if not settings.get(name)]
    if missing:
        raise ValueError(f"{SCORE_INPUTS} records no {', '.join(missing)} setting")
    return settings


def recorded_options(settings: dict[str, Any], names: dict[str, str], **more: Any) -> argparse.Namespace:
    """The options :func:`record_options` recorded, as the ``argparse.Namespace`` the command read them from
    (``names`` as there; ``more``: other attributes); ``skip_bad_input`` a bool as its flag gives it."""
    args = argparse.Namespace(**{attribute: settings.get(name) for name, attribute in names.items()}, **more)
    if hasattr(args, "skip_bad_input"):
        args.skip_bad_input = bool(args.skip_bad_input)
    return args
