"""Which judge, with which settings: from ``FAIRLENS_JUDGE*`` variables (the harness) or options (the CLI).

============================= ===================== ===========================================================
environment variable          option of ``judge``   meaning (default)
============================= ===================== ===========================================================
FAIRLENS_JUDGE                --judge               ``openai:MODEL`` or ``hf:PATH``; unset/``none``: no judge
FAIRLENS_JUDGE_BASE_URL       --base-url            OpenAI-compatible base URL (``OPENAI_BASE_URL``, else
                                                    https://api.openai.com/v1)
FAIRLENS_JUDGE_API_KEY        --api-key             API key (``OPENAI_API_KEY``; optional for other URLs)
FAIRLENS_JUDGE_TEMPERATURE    --temperature         judge temperature (0)
FAIRLENS_JUDGE_MAX_TOKENS     --max-tokens          reply token limit (1024; 8192 for reasoning models)
FAIRLENS_JUDGE_JSON_MODE      --json-mode           ``1``/``0``: ask for ``response_format: json_object`` (1)
FAIRLENS_JUDGE_CONCURRENCY    --concurrency         requests in flight, HTTP judges only (8)
FAIRLENS_JUDGE_TIMEOUT        --timeout             seconds per HTTP request (120)
FAIRLENS_JUDGE_RETRIES        --retries             HTTP retries on timeouts, 408/409/429/5xx (5)
FAIRLENS_JUDGE_ATTEMPTS       --attempts            replies per step before an answer is unjudged (3)
FAIRLENS_JUDGE_DEVICE         --device              ``cpu``, ``cuda``, ``cuda:1``..., ``auto`` (auto), hf only
FAIRLENS_JUDGE_CACHE          --cache               the SQLite judgement cache (<fairness-evals cache>/...)
============================= ===================== ===========================================================

:attr:`JudgeSettings.identity` (part of every cache key) holds the backend, the model and the settings
that change what the judge replies; :meth:`JudgeSettings.recorded` is what the results record (never the
key).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fairlens_tasks.judging.backends import Backend, JudgeConfigError, is_reasoning_model
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
from fairlens_tasks.judging.redact import redact_text, redact_url, secrets

OPENAI_URL = "https://api.openai.com/v1"
BACKENDS = ("openai", "hf")
NO_JUDGE = ("", "none", "off")

ENV = {
    "judge": "FAIRLENS_JUDGE",
    "base_url": "FAIRLENS_JUDGE_BASE_URL",
    "api_key": "FAIRLENS_JUDGE_API_KEY",
    "temperature": "FAIRLENS_JUDGE_TEMPERATURE",
    "max_tokens": "FAIRLENS_JUDGE_MAX_TOKENS",
    "json_mode": "FAIRLENS_JUDGE_JSON_MODE",
    "concurrency": "FAIRLENS_JUDGE_CONCURRENCY",
    "timeout": "FAIRLENS_JUDGE_TIMEOUT",
    "retries": "FAIRLENS_JUDGE_RETRIES",
    "attempts": "FAIRLENS_JUDGE_ATTEMPTS",
    "device": "FAIRLENS_JUDGE_DEVICE",
    "cache": "FAIRLENS_JUDGE_CACHE",
}
CLI = {
    "judge": "--judge",
    "base_url": "--base-url",
    "api_key": "--api-key",
    "temperature": "--temperature",
    "max_tokens": "--max-tokens",
    "json_mode": "--json-mode",
    "concurrency": "--concurrency",
    "timeout": "--timeout",
    "retries": "--retries",
    "attempts": "--attempts",
    "device": "--device",
    "cache": "--cache",
}
DEFAULTS: dict[str, Any] = {
    "temperature": 0.0,
    "json_mode": True,
    "concurrency": 8,
    "timeout": 120.0,
    "retries": 5,
    "attempts": 3,
    "device": "auto",
}
DEFAULT_MAX_TOKENS = 1024
DEFAULT_MAX_TOKENS_REASONING = 8192  # reasoning tokens count against max_completion_tokens


def default_cache_path() -> Path:
    from fairness_evals.cache import cache_dir

    return cache_dir() / "fairlens-judge" / "judgments.sqlite"


@dataclass(frozen=True)
class JudgeSettings:
    """A configured judge."""

    backend: str
    model: str
    base_url: str | None = field(default=None, repr=False)  # may carry credentials: recorded redacted
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    json_mode: bool = True
    concurrency: int = 8
    timeout: float = 120.0
    retries: int = 5
    attempts: int = 3
    device: str = "auto"
    cache: Path = field(default_factory=default_cache_path)

    @property
    def name(self) -> str:
        """``openai:MODEL`` or ``hf:PATH``: the ``judge`` value in the results."""
        return f"{self.backend}:{self.model}"

    @property
    def identity(self) -> str:
        """The judge part of every cache key: the model and the settings that change its replies."""
        parts = [self.name, f"temperature={self.temperature:g}", f"max_tokens={self.max_tokens}"]
        if self.backend == "openai":
            parts.append(f"json_mode={int(self.json_mode)}")
        return ";".join(parts)

    @property
    def workers(self) -> int:
        """Judge calls in flight: ``concurrency`` for HTTP judges, 1 for a local model (one generation at a time)."""
        return self.concurrency if self.backend == "openai" else 1

    def recorded(self) -> dict[str, Any]:
        """The settings the results record (``judge_settings``): everything but the API key, and the base URL
        without credentials (:func:`fairlens_tasks.judging.redact.redact_text`: its user-info, secret query values
        and the key wherever it appears)."""
        out: dict[str, Any] = {
            "judge": self.name,
            "prompt_version": JUDGE_PROMPT_VERSION,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "attempts": self.attempts,
        }
        if self.backend == "openai":
            out.update(
                base_url=None if self.base_url is None else redact_text(self.base_url, secrets(self.api_key)),
                json_mode=self.json_mode,
                concurrency=self.concurrency,
                timeout=self.timeout,
                retries=self.retries,
            )
        else:
            out["device"] = self.device
        return out

    def recorded_json(self) -> str:
        return json.dumps(self.recorded(), sort_keys=True)

    def create_backend(self) -> Backend:
        from fairlens_tasks.judging.backends import OpenAIBackend, TransformersBackend

        if self.backend == "openai":
            return OpenAIBackend(
                self.model,
                base_url=self.base_url or OPENAI_URL,
                api_key=self.api_key or "EMPTY",
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                timeout=self.timeout,
                retries=self.retries,
                json_mode=self.json_mode,
                secrets=secrets(self.api_key),
            )
        return TransformersBackend(
            self.model, device=self.device, max_tokens=self.max_tokens, temperature=self.temperature
        )


def _number(raw: Any, name: str, kind: type, low: float, high: float = math.inf) -> Any:
    try:
        value = kind(str(raw).strip()) if kind is int else float(raw)
    except (TypeError, ValueError):
        raise JudgeConfigError(f"{name}={raw!r} is not a {'whole number' if kind is int else 'number'}") from None
    if not (math.isfinite(value) and low <= value <= high):
        upper = "" if high == math.inf else f" and at most {high:g}"
        raise JudgeConfigError(f"{name}={raw!r} must be at least {low:g}{upper}")
    return value


def _url_problem(url: str) -> str:
    """What is wrong with an http(s) ``url`` ("" when nothing): a host the parser rejects, a bad port, no host."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as error:
        return str(error)
    return "" if parts.hostname else "no host"


def _flag(raw: Any, name: str) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise JudgeConfigError(f"{name}={raw!r} must be 1 or 0")


def build_judge_settings(
    values: Mapping[str, Any], names: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> JudgeSettings | None:
    """Settings from raw ``values`` (keys as in :data:`ENV`; None = not given); None when no judge is set.

    ``names`` says how to name a value in errors (the variable or the option). ``environ`` supplies the
    ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` fallbacks (default ``os.environ``).
    """
    env = os.environ if environ is None else environ
    spec = values.get("judge")
    spec = "" if spec is None else str(spec).strip()
    if spec.lower() in NO_JUDGE:
        return None
    backend, sep, model = spec.partition(":")
    backend, model = backend.strip().lower(), model.strip()
    if not sep or backend not in BACKENDS or not model:
        raise JudgeConfigError(
            f"{names['judge']}={spec!r}: write openai:MODEL (any OpenAI-compatible endpoint) or hf:PATH "
            "(a local transformers model)"
        )

    def given(key: str) -> Any:
        value = values.get(key)
        return None if value is None or (isinstance(value, str) and not value.strip()) else value

    def pick(key: str) -> Any:
        value = given(key)
        return DEFAULTS[key] if value is None else value

    base_url = api_key = None
    if backend == "openai":
        base_url = str(given("base_url") or env.get("OPENAI_BASE_URL") or OPENAI_URL).strip().rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise JudgeConfigError(f"{names['base_url']}={redact_url(base_url)!r} is not an http(s) URL")
        broken = _url_problem(base_url)
        if broken:
            raise JudgeConfigError(f"{names['base_url']}={redact_url(base_url)!r} is not a valid URL ({broken})")
        api_key = given("api_key") or env.get("OPENAI_API_KEY") or None
        if api_key is None and base_url == OPENAI_URL:
            raise JudgeConfigError(
                f"the OpenAI API needs a key: set {names['api_key']} (or OPENAI_API_KEY); a local server such as "
                f"vLLM needs {names['base_url']} instead"
            )
    else:
        path = Path(model).expanduser()
        if path.exists():
            model = str(path.resolve())
    max_tokens = given("max_tokens")
    if max_tokens is None:
        reasoning = backend == "openai" and is_reasoning_model(model)
        max_tokens = DEFAULT_MAX_TOKENS_REASONING if reasoning else DEFAULT_MAX_TOKENS
    cache = given("cache")
    return JudgeSettings(
        backend=backend,
        model=model,
        base_url=base_url,
        api_key=None if api_key is None else str(api_key),
        temperature=_number(pick("temperature"), names["temperature"], float, 0.0, 2.0),
        max_tokens=_number(max_tokens, names["max_tokens"], int, 1),
        json_mode=_flag(pick("json_mode"), names["json_mode"]),
        concurrency=_number(pick("concurrency"), names["concurrency"], int, 1, 1024),
        timeout=_number(pick("timeout"), names["timeout"], float, 0.001),
        retries=_number(pick("retries"), names["retries"], int, 0, 100),
        attempts=_number(pick("attempts"), names["attempts"], int, 1, 20),
        device=str(pick("device")).strip(),
        cache=Path(str(cache)).expanduser() if cache is not None else default_cache_path(),
    )


def judge_settings_from_env(environ: Mapping[str, str] | None = None) -> JudgeSettings | None:
    """The judge configured by ``FAIRLENS_JUDGE*`` in ``environ`` (default ``os.environ``), or None."""
    env = os.environ if environ is None else environ
    return build_judge_settings({key: env.get(var) for key, var in ENV.items()}, ENV, env)
