"""A tiny, randomly initialised Stable Diffusion pipeline built from diffusers' own classes, saved locally.

It has the real pipeline structure (CLIP text encoder and tokenizer, conditional UNet, VAE, DDIM scheduler)
and loads with ``DiffusionPipeline.from_pretrained(folder)``, but its weights are random: it checks the
plumbing of a diffusers backend (loading, seeds, batching, files, responses), never image content. Its images
are coloured noise (no face). Built in about a second; about 0.5 MB.
"""

from __future__ import annotations

from pathlib import Path

from clip_tokenizer import write_clip_tokenizer_files

PLUMBING_ONLY = "random weights: checks plumbing only, its images are noise"


def build_tiny_stable_diffusion(folder: Path, seed: int = 0) -> Path:
    """Save a tiny random ``StableDiffusionPipeline`` (32 x 32 px images) to ``folder``; returns ``folder``."""
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    scratch = folder / "_tokenizer_source"
    scratch.mkdir(exist_ok=True)
    write_clip_tokenizer_files(scratch)
    tokenizer = CLIPTokenizer(str(scratch / "vocab.json"), str(scratch / "merges.txt"), model_max_length=77)
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        unet = UNet2DConditionModel(
            block_out_channels=(8, 16), layers_per_block=1, sample_size=8, in_channels=4, out_channels=4,
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
            cross_attention_dim=16, norm_num_groups=4, attention_head_dim=2,
        )  # fmt: skip
        vae = AutoencoderKL(
            block_out_channels=(8, 8), in_channels=3, out_channels=3, latent_channels=4, norm_num_groups=4,
            down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
            up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"), sample_size=32,
        )  # fmt: skip
        text_encoder = CLIPTextModel(
            CLIPTextConfig(
                vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                num_attention_heads=2, max_position_embeddings=77, bos_token_id=tokenizer.bos_token_id,
                eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
            )
        )  # fmt: skip
    pipeline = StableDiffusionPipeline(
        unet=unet, vae=vae, text_encoder=text_encoder, tokenizer=tokenizer,
        scheduler=DDIMScheduler(steps_offset=1, clip_sample=False),
        safety_checker=None, feature_extractor=None, requires_safety_checker=False,
    )  # fmt: skip
    pipeline.save_pretrained(folder)
    for path in scratch.iterdir():
        path.unlink()
    scratch.rmdir()
    return folder
