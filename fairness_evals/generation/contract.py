"""What a text-to-image model hands an lmms-eval task, in every form lmms-eval's generators use.

lmms-eval 0.7.3 has no image output type: a T2I task is ``generate_until`` with ``doc_to_visual`` returning
``[]``, and the model writes its images to disk and answers with a string. The generators disagree on the
string (``shared/notes/harness.md`` §3 "Image generation"):

- JSON ``{"text": "", "images": [paths]}`` (``bagel``, ``mmada``, ``qwen_image_edit``; the WISE task's
  contract). Our backends add ``"seeds"`` (one per image), ``"expected"`` (how many images the task
  asked for) and ``"error"`` (why some or all images are missing);
- a plain path of one image file (``DiffusersWMBase`` subclasses such as ``ltx_video``);
- a plain path of a **folder** (``wan2_1_t2i`` returns its per-task folder, in which document ``i``'s
  images are ``{i:04d}_s{k}.png``);
- a list of paths (a Python list a model returned, which lmms-eval stringifies);
- a failure marker (``[GENERATION_FAILED] ...``, ``[ERROR] ...``).

:func:`read_response` reads all of them into one :class:`GeneratedImages` and never raises; anything
else (e.g. a text model's prose) becomes an ``error`` that names what was received. :func:`response_json`
writes the JSON form. Pure Python: importing this module costs nothing.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: File name endings read as images (lower-cased comparison).
IMAGE_EXTENSIONS: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff")
#: Strings lmms-eval generation backends return instead of an output when generation failed.
FAILURE_PREFIXES: tuple[str, ...] = ("[GENERATION_FAILED]", "[ERROR]")
#: ``wan2_1_t2i``'s file names inside its per-task folder: ``{doc_id:04d}_s{seed_index}.png``.
_WAN_NAME = re.compile(r"^(\d{4,})_s(\d+)\.png$")
_SHOWN = 160  # characters of an unexpected response quoted in an error


@dataclass(frozen=True)
class GeneratedImages:
    """The images one response points to.

    Attributes
    ----------
    images : tuple of str
        Image paths in the order the model gave them (they may not exist: reading them is the scorer's job,
        which names the missing ones).
    seeds : tuple of (int or None)
        One per image: the seed the model reported, else None.
    expected : int or None
        How many images the model was asked for, when it says (our backends do).
    error : str or None
        Why the response holds no image, or fewer than expected (generation failure, missing folder, a
        text answer...). None when nothing went wrong.
    form : str
        Which form was read: ``json``, ``file``, ``folder``, ``list``, ``failure``, ``text`` or ``none``.
    notes : tuple of str
        Anything else worth logging (e.g. files skipped in a folder, seeds that did not match the images).
    """

    images: tuple[str, ...] = ()
    seeds: tuple[int | None, ...] = ()
    expected: int | None = None
    error: str | None = None
    form: str = "none"
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def missing(self) -> int:
        """Images asked for but not returned: ``max(0, expected - len(images))`` (0 when unknown)."""
        return max(0, self.expected - len(self.images)) if self.expected is not None else 0


def response_json(
    images: Sequence[str | os.PathLike[str]],
    *,
    seeds: Sequence[int | None] | None = None,
    expected: int | None = None,
    error: str | None = None,
    **extra: Any,
) -> str:
    """The JSON response of our backends: ``{"text": "", "images": [...], "seeds": [...], "expected", "error"}``.

    ``text`` is empty and ``images`` holds absolute paths, so lmms-eval tasks written for the WISE contract
    read it as they read ``bagel``'s. ``extra`` keys (e.g. ``"folder"``) are added as given.
    """
    paths = [str(Path(p).resolve()) for p in images]
    payload: dict[str, Any] = {"text": "", "images": paths}
    if seeds is not None:
        if len(seeds) != len(paths):
            raise ValueError(f"{len(seeds)} seeds for {len(paths)} images")
        payload["seeds"] = [None if s is None else int(s) for s in seeds]
    if expected is not None:
        payload["expected"] = int(expected)
    if error:
        payload["error"] = str(error)
    payload.update(extra)
    return json.dumps(payload, ensure_ascii=False)


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _SHOWN else flat[:_SHOWN] + "...")


def _int_or_none(value: Any) -> int | None:
    """An integer seed or count from JSON (int, integral float, or digit string); None otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _from_list(items: Sequence[Any], form: str) -> GeneratedImages:
    paths = tuple(os.path.expanduser(str(p).strip()) for p in items if str(p).strip())
    if not paths:
        return GeneratedImages(error="the response lists no image", form=form)
    return GeneratedImages(images=paths, seeds=(None,) * len(paths), form=form)


def _from_json(obj: dict[str, Any]) -> GeneratedImages:
    raw = obj.get("images", obj.get("image"))
    if isinstance(raw, str):
        raw = [raw]
    given = obj.get("notes")
    notes: list[str] = [str(n) for n in given] if isinstance(given, (list, tuple)) else []
    error = obj.get("error") or None
    if not isinstance(raw, (list, tuple)):
        error = error or "the JSON response has no 'images' list"
        raw = []
    images = tuple(os.path.expanduser(str(p).strip()) for p in raw if str(p).strip())
    seeds_raw = obj.get("seeds")
    seeds: tuple[int | None, ...] = (None,) * len(images)
    if isinstance(seeds_raw, (list, tuple)):
        if len(seeds_raw) == len(images):
            seeds = tuple(_int_or_none(s) for s in seeds_raw)
        else:
            notes.append(f"{len(seeds_raw)} seeds for {len(images)} images: seeds not recorded")
    expected = _int_or_none(obj.get("expected"))
    if not images and not error:
        error = "the JSON response lists no image"
    return GeneratedImages(
        images=images, seeds=seeds, expected=expected, error=None if error is None else str(error),
        form="json", notes=tuple(notes),
    )  # fmt: skip


def _from_folder(folder: Path, doc_index: int | None) -> GeneratedImages:
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTENSIONS)
    wan = [(p, _WAN_NAME.match(p.name)) for p in files]
    if any(match for _, match in wan):
        # wan2_1_t2i's layout: one folder per task, document i's images named {i:04d}_s{k}.png.
        if doc_index is None:
            return GeneratedImages(
                error=f"{folder}: a per-task folder of numbered images, but no document index", form="folder"
            )
        mine = sorted(
            ((int(m.group(2)), p) for p, m in wan if m and int(m.group(1)) == doc_index), key=lambda item: item[0]
        )
        if not mine:
            return GeneratedImages(error=f"{folder}: no image named {doc_index:04d}_s*.png", form="folder")
        return GeneratedImages(images=tuple(str(p) for _, p in mine), seeds=(None,) * len(mine), form="folder")
    if not files:
        return GeneratedImages(error=f"{folder}: the folder holds no image", form="folder")
    return GeneratedImages(images=tuple(str(p) for p in files), seeds=(None,) * len(files), form="folder")


def read_response(response: object, *, doc_index: int | None = None) -> GeneratedImages:
    """Read one model response in any of the forms in the module docstring; never raises.

    Parameters
    ----------
    response : object
        ``results[0]`` as lmms-eval passes it to ``process_results`` (normally a string).
    doc_index : int or None
        The document's index in the task (lmms-eval's ``doc_id``), used only for a per-task folder of
        numbered images (``wan2_1_t2i``).

    Returns
    -------
    GeneratedImages
        With ``error`` set (and possibly no image) when the response is a failure marker, empty, JSON
        without images, an empty folder, or text that is not a path.
    """
    try:
        return _read(response, doc_index)
    except Exception as error:  # a response this reader did not foresee is a named failure, never a crash
        return GeneratedImages(error=f"unreadable response ({type(error).__name__}: {error})", form="none")


def _read(response: object, doc_index: int | None) -> GeneratedImages:
    if isinstance(response, (list, tuple)):
        return _from_list(response, "list")
    if isinstance(response, dict):
        return _from_json(response)
    if response is None:
        return GeneratedImages(error="the model returned nothing", form="none")
    if not isinstance(response, str):
        return GeneratedImages(
            error=f"the model returned a {type(response).__name__}, not an image output", form="none"
        )
    text = response.strip()
    if not text:
        return GeneratedImages(error="the model returned an empty response", form="none")
    if text.startswith(FAILURE_PREFIXES):
        return GeneratedImages(error=f"generation failed: {_quote(text)}", form="failure")
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            return _from_json(obj)
    if text.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError:
            try:
                items = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                items = None
        if isinstance(items, (list, tuple)):
            return _from_list(items, "list")
    if "\n" not in text:
        path = Path(os.path.expanduser(text))
        try:
            is_dir, exists = path.is_dir(), path.exists()
        except OSError:  # e.g. a sentence too long to be a file name: it is text
            is_dir = exists = False
        if is_dir:
            return _from_folder(path, doc_index)
        if path.suffix.lower() in IMAGE_EXTENSIONS or exists:
            return GeneratedImages(images=(str(path),), seeds=(None,), form="file")
    return GeneratedImages(error=f"the model returned text, not an image output: {_quote(text)}", form="text")
