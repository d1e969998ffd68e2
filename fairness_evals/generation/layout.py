"""The folder layout that ``from_folder`` reads, ``diffusers_t2i`` writes and ``export --t2i-layout`` creates.

::

    <root>/
      README.md                  what to put where, and the commands that score it
      manifest.jsonl             one line per prompt: task, folder, doc_index, id, prompt, meta
      layout.json                the exports written here (several benchmarks can share a root)
      <task>/<folder>/           one folder per prompt (document) of the task
          prompt.txt             the exact prompt (for people and for a check by the backend)
          *.png | *.jpg | ...    the images generated for that prompt, any names, read in name order
          seeds.json             optional: {"<file name>": <seed>, ...}, recorded with each image

``<folder>`` is the document's ``t2i_folder`` field (e.g. ``03-crime_rate-highest``, ``doctor``,
``doctor-counter-skin``); a task without that field uses lmms-eval's document index. Files other than
images, ``prompt.txt``, ``seeds.json`` and ``README*`` are skipped and named. Pure Python.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fairness_evals.generation.contract import IMAGE_EXTENSIONS

#: The document field naming its folder (our T2I tasks set it; other tasks fall back to the doc index).
FOLDER_FIELD = "t2i_folder"
PROMPT_FILE = "prompt.txt"
SEEDS_FILE = "seeds.json"
MANIFEST_FILE = "manifest.jsonl"
README_FILE = "README.md"
INDEX_FILE = "layout.json"
#: Files of a prompt folder that are not images and are not reported as skipped.
_KNOWN_FILES = {PROMPT_FILE, SEEDS_FILE, "generation.json"}


def folder_name(doc: Mapping[str, Any] | None, doc_id: int | str) -> str:
    """The folder of one document: its ``t2i_folder`` field, else the document index as a string."""
    if isinstance(doc, Mapping):
        name = doc.get(FOLDER_FIELD)
        if isinstance(name, str) and name.strip():
            return name.strip()
    return str(doc_id)


def task_folder(task: str) -> str:
    """A task name as a folder name (``/`` and spaces replaced, as lmms-eval's generators do)."""
    return str(task).replace("/", "_").replace(" ", "_")


def list_images(folder: Path) -> tuple[list[Path], list[str]]:
    """The image files of a prompt folder in name order, and the names of the other files it skipped.

    Hidden files, ``prompt.txt``, ``seeds.json``, ``generation.json`` and ``README*`` are neither.
    """
    images: list[Path] = []
    skipped: list[str] = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        name = path.name
        if name.startswith(".") or name in _KNOWN_FILES or name.upper().startswith("README"):
            continue
        if path.is_file() and path.suffix.lower() in IMAGE_EXTENSIONS:
            images.append(path)
        else:
            skipped.append(name + ("/" if path.is_dir() else ""))
    return images, skipped


def read_seeds(folder: Path) -> tuple[dict[str, int], str | None]:
    """``seeds.json`` of a prompt folder as ``{file name: seed}``, and a note when it cannot be used."""
    path = folder / SEEDS_FILE
    if not path.exists():
        return {}, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        return {}, f"{path}: not readable JSON ({error}); seeds not recorded"
    if not isinstance(data, dict):
        return {}, f"{path}: expected an object {{file name: seed}}; seeds not recorded"
    seeds = {}
    for name, value in data.items():
        if isinstance(value, int) and not isinstance(value, bool):
            seeds[str(name)] = value
    ignored = len(data) - len(seeds)
    return seeds, (f"{path}: {ignored} entries are not integer seeds" if ignored else None)


def _line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _read_index(path: Path) -> dict[str, dict[str, Any]]:
    """The exports recorded in ``layout.json``; ``ValueError`` naming the file and what is wrong with it."""
    if not path.exists():
        return {}
    try:
        exports = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a layout index written by fairness-evals export ({error}); "
                         "use an empty folder or remove the file") from None  # fmt: skip
    if not isinstance(exports, dict):
        raise ValueError(f"{path}: not a layout index written by fairness-evals export (a {type(exports).__name__}, "
                         "expected an object of exports); use an empty folder or remove the file")  # fmt: skip
    for title, entry in exports.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("tasks"), dict):
            raise ValueError(f"{path}: entry {title!r} is not an export (no 'tasks' object); this layout.json was not "
                             "written by fairness-evals export: use an empty folder or remove the file")  # fmt: skip
        for key in ("command", "images_per_prompt", "images_per_prompt_source", "notes"):
            if key not in entry:
                raise ValueError(f"{path}: entry {title!r} lacks {key!r}; use an empty folder or remove the file")
    return exports


def _kept_manifest_lines(path: Path, replaced: set[str]) -> list[str]:
    """The manifest lines of the tasks not being exported now; ``ValueError`` naming a malformed line."""
    if not path.exists():
        return []
    kept = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: cannot be read ({error}); use an empty folder or remove the file") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not a manifest line ({error.msg}); use an empty folder or remove "
                             "the file") from None  # fmt: skip
        if not isinstance(record, dict) or not isinstance(record.get("task"), str):
            raise ValueError(
                f"{path}:{number}: not a manifest line (no 'task'); use an empty folder or remove the file"
            )
        if record["task"] not in replaced:
            kept.append(line)
    return kept


def _plan(root: Path, documents: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str, Mapping[str, Any]]]:
    """``(task, folder name, prompt, document)`` per document, after every check that needs no writing."""
    plan = []
    seen: set[tuple[str, str]] = set()
    for number, doc in enumerate(documents, start=1):
        missing = [k for k in ("task", FOLDER_FIELD, "prompt") if not str(doc.get(k, "")).strip()]
        if missing:
            raise ValueError(f"document {number} ({doc.get('id', '?')}) has no {', '.join(missing)}")
        task, name, prompt = str(doc["task"]), str(doc[FOLDER_FIELD]), str(doc["prompt"])
        if (task, name) in seen:
            raise ValueError(f"two documents of {task} share the folder {name!r}")
        seen.add((task, name))
        prompt_path = root / task_folder(task) / name / PROMPT_FILE
        if prompt_path.exists():
            try:
                held = prompt_path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as error:
                raise ValueError(f"{prompt_path}: cannot be read ({error})") from None
            if held != prompt.strip():
                raise ValueError(f"{prompt_path} holds a different prompt: this layout was made for other documents")
        plan.append((task, name, prompt, doc))
    return plan


def add_layout_argument(parser: argparse.ArgumentParser, *, instead_of: str, tasks: str, more: str = "") -> None:
    """``export --t2i-layout DIR``: the layout of the generation ``tasks`` (named in the help) in place of
    ``instead_of``."""
    parser.add_argument(
        "--t2i-layout", metavar="DIR",
        help=f"instead of {instead_of}, create the text-to-image folder layout in DIR (one folder per prompt of "
        f"{tasks}, a manifest and a README) for images generated elsewhere, scored by lmms-eval's from_folder "
        f"model{more}",
    )  # fmt: skip


def score_command(group: str) -> str:
    """The command that scores a filled layout of the task ``group`` (its ``{root}`` is the layout's folder)."""
    return (
        f"lmms-eval --model from_folder --model_args root={{root}} --tasks {group} "
        "--batch_size 1 --output_path results/ --log_samples"
    )


def announce(prog: str, counts: Mapping[str, int], folder: str) -> int:
    """Say on standard error how many prompt folders :func:`write_layout` made per task; the exit status 0."""
    summary = ", ".join(f"{task} {n}" for task, n in counts.items())
    print(f"{prog}: {summary} prompt folders in {folder}", file=sys.stderr)
    return 0


def write_layout(
    root: Path,
    documents: Iterable[Mapping[str, Any]],
    *,
    title: str,
    score_command: str,
    images_per_prompt: int,
    images_per_prompt_source: str,
    notes: Sequence[str] = (),
    meta_fields: Sequence[str] = (),
) -> dict[str, int]:
    """Create the layout under ``root`` for ``documents`` (each with ``task``, ``t2i_folder``, ``prompt``).

    Writes one folder with ``prompt.txt`` per document, the documents' lines of ``manifest.jsonl`` (in document
    order per task; ``doc_index`` counts within a task) and ``README.md``. Several exports can share a root
    (one ``from_folder`` run then scores them all): lines of other tasks are kept in the manifest, and the
    README has one section per export ``title`` (kept in ``layout.json``). Existing images are left alone, so
    re-exporting into a filled layout is safe. Everything is checked before anything is written: a document
    without a task, folder or prompt, two documents sharing a folder, a ``prompt.txt`` whose text differs (the
    layout belongs to other prompts), a ``layout.json``, ``manifest.jsonl`` or ``README.md`` that this command
    did not write, or a root that is a file each raise ``ValueError`` naming the problem and leave the folder as
    it was. Returns ``{task: number of folders}``.
    """
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise ValueError(f"{root}: not a folder")
    plan = _plan(root, documents)
    index_path = root / INDEX_FILE
    exports = _read_index(index_path)
    readme = root / README_FILE
    if readme.exists() and not exports:
        raise ValueError(f"{readme} exists but {index_path.name} does not: the folder holds something else; use an "
                         "empty folder for the layout")  # fmt: skip
    counts: dict[str, int] = {}
    for task, _, _, _ in plan:
        counts[task] = counts.get(task, 0) + 1
    kept = _kept_manifest_lines(root / MANIFEST_FILE, set(counts))
    root.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    index: dict[str, int] = {}
    for task, name, prompt, doc in plan:
        folder = root / task_folder(task) / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / PROMPT_FILE).write_text(prompt + "\n", encoding="utf-8")
        position = index.get(task, 0)
        index[task] = position + 1
        meta = {k: doc[k] for k in meta_fields if k in doc}
        lines.append(
            _line({"task": task, "folder": f"{task_folder(task)}/{name}", "doc_index": position, "id": doc.get("id"),
                   "prompt": prompt, "meta": meta})
        )  # fmt: skip
    (root / MANIFEST_FILE).write_text("".join(line + "\n" for line in [*kept, *lines]), encoding="utf-8")
    exports[title] = {
        "tasks": counts,
        "command": score_command.format(root=os.fspath(root.resolve())),
        "images_per_prompt": images_per_prompt,
        "images_per_prompt_source": images_per_prompt_source,
        "notes": list(notes),
    }
    index_path.write_text(json.dumps(exports, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    readme.write_text(_readme(exports), encoding="utf-8")
    return counts


def _readme(exports: Mapping[str, Mapping[str, Any]]) -> str:
    extensions = ", ".join(IMAGE_EXTENSIONS)
    sections = []
    for title, entry in exports.items():
        tasks = "\n".join(f"| `{task}` | {n} | `{task_folder(task)}/` |" for task, n in entry["tasks"].items())
        notes = "".join(f"- {note}\n" for note in entry["notes"])
        sections.append(f"""## {title}

Generate **{entry["images_per_prompt"]} images per prompt** ({entry["images_per_prompt_source"]}).

| task | prompts | folder |
|---|---|---|
{tasks}

{notes}
```bash
{entry["command"]}
```
""")
    return f"""# Images generated outside lmms-eval

One folder per prompt, `<task>/<folder>/`: generate the images with your model (an API such as DALL-E or
Midjourney, your own pipeline) and put them in that prompt's folder. `manifest.jsonl` lists every folder with its
prompt; each folder's `prompt.txt` holds the exact prompt. lmms-eval's `from_folder` model reads
`<root>/<task>/<folder>/` and answers each prompt with its images (commands below).

- Image files: {extensions} (any names; read in name order). Other files are skipped and reported.
- Optional `seeds.json` per folder, `{{"image-file-name.png": 1234, ...}}`: the seeds are recorded with each
  image in the samples log.
- A missing folder, an empty folder, fewer images than asked for, an unreadable image and an image without a
  face are each counted and named in the results and samples; none stops the run.

{chr(10).join(sections)}"""
