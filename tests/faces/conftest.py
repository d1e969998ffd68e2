"""Fixtures for the face-attribute tests: real photos, a collage, a blank image, tiny local models.

Real photo: ``skimage.data.astronaut()`` (Eileen Collins, NASA portrait, public domain; shipped in
the scikit-image wheel): one adult woman, frontal. The randomly initialised FairFace and CLIP models
built here check plumbing only: their predictions mean nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from clip_tokenizer import write_clip_tokenizer_files

PLUMBING_ONLY = "random weights: checks plumbing only, its predictions mean nothing"


@pytest.fixture(scope="session")
def astronaut() -> np.ndarray:
    """The real astronaut photo, 512 x 512 RGB uint8 (read-only)."""
    from skimage import data

    image = data.astronaut()
    image.setflags(write=False)
    return image


@pytest.fixture(scope="session")
def collage(astronaut: np.ndarray) -> np.ndarray:
    """Two real faces side by side: the astronaut's top 300 rows and their mirror image (300 x 1024).

    The top rows leave out the mission patch, which dlib's HOG detector takes for a weak face when the
    whole photo is tiled.
    """
    top = astronaut[:300]
    image = np.ascontiguousarray(np.concatenate([top, top[:, ::-1]], axis=1))
    image.setflags(write=False)
    return image


@pytest.fixture(scope="session")
def blank() -> np.ndarray:
    """A flat grey 256 x 256 image: no face."""
    image = np.full((256, 256, 3), 128, dtype=np.uint8)
    image.setflags(write=False)
    return image


def build_tiny_clip(folder: Path, seed: int = 0) -> Path:
    """A randomly initialised 2-layer CLIP (32-px images, character-level BPE) saved to ``folder``.

    Loadable by ``CLIPModel.from_pretrained`` / ``CLIPProcessor.from_pretrained``. Plumbing only.
    """
    import torch
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = write_clip_tokenizer_files(folder)
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    processor = CLIPProcessor(
        image_processor=CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),
        tokenizer=tokenizer,
    )
    config = CLIPConfig(
        text_config={
            "vocab_size": len(vocab),
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "max_position_embeddings": 77,
            "bos_token_id": vocab["<|startoftext|>"],
            "eos_token_id": vocab["<|endoftext|>"],
            "pad_token_id": vocab["<|endoftext|>"],
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": 32,
            "patch_size": 8,
        },
        projection_dim=16,
    )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = CLIPModel(config)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folder of a tiny random CLIP (:func:`build_tiny_clip`); plumbing only."""
    return build_tiny_clip(tmp_path_factory.mktemp("tiny_clip"))


@pytest.fixture(scope="session")
def random_fairface_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised FairFace-shaped ResNet-34 state dict saved with ``torch.save``; plumbing only."""
    import torch

    from fairness_evals.faces.resnet import resnet34

    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = resnet34(18)
    path = tmp_path_factory.mktemp("fairface") / "random_res34_fair_align_multi_7.pt"
    torch.save(model.state_dict(), path)
    return path
