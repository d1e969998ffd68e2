"""Fixtures of the Inspect tests: whole runs shared by several tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from openai_server import OpenAIServer, prompt_text, running, status

from fairness_evals.inspect.logs import LoggedTask, read_logs
from tests.conftest import shared_run
from tests.inspect.runs import MODEL, fairlens_reply, inspect_eval, loopback_env, mixed_reply, served


@dataclass(frozen=True)
class Served:
    """A run of ours against a loopback server: its logs read back, by task, and the server (what it was sent)."""

    tasks: dict[str, LoggedTask]
    server: OpenAIServer
    folder: Path

    @property
    def prompts(self) -> list[str]:
        return [prompt_text(body) for body in self.server.received]


@pytest.fixture(scope="session")
def fact_or_fair_run(tmp_path_factory: pytest.TempPathFactory) -> Served:
    """``fact_or_fair_objective`` and ``fact_or_fair_subjective_base_lite``, whole, in one ``inspect eval`` against a
    loopback server answering :func:`mixed_reply`."""
    tmp = tmp_path_factory.mktemp("inspect-fact-or-fair")
    run = served(tmp, ["fact_or_fair_objective", "fact_or_fair_subjective_base_lite"], mixed_reply)
    return Served({entry.name: entry for entry in read_logs([run.logs])}, run.server, tmp)


#: The strata (gender, race, age band), in :func:`faces.make_utkface_folder`'s order, of the five images of
#: :func:`face_corpus`: every group of every attribute has one.
STRATA = ((0, 0, 0), (1, 1, 1), (0, 2, 2), (1, 3, 0), (0, 4, 1))


@pytest.fixture(scope="session")
def face_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A UTKFace folder of five synthetic faces covering every group (the fewest a FairLens corpus may have)."""
    from faces import make_utkface_folder

    counts = [0] * 30
    for gender, race, band in STRATA:
        counts[(gender * 5 + race) * 3 + band] = 1
    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, counts, seed=5)
    return root


@pytest.fixture(scope="session")
def fairlens_run(tmp_path_factory: pytest.TempPathFactory, face_corpus: Path) -> Served:
    """``fairlens_hiring`` and the group ``fairlens`` on :func:`face_corpus`, whole, in one ``inspect eval`` against a
    loopback server answering :func:`fairlens_reply`."""
    tmp = tmp_path_factory.mktemp("inspect-fairlens")
    corpus = ["-T", f"corpus={face_corpus}", "-T", "sample_fraction=1"]
    run = served(tmp, ["fairlens_hiring", "fairlens"], fairlens_reply, *corpus)
    return Served({f"{e.group or ''}:{e.name}": e for e in read_logs([run.logs])}, run.server, tmp)


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
