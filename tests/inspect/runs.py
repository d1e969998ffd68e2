"""What the Inspect tests share: the real ``inspect eval`` on our tasks, offline, against loopback OpenAI-compatible
servers, and ``fairness-evals score`` of the replies a log holds."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness import DEV_BIN, offline_env
from openai_server import OpenAIServer, fact_or_fair_reply, running

from fairness_evals.inspect.logs import LoggedTask

INSPECT = DEV_BIN / "inspect"
#: The model name the loopback servers answer to.
MODEL = "loopback"


def mixed_reply(text: str) -> str:
    """A Fact-or-Fair reply chosen by a hash of the prompt: mostly a valid answer (:func:`fact_or_fair_reply`),
    sometimes a refusal or text naming no option, so that every status and both rules of counting are exercised."""
    pick = int(hashlib.sha256(text.encode()).hexdigest(), 16) % 10
    if pick == 0:
        return "I refuse to choose between people."
    if pick == 1:
        return "The weather is nice today."
    return fact_or_fair_reply(text)


def inspect_eval(
    tmp: Path, tasks: Sequence[str], *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``inspect eval fairness_evals/<task>...`` (not checked: Inspect exits 0 when a task fails) with its logs in
    ``tmp/logs``, offline."""
    names = [f"fairness_evals/{task}" for task in tasks]
    command = [str(INSPECT), "eval", *names, "--log-dir", str(tmp / "logs"), "--display", "plain", *args]
    return subprocess.run(
        command, env=offline_env(tmp, **(env or {})), cwd=tmp, capture_output=True, text=True, timeout=timeout
    )


def loopback_env(server: OpenAIServer) -> dict[str, str]:
    """What ``--model openai-api/local/<name>`` reads: the server's address and a key."""
    return {"LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "test-key"}


@dataclass(frozen=True)
class Run:
    """A finished ``inspect eval`` against a loopback server: the folder of its logs, the (stopped) server with
    what it was sent, and what Inspect printed."""

    logs: Path
    server: OpenAIServer
    output: str


def served(tmp: Path, tasks: Sequence[str], reply: Callable[[str], str], *args: str) -> Run:
    """Run ``tasks`` against a loopback server answering ``reply``; the run must succeed."""
    with running(OpenAIServer(reply, model_name=MODEL)) as server:
        proc = inspect_eval(tmp, tasks, "--model", f"openai-api/local/{MODEL}", *args, env=loopback_env(server))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return Run(tmp / "logs", server, proc.stdout + proc.stderr)


def fairness_evals(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``fairness-evals ARGS`` in ``cwd``, run in this process (the command's ``main``: its exit status and what it
    printed), which saves each call the 3-7 s of a fresh interpreter importing inspect-ai. The executable itself is
    run by ``tests/foundation/test_cli.py`` and, with inspect-ai blocked, by ``test_inspect_foreign_logs.py``."""
    from fairness_evals.commands.main import main

    out, err, before = io.StringIO(), io.StringIO(), Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit:  # argparse's usage errors
                code = exit.code if isinstance(exit.code, int) else 1
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(["fairness-evals", *args], code, out.getvalue(), err.getvalue())


def score_replies(tmp: Path, entry: LoggedTask, *extra: str) -> dict[str, float]:
    """``fairness-evals score`` of the replies a log holds, written as a responses file (what a user scoring the
    completions outside Inspect would do): the metrics of the task's documents."""
    responses = tmp / f"{entry.name}.responses.jsonl"
    responses.write_text("".join(json.dumps({"id": s.id, "response": s.reply}) + "\n" for s in entry.samples))
    out = tmp / f"{entry.name}.score.json"
    proc = fairness_evals("score", entry.benchmark, "--responses", str(responses), "--out", str(out), *extra, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    scored = json.loads(out.read_text())
    (task,) = [t for t in scored if t != "score_inputs"]
    return scored[task]


def fairlens_reply(text: str) -> str:
    """A FairLens closed answer: one of the options the prompt lists (``Options: A / B``), chosen by a hash of the
    prompt, or (one prompt in eight) a reply naming none."""
    listed = re.search(r"Options: (.+)", text)
    options = [o.strip() for o in listed.group(1).split("/")] if listed else ["Yes"]
    pick = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    return "I am not sure." if pick % 8 == 0 else options[pick % len(options)]


#: What the loopback judge calls a biased opinion (:func:`openai_server.keyword_judge`).
KEYWORD = "stereotype"


def open_reply(text: str) -> str:
    """A FairLens open-ended answer chosen by a hash of the prompt: unbiased sentences, one biased sentence (it holds
    :data:`KEYWORD`) among two, or nothing."""
    pick = int(hashlib.sha256(text.encode()).hexdigest(), 16) % 3
    return ["They seem capable. A recruiter would call them.", f"They look young. That is a {KEYWORD} of age.", ""][
        pick
    ]
