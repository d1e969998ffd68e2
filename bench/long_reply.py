"""Memory and time of ``score`` on one very long reply, and of a full Fact-or-Fair ``score`` (issue 34). Prints
ratios.

1. **One long reply.** A responses file of the 198 objective answers whose first reply is ``--megabytes`` MB of
   prose (sentences, spaces and newlines) ending in ``{"answer": "A"}``, scored by ``fairness-evals score
   fact_or_fair --responses FILE --tasks objective`` in a child process; the same file with a short first reply is
   the reference. Printed: wall time and peak RSS of each (``os.wait4`` of that child alone), the peak's growth over
   the reference as a multiple of the file's size, and the time as a multiple of the reference's.
2. **A full score.** ``fairness-evals score fact_or_fair --responses FILE`` of replies to all 45,798 documents
   (objective and the four subjective contexts; a mix of the released JSON form, a bare letter, a refusal and prose
   naming a profile, drawn with a fixed seed), in a child process, against a fixed pure-Python loop timed in the same
   run (``--repeat`` times each, the best kept): the ratio is what compares across machines and commits.

    .venv/bin/python bench/long_reply.py [--megabytes 200] [--repeat 3] [--skip-full]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

SENTENCE = "Considering the statistics of the United States, the answer depends on several factors that I weigh here. "


def command(*argv: str) -> tuple[float, int, str]:
    """``fairness-evals *argv`` in a child process: (wall seconds, peak RSS in bytes, stderr's last line)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "fairness_evals", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    stderr = child.stderr.read() if child.stderr else b""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    last = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    if child.returncode != 0:
        raise SystemExit(f"fairness-evals {' '.join(argv)} exited {child.returncode}: {last[0]}")
    return wall, usage.ru_maxrss * 1024, last[0]


def objective_responses(path: Path, first_reply_bytes: int) -> int:
    """The 198 objective replies, the first one ``first_reply_bytes`` long (written in pieces); the file's size."""
    from fact_fair_tasks.documents import documents_for

    docs = documents_for("objective")
    with path.open("w", encoding="utf-8") as out:
        out.write('{"id": ' + json.dumps(docs[0]["id"]) + ', "response": "')
        repeat = max(0, first_reply_bytes - 20) // len(SENTENCE)
        block = (SENTENCE * 100)[:-1] + "\\n"
        for _ in range(repeat // 100):
            out.write(block)
        out.write(SENTENCE * (repeat % 100))
        out.write('{\\"answer\\": \\"A\\"}"}\n')
        for doc in docs[1:]:
            out.write(json.dumps({"id": doc["id"], "response": '{"answer": "B"}'}) + "\n")
    return path.stat().st_size


def long_reply(folder: Path, megabytes: float) -> None:
    size = int(megabytes * 1e6)
    small, big = folder / "small.jsonl", folder / "big.jsonl"
    objective_responses(small, 100)
    file_size = objective_responses(big, size)
    argv = ["score", "fact_or_fair", "--tasks", "objective", "--out", str(folder / "scores.json"), "--responses"]
    ref_time, ref_rss, _ = command(*argv, str(small))
    big_time, big_rss, _ = command(*argv, str(big))
    print(f"responses file with one {megabytes:g} MB reply: {file_size / 1e6:.0f} MB")
    print(f"  reference (short first reply): {ref_time:.2f} s, peak RSS {ref_rss / 1e6:.0f} MB")
    print(f"  long reply: {big_time:.2f} s, peak RSS {big_rss / 1e6:.0f} MB")
    print(
        f"  peak RSS growth / file size: {(big_rss - ref_rss) / file_size:.2f}x; "
        f"peak RSS / file size: {big_rss / file_size:.2f}x; time / reference: {big_time / ref_time:.2f}x"
    )


def full_responses(path: Path) -> int:
    from fact_fair_tasks.documents import documents_for
    from fact_fair_tasks.items import CONTEXTS

    rng = random.Random(0)
    count = 0
    with path.open("w", encoding="utf-8") as out:
        for kind in ("objective", *CONTEXTS):
            for doc in documents_for(kind):
                letters = "AB" if kind == "objective" else "ABCD"
                letter = rng.choice(letters)
                reply = rng.choice(
                    [
                        f'{{"answer": "{letter}"}}',
                        letter,
                        "I'm sorry, but I cannot determine that from the information given.",
                        f"Considering everything, I would pick option {letter} here.",
                    ]
                )
                out.write(json.dumps({"id": doc["id"], "response": reply}) + "\n")
                count += 1
    return count


def fixed_loop() -> float:
    """A fixed amount of pure-Python work: the unit the full score is measured in."""
    start = time.perf_counter()
    total = 0
    for i in range(20_000_000):
        total += i & 7
    assert total == 70_000_000
    return time.perf_counter() - start


def full_score(folder: Path, repeat: int) -> None:
    responses = folder / "all.jsonl"
    count = full_responses(responses)
    argv = ["score", "fact_or_fair", "--responses", str(responses), "--out", str(folder / "all.json")]
    scores, loops = [], []
    for _ in range(repeat):
        loops.append(fixed_loop())
        scores.append(command(*argv)[0])
    print(
        f"full score of {count:,} Fact-or-Fair replies: best {min(scores):.2f} s; fixed loop best {min(loops):.2f} s; "
        f"ratio {min(scores) / min(loops):.2f} (all: {', '.join(f'{s:.2f}' for s in scores)} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=200, help="length of the long reply (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the full score and the loop (best kept)")
    parser.add_argument("--skip-full", action="store_true", help="only the long reply")
    parser.add_argument("--skip-long", action="store_true", help="only the full score")
    args = parser.parse_args()
    import fairness_evals

    print(f"fairness_evals from {Path(fairness_evals.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="bench-long-reply-") as tmp:
        if not args.skip_long:
            long_reply(Path(tmp), args.megabytes)
        if not args.skip_full:
            full_score(Path(tmp), args.repeat)


if __name__ == "__main__":
    main()
