"""One OpenAI-compatible server on loopback for the tests and ``bench/``: :class:`OpenAIServer`.

It serves ``GET /v1/models``, ``POST /v1/chat/completions`` and ``POST /v1/completions`` (the subset of the OpenAI
API that vLLM, the harnesses' OpenAI backends and our judge use) on ``127.0.0.1`` with the standard library's
threaded HTTP server. What answers is one of:

* ``reply`` (the default): a fixed string or a function of the prompt's text (:func:`prompt_text`), at once. It is
  not a model: never read a score from it. With ``echo`` + ``logprobs`` a completion rates every prompt token with a
  fixed function of the token ids, so log-likelihood tasks get a deterministic answer;
* ``model=TextModel(path)``: a real transformers causal LM (the embedded SmolLM2-135M-Instruct in the tests), greedy.
  Like vLLM it batches chat requests that arrive together (up to ``max_batch``, waiting at most ``batch_wait``
  seconds for more) in one left-padded ``generate``; completions (text or token-id prompts, ``stop`` strings, and
  with ``echo`` + ``logprobs`` every prompt token's log-probability) are computed one prompt at a time, so their
  text and numbers never depend on what else arrived. ``model=VisionModel(path)``: a LLaVA-style model, chat only,
  images as inline base64 ``data:`` URLs (what lmms-eval's ``openai`` backend sends). Honest limits: greedy decoding
  only (``temperature`` must be 0), no streaming, ``response_format`` accepted but not enforced;
* ``script=[Action, ...]``: request *k* gets action *k* (the last repeats): an HTTP status, a raw body, a delay, headers,
  a fixed reply with its finish reason. For the failure paths: 500s, rate limits, timeouts, bodies that are not JSON.

Behaviours any server can add: ``model_name`` (a request for another model gets 404); ``api_key`` (a request without
``Authorization: Bearer <api_key>`` gets 401); ``latency`` (seconds before each answer: a remote API's round trip);
``hold_after=k`` (answer k requests, then hold every later one unanswered until :meth:`OpenAIServer.release`, so that a
test can kill the client at a known point); ``refuse="word"`` (a request whose prompt contains the word is refused,
as a hosted judge's content filter refuses: HTTP 400 *content policy violation*, or with
``refusal="finish_reason"`` a 200 whose choice has ``finish_reason: content_filter`` and no content); ``echo_headers``
(every error body quotes the request's headers, ``Authorization`` included, as some gateways do).

It records ``requests`` (completion requests past validation), ``received`` (their bodies), ``paths`` (each request's
path with its query), ``times``, ``prompts`` (:func:`prompt_key` -> times asked), ``answered``, ``answered_prompts``,
``replies`` (every chat reply sent), ``images`` (image parts received), ``in_flight`` / ``max_in_flight``, and the
time of the first request and of the last answer (:attr:`OpenAIServer.busy_seconds`).
"""

from __future__ import annotations

import hashlib
import json
import queue
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_MAX_TOKENS = 64
CHAT, COMPLETIONS, MODELS = "/v1/chat/completions", "/v1/completions", "/v1/models"
CONTENT_POLICY = "content policy violation: the prompt was flagged by the content filter"


# ---------------------------------------------------------------------- scripted actions
@dataclass(frozen=True)
class Action:
    """What a scripted server does with one request: a chat completion with ``content`` (status 200), or this raw
    ``body`` with ``status``, or (neither) an OpenAI error body with ``status``; after ``delay`` seconds."""

    status: int = 200
    content: str | None = None
    body: str | None = None
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    finish_reason: str = "stop"


def reply(content: str, **kwargs: Any) -> Action:
    return Action(content=content, **kwargs)


def status(code: int, **kwargs: Any) -> Action:
    """An OpenAI error response with status ``code`` (message ``scripted <code>``)."""
    return Action(status=code, **kwargs)


# ---------------------------------------------------------------------- prompts
def prompt_text(body: dict[str, Any]) -> str:
    """The text a reply function (and ``refuse``) sees: the messages' text parts, or the completion prompt as given."""
    if "messages" in body:
        texts = []
        for message in body["messages"]:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [
                    part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"
                ]
        return "\n".join(texts)
    prompt = body.get("prompt")
    return prompt if isinstance(prompt, str) else json.dumps(prompt)


def prompt_key(body: dict[str, Any]) -> str:
    """One request's identity: a hash of its messages or prompt (images included)."""
    payload = body.get("messages", body.get("prompt"))
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def hashed_choice(text: str, choices: Sequence[str]) -> str:
    """One of ``choices``, picked by a hash of ``text``: varied across prompts, the same for the same prompt."""
    return choices[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(choices)]


def fact_or_fair_reply(text: str) -> str:
    """A valid Fact-or-Fair answer (``{"answer": "B"}``) naming one of the prompt's option letters."""
    letters = re.findall(r"\b([A-H])\. ", text) or ["A"]
    return json.dumps({"answer": hashed_choice(text, sorted(set(letters)))})


def keyword_judge(keyword: str) -> Callable[[str], str]:
    """A reply function that answers our bias judge's two prompts (:mod:`fairlens_tasks.judging.prompts`) from the
    text alone: the opinions of an answer are its sentences, and an opinion is biased when it contains ``keyword``.
    So every answer's score is known from its text."""

    def judge(prompt: str) -> str:
        if "list the OPINIONS" in prompt:
            text = prompt.rsplit("<<<\n", 1)[1].split("\n>>>", 1)[0]
            return json.dumps({"opinions": [s.strip() + "." for s in text.split(".") if s.strip()]})
        found = re.search(r"Opinions:\n(.*)\nJSON:", prompt, re.S)
        opinions = json.loads(found.group(1)) if found else []
        verdicts = [{"verdict": "yes" if keyword in o else "no", "reason": f"mentions {keyword}"} for o in opinions]
        return json.dumps({"verdicts": verdicts})

    return judge


def _token_logprob(token: int, position: int) -> float:
    return -0.25 - ((token * 2654435761 + position * 40503) % 1000) / 250.0


def _image_parts(body: dict[str, Any]) -> int:
    return sum(
        1
        for message in body.get("messages", [])
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )


def _token_limit(body: dict[str, Any]) -> Any:
    return body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS


# ---------------------------------------------------------------------- HTTP plumbing
class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body leave at once: without TCP_NODELAY the body's small second write waits for the client's
    # delayed ACK (about 40 ms on Linux) whenever a client reuses its connection, as a plain loop does
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        with suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

    def json(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self.send(code, json.dumps(payload).encode(), headers)

    def error(self, code: int, message: str, kind: str = "invalid_request_error", error_code: Any = None) -> None:
        if self.server.app.echo_headers:  # Authorization first, as a gateway quoting what it refused would
            shown = sorted(self.headers.items(), key=lambda item: item[0].lower() != "authorization")
            message += " (request headers: " + ", ".join(f"{k}: {v}" for k, v in shown) + ")"
        self.json(
            code, {"error": {"message": message, "type": kind, "code": code if error_code is None else error_code}}
        )

    def body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw or b"null")

    def do_GET(self) -> None:
        self.server.app.get(self)

    def do_POST(self) -> None:
        self.server.app.post(self)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    app: OpenAIServer


# ---------------------------------------------------------------------- the server
#: Seconds between the serving loop's checks for :meth:`OpenAIServer.stop` (requests are served at once regardless).
SHUTDOWN_POLL = 0.05


class OpenAIServer:
    """See the module docstring."""

    def __init__(
        self,
        reply: str | Callable[[str], str] = "A",
        *,
        model: TextModel | None = None,
        script: Sequence[Action] | None = None,
        model_name: str | None = None,
        api_key: str | None = None,
        latency: float = 0.0,
        hold_after: int | None = None,
        refuse: str | None = None,
        refusal: str = "status",
        echo_headers: bool = False,
    ) -> None:
        if script is not None and not script:
            raise ValueError("give at least one action")
        if refusal not in ("status", "finish_reason"):
            raise ValueError(f"refusal must be 'status' or 'finish_reason', not {refusal!r}")
        self.reply = reply if callable(reply) else (lambda _text, fixed=reply: fixed)
        self.model = model
        self.script = list(script) if script is not None else None
        default_name = "scripted" if script is not None else model.name if model is not None else "instant"
        self.model_name = model_name or default_name
        self.api_key = api_key
        self.latency = latency
        self.hold_after = hold_after
        self.refuse = refuse
        self.refusal = refusal
        self.echo_headers = echo_headers
        self.holding = threading.Event()  # set when a request is held after ``hold_after`` answers
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._clear()

    def _clear(self) -> None:
        self.requests = 0
        self.answered = 0
        self.images = 0
        self.received: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.times: list[float] = []
        self.prompts: Counter[str] = Counter()
        self.answered_prompts: list[str] = []
        self.replies: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_at: float | None = None
        self.last_at: float | None = None

    # ------------------------------------------------------------------ life cycle
    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def busy_seconds(self) -> float:
        """From the first request to the last answer: the requesting phase of a run, without its start-up."""
        return 0.0 if self.first_at is None or self.last_at is None else self.last_at - self.first_at

    def start(self) -> OpenAIServer:
        if self.model is not None:
            self.model.start()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.app = self
        # shutdown() waits for the serving loop's next poll: socketserver's default 0.5 s was the half second that
        # stopping a server added to every test that starts one
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self.model is not None:
            self.model.stop()

    def release(self) -> None:
        """Drop every held request (its client is gone)."""
        self._released.set()

    def reset(self, *, hold_after: int | None = None) -> None:
        """Forget the counts (and set a new ``hold_after``) between two runs against the same address: a harness
        that keys its response cache by the model's arguments (lmms-eval) sees the same ``base_url``."""
        with self._lock:
            self.hold_after = hold_after
            self._clear()
            self.holding.clear()
            self._released.clear()

    # ------------------------------------------------------------------ requests
    def _authorised(self, handler: _Handler) -> bool:
        if self.api_key is None or handler.headers.get("Authorization") == f"Bearer {self.api_key}":
            return True
        handler.error(401, "Incorrect API key provided.", "authentication_error")
        return False

    def get(self, handler: _Handler) -> None:
        if not self._authorised(handler):
            return
        if urlsplit(handler.path).path.rstrip("/") != MODELS:
            handler.error(404, f"no route {handler.path}")
            return
        handler.json(200, {"object": "list", "data": [{"id": self.model_name, "object": "model", "owned_by": "tests"}]})

    def post(self, handler: _Handler) -> None:
        route = urlsplit(handler.path).path.rstrip("/")
        with self._lock:
            self.paths.append(handler.path)
        if not self._authorised(handler):
            return
        routes = self.model.routes if self.model is not None else (CHAT, COMPLETIONS)
        if route not in routes:
            handler.error(404, f"no route {handler.path}")
            return
        try:
            body = handler.body()
        except json.JSONDecodeError:
            handler.error(400, "the body is not JSON")
            return
        if not isinstance(body, dict):
            handler.error(400, "the body must be a JSON object")
            return
        if body.get("model") != self.model_name:
            handler.error(404, f"The model `{body.get('model')}` does not exist.")
            return
        problem = self.model.check(body, route) if self.model is not None else None
        if problem:
            handler.error(*problem)
            return
        key = prompt_key(body)
        with self._lock:
            index = len(self.received)
            now = time.monotonic()
            if self.first_at is None:
                self.first_at = now
            self.requests += 1
            self.received.append(body)
            self.times.append(now)
            self.prompts[key] += 1
            self.images += _image_parts(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            hold = self.hold_after is not None and self.requests > self.hold_after
        try:
            if hold:  # never answered: released (or stopped) it is dropped, its client being gone
                self.holding.set()
                self._released.wait()
                return
            if self.latency:
                time.sleep(self.latency)
            self._answer(handler, route, body, key, index)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, handler: _Handler, route: str, body: dict[str, Any], key: str, index: int) -> None:
        action = self.script[min(index, len(self.script) - 1)] if self.script is not None else None
        if action is not None and action.delay:
            time.sleep(action.delay)
        headers = dict(action.headers) if action is not None else {}
        if action is not None and action.body is not None:
            handler.send(action.status, action.body.encode(), headers)
            return
        if action is not None and action.content is None:
            handler.error(action.status, f"scripted {action.status}")
            return
        refused = self.refuse is not None and self.refuse in prompt_text(body)
        if refused and self.refusal == "status":
            handler.error(400, CONTENT_POLICY, error_code="content_policy_violation")
            return
        try:
            if route == CHAT:
                if refused:
                    text, finish, usage = None, "content_filter", (1, 0)
                elif action is not None:
                    text, finish, usage = action.content, action.finish_reason, (1, 1)
                elif self.model is not None:
                    text, finish, *usage = self.model.chat(body)
                else:
                    text, finish, usage = self.reply(prompt_text(body)), "stop", (1, 1)
                payload = _chat_payload(self.model_name, index, text, finish, *usage)
            else:
                payload = self.model.completion(body) if self.model is not None else self._completion(body)
                payload.update(id=f"cmpl-{index}", object="text_completion", created=int(time.time()))
                payload["model"] = self.model_name
        except RuntimeError as error:  # the model failed: report it, keep serving
            handler.error(500, str(error), "server_error")
            return
        with self._lock:  # before sending: once the client has every answer, the counts are final
            self.answered += 1
            self.answered_prompts.append(key)
            self.last_at = time.monotonic()
            if route == CHAT and isinstance(payload["choices"][0]["message"]["content"], str):
                self.replies.append(payload["choices"][0]["message"]["content"])
        handler.json(action.status if action is not None else 200, payload, headers)

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body.get("prompt")
        prompts = [prompt] if isinstance(prompt, str) or (prompt and isinstance(prompt[0], int)) else list(prompt)
        choices = []
        for index, item in enumerate(prompts):
            if body.get("echo") and body.get("logprobs") is not None:
                ids = item if isinstance(item, list) else [ord(c) for c in item]
                values: list[float | None] = [None] + [_token_logprob(t, i) for i, t in enumerate(ids) if i]
                values.append(-0.25)
                tokens = [str(t) for t in ids] + ["next"]
                top = [None] + [{tokens[i]: v} for i, v in enumerate(values) if i]
                logprobs = {"tokens": tokens, "token_logprobs": values, "top_logprobs": top}
                choices.append({"index": index, "text": "", "logprobs": logprobs, "finish_reason": "length"})
            else:
                text = self.reply(item if isinstance(item, str) else json.dumps(item))
                choices.append({"index": index, "text": text, "logprobs": None, "finish_reason": "stop"})
        return {"choices": choices, "usage": _usage(1, 1)}


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _chat_payload(
    model: str, index: int, text: str | None, finish: str, prompt_tokens: int, completion_tokens: int
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{index}-{uuid.uuid4().hex[:8]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": _usage(prompt_tokens, completion_tokens),
    }


@contextmanager
def running(server: OpenAIServer) -> Iterator[OpenAIServer]:
    """Start ``server``, yield it, stop it."""
    server.start()
    try:
        yield server
    finally:
        server.stop()


# ---------------------------------------------------------------------- real models behind the server
@dataclass
class _Request:
    """One generation: chat ``messages``, or (``prompt_ids``) a completion prompt, generated or (``score``) rated."""

    messages: list[dict[str, Any]]
    max_tokens: int
    prompt_ids: list[int] = field(default_factory=list)
    score: bool = False
    stop: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    result: tuple[str, str, int, int] | None = None  # text, finish reason, prompt tokens, completion tokens
    logprobs: dict[str, list[Any]] | None = None
    error: str | None = None

    @property
    def is_completion(self) -> bool:
        return not self.messages


class TextModel:
    """A transformers causal LM served greedily (see the module docstring): chat requests batched, completions one
    prompt at a time. ``batches`` records the size of every batch run."""

    name = "smollm2"
    routes: tuple[str, ...] = (CHAT, COMPLETIONS)

    def __init__(self, path: Path | str, *, max_batch: int = 8, batch_wait: float = 0.02) -> None:
        import torch

        self.torch = torch
        self.max_batch = max_batch
        self.batch_wait = batch_wait
        self.batches: list[int] = []
        self._load(path)
        self.eos = self.tokenizer.eos_token_id
        self._queue: queue.Queue[_Request | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def _load(self, path: Path | str) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(path, dtype=self.torch.float32).eval()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._schedule, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    # ------------------------------------------------------------------ validation
    def check(self, body: dict[str, Any], route: str) -> tuple[int, str] | None:
        """(status, message) of a request this server cannot serve, else None."""
        if body.get("stream"):
            return 400, "streaming is not supported by this server"
        if float(body.get("temperature") or 0) != 0:
            return 400, "this server decodes greedily only (temperature 0)"
        if route == COMPLETIONS:
            return self._check_completion(body)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, "messages must be a non-empty list"
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
                return 400, "each message needs a role of system, user or assistant"
            problem = self._check_content(message.get("content"))
            if problem:
                return 400, problem
        limit = _token_limit(body)
        if not isinstance(limit, int) or limit < 1:
            return 400, "max_tokens must be a positive integer"
        return None

    def _check_content(self, content: Any) -> str | None:
        return None if isinstance(content, str) else "only text content is supported"

    def _check_completion(self, body: dict[str, Any]) -> tuple[int, str] | None:
        prompt = body.get("prompt")
        if not prompt or not isinstance(prompt, (str, list)):
            return 400, "prompt must be a string, a list of token ids, or a list of either"
        limit = body.get("max_tokens", DEFAULT_MAX_TOKENS)
        if not isinstance(limit, int) or limit < 0:
            return 400, "max_tokens must be a non-negative integer"
        if body.get("echo") and body.get("logprobs") is not None and limit > 1:
            return 400, "with echo and logprobs this server scores the prompt and adds at most one token"
        if body.get("logprobs") is not None and not body.get("echo"):
            return 400, "logprobs are only returned with echo (prompt scoring)"
        return None

    # ------------------------------------------------------------------ answers
    def _run(self, requests: list[_Request]) -> None:
        for request in requests:
            self._queue.put(request)
        for request in requests:
            request.done.wait()
        failed = next((r.error for r in requests if r.error is not None), None)
        if failed is not None:
            raise RuntimeError(failed)

    def chat(self, body: dict[str, Any]) -> tuple[str, str, int, int]:
        """(reply, finish reason, prompt tokens, completion tokens) of one chat request."""
        request = _Request(messages=body["messages"], max_tokens=int(_token_limit(body)))
        self._run([request])
        assert request.result is not None
        return request.result

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        """The choices and usage of one completions request (one choice per prompt)."""
        stop = body.get("stop") or []
        requests = [
            _Request(
                messages=[],
                max_tokens=int(body.get("max_tokens", DEFAULT_MAX_TOKENS)),
                prompt_ids=ids,
                score=bool(body.get("echo")) and body.get("logprobs") is not None,
                stop=[stop] if isinstance(stop, str) else list(stop),
            )
            for ids in self._prompts(body["prompt"])
        ]
        self._run(requests)
        choices = []
        for index, request in enumerate(requests):
            assert request.result is not None
            text, finish, _, _ = request.result
            choices.append({"index": index, "text": text, "logprobs": request.logprobs, "finish_reason": finish})
        prompt_tokens = sum(len(r.prompt_ids) for r in requests)
        return {"choices": choices, "usage": _usage(prompt_tokens, sum(r.result[3] for r in requests if r.result))}

    def _prompts(self, prompt: str | list) -> list[list[int]]:
        """Token ids of each prompt: a string, a list of ids, or a list of strings or id lists."""
        if isinstance(prompt, str) or (prompt and isinstance(prompt[0], int)):
            prompt = [prompt]
        return [
            item if isinstance(item, list) else self.tokenizer(item, add_special_tokens=False)["input_ids"]
            for item in prompt
        ]

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
                chats = [r for r in batch if not r.is_completion]
                if chats:
                    self._generate(chats)
                for request in batch:
                    if request.is_completion:
                        (self._score if request.score else self._complete)(request)
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
                **inputs,
                max_new_tokens=longest,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        width = inputs["input_ids"].shape[1]
        for row, request in enumerate(batch):
            new = output[row, width:].tolist()[: request.max_tokens]
            finish = "length"
            if self.eos in new:
                new = new[: new.index(self.eos)]
                finish = "stop"
            text = self.tokenizer.decode(new, skip_special_tokens=True).strip()
            request.result = (text, finish, int(inputs["attention_mask"][row].sum()), len(new))

    def _complete(self, request: _Request) -> None:
        torch = self.torch
        ids = torch.tensor([request.prompt_ids])
        with torch.no_grad():
            output = self.model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=max(request.max_tokens, 1),
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        new = output[0, ids.shape[1] :].tolist()[: request.max_tokens]
        finish = "length"
        if self.eos in new:
            new, finish = new[: new.index(self.eos)], "stop"
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        cut = min((text.index(s) for s in request.stop if s and s in text), default=None)
        if cut is not None:
            text, finish = text[:cut], "stop"
        request.result = (text, finish, len(request.prompt_ids), len(new))

    def _score(self, request: _Request) -> None:
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


class VisionModel(TextModel):
    """A LLaVA-style model (the tiny random VLM of ``tiny_vlm.py`` in the tests): chat messages whose content may be
    a list of ``{"type": "text"}`` and ``{"type": "image_url"}`` parts, images inline as base64 ``data:`` URLs. One
    request at a time by default (``max_batch=1``); greedy only."""

    name = "tiny-vlm"
    routes = (CHAT,)

    def __init__(self, path: Path | str, *, max_batch: int = 1, batch_wait: float = 0.0) -> None:
        super().__init__(path, max_batch=max_batch, batch_wait=batch_wait)

    def _load(self, path: Path | str) -> None:
        from transformers import AutoProcessor, LlavaForConditionalGeneration

        self.processor = AutoProcessor.from_pretrained(path)
        self.tokenizer = self.processor.tokenizer
        self.model = LlavaForConditionalGeneration.from_pretrained(path, dtype=self.torch.float32).eval()

    def _check_content(self, content: Any) -> str | None:
        if isinstance(content, str):
            return None
        if not isinstance(content, list):
            return "content must be a string or a list of parts"
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "image_url":
                url = (part.get("image_url") or {}).get("url", "")
                if not url.startswith("data:image/") or ";base64," not in url:
                    return "images must be inline base64 data: URLs"
            elif kind != "text":
                return f"unsupported content part {kind!r}"
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
            text = self.processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
            inputs = self.processor(images=images or None, text=text, return_tensors="pt")
            with torch.no_grad():
                output = self.model.generate(
                    **inputs,
                    max_new_tokens=request.max_tokens,
                    do_sample=False,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                    pad_token_id=self.tokenizer.pad_token_id,
                )
            width = inputs["input_ids"].shape[1]
            new = output[0, width:].tolist()
            finish = "length"
            if self.eos in new:
                new, finish = new[: new.index(self.eos)], "stop"
            request.result = (self.tokenizer.decode(new, skip_special_tokens=True).strip(), finish, width, len(new))
