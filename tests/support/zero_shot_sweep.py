"""The zero-shot tests' sweep (``tests/foundation/test_zero_shot.py``): ``lm_eval --tasks fact_or_fair_lite,sweep_probe
--num_fewshot 5 --limit 20`` against a loopback chat server, under the installed lm-eval or 0.4.11. The session
fixtures ``sweep`` and ``sweep_0411`` (``tests/conftest.py``) run it once each; the ``--limit`` smoke-run tests and the
0.4.11 group-arrows test read the same runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness import DEV_BIN, REPO, offline_env, run
from openai_server import OpenAIServer, fact_or_fair_reply, running

LITE = "fact_or_fair_lite"
LEAVES = (
    "fact_or_fair_objective",
    "fact_or_fair_subjective_base_lite",
    "fact_or_fair_subjective_representativeness_lite",
    "fact_or_fair_subjective_attribution_lite",
    "fact_or_fair_subjective_ingroup_lite",
)
#: A task of the user's own in the same sweep: it must still get its five shots.
PROBE = "sweep_probe"
#: The sweep's ``--limit``: also the smoke run of ``tests/fact_or_fair/test_fact_or_fair_limit.py``.
LIMIT = 20


def lm_eval_env(tmp: Path, version: str, oldest: Path) -> dict[str, str]:
    """Our code first (the harness subprocess must run the code under test), under 0.4.11 that lm-eval before it."""
    paths = [str(oldest)] if version == "0.4.11" else []
    return offline_env(tmp, PYTHONPATH=os.pathsep.join([*paths, str(REPO)]))


def probe_task(folder: Path) -> Path:
    """A few-shot task of the user's own: :data:`LIMIT` + 5 questions whose answers are their own numbers."""
    folder.mkdir()
    rows = [{"q": f"probe question {i}?", "a": f"probe answer {i}"} for i in range(LIMIT + 5)]
    (folder / "probe.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (folder / f"{PROBE}.yaml").write_text(
        f"task: {PROBE}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {folder / 'probe.jsonl'}\n"
        "test_split: test\noutput_type: generate_until\ndoc_to_text: '{{q}}'\ndoc_to_target: '{{a}}'\n"
        "generation_kwargs:\n  until: []\nmetric_list:\n  - metric: exact_match\n"
    )
    return folder


def sweep(tmp: Path, version: str, oldest: Path) -> tuple[Path, str, list[dict]]:
    """``lm_eval --tasks fact_or_fair_lite,sweep_probe --num_fewshot 5 --limit 20`` against a loopback chat server:
    the output folder, what the harness printed and every request body the server got."""
    probe = probe_task(tmp / "tasks")
    with running(OpenAIServer(fact_or_fair_reply, model_name="served")) as server:
        proc = run(
            [str(DEV_BIN / "python"), "-m", "lm_eval", "--model", "local-chat-completions",
             "--model_args", f"model=served,base_url={server.base_url}/chat/completions,num_concurrent=4,max_retries=1",
             "--tasks", f"{LITE},{PROBE}", "--include_path", str(probe), "--num_fewshot", "5",
             "--limit", str(LIMIT), "--apply_chat_template", "--log_samples", "--output_path", str(tmp / "out")],
            env=lm_eval_env(tmp, version, oldest), cwd=tmp, timeout=900,
        )  # fmt: skip
        received = list(server.received)
    return tmp / "out", proc.stdout + proc.stderr, received
