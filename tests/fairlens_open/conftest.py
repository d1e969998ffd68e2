"""Fixtures for the FairLens open-ended tests: clean settings, the embedded SmolLM2 model, a loopback server.

SmolLM2-135M-Instruct is a real but weak judge: the tests that use it check the machinery (prompts through
the chat template, generation, parsing, retries, the unjudged path, the cache), never its verdicts. Its
replies are kept short (a few tokens) so that the folder stays fast on two CPU cores; with so few tokens no
reply can hold a complete JSON object, which makes the unjudged path certain.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from faces import make_utkface_folder
from models import smollm2
from openai_server import OpenAIServer, TextModel

from fairlens_tasks import images, open_scoring


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees a FAIRLENS_* or OPENAI_* variable it did not set itself; no memoised judged results."""
    for name in list(os.environ):
        if name.startswith(("FAIRLENS_", "OPENAI_")):
            monkeypatch.delenv(name, raising=False)
    images.reset_image_cache(images.DEFAULT_CACHE_SIZE)
    open_scoring._MEMO.clear()


@pytest.fixture(scope="session")
def one_thread() -> None:
    """One torch thread per test process: two xdist workers on two cores must not oversubscribe them."""
    import torch

    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    return smollm2()


SERVER_KEY = "sk-test-fairlens"


@pytest.fixture(scope="session")
def smollm2_server(smollm2_path: Path, one_thread: None) -> Iterator[OpenAIServer]:
    """SmolLM2-135M-Instruct behind a real OpenAI-compatible server on 127.0.0.1 (model "smollm2", key
    :data:`SERVER_KEY`)."""
    server = OpenAIServer(model=TextModel(smollm2_path), api_key=SERVER_KEY).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def open_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One image per stratum: 30 images."""
    root = tmp_path_factory.mktemp("faces")
    make_utkface_folder(root, 1, seed=11)
    return root
