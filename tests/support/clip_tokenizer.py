"""Character-level CLIP tokenizer files for the tiny, randomly initialised models the tests and benches build.

CLIP's byte-level BPE alphabet (every byte gets a printable character, as GPT-2's ``bytes_to_unicode``) with no
merges: loadable by ``CLIPTokenizer(vocab.json, merges.txt)``. The vocabulary does not change an image-side cost.
"""

from __future__ import annotations

import json
from pathlib import Path


def write_clip_tokenizer_files(folder: Path) -> dict[str, int]:
    """Write ``vocab.json`` and ``merges.txt`` into ``folder``; returns the vocabulary."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = list(keep), 0
    for byte in range(256):
        if byte not in keep:
            keep.append(byte)
            chars.append(256 + extra)
            extra += 1
    alphabet = [chr(c) for c in chars]
    vocab: dict[str, int] = {}
    for token in [*alphabet, *(c + "</w>" for c in alphabet), "<|startoftext|>", "<|endoftext|>"]:
        vocab.setdefault(token, len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    return vocab
