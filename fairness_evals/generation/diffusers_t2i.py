"""``diffusers_t2i``: any diffusers text-to-image pipeline (Stable Diffusion, SDXL, SDXL-Turbo, FLUX...) for lmms-eval.

lmms-eval 0.7.3 ships diffusers backends only for specific video models (``wan2_*``, ``ltx_video``) and
Wan2.1's single-frame T2I; none loads an arbitrary ``DiffusionPipeline``. This one does, on lmms-eval's own
:class:`~lmms_eval.models.simple.diffusers_wm_base.DiffusersWMBase` (rank/device plan, lazy thread-safe
load, device placement fixes), with ``DiffusionPipeline.from_pretrained(pretrained)``.

Per request it writes ``num_images_per_prompt`` PNGs to ``<output_dir>/<task>/<folder>/`` (the layout of
:mod:`fairness_evals.generation.layout`, so ``from_folder`` can re-score the same folder later), image ``i`` with
seed ``seed + i`` (the same seeds for every prompt, as ``wan2_1_t2i`` does; each image has its own
``torch.Generator``, so an image does not depend on ``batch_size``), and answers with the JSON contract
``{"text": "", "images": [...], "seeds": [...], "expected": N}``. A folder whose ``generation.json``
matches the request's settings is reused instead of regenerated (``overwrite=true`` forces generation);
a failure is reported in ``error`` with the images made before it.

Model arguments: ``pretrained`` (hub id or folder), ``output_dir``, ``num_images_per_prompt`` (default: the
task's ``generation_kwargs.num_images_per_prompt``, else 20), ``seed`` (0), ``dtype`` (``auto``: float16 on
CUDA, float32 on CPU), ``height``, ``width``, ``num_inference_steps``, ``guidance_scale`` (each left to the
pipeline's default when not given, e.g. SDXL-Turbo wants ``num_inference_steps=1,guidance_scale=0``),
``negative_prompt``, ``prompt_template`` (``{prompt}``), ``batch_size`` (images per pipeline call, 1),
``overwrite``. Requires ``pip install 'fairness-evals[t2i]'`` (diffusers).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lmms_eval.api.instance import Instance
from lmms_eval.models.simple.diffusers_wm_base import DiffusersWMBase
from loguru import logger as eval_logger

from fairness_evals.extras import require
from fairness_evals.generation.contract import response_json
from fairness_evals.generation.from_folder import expected_images
from fairness_evals.generation.layout import PROMPT_FILE, folder_name, task_folder

DEFAULT_IMAGES_PER_PROMPT = 20
SETTINGS_FILE = "generation.json"
_OUR_NAME = re.compile(r"^\d+_s-?\d+\.png$")


def _optional(value: Any, kind: type) -> Any:
    return None if value in (None, "", "None", "none") else kind(value)


def image_name(index: int, seed: int) -> str:
    """File name of image ``index`` made with ``seed``: ``03_s3.png``."""
    return f"{index:02d}_s{seed}.png"


class DiffusersT2I(DiffusersWMBase):
    """Generic diffusers text-to-image backend (see the module docstring)."""

    _output_ext = "png"

    def __init__(
        self,
        pretrained: str,
        output_dir: str = "./logs/diffusers_t2i",
        num_images_per_prompt: int | str | None = None,
        seed: int | str = 0,
        dtype: str = "auto",
        height: int | str | None = None,
        width: int | str | None = None,
        num_inference_steps: int | str | None = None,
        guidance_scale: float | str | None = None,
        negative_prompt: str | None = None,
        prompt_template: str = "{prompt}",
        batch_size: int | str = 1,
        overwrite: bool | str = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(pretrained=pretrained, output_dir=output_dir, seed=int(seed), dtype=str(dtype),
                         batch_size=batch_size, **kwargs)  # fmt: skip
        if self.dtype_name.lower() == "auto":
            self.dtype_name = "float16" if self.plan.device_str().startswith("cuda") else "float32"
        self.num_images = _optional(num_images_per_prompt, int)
        if self.num_images is not None and self.num_images < 1:
            raise ValueError(f"diffusers_t2i: num_images_per_prompt must be >= 1, got {self.num_images}")
        if self.batch_size_per_gpu < 1:
            raise ValueError(f"diffusers_t2i: batch_size must be >= 1, got {self.batch_size_per_gpu}")
        if "{prompt}" not in prompt_template:
            raise ValueError("diffusers_t2i: prompt_template must contain {prompt}")
        self.prompt_template = prompt_template
        self.options: dict[str, Any] = {
            "height": _optional(height, int),
            "width": _optional(width, int),
            "num_inference_steps": _optional(num_inference_steps, int),
            "guidance_scale": _optional(guidance_scale, float),
            "negative_prompt": _optional(negative_prompt, str),
        }
        self.overwrite = str(overwrite).strip().lower() in ("1", "true", "yes", "on")

    # DiffusersWMBase hooks -------------------------------------------------------------------------------
    def _patch_pipeline_cls_before_load(self) -> None:
        if type(self)._pipeline_cls is None:
            type(self)._pipeline_cls = require("diffusers", "--model diffusers_t2i").DiffusionPipeline

    def _post_to_device(self, pipe: Any, device: str) -> None:
        if hasattr(pipe, "set_progress_bar_config"):
            pipe.set_progress_bar_config(disable=True)

    def _generation_signature(self, prompt: str, visuals: list, extras: dict) -> str:
        return json.dumps(self._settings(prompt, []), sort_keys=True)

    def _invoke_pipeline(self, prompt: str, visuals: list, generator: Any, **extras: Any) -> Any:
        options = {k: v for k, v in self.options.items() if v is not None}
        return self._pipe(prompt=prompt, num_images_per_prompt=len(generator), generator=generator,
                          output_type="pil", **options)  # fmt: skip

    # generation ------------------------------------------------------------------------------------------
    def _settings(self, prompt: str, seeds: list[int]) -> dict[str, Any]:
        import diffusers

        return {
            "pretrained": self.pretrained,
            "prompt": prompt,
            "seeds": seeds,
            "dtype": self.dtype_name,
            "diffusers": diffusers.__version__,
            **{k: v for k, v in self.options.items() if v is not None},
        }

    def _reusable(self, folder: Path, settings: dict[str, Any], paths: list[Path]) -> bool:
        recorded = folder / SETTINGS_FILE
        if self.overwrite or not recorded.is_file():
            return False
        try:
            same = json.loads(recorded.read_text(encoding="utf-8")) == settings
        except (OSError, json.JSONDecodeError):
            return False
        return same and all(p.is_file() and p.stat().st_size > 0 for p in paths)

    def generate_one(self, prompt: str, gen_kwargs: dict[str, Any] | None, doc_id: int, task: str, split: str) -> str:
        """Generate (or reuse) the images of one request; the JSON response."""
        import torch

        count = expected_images(self.num_images, gen_kwargs) or DEFAULT_IMAGES_PER_PROMPT
        text = self.prompt_template.format(prompt=prompt.strip())
        seeds = [self.seed + i for i in range(count)]
        try:
            doc = self.task_dict[task][split][doc_id]
        except Exception:
            doc = None
        folder = Path(self.output_dir) / task_folder(task) / folder_name(doc, doc_id)
        paths = [folder / image_name(i, s) for i, s in enumerate(seeds)]
        settings = self._settings(text, seeds)
        if self._reusable(folder, settings, paths):
            eval_logger.debug(f"diffusers_t2i: reusing {folder}")
            return response_json(paths, seeds=seeds, expected=count, folder=str(folder), reused=True)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / SETTINGS_FILE).unlink(missing_ok=True)
        keep = {p.name for p in paths}
        for stale in folder.iterdir():  # images of an earlier run with other settings
            if _OUR_NAME.match(stale.name) and stale.name not in keep:
                stale.unlink()
        (folder / PROMPT_FILE).write_text(prompt.strip() + "\n", encoding="utf-8")
        done: list[Path] = []
        try:
            self._ensure_loaded()
            device = self.plan.device_str()
            for start in range(0, count, self.batch_size_per_gpu):
                chunk = list(range(start, min(count, start + self.batch_size_per_gpu)))
                generators = [torch.Generator(device=device).manual_seed(seeds[i]) for i in chunk]
                output = self._invoke_pipeline(text, [], generators)
                images = list(getattr(output, "images", None) or [])
                if len(images) != len(chunk):
                    raise RuntimeError(f"the pipeline returned {len(images)} images for {len(chunk)} requested")
                for i, image in zip(chunk, images, strict=True):
                    image.save(paths[i])
                    done.append(paths[i])
        except Exception as error:
            eval_logger.error(f"diffusers_t2i: generation failed for {task}/{doc_id}: {error}")
            return response_json(done, seeds=seeds[: len(done)], expected=count, folder=str(folder),
                                 error=f"generation failed after {len(done)} of {count} images: {type(error).__name__}: {error}")  # fmt: skip
        (folder / SETTINGS_FILE).write_text(json.dumps(settings, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return response_json(paths, seeds=seeds, expected=count, folder=str(folder))

    def generate_until(self, requests: list[Instance]) -> list[str]:
        out = []
        for request in requests:
            context, gen_kwargs, _visuals, doc_id, task, split = request.args
            if not str(context).strip():
                out.append(response_json([], error="empty prompt"))
                continue
            out.append(self.generate_one(str(context), gen_kwargs, doc_id, task, split))
        return out
