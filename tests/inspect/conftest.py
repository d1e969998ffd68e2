"""Fixtures of the Inspect tests: whole runs shared by several tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer, prompt_text, running, status

from fairness_evals.inspect.logs import LoggedTask, read_logs
from tests.conftest import shared_run
from tests.inspect.runs import MODEL, fairlens_reply, inspect_eval, loopback_env, mixed_reply, served


@dataclass(frozen=True)
class Sent:
    """What a loopback server was sent during a run: its request count, its image count and every request body."""

    requests: int
    images: int
    received: list[dict[str, Any]]


@dataclass(frozen=True)
class Served:
    """A run of ours against a loopback server: its logs read back, by task, what the server was sent, and a folder
    of this test process's own for what the tests write beside the run (the logs are in the shared run's folder)."""

    tasks: dict[str, LoggedTask]
    server: Sent
    folder: Path

    @property
    def prompts(self) -> list[str]:
        return [prompt_text(body) for body in self.server.received]


#: The file, beside a shared run's logs, that holds what its server was sent (:class:`Sent` as JSON).
SENT = "sent.json"


def _shared_served(
    tmp_path_factory: pytest.TempPathFactory, name: str, tasks: list[str], reply: Callable[[str], str], *args: str
) -> tuple[Path, Sent]:
    """``served(tasks, reply, *args)`` once per test session (across xdist workers, :func:`tests.conftest.shared_run`):
    the folder of its logs and what its server was sent."""

    def build(tmp: Path) -> Path:
        run = served(tmp, tasks, reply, *args)
        sent = {"requests": run.server.requests, "images": run.server.images, "received": run.server.received}
        (tmp / SENT).write_text(json.dumps(sent))
        return run.logs

    logs = shared_run(tmp_path_factory, name, build)
    return logs, Sent(**json.loads((logs.parent / SENT).read_text()))


@pytest.fixture(scope="session")
def fact_or_fair_run(tmp_path_factory: pytest.TempPathFactory) -> Served:
    """``fact_or_fair_objective`` and ``fact_or_fair_subjective_base_lite``, whole, in one ``inspect eval`` against a
    loopback server answering :func:`mixed_reply`, once per test session."""
    leaves = ["fact_or_fair_objective", "fact_or_fair_subjective_base_lite"]
    logs, sent = _shared_served(tmp_path_factory, "inspect-fact-or-fair", leaves, mixed_reply)
    tasks = {entry.name: entry for entry in read_logs([logs])}
    return Served(tasks, sent, tmp_path_factory.mktemp("inspect-fact-or-fair"))


#: The arguments of :func:`limited_objective_run`.
LIMITED = ("--limit", "12", "-T", "seed=3")


@pytest.fixture(scope="session")
def limited_objective_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``inspect eval fairness_evals/fact_or_fair_objective`` with :data:`LIMITED` against a loopback server answering
    :func:`mixed_reply`, once per test session: the folder of its logs (``check`` of a limited log; the same task run
    by its file)."""
    logs, _ = _shared_served(tmp_path_factory, "inspect-objective-limited", ["fact_or_fair_objective"], mixed_reply,
                             *LIMITED)  # fmt: skip
    return logs


#: The strata (gender, race, age band), in :func:`faces.make_utkface_folder`'s order, of the five images of
#: :func:`face_corpus`: every group of every attribute has one.
STRATA = ((0, 0, 0), (1, 1, 1), (0, 2, 2), (1, 3, 0), (0, 4, 1))


def _face_corpus(root: Path) -> Path:
    from faces import make_utkface_folder

    counts = [0] * 30
    for gender, race, band in STRATA:
        counts[(gender * 5 + race) * 3 + band] = 1
    corpus = root / "faces"
    corpus.mkdir()
    make_utkface_folder(corpus, counts, seed=5)
    return corpus


@pytest.fixture(scope="session")
def face_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A UTKFace folder of five synthetic faces covering every group (the fewest a FairLens corpus may have), one per
    test session: :func:`fairlens_run`'s logs name it."""
    return shared_run(tmp_path_factory, "inspect-face-corpus", _face_corpus)


@pytest.fixture(scope="session")
def fairlens_run(tmp_path_factory: pytest.TempPathFactory, face_corpus: Path) -> Served:
    """``fairlens_hiring`` and the group ``fairlens`` on :func:`face_corpus`, whole, in one ``inspect eval`` against a
    loopback server answering :func:`fairlens_reply`, once per test session."""
    corpus = ["-T", f"corpus={face_corpus}", "-T", "sample_fraction=1"]
    logs, sent = _shared_served(
        tmp_path_factory, "inspect-fairlens", ["fairlens_hiring", "fairlens"], fairlens_reply, *corpus
    )
    tasks = {f"{e.group or ''}:{e.name}": e for e in read_logs([logs])}
    return Served(tasks, sent, tmp_path_factory.mktemp("inspect-fairlens"))


@dataclass(frozen=True)
class Finished:
    """A finished ``inspect eval`` (not checked): its exit status, what it printed, and the folder of its logs."""

    returncode: int
    stdout: str
    stderr: str
    logs: Path


def _failed_objective_run(tmp: Path) -> Path:
    model = ["--model", f"openai-api/local/{MODEL}", "--limit", "3"]
    with running(OpenAIServer(script=[status(400)], model_name=MODEL)) as server:
        proc = inspect_eval(tmp, ["fact_or_fair_objective"], *model, env=loopback_env(server))
    (tmp / "returncode").write_text(str(proc.returncode))
    (tmp / "stdout").write_text(proc.stdout)
    (tmp / "stderr").write_text(proc.stderr)
    return tmp


@pytest.fixture(scope="session")
def failed_objective_run(tmp_path_factory: pytest.TempPathFactory) -> Finished:
    """``inspect eval fairness_evals/fact_or_fair_objective --limit 3`` against a loopback server that refuses every
    request (HTTP 400, not retried), once per test session (across xdist workers): the run the failed-run test and
    ``check``'s test of a failed log both read."""
    tmp = shared_run(tmp_path_factory, "inspect-failed-objective", _failed_objective_run)
    return Finished(int((tmp / "returncode").read_text()), (tmp / "stdout").read_text(), (tmp / "stderr").read_text(),
                    tmp / "logs")  # fmt: skip
