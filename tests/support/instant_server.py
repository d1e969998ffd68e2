"""An OpenAI-compatible server on loopback whose "model" answers at once: what is left of a run is the harness's
time and ours (the scale tests and ``bench/scale.py``).

:class:`InstantServer` serves ``GET /v1/models``, ``POST /v1/chat/completions`` (text or image parts; images are
counted, not looked at) and ``POST /v1/completions`` (text or token-id prompts; with ``echo`` + ``logprobs`` it rates
every prompt token with a fixed function of the token ids, so log-likelihood tasks get a deterministic answer). The
reply is a fixed string or a function of the prompt's text. It counts requests and remembers each distinct prompt,
tracks how many requests are in flight, can wait ``latency`` seconds per request (a remote API's round trip), and
with ``hold_after=k`` answers k requests and holds every later one, unanswered, until :meth:`release` drops them (so a
test can kill the client at a known point). It is not a model: never read a score from it.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

from openai_server import _Handler, _Server


class _NoDelayHandler(_Handler):
    """Headers and body leave at once: without TCP_NODELAY, the body's small second write waits for the client's
    delayed ACK (about 40 ms on Linux) whenever a client reuses its connection, as a plain loop does."""

    disable_nagle_algorithm = True


def prompt_text(body: dict[str, Any]) -> str:
    """The text a reply function sees: the user messages' text parts, or the completion prompt as given."""
    if "messages" in body:
        texts = []
        for message in body["messages"]:
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts += [part.get("text", "") for part in content if part.get("type") == "text"]
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


def _token_logprob(token: int, position: int) -> float:
    return -0.25 - ((token * 2654435761 + position * 40503) % 1000) / 250.0


class InstantServer:
    """See the module docstring."""

    def __init__(
        self, reply: str | Callable[[str], str] = "A", *, model_name: str = "instant", latency: float = 0.0,
        hold_after: int | None = None,
    ) -> None:  # fmt: skip
        self.reply = reply if callable(reply) else (lambda _text, fixed=reply: fixed)
        self.model_name = model_name
        self.latency = latency
        self.hold_after = hold_after
        self.requests = 0  # completion requests received
        self.answered = 0  # completion requests answered
        self.images = 0
        self.prompts: Counter[str] = Counter()  # prompt_key -> times asked
        self.answered_prompts: list[str] = []  # prompt keys, in the order they were answered
        self.in_flight = 0
        self.max_in_flight = 0
        self.first_at: float | None = None  # time.monotonic() of the first request, and of the last answer
        self.last_at: float | None = None
        self.holding = threading.Event()  # set when a request is held after ``hold_after`` answers
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._httpd: _Server | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def busy_seconds(self) -> float:
        """From the first request to the last answer: the requesting phase of a run, without its start-up."""
        return 0.0 if self.first_at is None or self.last_at is None else self.last_at - self.first_at

    def release(self) -> None:
        self._released.set()

    def reset(self, *, hold_after: int | None = None) -> None:
        """Forget the counts (and set a new ``hold_after``) between two runs against the same address: a harness
        that keys its response cache by the model's arguments (lmms-eval) sees the same ``base_url``."""
        with self._lock:
            self.hold_after = hold_after
            self.requests = self.answered = self.images = self.in_flight = self.max_in_flight = 0
            self.first_at = self.last_at = None
            self.prompts.clear()
            self.answered_prompts.clear()
            self.holding.clear()
            self._released.clear()

    def get(self, handler: _Handler) -> None:
        if handler.path.rstrip("/") != "/v1/models":
            handler._error(404, f"no route {handler.path}")
            return
        handler._json(200, {"object": "list", "data": [{"id": self.model_name, "object": "model"}]})

    def post(self, handler: _Handler) -> None:
        route = handler.path.rstrip("/")
        if route not in ("/v1/chat/completions", "/v1/completions"):
            handler._error(404, f"no route {handler.path}")
            return
        try:
            body = handler._body()
        except json.JSONDecodeError:
            handler._error(400, "the body is not JSON")
            return
        if not isinstance(body, dict) or body.get("model") != self.model_name:
            handler._error(404, f"The model `{body.get('model') if isinstance(body, dict) else None}` does not exist.")
            return
        key = prompt_key(body)
        with self._lock:
            if self.first_at is None:
                self.first_at = time.monotonic()
            self.requests += 1
            self.prompts[key] += 1
            self.images += sum(
                1
                for message in body.get("messages", [])
                if isinstance(message.get("content"), list)
                for part in message["content"]
                if part.get("type") == "image_url"
            )
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
            payload = self._chat(body) if route == "/v1/chat/completions" else self._completion(body)
            with self._lock:  # before sending: once the client has every answer, the counts are final
                self.answered += 1
                self.answered_prompts.append(key)
                self.last_at = time.monotonic()
            with suppress(BrokenPipeError, ConnectionResetError):
                handler._json(200, payload)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        text = self.reply(prompt_text(body))
        return {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

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
        return {
            "id": f"cmpl-{self.requests}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": self.model_name,
            "choices": choices,
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def start(self) -> InstantServer:
        self._httpd = _Server(("127.0.0.1", 0), _NoDelayHandler)
        self._httpd.app = self
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
