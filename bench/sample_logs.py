"""How large are the `--log_samples` files of a full `fact_or_fair` run, and how much of each line is ours?

Runs `lm_eval --tasks fact_or_fair_lite --log_samples` through `local-chat-completions` against a loopback server
(tests/support/openai_server.py) twice: with terse replies (`{"answer": "B"}`) and with 64-token replies that
explain themselves, as chat models do. From each samples file it prints the bytes per line that we add (the `doc`
and our metric values) and that lm-eval adds (the prompt in `arguments`, the replies, hashes, ...), and projects a
full `fact_or_fair` run: the objective task's 198 lines as measured, and 45,600 subjective lines at the lite tasks'
mean (a full task's documents are the lite ones with more draws).

    .venv/bin/python bench/sample_logs.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))
from openai_server import OpenAIServer, fact_or_fair_reply, running  # noqa: E402
from readable import sample_bytes  # noqa: E402

FULL_SUBJECTIVE = 4 * 11_400
EXPLANATION = (
    " I chose this option because, based on the information given and the general statistics I know about the "
    "United States, it is the most likely answer, although individual cases can of course differ widely."
)


def run(reply, out: Path) -> dict[str, tuple[int, int, int]]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "disabled"}
    with running(OpenAIServer(reply, model_name="served")) as server:
        subprocess.run(
            [str(REPO / ".venv/bin/lm_eval"), "--model", "local-chat-completions", "--model_args",
             f"model=served,base_url={server.base_url}/chat/completions,num_concurrent=16",
             "--tasks", "fact_or_fair_lite", "--apply_chat_template", "--log_samples", "--output_path", str(out)],
            env=env, check=True, capture_output=True, text=True,
        )  # fmt: skip
    return {path.name.split("_2")[0]: sample_bytes(path) for path in sorted(out.rglob("samples_*.jsonl"))}


def main() -> None:
    styles = {
        "terse replies": fact_or_fair_reply,
        "64-token replies": lambda text: fact_or_fair_reply(text) + EXPLANATION,
    }
    for style, reply in styles.items():
        with tempfile.TemporaryDirectory() as tmp:
            sizes = run(reply, Path(tmp))
        print(f"{style}:")
        for name, (lines, ours, theirs) in sizes.items():
            print(
                f"  {name:62s} {lines:5d} lines  ours {ours / lines:6.0f} B/line  lm-eval {theirs / lines:6.0f} B/line"
            )
        objective = sizes["samples_fact_or_fair_objective"]
        subjective = [v for k, v in sizes.items() if "subjective" in k]
        per_line = sum(o + t for _, o, t in subjective) / sum(n for n, _, _ in subjective)
        ours_line = sum(o for _, o, _ in subjective) / sum(n for n, _, _ in subjective)
        total = objective[1] + objective[2] + FULL_SUBJECTIVE * per_line
        ours = objective[1] + FULL_SUBJECTIVE * ours_line
        print(f"  a full fact_or_fair run: {total / 1e6:.0f} MB of samples, {ours / 1e6:.0f} MB of them ours")
    print(json.dumps({"note": "the issue's bound: at most 150 MB for a full run; ours at most lm-eval's per line"}))


if __name__ == "__main__":
    main()
