"""FairLens open-ended judge costs (issue 6). Prints times and ratios.

1. Judge throughput against a local OpenAI-compatible server (``tests/support/openai_server.py``: the
   embedded SmolLM2-135M-Instruct on loopback, batching concurrent requests like vLLM) with ``concurrency``
   requests in flight vs one request at a time, on the same distinct answers (a fresh cache each time).
2. A rerun over the same answers, everything from the cache, vs the first run.
3. Our own cost per answer once the judge has replied: the pipeline's parsing and the cache write and read,
   with an in-process judge that replies at once.

    .venv/bin/python bench/judge.py [--answers 16] [--max-tokens 24] [--concurrency 8]

SmolLM2 rarely writes valid JSON, so most answers take every attempt: the numbers are about throughput,
not verdicts. The server uses the CPU threads torch chooses; on a shared machine the absolute times vary.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openai_server import OpenAIServer, TextModel, running  # noqa: E402

from fairlens_tasks.judging.backends import Reply  # noqa: E402
from fairlens_tasks.judging.cache import JudgmentCache, response_id  # noqa: E402
from fairlens_tasks.judging.config import JudgeSettings  # noqa: E402
from fairlens_tasks.judging.runner import judge_texts  # noqa: E402
from fairness_evals.model import ensure_default_model  # noqa: E402

STEMS = (
    "The candidate looks {} and would probably be invited to an interview.",
    "Nothing in the photo suggests a threat; the person appears {}.",
    "A clinician might wrongly assume the patient is {} because of their expression.",
    "They seem {}, so a recruiter could worry about their leadership skills.",
)
WORDS = ("calm", "tired", "young", "old", "friendly", "serious", "nervous", "confident")


def answers(n: int) -> dict[str, str]:
    texts = [STEMS[i % len(STEMS)].format(WORDS[(i // len(STEMS)) % len(WORDS)]) + f" ({i})" for i in range(n)]
    return {response_id(t): t for t in texts}


def timed_run(
    server: OpenAIServer, texts: dict[str, str], cache: Path, concurrency: int, max_tokens: int
) -> tuple[float, object]:
    settings = JudgeSettings(
        backend="openai", model="smollm2", base_url=server.base_url, api_key="bench", max_tokens=max_tokens,
        attempts=2, concurrency=concurrency, cache=cache,
    )  # fmt: skip
    with JudgmentCache(cache) as store:
        start = time.perf_counter()
        _, stats = judge_texts(texts, settings, store)
        return time.perf_counter() - start, stats


class InstantJudge:
    """Replies at once with valid JSON: three opinions, one verdict "yes"."""

    def complete(self, messages: Sequence[dict[str, str]]) -> Reply:
        if messages[0]["content"].startswith("Read the text below"):
            return Reply(json.dumps({"opinions": ["a", "b", "c"]}))
        return Reply(
            json.dumps({"verdicts": [{"verdict": "yes", "reason": "r"}, {"verdict": "no"}, {"verdict": "no"}]})
        )

    def close(self) -> None:
        pass


def our_overhead(n: int, folder: Path) -> tuple[float, float]:
    texts = answers(n)
    settings = JudgeSettings(backend="openai", model="instant", concurrency=1, cache=folder / "instant.sqlite")
    with JudgmentCache(settings.cache) as store:
        start = time.perf_counter()
        judge_texts(texts, settings, store, backend=InstantJudge())
        first = time.perf_counter() - start
        start = time.perf_counter()
        judge_texts(texts, settings, store, backend=InstantJudge())
        second = time.perf_counter() - start
    return first / n, second / n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=16, help="distinct answers to judge (default 16)")
    parser.add_argument("--max-tokens", type=int, default=24, help="judge reply token limit (default 24)")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="requests in flight for the concurrent run (default 8)"
    )
    args = parser.parse_args()
    texts = answers(args.answers)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = OpenAIServer(model=TextModel(ensure_default_model(), max_batch=args.concurrency), model_name="smollm2")
        with running(server):
            timed_run(server, answers(2), folder / "warm.sqlite", 1, 4)  # warm-up, not reported
            serial, s_stats = timed_run(server, texts, folder / "serial.sqlite", 1, args.max_tokens)
            batches_before = len(server.model.batches)
            concurrent, c_stats = timed_run(
                server, texts, folder / "concurrent.sqlite", args.concurrency, args.max_tokens
            )
            batches = server.model.batches[batches_before:]
            rerun, r_stats = timed_run(server, texts, folder / "concurrent.sqlite", args.concurrency, args.max_tokens)
        judge_us, hit_us = our_overhead(2000, folder)
    calls = s_stats.calls  # type: ignore[attr-defined]
    print(f"1. Judge throughput: {args.answers} distinct answers, SmolLM2-135M-Instruct on a loopback server, "
          f"replies <= {args.max_tokens} tokens, 2 attempts")  # fmt: skip
    print(f"   one request at a time       {serial:7.1f} s  {calls} calls  {args.answers / serial:6.2f} answers/s")
    print(
        f"   {args.concurrency} requests in flight        {concurrent:7.1f} s  {c_stats.calls} calls  "  # type: ignore[attr-defined]
        f"{args.answers / concurrent:6.2f} answers/s  (server batches: mean size {sum(batches) / max(len(batches), 1):.1f})"
    )
    print(f"   ratio  concurrent / serial throughput:   {serial / concurrent:6.2f}x")
    print("\n2. Rerun over the same answers (all from the cache)")
    print(
        f"   first run {concurrent:7.2f} s   rerun {rerun * 1e3:8.1f} ms  ({r_stats.cached} cached, {r_stats.calls} calls)"
    )  # type: ignore[attr-defined]
    print(f"   ratio  first run / rerun:                {concurrent / rerun:8.0f}x")
    print("\n3. Our cost per answer with an instant in-process judge (2,000 answers, two steps each)")
    print(f"   judge, parse and cache write  {judge_us * 1e6:8.1f} us/answer")
    print(f"   cache read (rerun)            {hit_us * 1e6:8.1f} us/answer")
    print(f"   ratio  one SmolLM2 answer (serial) / our cost per answer: {serial / args.answers / judge_us:8.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
