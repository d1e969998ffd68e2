"""The bounded decode cache: one decode per image in document order, bounded memory, safe copies."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from faces import corrupt, make_utkface_folder, real_photo

from fairlens_tasks import images
from fairlens_tasks.documents import documents
from fairlens_tasks.prompts import prompt_for
from fairlens_tasks.scoring import doc_to_messages, doc_to_visual
from fairlens_tasks.settings import ENV, build_settings


def _docs(folder: Path, domain: str = "hiring") -> list[dict]:
    return documents(build_settings({"corpus": str(folder), "sample_fraction": 1}, ENV), domain)


def test_each_image_is_decoded_once_in_document_order(utk_folder: Path) -> None:
    docs = _docs(utk_folder)
    cache = images.reset_image_cache(2)
    for doc in docs:
        doc_to_visual(doc)
    assert len(docs) == 60 * 21
    assert cache.stats.decodes == 60 and cache.stats.hits == 60 * 20
    assert len(cache) == 2


def _prompt_sorted(docs: list[dict]) -> list[dict]:
    """The order of models that sort requests by prompt text (qwen2_5_vl chat, simple models): stable."""
    return sorted(docs, key=lambda doc: prompt_for(doc["question_id"]))


def test_prompt_sorted_order_cycles_through_the_images(utk_folder: Path) -> None:
    docs = _prompt_sorted(_docs(utk_folder))
    cache = images.reset_image_cache(8)
    for doc in docs:
        doc_to_visual(doc)
    # 7 images stay; the other 53 are decoded once per question (21 passes over the 60 images)
    assert cache.stats.decodes == 60 + 20 * 53 and len(cache) == 8


def test_a_cache_as_large_as_the_corpus_decodes_each_image_once_per_run(utk_folder: Path) -> None:
    cache = images.reset_image_cache(60)
    for domain in ("hiring", "legal", "healthcare"):
        for doc in _prompt_sorted(_docs(utk_folder, domain)):
            doc_to_visual(doc)
    assert cache.stats.decodes == 60 and cache.stats.hits == 60 * 38 - 60


def test_without_a_cache_every_question_decodes(utk_folder: Path) -> None:
    docs = _docs(utk_folder, "legal")
    cache = images.reset_image_cache(0)
    for doc in docs:
        doc_to_visual(doc)
    assert cache.stats.decodes == len(docs) == 60 * 9 and len(cache) == 0


def test_cache_size_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(images.CACHE_ENV, "3")
    assert images.reset_image_cache().capacity == 3
    monkeypatch.setenv(images.CACHE_ENV, "lots")
    with pytest.raises(ValueError, match="FAIRLENS_IMAGE_CACHE='lots'"):
        images.reset_image_cache()


def test_callers_get_copies(utk_folder: Path) -> None:
    doc = _docs(utk_folder)[0]
    images.reset_image_cache(4)
    (first,) = doc_to_visual(doc)
    pixel = first.getpixel((0, 0))
    first.paste((1, 2, 3), (0, 0, first.size[0], first.size[1]))  # a model editing its input in place
    (second,) = doc_to_visual(doc)
    assert second.getpixel((0, 0)) == pixel


def test_cache_is_thread_safe(utk_folder: Path) -> None:
    docs = _docs(utk_folder, "healthcare")[:80]
    cache = images.reset_image_cache(64)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for doc in docs:
                (image,) = doc_to_visual(doc)
                assert image.size == (48, 48)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert cache.stats.decodes + cache.stats.hits == 4 * 80


def test_real_photo_decodes_to_rgb() -> None:
    checked = images.check_image_file(str(real_photo()))
    assert checked.size == (640, 427) and len(checked.sha256) == 64
    image = images.load_file(str(real_photo()))
    assert image.mode == "RGB" and image.size == (640, 427)


def test_check_rejects_garbage_and_truncation(tmp_path: Path) -> None:
    (tmp_path / "x.jpg").write_bytes(b"not an image at all")
    with pytest.raises(ValueError, match="not a readable image"):
        images.check_image_file(str(tmp_path / "x.jpg"))
    path = corrupt(make_utkface_folder(tmp_path / "f", 1)[0])
    with pytest.raises(ValueError, match="not a readable image"):
        images.check_image_file(str(path))
    with pytest.raises(ValueError, match="cannot read the file"):
        images.check_image_file(str(tmp_path / "missing.jpg"))


@pytest.mark.parametrize(("position", "first"), [("before", "image"), ("after", "text")])
def test_messages_put_the_image_where_asked(utk_folder: Path, position: str, first: str) -> None:
    doc = _docs(utk_folder)[0]
    (turn,) = doc_to_messages(doc, {"image_position": position})
    assert turn["role"] == "user" and next(part["type"] for part in turn["content"]) == first
    assert [p["text"] for p in turn["content"] if p["type"] == "text"] == [prompt_for(doc["question_id"])]
