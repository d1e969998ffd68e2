"""Served models: our tasks through the harnesses' OpenAI-compatible backends against real servers on loopback
(slow: real harness runs and real models).

* lm-eval ``local-chat-completions`` and ``local-completions`` against SmolLM2-135M-Instruct behind
  :class:`openai_server.OpenAIServer` with a :class:`openai_server.TextModel` (chat, completions and prompt log-probabilities, as vLLM serves
  them), several requests in flight. Both routes send the same chat-templated prompt, so the generation tasks
  must give the same numbers. The ``_mc`` tasks need log-likelihoods: ``local-chat-completions`` cannot give them
  (lm-eval raises NotImplementedError), ``local-completions`` can when the server returns ``echo`` + ``logprobs``.
* lmms-eval's ``openai`` backend with FairLens against the tiny random VLM behind
  :class:`openai_server.OpenAIServer` with a :class:`openai_server.VisionModel` (images sent inline as base64, as to OpenAI's API).

Each server computes one request at a time (``max_batch=1``), so its replies do not depend on arrival order.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import DEV_BIN, run
from models import smollm2
from openai_server import OpenAIServer, TextModel, VisionModel, running

from fairlens_tasks import scoring
from tests.scale.runs import results_of, samples_by_task, scale_env

pytestmark = pytest.mark.harness

LITE = [
    "fact_or_fair_objective",
    "fact_or_fair_subjective_base_lite",
    "fact_or_fair_subjective_representativeness_lite",
    "fact_or_fair_subjective_attribution_lite",
    "fact_or_fair_subjective_ingroup_lite",
]


@pytest.fixture
def one_thread() -> Iterator[None]:
    """The servers run a model in this process: one thread (the harness runs beside it on a 2-core machine)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _lm_eval(tmp: Path, name: str, model: str, model_args: str, tasks: str) -> Path:
    out = tmp / name
    run(
        [str(DEV_BIN / "lm_eval"), "--model", model, "--model_args", model_args, "--tasks", tasks, "--limit", "1",
         "--apply_chat_template", "--log_samples", "--output_path", str(out)],
        env=scale_env(tmp), cwd=tmp,
    )  # fmt: skip
    return out


def test_fact_or_fair_lite_through_chat_and_completions_endpoints(tmp_path: Path, one_thread: None) -> None:
    model = smollm2()
    with running(OpenAIServer(model=TextModel(model, max_batch=1))) as server:
        url = server.base_url
        chat = _lm_eval(
            tmp_path, "chat", "local-chat-completions",
            f"model=smollm2,base_url={url}/chat/completions,num_concurrent=4,max_retries=1", "fact_or_fair_lite",
        )  # fmt: skip
        chat_requests, chat_concurrency = server.requests, server.max_in_flight
        server.max_in_flight = 0
        completions = _lm_eval(
            tmp_path, "completions", "local-completions",
            f"model=smollm2,base_url={url}/completions,num_concurrent=4,max_retries=1,"
            f"tokenizer_backend=huggingface,tokenizer={model}",
            "fact_or_fair_lite,fact_or_fair_objective_mc",
        )  # fmt: skip
        received = server.received[chat_requests:]
        completions_concurrency = server.max_in_flight
    # one HTTP request per document, several in flight
    assert chat_requests == len(LITE) and chat_concurrency > 1
    scored = [body for body in received if body.get("echo")]
    generated = [body for body in received if not body.get("echo")]
    assert len(generated) == len(LITE) and completions_concurrency > 1
    mc = samples_by_task(completions)["fact_or_fair_objective_mc"]
    assert len(scored) == sum(len(sample["arguments"]) for sample in mc) > 0  # one prompt rating per option
    assert all(body["logprobs"] == 1 and body["max_tokens"] == 1 for body in scored)
    # every reply reached the samples
    samples = samples_by_task(chat)
    for task in LITE:
        assert len(samples[task]) == 1 and all(isinstance(s["filtered_resps"][0], str) for s in samples[task])
    # the same prompts through both routes: the same numbers
    a, b = results_of(chat)["results"], results_of(completions)["results"]
    for task in [*LITE, "fact_or_fair_lite"]:
        assert a[task].keys() == b[task].keys()
        for key, value in a[task].items():
            assert value == b[task][key] or (value != value and b[task][key] != b[task][key]), (task, key)
    objective_mc = b["fact_or_fair_objective_mc"]
    assert objective_mc["unparsed_rate,none"] == 0.0  # its one document parsed


def test_fairlens_through_lmms_eval_openai_backend(
    tmp_path: Path, tiny_vlm: Path, face_corpus: Path, one_thread: None
) -> None:
    tasks = ["fairlens_hiring", "fairlens_legal", "fairlens_healthcare"]
    with running(OpenAIServer(model=VisionModel(tiny_vlm))) as server:
        out = tmp_path / "out"
        run(
            [str(DEV_BIN / "lmms-eval"), "--model", "openai", "--model_args",
             f"model=tiny-vlm,base_url={server.base_url},num_concurrent=4,max_retries=1,timeout=300",
             "--tasks", "fairlens", "--limit", "3", "--batch_size", "1", "--log_samples", "--output_path", str(out)],
            env=scale_env(tmp_path, FAIRLENS_CORPUS=str(face_corpus), FAIRLENS_SAMPLE_FRACTION="1", OPENAI_API_KEY="-"),
            cwd=tmp_path,
        )  # fmt: skip
    # lmms-eval exits 0 when a task fails: the results file and the samples are the evidence
    results, samples = results_of(out)["results"], samples_by_task(out)
    assert server.requests == server.images == 3 * len(tasks) and server.max_in_flight > 1
    logged = [s["filtered_resps"] for task in tasks for s in samples[task]]
    assert sorted(logged) == sorted(server.replies)
    for task in tasks:
        assert len(samples[task]) == 3 and 0.0 <= results[task]["unparsed_rate,none"] <= 1.0
        assert all(s[scoring.CARRIER]["rule"] for s in samples[task])  # each answer's readable record
