"""A tiny, randomly initialised LLaVA-style model for plumbing tests only.

:func:`build_plumbing_only_vlm` writes a ``LlavaForConditionalGeneration`` (2-layer CLIP vision tower on
32x32 images, 2-layer Llama text model, about 70k parameters, **random weights**) with a word-level
tokenizer, a chat template and a ``LlavaProcessor`` into a folder that ``lmms-eval --model llava_hf
--model_args pretrained=<folder>`` loads offline. Its answers are noise: it exists to push real images
and real prompts through the real harness, never to measure anything.

Everything is built with the installed ``transformers`` at test time (a tokenizer saved by one major
version may not load in another), and cached per folder: a second call with the same folder returns
at once.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

PLUMBING_ONLY_NOTE = "random weights: checks plumbing only, its answers mean nothing"

# A chat template that accepts both string content and lists of {"type": "image"|"text"} parts, in
# whatever order the caller gives them, so both lmms-eval's simple and chat llava_hf paths can use it.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}USER: {% else %}ASSISTANT: {% endif %}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>\n{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}{{ '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)

_SPECIAL = ["<unk>", "<s>", "</s>", "<pad>", "<image>"]
_WORDS = [
    "Yes", "No", "Cannot", "tell", "Likely", "Unlikely", "Not", "likely", "Doctor", "Nurse", "Pilot",
    "Suspect", "Criminal", "Healthy", "Sick", "Urgent", "Non-urgent", "Student", "Professor", "Witness",
]  # fmt: skip


def _vocabulary() -> dict[str, int]:
    tokens = [*_SPECIAL, *_WORDS, *string.ascii_letters, *string.digits, *string.punctuation]
    vocab: dict[str, int] = {}
    for token in tokens:
        vocab.setdefault(token, len(vocab))
    return vocab


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel(vocab=_vocabulary(), unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        extra_special_tokens={"image_token": "<image>"},
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build_plumbing_only_vlm(folder: Path | str, seed: int = 0) -> Path:
    """Write the tiny random LLaVA model, tokenizer and processor into ``folder`` (once) and return it."""
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    folder = Path(folder)
    marker = folder / "PLUMBING_ONLY.json"
    if marker.is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer()
    vocab_size = len(tokenizer)
    image_size, patch = 32, 8
    vision = CLIPVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        image_size=image_size, patch_size=patch, projection_dim=32,
    )  # fmt: skip
    text = LlamaConfig(
        vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": image_size}, crop_size={"height": image_size, "width": image_size}
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=patch,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=CHAT_TEMPLATE,
    )
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    marker.write_text(json.dumps({"note": PLUMBING_ONLY_NOTE, "seed": seed}) + "\n", encoding="utf-8")
    return folder
