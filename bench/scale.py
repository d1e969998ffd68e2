"""Our share of a run when the model is instant, and the harness with concurrency against one request at a time
(issue 15). Prints times, shares and ratios.

1. **Share at GPU speed.** Whole runs through the real command lines with a model that answers at once, so what is
   left is the harness's time and ours:
   - ``lm_eval --tasks fact_or_fair`` (all 45,798 documents) with ``instant``, an in-process lm-eval model this
     script registers: a valid Fact-or-Fair answer per prompt (an option letter picked by a hash of the prompt), and
     a fixed log-likelihood per option for the ``_mc`` tasks (``--tasks fact_or_fair,fact_or_fair_mc``). It runs
     twice on a temporary document cache (``fact_fair_tasks.document_cache``): first empty, so the run builds and
     stores the documents (a machine's first run), then filled, so it loads them (every later run);
   - ``lmms-eval --tasks fairlens`` over 1,505 synthetic 200x200 UTKFace-named JPEGs (57,190 documents) with
     lmms-eval's own ``dummy`` model answering "Yes".
   Each runs in a child process with a sampling profiler (:class:`Sampler`: a wall-clock timer signal every
   ``--interval`` s, each sample weighted by the wall time since the last): a sample is *ours* when any thread is
   inside one of our packages (the outermost such frame names the entry point the harness called), *model* when
   inside the instant model, else *harness* (start-up, task indexing, request building, the model loop, logging
   samples). Shares are of the sampled time (the child from its first line to exit); wall time is the child's.
2. **Concurrency.** The same loopback :class:`openai_server.OpenAIServer` (each answer after ``--latency`` s, a
   remote API's round trip) and the same documents (``--api-tasks``, default ``fact_or_fair_objective``, 198): the
   released scripts' way (one request at a time, a plain loop over the exported prompts), lm-eval
   ``local-chat-completions`` with ``num_concurrent=1`` and with ``--concurrency``; then lmms-eval's ``openai``
   backend with FairLens (``--fairlens-limit`` documents per domain, images inline) at 1 and ``--concurrency``.
   Ratios compare the requesting phase (first request to last answer, at the server), not start-up.

    .venv/bin/python bench/scale.py                  # ~10 minutes on two shared cores
    .venv/bin/python bench/scale.py --skip-share     # the concurrency part only
    .venv/bin/python bench/scale.py --skip-concurrency --skip-fairlens   # the Fact-or-Fair share, first and later runs
"""

from __future__ import annotations

import argparse
import collections
import gc
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# bench/metrics.py would shadow the `metrics` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "support"))

OURS = ("fairness_evals", "metrics", "fact_fair_tasks", "fairlens_tasks", "iris_tasks")


def our_dirs() -> tuple[str, ...]:
    """Where our packages are imported from in this process (a checkout, a wheel, or PYTHONPATH's copy)."""
    found = []
    for name in OURS:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found += [str(Path(location).resolve()) + os.sep for location in spec.submodule_search_locations]
    return tuple(found)


INSTANT_SERVER = str(REPO / "tests" / "support" / "openai_server.py")
INSTANT_LM = (str(Path(__file__).resolve()), ("generate_until", "loglikelihood", "loglikelihood_rolling"))
BIN = Path(sys.executable).parent


# ----------------------------------------------------------------------------- the child: a profiled harness run
class Sampler:
    """Every ``interval`` s of wall time, which code the process is in (see the module docstring).

    The clock is ``ITIMER_REAL``: its ``SIGALRM`` handler runs in the main thread between two bytecodes, so it sees
    the frame that was running, and each sample is weighted by the wall time since the previous one. A long call
    into C (a regex, ``json.dumps``, Arrow), during which no handler can run, is therefore charged in full to the
    Python frame that made it. (A sampling *thread*, as this bench used before, only gets the GIL when the main
    thread releases it, so it sees the main thread mostly at I/O and hashing calls that release the GIL: it
    under-counted pure-Python work such as parsing by a factor of ten or more.) Other threads are read from
    ``sys._current_frames()`` at each sample; a sample is ours when any thread is in our code.
    """

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.seconds: collections.Counter[str] = collections.Counter()
        self.samples = 0
        self.ours = our_dirs()
        self.harness = tuple(
            str(Path(location).resolve()) + os.sep
            for name in ("lm_eval", "lmms_eval")
            if (spec := importlib.util.find_spec(name)) is not None
            for location in spec.submodule_search_locations or ()
        )
        self.root = os.path.commonpath([os.path.dirname(d.rstrip(os.sep)) for d in self.ours])
        self.main = threading.main_thread().ident
        self.last = 0.0

    def thread_label(self, frame) -> str | None:
        """From the innermost frame outwards, the first frame of ours, the model's or the harness's decides (library
        code is charged to whoever called it); ours is named by the outermost of our frames below the harness."""
        entry = None
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(self.ours):
                entry = frame
            elif name == INSTANT_SERVER or (name == INSTANT_LM[0] and frame.f_code.co_name in INSTANT_LM[1]):
                return "model" if entry is None else None
            elif name.startswith(self.harness):
                break
            frame = frame.f_back
        if entry is None:
            return None
        return f"ours {os.path.relpath(entry.f_code.co_filename, self.root)}:{entry.f_code.co_name}"

    def classify(self, main_frame) -> str:
        # sys._current_frames() holds the runtime's thread-list lock while it makes frame objects; a garbage
        # collection triggered by those allocations that frees a threading.local takes the same lock, and the
        # process hangs (seen in lmms-eval on CPython 3.11). No collection may run inside it.
        collecting = gc.isenabled()
        gc.disable()
        try:
            frames = sys._current_frames()
        finally:
            if collecting:
                gc.enable()
        others = [frame for ident, frame in frames.items() if ident != self.main]
        labels = [self.thread_label(frame) for frame in (main_frame, *others)]
        ours = [label for label in labels if label and label.startswith("ours")]
        return ours[0] if ours else ("model" if "model" in labels else "harness")

    def _sample(self, signum: int, frame) -> None:
        now = time.perf_counter()
        self.seconds[self.classify(frame)] += now - self.last
        self.samples += 1
        self.last = now

    def start(self) -> None:
        self.last = time.perf_counter()
        signal.signal(signal.SIGALRM, self._sample)
        signal.setitimer(signal.ITIMER_REAL, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        self.seconds["harness"] += time.perf_counter() - self.last  # the tail after the last sample


def register_instant_lm() -> None:
    from lm_eval.api.model import LM
    from lm_eval.api.registry import register_model
    from openai_server import fact_or_fair_reply

    @register_model("instant")
    class InstantLM(LM):
        """Answers at once: a valid Fact-or-Fair reply; log-likelihood minus the continuation's length."""

        def __init__(self, **_ignored: object) -> None:  # batch_size, device, ...: nothing to set
            super().__init__()

        def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
            return [fact_or_fair_reply(request.args[0]) for request in requests]

        def loglikelihood(self, requests, disable_tqdm: bool = False) -> list[tuple[float, bool]]:
            return [(-float(len(request.args[1])), False) for request in requests]

        def loglikelihood_rolling(self, requests, disable_tqdm: bool = False) -> list[float]:
            return [-1.0 for _ in requests]


def child(harness: str, interval: float, report: Path, argv: list[str]) -> None:
    sampler = Sampler(interval)
    sampler.start()
    try:
        if harness == "lm-eval":
            register_instant_lm()
            from lm_eval.__main__ import cli_evaluate as main
        else:
            from lmms_eval.cli.dispatch import main
        sys.argv = [harness, *argv]
        main()
    finally:
        sampler.stop()
        report.write_text(json.dumps({"seconds": dict(sampler.seconds), "samples": sampler.samples}))


# ----------------------------------------------------------------------------- the parent
def environment(tmp: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_CACHE=str(tmp / "hf-datasets"),
        CUDA_VISIBLE_DEVICES="", WANDB_MODE="disabled", TOKENIZERS_PARALLELISM="false", PYTHONWARNINGS="ignore",
        OMP_NUM_THREADS="1", **extra,
    )  # fmt: skip
    return env


def profiled(
    harness: str, argv: list[str], tmp: Path, env: dict[str, str], interval: float, out: Path | None = None
) -> tuple[float, dict]:
    report = tmp / f"{harness}-samples.json"
    command = [sys.executable, __file__, "--child", harness, "--interval", str(interval), "--report", str(report)]
    start = time.perf_counter()
    proc = subprocess.run([*command, "--", *argv], env=env, cwd=tmp, capture_output=True, text=True)
    wall = time.perf_counter() - start
    found = [p for p in (out or tmp / "out").rglob("*.json") if "results" in p.name]
    if proc.returncode or not found:
        raise SystemExit(f"{harness} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return wall, json.loads(report.read_text())


def print_share(title: str, wall: float, report: dict) -> None:
    seconds: dict[str, float] = report["seconds"]
    total = sum(seconds.values()) or 1.0
    ours = {k[5:]: v for k, v in seconds.items() if k.startswith("ours ")}
    share = sum(ours.values()) / total
    print(f"\n{title}: wall {wall:.1f} s ({total:.1f} s sampled in the harness process, {report['samples']} samples)")
    print(f"  ours    {100 * share:5.1f}%  ~{share * total:6.1f} s")
    print(f"  model   {100 * seconds.get('model', 0.0) / total:5.1f}%  (instant)")
    print(
        f"  harness {100 * seconds.get('harness', 0.0) / total:5.1f}%  (start-up, indexing, requests, samples, writing)"
    )
    for name, n in sorted(ours.items(), key=lambda kv: -kv[1])[:8]:
        print(f"    {100 * n / total:5.2f}%  {name}")


FIRST, LATER = "first run", "later runs"


def share_fact_or_fair(tmp: Path, interval: float, tasks: str, runs: tuple[str, ...] = (FIRST, LATER)) -> None:
    """The lm-eval run with an empty document cache (``first run``: the documents are built and stored) and then
    with the cache that run filled (``later runs``: they are loaded); the cache is a temporary folder."""
    cache = tmp / "fairness-evals-cache"
    for run in runs:
        out = tmp / f"out-{run.replace(' ', '-')}"
        argv = ["--model", "instant", "--tasks", tasks, "--log_samples", "--output_path", str(out)]
        env = environment(tmp, FAIRNESS_EVALS_CACHE=str(cache))
        if run == LATER and FIRST not in runs:  # fill the cache first, unmeasured
            subprocess.run([sys.executable, "-c", _FILL_CACHE, tasks], env=env, check=True, capture_output=True)
        wall, report = profiled("lm-eval", argv, tmp, env, interval, out)
        documents = sum(1 for p in out.rglob("samples_*.jsonl") for line in p.open() if line.strip())
        where = "built and stored" if run == FIRST else "loaded from the document cache"
        print_share(
            f"lm-eval --tasks {tasks}, instant in-process model, {documents:,} documents logged; {run}: documents "
            f"{where}",
            wall,
            report,
        )


_FILL_CACHE = """
import sys
from lm_eval.tasks import TaskManager, get_task_dict
get_task_dict(sys.argv[1].split(","), TaskManager())
"""


def fairlens_corpus(root: Path, count: int) -> Path:
    spec = importlib.util.spec_from_file_location("bench_fairlens", Path(__file__).with_name("fairlens.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write_faces(root, count)
    return root


def share_fairlens(tmp: Path, interval: float, images: int) -> None:
    corpus = fairlens_corpus(tmp / "faces", images)
    env = environment(tmp, FAIRLENS_CORPUS=str(corpus), FAIRLENS_SAMPLE_FRACTION="1")
    argv = ["--model", "dummy", "--model_args", "response=Yes", "--tasks", "fairlens", "--batch_size", "1",
            "--log_samples", "--output_path", str(tmp / "out")]  # fmt: skip
    wall, report = profiled("lmms-eval", argv, tmp, env, interval)
    documents = sum(1 for p in (tmp / "out").rglob("*_samples_*.jsonl") for _ in p.open())
    print_share(f"lmms-eval --tasks fairlens, dummy model, {images:,} images, {documents:,} documents", wall, report)


# ----------------------------------------------------------------------------- concurrency
def released_loop(url: str, prompts: list[str]) -> float:
    """The released scripts' way: one chat request per prompt, each waiting for the previous answer; seconds."""
    import requests

    start = time.perf_counter()
    with requests.Session() as session:
        for prompt in prompts:
            body = {"model": "instant", "messages": [{"role": "user", "content": prompt}], "temperature": 0}
            response = session.post(f"{url}/chat/completions", json=body, timeout=60)
            response.raise_for_status()
            response.json()["choices"][0]["message"]["content"]
    return time.perf_counter() - start


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode or not [p for p in cwd.rglob("*.json") if "results" in p.name]:
        raise SystemExit(f"{command[0]} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return wall


def timed_widths(
    server: Any,
    tmp: Path,
    name: str,
    widths: tuple[int, ...],
    env: dict[str, str],
    command: Callable[[int, Path], list[str]],
) -> Iterator[tuple[int, float]]:
    """Each concurrency ``n`` of ``widths`` in turn: the harness command ``command(n, out)`` against the reset
    ``server``, in its own new output folder ``out`` (``<name>-<n>`` under ``tmp``); yields ``n`` and the command's
    wall seconds, with the server's counters (requests, busy seconds) then those of this one run."""
    for n in widths:
        out = tmp / f"{name}-{n}"
        out.mkdir()
        server.reset()
        yield n, timed(command(n, out), env, out)


def concurrency(tmp: Path, latency: float, width: int, tasks: str, fairlens_limit: int) -> None:
    from openai_server import OpenAIServer, fact_or_fair_reply, hashed_choice

    env = environment(tmp, OPENAI_API_KEY="-")
    export = subprocess.run(
        [str(BIN / "fairness-evals"), "export", "fact_or_fair"], env=env, capture_output=True, text=True, check=True
    )
    wanted = set(tasks.split(","))
    prompts = [d["prompt"] for d in map(json.loads, export.stdout.splitlines()) if d["task"] in wanted]
    server = OpenAIServer(fact_or_fair_reply, latency=latency).start()
    print(f"\nconcurrency: {len(prompts)} prompts of {tasks}, each answered after {1e3 * latency:.0f} ms;")
    print("  'requesting' = first request to last answer at the server; 'command' = the whole harness command")
    try:
        server.reset()
        wall = released_loop(server.base_url, prompts)
        loop = server.busy_seconds
        print(f"  released scripts' loop, one request at a time:     requesting {loop:6.1f} s, loop {wall:6.1f} s")

        def lm_eval(n: int, out: Path) -> list[str]:
            return [
                str(BIN / "lm_eval"), "--model", "local-chat-completions", "--model_args",
                f"model=instant,base_url={server.base_url}/chat/completions,num_concurrent={n},max_retries=1",
                "--tasks", tasks, "--apply_chat_template", "--output_path", str(out),
            ]  # fmt: skip

        busy = {}
        for n, wall in timed_widths(server, tmp, "lm-eval", (1, width), env, lm_eval):
            busy[n] = server.busy_seconds
            assert server.requests == len(prompts), (server.requests, len(prompts))
            print(
                f"  lm-eval local-chat-completions num_concurrent={n:<3} requesting {busy[n]:6.1f} s, command {wall:6.1f} s"
            )
        print(f"  ratio released loop / lm-eval num_concurrent={width} (requesting): {loop / busy[width]:.1f}x")
        print(f"  ratio lm-eval num_concurrent=1 / num_concurrent={width} (requesting): {busy[1] / busy[width]:.1f}x")

        corpus = fairlens_corpus(tmp / "faces", 30)
        env_fl = {**env, "FAIRLENS_CORPUS": str(corpus), "FAIRLENS_SAMPLE_FRACTION": "1"}
        server.reply = lambda text: hashed_choice(text, ["Yes", "No", "Cannot tell"])

        def lmms_eval(n: int, out: Path) -> list[str]:
            return [
                str(BIN / "lmms-eval"), "--model", "openai", "--model_args",
                f"model=instant,base_url={server.base_url},num_concurrent={n},max_retries=1",
                "--tasks", "fairlens", "--limit", str(fairlens_limit), "--batch_size", "1", "--output_path", str(out),
            ]  # fmt: skip

        fl = {}
        for n, wall in timed_widths(server, tmp, "lmms-eval", (1, width), env_fl, lmms_eval):
            fl[n] = server.busy_seconds
            print(
                f"  lmms-eval openai, FairLens ({server.requests} requests, images inline) num_concurrent={n:<3} "
                f"requesting {fl[n]:6.1f} s, command {wall:6.1f} s"
            )
        print(f"  ratio lmms-eval num_concurrent=1 / num_concurrent={width} (requesting): {fl[1] / fl[width]:.1f}x")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=["lm-eval", "lmms-eval"], help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--interval", type=float, default=0.002, help="sampling interval, s (default 0.002)")
    parser.add_argument("--images", type=int, default=1505, help="FairLens corpus size (default 1505)")
    parser.add_argument("--tasks", default="fact_or_fair", help="the lm-eval run's tasks (default fact_or_fair)")
    parser.add_argument("--latency", type=float, default=0.05, help="the loopback server's answer time, s")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight (default 16)")
    parser.add_argument(
        "--api-tasks", default="fact_or_fair_objective", help="Fact-or-Fair tasks of the concurrency part"
    )
    parser.add_argument("--fairlens-limit", type=int, default=50, help="documents per FairLens domain (default 50)")
    parser.add_argument(
        "--document-cache", choices=["both", "first", "later"], default="both",
        help="Fact-or-Fair share with an empty document cache (first run), a filled one (later runs), or both",
    )  # fmt: skip
    parser.add_argument("--skip-fairlens", action="store_true", help="the Fact-or-Fair share only")
    parser.add_argument("--skip-share", action="store_true")
    parser.add_argument("--skip-concurrency", action="store_true")
    args, rest = parser.parse_known_args()
    runs = {"both": (FIRST, LATER), "first": (FIRST,), "later": (LATER,)}[args.document_cache]
    if args.child:
        child(args.child, args.interval, args.report, rest[1:] if rest[:1] == ["--"] else rest)
        return
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s); one thread per process (OMP_NUM_THREADS=1)")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp_name:
        tmp = Path(tmp_name)
        if not args.skip_share:
            shares = [("fact-or-fair", lambda t: share_fact_or_fair(t, args.interval, args.tasks, runs))]
            if not args.skip_fairlens:
                shares.append(("fairlens", lambda t: share_fairlens(t, args.interval, args.images)))
            for name, run in shares:
                (tmp / name).mkdir()
                run(tmp / name)
        if not args.skip_concurrency:
            (tmp / "concurrency").mkdir()
            concurrency(tmp / "concurrency", args.latency, args.concurrency, args.api_tasks, args.fairlens_limit)


if __name__ == "__main__":
    main()
