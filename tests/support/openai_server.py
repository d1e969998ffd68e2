"""OpenAI-compatible chat servers on loopback for the judge tests.

:class:`ModelServer` is a real server serving a real model: ``POST /v1/chat/completions`` and
``GET /v1/models`` (the subset of the OpenAI API that vLLM and the judge use) in front of a transformers
causal LM (the embedded SmolLM2-135M-Instruct in the tests), on ``127.0.0.1`` with the standard library's
threaded HTTP server. Like vLLM it batches requests that arrive together: a scheduler thread collects
up to ``max_batch`` waiting requests (waiting at most ``batch_wait`` seconds for more) and runs one
left-padded ``generate`` for them, so concurrent clients get more throughput than one request at a time.
Honest limits: greedy decoding only (``temperature`` must be 0), no streaming, and ``response_format`` is
accepted but not enforced (no constrained decoding: the model may still reply with anything).

:class:`ScriptedServer` is *not* a model server: it answers each request with the next scripted action
(an HTTP status, a delay, a body that is not JSON, a fixed reply) and exists only to test the failure paths
(timeouts, 500s, rate limits, garbage).
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_MAX_TOKENS = 64


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), headers)

    def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        self._json(status, {"error": {"message": message, "type": kind, "code": status}})

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"null")

    def do_GET(self) -> None:
        self.server.app.get(self)

    def do_POST(self) -> None:
        self.server.app.post(self)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    app: Any


@dataclass
class _Request:
    messages: list[dict[str, str]]
    max_tokens: int
    done: threading.Event = field(default_factory=threading.Event)
    result: tuple[str, str, int, int] | None = None
    error: str | None = None


class ModelServer:
    """A real OpenAI-compatible chat server for a local transformers model (see the module docstring)."""

    def __init__(
        self, model_path: Path | str, *, model_name: str = "smollm2", api_key: str | None = None,
        max_batch: int = 8, batch_wait: float = 0.02,
    ) -> None:  # fmt: skip
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.model_name = model_name
        self.api_key = api_key
        self.max_batch = max_batch
        self.batch_wait = batch_wait
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32).eval()
        self.eos = self.tokenizer.eos_token_id
        self.requests = 0
        self.received: list[dict[str, Any]] = []  # the bodies of the completion requests, in arrival order
        self.batches: list[int] = []
        self._count_lock = threading.Lock()
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._httpd: _Server | None = None
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ HTTP
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def _authorised(self, handler: _Handler) -> bool:
        if self.api_key is None:
            return True
        if handler.headers.get("Authorization") == f"Bearer {self.api_key}":
            return True
        handler._error(401, "Incorrect API key provided.", "authentication_error")
        return False

    def get(self, handler: _Handler) -> None:
        if not self._authorised(handler):
            return
        if handler.path.rstrip("/") != "/v1/models":
            handler._error(404, f"no route {handler.path}")
            return
        handler._json(
            200, {"object": "list", "data": [{"id": self.model_name, "object": "model", "owned_by": "tests"}]}
        )

    def post(self, handler: _Handler) -> None:
        if not self._authorised(handler):
            return
        if handler.path.rstrip("/") != "/v1/chat/completions":
            handler._error(404, f"no route {handler.path}")
            return
        try:
            body = handler._body()
        except json.JSONDecodeError:
            handler._error(400, "the body is not JSON")
            return
        problem = self._check(body)
        if problem:
            status, message = problem
            handler._error(status, message)
            return
        limit = body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
        request = _Request(messages=body["messages"], max_tokens=int(limit))
        with self._count_lock:
            self.requests += 1
            self.received.append(body)
        self._queue.put(request)
        request.done.wait()
        if request.error is not None:
            handler._error(500, request.error, "server_error")
            return
        assert request.result is not None
        text, finish, prompt_tokens, completion_tokens = request.result
        handler._json(
            200,
            {
                "id": f"chatcmpl-{uuid.uuid4().hex}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model_name,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _check(self, body: Any) -> tuple[int, str] | None:
        if not isinstance(body, dict):
            return 400, "the body must be a JSON object"
        if body.get("model") != self.model_name:
            return 404, f"The model `{body.get('model')}` does not exist."
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, "messages must be a non-empty list"
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
                return 400, "each message needs a role of system, user or assistant"
            if not isinstance(message.get("content"), str):
                return 400, "only text content is supported"
        if body.get("stream"):
            return 400, "streaming is not supported by this server"
        if float(body.get("temperature") or 0) != 0:
            return 400, "this server decodes greedily only (temperature 0)"
        limit = body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
        if not isinstance(limit, int) or limit < 1:
            return 400, "max_tokens must be a positive integer"
        return None

    # ------------------------------------------------------------------ batching and generation
    def _schedule(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.batch_wait
            while len(batch) < self.max_batch:
                remaining = deadline - time.monotonic()
                try:
                    item = self._queue.get(timeout=max(remaining, 0)) if remaining > 0 else self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)
                    break
                batch.append(item)
            self.batches.append(len(batch))
            try:
                self._generate(batch)
            except Exception as error:  # report to every waiting client, keep serving
                for request in batch:
                    request.error = f"generation failed: {error}"
            for request in batch:
                request.done.set()

    def _generate(self, batch: list[_Request]) -> None:
        torch = self.torch
        prompts = [
            self.tokenizer.apply_chat_template(r.messages, add_generation_prompt=True, tokenize=False) for r in batch
        ]
        inputs = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        longest = max(r.max_tokens for r in batch)
        with torch.no_grad():
            output = self.model.generate(
                **inputs, max_new_tokens=longest, do_sample=False, temperature=None, top_p=None, top_k=None,
                pad_token_id=self.tokenizer.pad_token_id,
            )  # fmt: skip
        width = inputs["input_ids"].shape[1]
        for row, request in enumerate(batch):
            new = output[row, width:].tolist()[: request.max_tokens]
            finish = "length"
            if self.eos in new:
                new = new[: new.index(self.eos)]
                finish = "stop"
            text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
            prompt_tokens = int(inputs["attention_mask"][row].sum())
            request.result = (text, finish, prompt_tokens, len(new))

    # ------------------------------------------------------------------ life cycle
    def start(self) -> ModelServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.app = self
        self._threads = [
            threading.Thread(target=self._httpd.serve_forever, daemon=True),
            threading.Thread(target=self._schedule, daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        self._queue.put(None)
        for thread in self._threads:
            thread.join(timeout=30)


# ---------------------------------------------------------------------- failure paths only
@dataclass(frozen=True)
class Action:
    """What :class:`ScriptedServer` does with one request."""

    status: int = 200
    content: str | None = None  # a chat completion with this reply (status 200)
    body: str | None = None  # this raw body instead (e.g. not JSON)
    delay: float = 0.0  # seconds to wait before answering (client timeouts)
    headers: tuple[tuple[str, str], ...] = ()
    finish_reason: str = "stop"


def reply(content: str, **kwargs: Any) -> Action:
    return Action(content=content, **kwargs)


def status(code: int, **kwargs: Any) -> Action:
    return Action(status=code, body=json.dumps({"error": {"message": f"scripted {code}", "code": code}}), **kwargs)


class ScriptedServer:
    """Answers requests with scripted actions in order (the last one repeats); records what it received."""

    def __init__(self, actions: list[Action], *, model_name: str = "scripted") -> None:
        if not actions:
            raise ValueError("give at least one action")
        self.actions = list(actions)
        self.model_name = model_name
        self.received: list[dict[str, Any]] = []
        self.times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd: _Server | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def get(self, handler: _Handler) -> None:
        handler._json(200, {"object": "list", "data": [{"id": self.model_name, "object": "model"}]})

    def post(self, handler: _Handler) -> None:
        body = handler._body()
        with self._lock:
            index = len(self.received)
            self.received.append(body)
            self.times.append(time.monotonic())
            action = self.actions[min(index, len(self.actions) - 1)]
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._answer(handler, action, index)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, handler: _Handler, action: Action, index: int) -> None:
        if action.delay:
            time.sleep(action.delay)
        headers = dict(action.headers)
        if action.body is not None:
            with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                handler._send(action.status, action.body.encode(), headers)
            return
        payload = {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": action.content},
                    "finish_reason": action.finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
        with suppress(BrokenPipeError, ConnectionResetError):
            handler._json(action.status, payload, headers)

    def start(self) -> ScriptedServer:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.app = self
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


@contextmanager
def running(server: Any) -> Iterator[Any]:
    """Start ``server``, yield it, stop it."""
    server.start()
    try:
        yield server
    finally:
        server.stop()


# ---------------------------------------------------------------------- completions and images (scale tests)
# Additions for tests/scale: the classes above are unchanged.
class _CountsInFlight:
    """Mixin for :class:`ModelServer` subclasses: ``in_flight`` / ``max_in_flight`` count the requests handled at
    once (how concurrent the client was); wrap ``post`` in ``with self._flight():``."""

    in_flight = 0
    max_in_flight = 0
    _count_lock: threading.Lock

    @contextmanager
    def _flight(self) -> Iterator[None]:
        with self._count_lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._count_lock:
                self.in_flight -= 1


@dataclass
class _CompletionRequest(_Request):
    """One prompt of ``POST /v1/completions``: generate from its token ids, or (``score``) rate every token."""

    prompt_ids: list[int] = field(default_factory=list)
    score: bool = False
    stop: list[str] = field(default_factory=list)
    logprobs: dict[str, list[Any]] | None = None


class CompletionsModelServer(_CountsInFlight, ModelServer):
    """:class:`ModelServer` plus ``POST /v1/completions``, the legacy OpenAI completions API that vLLM and SGLang
    also serve: prompts as text or token ids (one or a batch), greedy generation with ``stop`` strings, and with
    ``echo`` + ``logprobs`` the log-probability of every prompt token (token 0 gets ``null``) followed by one
    generated token, which is what lm-eval's ``local-completions`` reads for log-likelihood tasks.

    Each completion is computed alone (no padding), so its text and numbers never depend on what else arrived;
    pass ``max_batch=1`` to get the same for chat requests."""

    def post(self, handler: _Handler) -> None:
        with self._flight():
            if handler.path.rstrip("/") == "/v1/completions":
                self._post_completion(handler)
            else:
                super().post(handler)

    def _post_completion(self, handler: _Handler) -> None:
        if not self._authorised(handler):
            return
        try:
            body = handler._body()
        except json.JSONDecodeError:
            handler._error(400, "the body is not JSON")
            return
        problem = self._check_completion(body)
        if problem:
            handler._error(*problem)
            return
        prompts = self._prompts(body["prompt"])
        score = bool(body.get("echo")) and body.get("logprobs") is not None
        stop = body.get("stop") or []
        requests = [
            _CompletionRequest(
                messages=[], max_tokens=int(body.get("max_tokens", DEFAULT_MAX_TOKENS)), prompt_ids=ids, score=score,
                stop=[stop] if isinstance(stop, str) else list(stop),
            )
            for ids in prompts
        ]  # fmt: skip
        with self._count_lock:
            self.requests += 1
            self.received.append(body)
        for request in requests:
            self._queue.put(request)
        for request in requests:
            request.done.wait()
        failed = next((r.error for r in requests if r.error is not None), None)
        if failed is not None:
            handler._error(500, failed, "server_error")
            return
        choices = []
        for index, request in enumerate(requests):
            assert request.result is not None
            text, finish, _, _ = request.result
            choices.append({"index": index, "text": text, "logprobs": request.logprobs, "finish_reason": finish})
        prompt_tokens = sum(len(r.prompt_ids) for r in requests)
        completion_tokens = sum(r.result[3] for r in requests if r.result)
        handler._json(
            200,
            {
                "id": f"cmpl-{uuid.uuid4().hex}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": self.model_name,
                "choices": choices,
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _check_completion(self, body: Any) -> tuple[int, str] | None:
        if not isinstance(body, dict):
            return 400, "the body must be a JSON object"
        if body.get("model") != self.model_name:
            return 404, f"The model `{body.get('model')}` does not exist."
        prompt = body.get("prompt")
        if not prompt or not isinstance(prompt, (str, list)):
            return 400, "prompt must be a string, a list of token ids, or a list of either"
        if body.get("stream"):
            return 400, "streaming is not supported by this server"
        if float(body.get("temperature") or 0) != 0:
            return 400, "this server decodes greedily only (temperature 0)"
        limit = body.get("max_tokens", DEFAULT_MAX_TOKENS)
        if not isinstance(limit, int) or limit < 0:
            return 400, "max_tokens must be a non-negative integer"
        if body.get("echo") and body.get("logprobs") is not None and limit > 1:
            return 400, "with echo and logprobs this server scores the prompt and adds at most one token"
        if body.get("logprobs") is not None and not body.get("echo"):
            return 400, "logprobs are only returned with echo (prompt scoring)"
        return None

    def _prompts(self, prompt: str | list) -> list[list[int]]:
        """Token ids of each prompt: a string, a list of ids, or a list of strings or id lists."""
        if isinstance(prompt, str) or (prompt and isinstance(prompt[0], int)):
            prompt = [prompt]
        return [
            item if isinstance(item, list) else self.tokenizer(item, add_special_tokens=False)["input_ids"]
            for item in prompt
        ]

    def _generate(self, batch: list[_Request]) -> None:
        chats = [r for r in batch if not isinstance(r, _CompletionRequest)]
        if chats:
            super()._generate(chats)
        for request in batch:
            if isinstance(request, _CompletionRequest):
                (self._score if request.score else self._complete)(request)

    def _complete(self, request: _CompletionRequest) -> None:
        torch = self.torch
        ids = torch.tensor([request.prompt_ids])
        with torch.no_grad():
            output = self.model.generate(
                input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=max(request.max_tokens, 1),
                do_sample=False, temperature=None, top_p=None, top_k=None, pad_token_id=self.tokenizer.pad_token_id,
            )  # fmt: skip
        new = output[0, ids.shape[1] :].tolist()[: request.max_tokens]
        finish = "length"
        if self.eos in new:
            new, finish = new[: new.index(self.eos)], "stop"
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        cut = min((text.index(s) for s in request.stop if s and s in text), default=None)
        if cut is not None:
            text, finish = text[:cut], "stop"
        request.result = (text, finish, len(request.prompt_ids), len(new))

    def _score(self, request: _CompletionRequest) -> None:
        torch = self.torch
        ids = request.prompt_ids
        with torch.no_grad():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0].float()
        logp = torch.log_softmax(logits, dim=-1)
        best = logp.argmax(dim=-1).tolist()
        tokens = [self.tokenizer.decode([i]) for i in ids]
        token_logprobs: list[float | None] = [None] + [float(logp[i - 1, ids[i]]) for i in range(1, len(ids))]
        top: list[dict[str, float] | None] = [None] + [
            {self.tokenizer.decode([best[i - 1]]): float(logp[i - 1, best[i - 1]])} for i in range(1, len(ids))
        ]
        text = self.tokenizer.decode(ids)
        added = 0
        if request.max_tokens == 1:  # the greedy next token, as an echoing server appends it
            nxt = best[-1]
            tokens.append(self.tokenizer.decode([nxt]))
            token_logprobs.append(float(logp[-1, nxt]))
            top.append({tokens[-1]: token_logprobs[-1]})
            text += tokens[-1]
            added = 1
        request.logprobs = {"tokens": tokens, "token_logprobs": token_logprobs, "top_logprobs": top}
        request.result = (text, "length", len(ids), added)


class VisionModelServer(_CountsInFlight, ModelServer):
    """:class:`ModelServer` for a LLaVA-style model (the tiny random VLM of ``tiny_vlm.py`` in the tests): chat
    messages whose content may be a list of ``{"type": "text"}`` and ``{"type": "image_url"}`` parts, images sent
    inline as base64 ``data:`` URLs (what lmms-eval's ``openai`` backend and OpenAI's API use). Greedy only."""

    def __init__(
        self, model_path: Path | str, *, model_name: str = "tiny-vlm", api_key: str | None = None,
        max_batch: int = 1, batch_wait: float = 0.0,
    ) -> None:  # fmt: skip
        import torch
        from transformers import AutoProcessor, LlavaForConditionalGeneration

        self.torch = torch
        self.model_name = model_name
        self.api_key = api_key
        self.max_batch = max_batch
        self.batch_wait = batch_wait
        self.processor = AutoProcessor.from_pretrained(model_path)
        self.tokenizer = self.processor.tokenizer
        self.model = LlavaForConditionalGeneration.from_pretrained(model_path, dtype=torch.float32).eval()
        self.eos = self.tokenizer.eos_token_id
        self.requests = 0
        self.received: list[dict[str, Any]] = []
        self.batches: list[int] = []
        self.images = 0  # images decoded from requests
        self.replies: list[str] = []  # every reply sent, in order
        self._count_lock = threading.Lock()
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._httpd: _Server | None = None
        self._threads: list[threading.Thread] = []

    def post(self, handler: _Handler) -> None:
        with self._flight():
            super().post(handler)

    def _check(self, body: Any) -> tuple[int, str] | None:
        if not isinstance(body, dict):
            return 400, "the body must be a JSON object"
        if body.get("model") != self.model_name:
            return 404, f"The model `{body.get('model')}` does not exist."
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, "messages must be a non-empty list"
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                continue
            if not isinstance(content, list):
                return 400, "content must be a string or a list of parts"
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "image_url":
                    url = (part.get("image_url") or {}).get("url", "")
                    if not url.startswith("data:image/") or ";base64," not in url:
                        return 400, "images must be inline base64 data: URLs"
                elif kind != "text":
                    return 400, f"unsupported content part {kind!r}"
        if float(body.get("temperature") or 0) != 0:
            return 400, "this server decodes greedily only (temperature 0)"
        return None

    def _generate(self, batch: list[_Request]) -> None:
        import base64
        import io

        from PIL import Image

        torch = self.torch
        for request in batch:
            conversation, images = [], []
            for message in request.messages:
                content = message["content"]
                if isinstance(content, str):
                    content = [{"type": "text", "text": content}]
                parts = []
                for part in content:
                    if part["type"] == "text":
                        parts.append({"type": "text", "text": part["text"]})
                    else:
                        data = part["image_url"]["url"].split(";base64,", 1)[1]
                        images.append(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
                        parts.append({"type": "image"})
                conversation.append({"role": message["role"], "content": parts})
            with self._count_lock:
                self.images += len(images)
            text = self.processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
            inputs = self.processor(images=images or None, text=text, return_tensors="pt")
            with torch.no_grad():
                output = self.model.generate(
                    **inputs, max_new_tokens=request.max_tokens, do_sample=False, temperature=None, top_p=None,
                    top_k=None, pad_token_id=self.tokenizer.pad_token_id,
                )  # fmt: skip
            width = inputs["input_ids"].shape[1]
            new = output[0, width:].tolist()
            finish = "length"
            if self.eos in new:
                new, finish = new[: new.index(self.eos)], "stop"
            reply = self.tokenizer.decode(new, skip_special_tokens=True).strip()
            request.result = (reply, finish, width, len(new))
            with self._count_lock:
                self.replies.append(reply)
