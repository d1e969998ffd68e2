"""An Inspect log (``.eval`` or ``.json``) of our tasks, read back as what the commands read from a harness run.

``inspect eval`` exits 0 when a task fails, so ``fairness-evals check`` is the gate, as for the harnesses; ``check``,
``report``, ``compare`` and ``score`` read an Inspect log through :func:`read_logs`, which gives one
:class:`LoggedTask` per task of ours in each log (a group's log: the group, then each member task):

* ``samples``: one :class:`LoggedSample` per sample and epoch: the document id (the id ``fairness-evals export``
  gives), the document (the sample's metadata; FairLens: with the corpus provenance of the task metadata), the
  reply, the readable record the task's scorer logged, the judge's verdicts (open-ended tasks) and the sample's
  error;
* ``metrics``: the task's headline metrics as the log holds them, with NaN for each one the log leaves out (Inspect
  cannot hold a null: :data:`fairness_evals.inspect.headline.WITHHELD_RULE`);
* ``task_args`` (Inspect's ``-T`` arguments) and ``settings`` (the task-metadata settings they make, the keys
  ``score --metadata`` and the harness tasks take); ``status``, ``error``, :meth:`LoggedTask.failures` and
  ``limited``: whether the run failed or left documents out;
* :meth:`LoggedTask.records` and :meth:`LoggedTask.statistics`: the records (each reply parsed again against its
  document, as ``score`` parses a harness's samples) and every statistic of the task with the reason for each null,
  computed by the benchmark's own ``compute_metrics`` (:func:`fairness_evals.inspect.plans.plan`): what ``score``
  writes for the run.

Reading needs ``inspect_ai`` (the ``fairness-evals[inspect]`` extra); :func:`is_inspect_log`, :func:`find_logs` and
:func:`foreign_task` do not: a log of another task (its header read with the standard library, and ``zstandard``,
which lmms-eval installs, for the Zstandard entries Inspect writes) is skipped in a folder without inspect-ai. Every
error is a ``ValueError`` whose message is one line naming the file (:class:`NotOurs` for a log of another task,
which the commands skip in a folder).
"""

from __future__ import annotations

import json
import math
import re
import struct
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals import extras, statistics
from fairness_evals.inspect.headline import MEMBER_SEPARATOR, compute, headline_names, leaves
from fairness_evals.inspect.plans import plan

#: How an Inspect ``.json`` log begins (its first two fields); any other JSON file is not one.
_JSON_LOG = re.compile(rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:')
#: The sample fields the reader never needs (the transcript): not loaded from ``.eval`` logs.
_UNREAD = {"messages", "events", "store", "attachments", "timelines"}
#: How the task metadata of our tasks names our part (:func:`fairness_evals.inspect.metric.benchmark_task`).
METADATA_KEY = "fairness_evals"
NEEDS_INSPECT = extras.message("reading an Inspect log", "inspect_ai")


class NotOurs(ValueError):
    """An Inspect log of a task that is not one of ours (the message names the file and its task)."""


@dataclass(frozen=True)
class LoggedSample:
    """One sample of one epoch: ``id`` (the document id), ``document`` (the sample's metadata), ``reply`` (the
    model's completion, ``""`` when it gave none), ``record`` (the readable record the scorer logged in the score's
    metadata; None when the sample was not scored), ``judgement`` (open-ended tasks: the judge's verdicts the
    scorer logged; None otherwise) and ``error`` (the sample's error message, None when it ran)."""

    id: str
    epoch: int
    document: dict[str, Any]
    reply: str
    record: dict[str, Any] | None
    judgement: dict[str, Any] | None = None
    error: str | None = None


@dataclass(frozen=True)
class LoggedTask:
    """One task of ours in one Inspect log (see the module docstring)."""

    name: str
    benchmark: str
    path: Path
    run: str  # the eval's creation time (ISO), what tells two runs apart
    eval_id: str
    model: str  # Inspect's model name, e.g. "openai-api/local/smollm2" or "hf/local"
    model_args: dict[str, Any]
    status: str  # Inspect's: "success", "error", "cancelled" or "started"
    error: str | None
    task_args: dict[str, Any]
    settings: dict[str, Any]
    metrics: dict[str, float]
    samples: tuple[LoggedSample, ...]
    limited: str = ""  # how the run left documents out ("" when it ran them all)
    epochs: int = 1
    group: str | None = None  # the group a member task was run in
    members: tuple[str, ...] = ()  # a group: its member tasks
    inspect_version: str = ""
    #: How many documents the task has (its whole dataset, before any --limit); a member of a group's log: its
    #: documents in the log, None when the run left documents out (the log counts the group's only).
    documents: int | None = 0
    #: The corpus arguments the task was built with (FairLens, IRIS: the ``-T`` corpus settings, paths absolute;
    #: Fact-or-Fair: none, its documents follow from :attr:`settings`).
    corpus: dict[str, Any] = field(default_factory=dict)

    harness = "inspect"

    def failures(self) -> list[str]:
        """Why the run of this task failed, one line each (empty when it did not): Inspect's status and error, the
        samples that errored, and samples that were run but not scored."""
        out = []
        if self.status != "success":
            because = f": {_first_line(self.error)}" if self.error else ""
            out.append(f"the Inspect run did not finish (status {self.status}{because})")
        errored = [s for s in self.samples if s.error is not None]
        if errored:
            first = errored[0]
            out.append(
                f"{len(errored)} of {len(self.samples)} samples failed, e.g. {first.id!r} (epoch {first.epoch}): "
                f"{_first_line(first.error or '')}"
            )
        unscored = [s for s in self.samples if s.error is None and s.record is None]
        if unscored:
            out.append(f"{len(unscored)} samples have no fairness-evals score, e.g. {unscored[0].id!r}")
        return out

    def items(self, reparse: bool = True) -> list[tuple[str, dict[str, Any]]]:
        """``(document id, readable record)`` of every sample that ran, in log order: each reply parsed again against
        its document (``reparse``, as ``score`` parses a harness's samples; an open-ended answer keeps the judgement
        the log holds), or the record its scorer logged."""
        chosen = plan(self.name, self.settings)
        out = []
        for s in self.samples:
            if s.error is not None:
                continue
            if reparse:
                out.append((s.id, chosen.item_of(s.document, s.reply, s.record)))
            elif s.record is not None:
                out.append((s.id, dict(s.record)))
        return out

    def records(self, reparse: bool = True) -> list[tuple[str, list[Any]]]:
        """``(document id, record)`` of every sample that ran (:meth:`items`' ``record``: what the aggregation
        reads)."""
        return [(doc_id, list(item["record"])) for doc_id, item in self.items(reparse)]

    def statistics(self, reparse: bool = True) -> tuple[dict[str, float], dict[str, str]]:
        """Every statistic of the task (headline and detail) from :meth:`items`, and the reason for each null, as
        ``fairness-evals score`` computes them (the rules for epochs: :mod:`fairness_evals.inspect.headline`)."""
        computed = compute(plan(self.name, self.settings), self.items(reparse))
        return computed.statistics[self.name], dict(computed.notes[self.name].reasons)

    def responses(self) -> list[dict[str, Any]]:
        """``{"id", "epoch", "response"}`` of every sample that ran: a ``score --responses`` file (one epoch) of the
        task's documents built with :attr:`settings`."""
        return [{"id": s.id, "epoch": s.epoch, "response": s.reply} for s in self.samples if s.error is None]


def is_inspect_log(path: str | Path) -> bool:
    """Whether ``path`` is an Inspect log: an ``.eval`` archive with an Inspect header or journal, or a ``.json``
    file that begins as Inspect writes its logs (read without ``inspect_ai``)."""
    path = Path(path)
    try:
        if path.suffix == ".eval" and path.is_file():
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
            return "header.json" in names or "_journal/start.json" in names
        if path.suffix == ".json" and path.is_file():
            with path.open("rb") as handle:
                return bool(_JSON_LOG.match(handle.read(256)))
    except (OSError, zipfile.BadZipFile):
        return False
    return False


#: The most bytes of an Inspect log's header read without inspect_ai (an ``.eval`` header entry, the start of a
#: ``.json`` log up to the end of its ``eval`` object).
_HEADER_LIMIT = 64 << 20
#: The zip compression method of Zstandard, which Inspect writes and Python's zipfile reads only from 3.14.
_ZIP_ZSTANDARD = 93
#: How an Inspect ``.json`` log begins up to its ``eval`` object (version, status, then eval).
_JSON_EVAL = re.compile(rb'\A\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"[^"\\]*"\s*,\s*"eval"\s*:\s*')


def foreign_task(path: str | Path) -> str | None:
    """The task of an Inspect log of a task that is not ours (``eval.task`` of a log without our task metadata), read
    without inspect_ai; None for a log of ours, and for a log whose header cannot be read this way (then only
    :func:`read_log` can tell)."""
    header = _eval_header(Path(path))
    if header is None:
        return None
    ours = header.get("metadata") if isinstance(header.get("metadata"), dict) else {}
    if isinstance(ours.get(METADATA_KEY), dict):
        return None
    return str(header.get("task"))


def _eval_header(path: Path) -> dict[str, Any] | None:
    """The ``eval`` object of an Inspect log's header with the standard library: an ``.eval`` archive's
    ``header.json`` (else ``_journal/start.json``, a log still running), a ``.json`` log's ``eval``; None when it
    cannot be read so."""
    try:
        if path.suffix == ".eval":
            for name in ("header.json", "_journal/start.json"):
                data = _zip_entry(path, name)
                if data is not None:
                    header = json.loads(data)
                    found = header.get("eval") if isinstance(header, dict) else None
                    return found if isinstance(found, dict) else None
            return None
        return _json_log_eval(path)
    except (OSError, ValueError, zipfile.BadZipFile, RecursionError):
        return None


def _zip_entry(path: Path, name: str) -> bytes | None:
    """The bytes of the entry ``name`` of the zip archive ``path``: through ``zipfile``, else, for a Zstandard entry
    that this Python's zipfile cannot read, its raw bytes decompressed by ``zstandard``; None when there is no such
    entry, it is larger than :data:`_HEADER_LIMIT` or cannot be decompressed."""
    with zipfile.ZipFile(path) as archive:
        try:
            info = archive.getinfo(name)
        except KeyError:
            return None
        if info.file_size > _HEADER_LIMIT:
            return None
        try:
            return archive.read(info)
        except NotImplementedError:  # a compression method this zipfile lacks
            if info.compress_type != _ZIP_ZSTANDARD:
                return None
    with path.open("rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)  # the local file header: its name and extra field lengths end it
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            return None
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        handle.seek(info.header_offset + 30 + name_length + extra_length)
        compressed = handle.read(info.compress_size)
    try:
        import zstandard
    except ImportError:
        return None
    try:
        return zstandard.ZstdDecompressor().decompress(compressed, max_output_size=info.file_size)
    except zstandard.ZstdError:
        return None


def _json_log_eval(path: Path) -> dict[str, Any] | None:
    """The ``eval`` object of a ``.json`` Inspect log, read from its start (more as needed, up to
    :data:`_HEADER_LIMIT`): a log is written version, status, then eval."""
    decoder = json.JSONDecoder()
    with path.open("rb") as handle:
        data = handle.read(1 << 16)
        start = _JSON_EVAL.match(data)
        if start is None:
            return None
        while True:
            try:
                found, _ = decoder.raw_decode(data[start.end() :].decode("utf-8"))
                return found if isinstance(found, dict) else None
            except (json.JSONDecodeError, UnicodeDecodeError):  # the object, or a character, goes on
                more = handle.read(len(data))
                if not more or len(data) > _HEADER_LIMIT:
                    return None
                data += more


def find_logs(paths: Iterable[str | Path]) -> list[Path]:
    """The Inspect logs among ``paths``: a file as given (an error when it is not one), a folder's ``*.eval`` and
    Inspect ``*.json`` files below it, sorted."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            candidates = sorted([*path.rglob("*.eval"), *path.rglob("*.json")])
            found += [p for p in candidates if is_inspect_log(p)]
        elif path.is_file():
            if not is_inspect_log(path):
                raise ValueError(f"{path}: not an Inspect log (.eval, or .json as inspect eval writes it)")
            found.append(path)
        else:
            raise ValueError(f"{path}: no such file or folder")
    return found


def read_logs(paths: Iterable[str | Path]) -> list[LoggedTask]:
    """Every task of ours in the Inspect logs of ``paths`` (:func:`find_logs`), log by log."""
    return [entry for path in find_logs(paths) for entry in read_log(path)]


def read_log(path: str | Path) -> list[LoggedTask]:
    """The tasks of ours in one Inspect log: the task it ran, or a group and then each of its member tasks (their
    samples and their ``<member>/<metric>`` values); an error naming the file when it is no log of ours
    (:class:`NotOurs`, told without inspect_ai where :func:`foreign_task` can read the header)."""
    path = Path(path)
    other = foreign_task(path)
    if other is not None:
        raise NotOurs(f"{path}: an Inspect log of {other!r}, not of a fairness-evals task")
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ValueError(f"{path}: {NEEDS_INSPECT}") from None
    try:
        header = read_eval_log(str(path), header_only=True)
    except Exception as error:  # a damaged archive or JSON file: Inspect raises many kinds
        raise ValueError(
            f"{path}: not a readable Inspect log ({type(error).__name__}: {_first_line(str(error))})"
        ) from None
    ours = (header.eval.metadata or {}).get(METADATA_KEY)
    if not isinstance(ours, dict) or not isinstance(ours.get("task"), str):
        raise NotOurs(f"{path}: an Inspect log of {header.eval.task!r}, not of a fairness-evals task")
    task = ours["task"]
    try:
        declared = statistics.task(task)
    except KeyError as error:
        raise ValueError(f"{path}: {error.args[0]}") from None
    try:
        rows = _samples_of(path)
    except Exception as error:
        raise ValueError(
            f"{path}: cannot read its samples ({type(error).__name__}: {_first_line(str(error))})"
        ) from None
    provenance = ours.get("provenance") or {}
    samples = [_sample(row, provenance) for row in rows]
    values = _logged_values(header)
    common = dict(
        benchmark=declared.benchmark,
        path=path,
        run=str(header.eval.created),
        eval_id=str(header.eval.eval_id),
        model=str(header.eval.model),
        model_args=dict(header.eval.model_args or {}),
        status=str(header.status),
        error=header.error.message if header.error is not None else None,
        task_args=dict(header.eval.task_args or {}),
        settings=dict(ours.get("settings") or {}),
        limited=_limited(header),
        epochs=int(header.eval.config.epochs or 1),
        inspect_version=str((header.eval.packages or {}).get("inspect_ai", "")),
        documents=int(header.eval.dataset.samples or 0),
        corpus=dict(ours.get("corpus") or {}),
    )
    if not declared.group:
        return [LoggedTask(name=task, metrics=_headline(task, values, ""), samples=tuple(samples), **common)]
    members = leaves(task)
    chosen = plan(task, common["settings"])
    by_member: dict[str, list[LoggedSample]] = {member: [] for member in members}
    for s in samples:
        leaf = chosen.leaf_of(s.record) if s.record is not None else _leaf_of_document(s, members)
        by_member.setdefault(leaf, []).append(s)
    group = LoggedTask(
        name=task, metrics=_headline(task, values, ""), samples=tuple(samples), members=tuple(members), **common
    )
    out = [group]
    for member in members:
        counted = {**common, "documents": None if common["limited"] else len({s.id for s in by_member[member]})}
        metrics = _headline(member, values, f"{member}{MEMBER_SEPARATOR}")
        out.append(LoggedTask(name=member, metrics=metrics, samples=tuple(by_member[member]), group=task, **counted))
    return out


def reasons(path: str | Path) -> dict[str, dict[str, str]]:
    """``{task: {metric: reason}}``: why each null metric of each task of one Inspect log is null (the values the
    log leaves out), computed from its samples as ``fairness-evals score`` does."""
    return {entry.name: entry.statistics()[1] for entry in read_log(path)}


# --------------------------------------------------------------------------- helpers
def _first_line(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else ""


def _samples_of(path: Path) -> list[Any]:
    """Every sample of the log, as Inspect's ``EvalSample`` without the transcript (:data:`_UNREAD`). An ``.eval``
    log's samples are its ``samples/*.json`` entries, read here in one pass (Inspect's sample reader opens the
    archive once per sample: 9 ms a sample, 7 minutes for a full Fact-or-Fair run; this takes under 1 ms); a
    ``.json`` log is read whole by Inspect."""
    from inspect_ai.log import EvalSample, read_eval_log  # importing inspect_ai.log registers zstd with zipfile

    if path.suffix != ".eval":
        return list(read_eval_log(str(path)).samples or [])
    out = []
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.startswith("samples/") and name.endswith(".json"):
                row = json.loads(archive.read(name))
                for key in _UNREAD:
                    row.pop(key, None)
                out.append(EvalSample.model_validate(row))
    return out


def _sample(row: Any, provenance: Mapping[str, Any]) -> LoggedSample:
    record = judgement = None
    for score in (row.scores or {}).values():
        metadata = score.metadata or {}
        if isinstance(metadata.get("record"), list):
            record = dict(metadata)
            judgement = metadata.get("judgement") if isinstance(metadata.get("judgement"), dict) else None
    document = {**dict(row.metadata or {}), **provenance}
    error = row.error.message if row.error is not None else None
    doc_id = str(document.get("id") or row.id)  # a group's sample id may name its task too (IRIS)
    return LoggedSample(doc_id, int(row.epoch), document, row.output.completion or "", record, judgement, error)


def _leaf_of_document(s: LoggedSample, members: Sequence[str]) -> str:
    """The member task of an unscored sample of a group: the one whose name its document's ``task`` starts."""
    task = str(s.document.get("task") or "")
    named = [m for m in members if m == task or m.startswith(f"{task}_")]
    return named[0] if len(named) == 1 else task


def _logged_values(header: Any) -> dict[str, float]:
    """Every metric value of our metric in the log's results."""
    out: dict[str, float] = {}
    for score in (header.results.scores if header.results is not None else []) or []:
        for key, metric in score.metrics.items():
            out.setdefault(key, float(metric.value))
    return out


def _headline(task: str, values: Mapping[str, float], prefix: str) -> dict[str, float]:
    """The headline metrics of ``task`` as the log holds them (``prefix``: a member's, in its group's log), NaN for
    each one left out."""
    return {name: float(values.get(f"{prefix}{name}", math.nan)) for name in headline_names(task)}


def _limited(header: Any) -> str:
    """How the run left documents out: ``--limit N`` (or a range), ``--sample-id`` or fewer samples run than the
    dataset has; "" when it ran every document."""
    config = header.eval.config
    dataset = header.eval.dataset
    run = len(dataset.sample_ids or []) if dataset.sample_ids is not None else None
    total = dataset.samples
    if config.limit is not None:
        limit = config.limit if isinstance(config.limit, int) else "-".join(map(str, config.limit))
        return f"--limit {limit}" + (f": {run} of {total} documents" if run is not None and total else "")
    if config.sample_id is not None:
        return "--sample-id" + (f": {run} of {total} documents" if run is not None and total else "")
    if run is not None and total and run < total:
        return f"{run} of {total} documents"
    return ""


__all__ = ["LoggedSample", "LoggedTask", "NotOurs", "find_logs", "is_inspect_log", "read_log", "read_logs", "reasons"]
