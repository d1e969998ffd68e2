"""Judge backends: any OpenAI-compatible chat endpoint, or a local transformers model.

A backend turns a list of chat messages into a :class:`Reply`. It raises :class:`TransportError` when a
call failed for reasons outside the judge's reply (timeout, connection, rate limit, server error, a body
that is not a chat completion): that answer is unjudged for this run and is retried by the next run. It
raises :class:`JudgeRefusal` when the judge declined this answer: an HTTP 4xx other than 401, 403, 404 (the
key or the model: below) and 408, 409, 429 (transient: the client retries them), such as a 400 *content policy
violation*, or a reply stopped by a content filter (``finish_reason: content_filter``). A refusal is final for
this answer and this judge, and is not missing at random: content filters refuse exactly the hateful answers
(:mod:`fairlens_tasks.open_scoring` withholds the bias scores when any answer was refused). It raises
:class:`JudgeConfigError` when no call can succeed (rejected key, unknown model, a model folder that does not
load): the run stops with that message. No message carries the API key, even when the endpoint quotes it
(:func:`fairlens_tasks.judging.redact.redact_text`).

**OpenAI-compatible** (:class:`OpenAIBackend`): the official ``openai`` client (the ``lmms`` extra; lmms-eval's
own judge providers wrap the same client) with its documented retry policy: up to
``retries`` retries of connection errors, timeouts, 408, 409, 429 and 5xx responses, exponential backoff
from 0.5 s doubling to at most 8 s with up to 25% jitter, and the server's ``Retry-After`` honoured (up to
60 s). Works with api.openai.com, Azure's OpenAI-compatible endpoint, vLLM, SGLang, llama.cpp's server...
A query in the base URL (``https://host/v1?api-version=...``, ``?api_key=...``) is sent with every request.
Reasoning models (names starting ``gpt-5``, ``o1``, ``o3``, ``o4``) take ``max_completion_tokens`` and no
temperature, the same rule as lmms-eval's ``llm_judge`` providers.

**transformers** (:class:`TransformersBackend`): a causal LM with a chat template, loaded once, one
generation at a time under a lock (deterministic: greedy by default; with a temperature the sampling seed
is derived from the prompt). For many answers, serve the model with vLLM and use the OpenAI-compatible
backend instead: it batches concurrent requests.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from fairlens_tasks.judging.redact import mask_secrets, redact_text, redact_url
from fairness_evals.extras import require

Message = dict[str, str]

REASONING_PREFIXES = ("gpt-5", "o1", "o3", "o4")
#: HTTP 4xx statuses that are not refusals: the openai client retries them as transient failures.
TRANSIENT_4XX = (408, 409, 429)
CONTENT_FILTER = "the judge's content filter stopped the reply (finish_reason content_filter)"


class TransportError(RuntimeError):
    """A call that failed after the backend's own retries; the answer stays unjudged this run."""


class JudgeRefusal(RuntimeError):
    """The judge declined to judge this answer (a 4xx that is not transient, or a content filter); the message
    says why."""


class JudgeConfigError(ValueError):
    """The judge cannot work at all (bad key, unknown model, unloadable model); the message says why."""


@dataclass(frozen=True)
class Reply:
    """The judge's text, and whether generation stopped at the token limit."""

    text: str
    truncated: bool = False


class Backend(Protocol):
    def complete(self, messages: Sequence[Message]) -> Reply: ...

    def close(self) -> None: ...


def is_reasoning_model(model: str) -> bool:
    return model.startswith(REASONING_PREFIXES)


class OpenAIBackend:
    """Chat completions from an OpenAI-compatible endpoint through the ``openai`` client."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str,
        temperature: float,
        max_tokens: int,
        timeout: float,
        retries: int,
        json_mode: bool,
        secrets: Sequence[str] = (),
    ) -> None:
        openai = require("openai", "the FairLens judge's OpenAI-compatible backend")
        self._openai = openai
        self.model = model
        self.base_url = base_url
        self.secrets = tuple(secrets)
        parts = urlsplit(base_url)
        query = dict(parse_qsl(parts.query, keep_blank_values=True)) or None
        try:  # the query goes with every request; in the base URL the client would put the route after it
            self.client = openai.OpenAI(
                base_url=urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
                api_key=api_key,
                default_query=query,
                timeout=timeout,
                max_retries=retries,
            )
        except Exception as error:  # e.g. a URL the HTTP library rejects
            raise JudgeConfigError(
                f"the judge base URL {redact_url(base_url)!r} is not usable ({self._short(error)})"
            ) from None
        sampling: dict[str, Any]
        if is_reasoning_model(model):
            sampling = {"max_completion_tokens": max_tokens}
        else:
            sampling = {"max_tokens": max_tokens, "temperature": temperature}
        if json_mode:
            sampling["response_format"] = {"type": "json_object"}
        self.sampling = sampling

    def _short(self, text: Any) -> str:
        return _short(str(text), secrets=self.secrets)

    def _status(self, error: Any) -> str:
        return f"HTTP {getattr(error, 'status_code', '?')}: {self._short(_error_message(error))}"

    def complete(self, messages: Sequence[Message]) -> Reply:
        openai = self._openai
        try:
            response = self.client.chat.completions.create(model=self.model, messages=list(messages), **self.sampling)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
            raise JudgeConfigError(
                f"the judge endpoint {redact_url(self.base_url)} refused the API key ({self._status(error)}); "
                "set FAIRLENS_JUDGE_API_KEY or --api-key"
            ) from None
        except openai.NotFoundError as error:
            raise JudgeConfigError(
                f"the judge endpoint {redact_url(self.base_url)} does not serve model {self.model!r} or has no "
                f"/chat/completions route ({self._status(error)})"
            ) from None
        except openai.APIStatusError as error:  # 4xx refusals, and what remains after retries of 408/409/429/5xx
            if 400 <= error.status_code < 500 and error.status_code not in TRANSIENT_4XX:
                raise JudgeRefusal(self._status(error)) from None
            raise TransportError(self._status(error)) from None
        except openai.APITimeoutError:
            raise TransportError("timed out (after the client's retries)") from None
        except openai.APIConnectionError as error:
            raise TransportError(f"connection failed: {self._short(error.__cause__ or error)}") from None
        except ValueError:  # the client could not decode the body (json.JSONDecodeError)
            raise TransportError("unusable response: the body is not JSON") from None
        except Exception as error:  # anything else the client raises: a failed call for this answer
            raise TransportError(f"unusable response: {type(error).__name__}: {self._short(error)}") from None
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise TransportError(f"unusable response: no choices in {self._short(response)}")
        choice = choices[0]
        finish = getattr(choice, "finish_reason", None)
        if finish == "content_filter":
            raise JudgeRefusal(CONTENT_FILTER)
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None) if message is not None else None
        if text is not None and not isinstance(text, str):
            raise TransportError(f"unusable response: content is {type(text).__name__}")
        return Reply(text=mask_secrets(text or "", self.secrets), truncated=finish == "length")

    def close(self) -> None:
        self.client.close()


def _error_message(error: Any) -> str:
    """What the endpoint said: the ``message`` of an OpenAI error body, else the client's own message."""
    body = getattr(error, "body", None)
    said = body.get("message") if isinstance(body, dict) else None
    return said if isinstance(said, str) and said.strip() else str(getattr(error, "message", error))


def _short(text: str, limit: int = 200, secrets: Sequence[str] = ()) -> str:
    """``text`` on one line, at most ``limit`` characters, without credentials (an error may quote the URL with its
    credentials, or the request's headers with the key: :func:`~fairlens_tasks.judging.redact.redact_text`)."""
    text = redact_text(" ".join(str(text).split()), secrets)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class TransformersBackend:
    """A local causal LM with a chat template, one greedy (or seeded) generation at a time."""

    def __init__(self, path: str, *, device: str, max_tokens: int, temperature: float) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as error:  # pragma: no cover - transformers is a dependency
            raise JudgeConfigError(f"hf:{path}: transformers is not installed ({error})") from None
        self._torch = torch
        self.path = path
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
            dtype = torch.float32 if device == "cpu" else "auto"
            self.model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype).to(device)
        except (OSError, ValueError) as error:
            raise JudgeConfigError(f"hf:{path}: cannot load the judge model ({_short(str(error))})") from None
        if not getattr(self.tokenizer, "chat_template", None):
            raise JudgeConfigError(f"hf:{path}: the tokenizer has no chat template; use an instruction-tuned model")
        self.model.eval()
        self.max_tokens = max_tokens
        self.temperature = temperature
        self._lock = threading.Lock()
        eos = self.model.generation_config.eos_token_id
        self._eos = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        if self.tokenizer.eos_token_id is not None:
            self._eos.add(self.tokenizer.eos_token_id)

    def complete(self, messages: Sequence[Message]) -> Reply:
        torch = self._torch
        inputs = self.tokenizer.apply_chat_template(
            list(messages), add_generation_prompt=True, return_dict=True, return_tensors="pt"
        ).to(self.device)
        sample = self.temperature > 0
        kwargs: dict[str, Any] = {"max_new_tokens": self.max_tokens, "do_sample": sample}
        if sample:
            kwargs["temperature"] = self.temperature
        else:  # no sampling parameters at all: a checkpoint's sampling defaults must not leak in
            kwargs.update(temperature=None, top_p=None, top_k=None)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else min(self._eos, default=0)
        with self._lock, torch.no_grad():
            if sample:
                digest = hashlib.sha256(repr(list(messages)).encode()).digest()
                torch.manual_seed(int.from_bytes(digest[:8], "big") % (2**63))
            try:
                output = self.model.generate(**inputs, pad_token_id=pad, **kwargs)
            except RuntimeError as error:  # e.g. out of memory for one long prompt
                raise TransportError(f"generation failed: {_short(str(error))}") from None
        new = output[0, inputs["input_ids"].shape[1] :].tolist()
        stopped = any(token in self._eos for token in new)
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return Reply(text=text.strip(), truncated=not stopped and len(new) >= self.max_tokens)

    def close(self) -> None:
        self.model = None  # type: ignore[assignment]
