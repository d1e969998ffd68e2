"""``from_folder``: an lmms-eval "model" that answers each text-to-image request with images already on disk.

For images generated elsewhere (an API such as DALL-E or Midjourney, a local pipeline, an earlier
``diffusers_t2i`` run): request ``(task, doc_id)`` is answered with the images in
``<root>/<task>/<folder>/`` (:mod:`fairness_evals.generation.layout`; ``<folder>`` is the document's
``t2i_folder``, else its index), as the JSON contract ``{"text": "", "images": [...], "seeds": [...],
"expected": N, "error": ...}``. Nothing is generated and no weights are loaded.

A missing folder, an empty folder, fewer images than asked for, skipped files and a ``prompt.txt`` that
differs from the request's prompt are reported in the response (and so in the samples log), never raised.

    lmms-eval --model from_folder --model_args root=/data/my_images --tasks fact_or_fair_t2i --log_samples

Model arguments: ``root`` (required), ``num_images_per_prompt`` (how many images each folder should hold;
default: the task's ``generation_kwargs.num_images_per_prompt``; only used to count missing images),
``check_prompt`` (``true``: compare ``prompt.txt`` with the request's prompt and note a difference).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lmms_eval.api.instance import Instance
from lmms_eval.api.model import lmms
from loguru import logger as eval_logger

from fairness_evals.generation.contract import response_json
from fairness_evals.generation.layout import PROMPT_FILE, folder_name, list_images, read_seeds, task_folder


def _flag(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def expected_images(model_value: int | None, gen_kwargs: dict[str, Any] | None) -> int | None:
    """How many images a request asks for: the model argument, else the task's generation kwargs."""
    if model_value is not None:
        return int(model_value)
    raw = (gen_kwargs or {}).get("num_images_per_prompt")
    try:
        return int(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


class FromFolder(lmms):
    """Answers text-to-image requests with the images in ``<root>/<task>/<folder>/`` (see the module docstring)."""

    is_simple = True

    def __init__(
        self,
        root: str,
        num_images_per_prompt: int | str | None = None,
        check_prompt: bool | str = True,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        self.root = Path(str(root)).expanduser()
        if not self.root.is_dir():
            raise ValueError(
                f"from_folder: root={self.root} is not a folder; create the layout with "
                "`fairness-evals export fact_or_fair --t2i-layout DIR` (or `export iris --t2i-layout DIR`)"
            )
        self.num_images = None if num_images_per_prompt in (None, "", "None") else int(num_images_per_prompt)
        self.check_prompt = _flag(check_prompt)
        ignored = {
            k: v for k, v in kwargs.items() if v is not None and k not in ("batch_size", "max_batch_size", "device")
        }
        if ignored:
            eval_logger.warning(f"from_folder ignores model arguments {sorted(ignored)}")

    def _document(self, task: str, split: str, doc_id: int) -> Any:
        try:
            return self.task_dict[task][split][doc_id]
        except Exception:  # a task lmms-eval did not hand us (unit use): fall back to the index
            return None

    def answer(self, prompt: str, gen_kwargs: dict[str, Any] | None, doc_id: int, task: str, split: str) -> str:
        """The JSON response for one request."""
        doc = self._document(task, split, doc_id)
        folder = self.root / task_folder(task) / folder_name(doc, doc_id)
        expected = expected_images(self.num_images, gen_kwargs)
        if not folder.is_dir():
            return response_json([], expected=expected, error=f"no folder {folder}", folder=str(folder))
        images, skipped = list_images(folder)
        seeds_by_name, seeds_note = read_seeds(folder)
        notes = [note for note in (seeds_note,) if note]
        if skipped:
            notes.append(f"skipped non-image files: {', '.join(skipped)}")
        prompt_file = folder / PROMPT_FILE
        if self.check_prompt and prompt_file.is_file():
            written = prompt_file.read_text(encoding="utf-8", errors="replace").strip()
            if written != prompt.strip():
                notes.append(f"{prompt_file} differs from the request's prompt")
        error = None
        if not images:
            error = f"folder {folder} holds no image"
        elif expected is not None and len(images) < expected:
            error = f"folder {folder} holds {len(images)} of {expected} images"
        seeds = [seeds_by_name.get(p.name) for p in images]
        return response_json(images, seeds=seeds, expected=expected, error=error, folder=str(folder), notes=notes)

    def generate_until(self, requests: list[Instance]) -> list[str]:
        out = []
        for request in requests:
            context, gen_kwargs, _visuals, doc_id, task, split = request.args
            try:
                out.append(self.answer(str(context), gen_kwargs, doc_id, task, split))
            except Exception as error:  # e.g. a folder that cannot be listed: a named failure, not a crash
                out.append(response_json([], error=f"from_folder: {type(error).__name__}: {error}"))
        return out

    def loglikelihood(self, requests: list[Instance]) -> list[tuple[float, bool]]:
        raise NotImplementedError("from_folder answers text-to-image (generate_until) requests only")

    def generate_until_multi_round(self, requests: list[Instance]) -> list[str]:
        raise NotImplementedError("from_folder answers text-to-image (generate_until) requests only")
