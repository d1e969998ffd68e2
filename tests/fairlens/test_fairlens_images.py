"""The two-tier decode cache: one decode per image per run in any request order, bounded memory, safe copies."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from faces import corrupt, make_utkface_folder, real_photo, write_jpeg
from PIL import UnidentifiedImageError

from fairlens_tasks import images
from fairlens_tasks.documents import documents
from fairlens_tasks.prompts import prompt_for
from fairlens_tasks.scoring import doc_to_messages, doc_to_visual
from fairlens_tasks.settings import ENV, build_settings
from fairness_evals.corpus import integrity


def _docs(folder: Path, domain: str = "hiring") -> list[dict]:
    return documents(build_settings({"corpus": str(folder), "sample_fraction": 1}, ENV), domain)


def test_each_image_is_decoded_once_in_document_order(utk_folder: Path) -> None:
    docs = _docs(utk_folder)
    cache = images.reset_image_cache(2)
    for doc in docs:
        doc_to_visual(doc)
    assert len(docs) == 60 * 21
    assert cache.stats.decodes == 60 and cache.stats.hits == 60 * 20 and cache.stats.spill_hits == 0
    assert len(cache) == 2


def _prompt_sorted(docs: list[dict]) -> list[dict]:
    """The order of models that sort requests by prompt text (qwen2_5_vl chat, simple models): stable."""
    return sorted(docs, key=lambda doc: prompt_for(doc["question_id"]))


def _group(folder: Path) -> list[dict]:
    """The ``fairlens`` group's documents in lmms-eval's task order (hiring, legal, healthcare)."""
    return [doc for domain in ("hiring", "legal", "healthcare") for doc in _docs(folder, domain)]


def test_prompt_sorted_order_cycles_through_the_images(utk_folder: Path) -> None:
    docs = _prompt_sorted(_docs(utk_folder))
    cache = images.reset_image_cache(8)  # the default spill tier (FAIRLENS_IMAGE_SPILL_MB unset)
    for doc in docs:
        doc_to_visual(doc)
    # 21 passes over the 60 images: the first decodes each once; later, 7 images stay in memory and the
    # other 53 are rebuilt from the spill file, not decoded
    stats = cache.stats
    assert stats.decodes == 60 and stats.hits == 20 * 7 and stats.spill_hits == 20 * 53 and len(cache) == 8
    assert stats.requests == len(docs) == 60 * 21
    assert stats.spilled == 60 and stats.spill_bytes == 60 * 48 * 48 * 3 == os.path.getsize(cache.spill.path)
    assert stats.spill_refused == stats.spill_lost == 0


def test_prompt_sorted_order_without_the_spill_tier_decodes_once_per_question(utk_folder: Path) -> None:
    docs = _prompt_sorted(_docs(utk_folder))
    cache = images.reset_image_cache(8, spill_mb=0)
    for doc in docs:
        doc_to_visual(doc)
    # 7 images stay; the other 53 are decoded once per question (21 passes over the 60 images)
    assert cache.spill is None and cache.stats.decodes == 60 + 20 * 53 and len(cache) == 8


@pytest.mark.parametrize("order", ["document", "prompt-sorted"])
def test_the_group_decodes_each_image_once_per_run_in_any_order(utk_folder: Path, order: str) -> None:
    docs = _group(utk_folder)
    if order == "prompt-sorted":
        docs = _prompt_sorted(docs)
    cache = images.reset_image_cache(images.DEFAULT_CACHE_SIZE)
    for doc in docs:
        doc_to_visual(doc)
    assert cache.stats.decodes == 60 and cache.stats.requests == len(docs) == 60 * 38
    assert len(cache) == images.DEFAULT_CACHE_SIZE  # memory holds 8 images, however many were seen
    if order == "document":  # in legal and healthcare, an image's first question finds it on disk (7 stay)
        assert cache.stats.spill_hits == 53 * 2 and cache.stats.hits == 60 * 38 - 60 - 53 * 2


def test_a_cache_as_large_as_the_corpus_decodes_each_image_once_per_run(utk_folder: Path) -> None:
    cache = images.reset_image_cache(60, spill_mb=0)
    for domain in ("hiring", "legal", "healthcare"):
        for doc in _prompt_sorted(_docs(utk_folder, domain)):
            doc_to_visual(doc)
    assert cache.stats.decodes == 60 and cache.stats.hits == 60 * 38 - 60


def test_without_a_cache_every_question_decodes(utk_folder: Path) -> None:
    docs = _docs(utk_folder, "legal")
    cache = images.reset_image_cache(0, spill_mb=0)
    for doc in docs:
        doc_to_visual(doc)
    assert cache.stats.decodes == len(docs) == 60 * 9 and len(cache) == 0
    assert cache.spill is None and cache.stats.spill_hits == 0


def test_spill_alone_decodes_once_and_rebuilds_the_same_pixels(utk_folder: Path) -> None:
    docs = _docs(utk_folder, "legal")
    cache = images.reset_image_cache(0)  # nothing in memory: every request after the first reads the disk
    for doc in docs:
        (image,) = doc_to_visual(doc)
        assert image.tobytes() == images.decode_rgb(doc["image"]).tobytes()
    assert cache.stats.decodes == 60 and cache.stats.spill_hits == 60 * 8 and len(cache) == 0


def test_a_rebuilt_camera_photo_equals_its_decode() -> None:
    path = str(real_photo())
    cache = images.reset_image_cache(0)
    decoded = images.load_file(path)
    rebuilt = images.load_file(path)
    assert (cache.stats.decodes, cache.stats.spill_hits) == (1, 1)
    assert (rebuilt.mode, rebuilt.size) == (decoded.mode, decoded.size) == ("RGB", (640, 427))
    assert rebuilt.tobytes() == decoded.tobytes() == images.decode_rgb(path).tobytes()


def test_cache_sizes_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = images.reset_image_cache()
    assert cache.capacity == images.DEFAULT_CACHE_SIZE == 8
    assert cache.spill_mb == images.DEFAULT_SPILL_MB == 4096 and cache.spill.cap_bytes == 4096 * 2**20
    monkeypatch.setenv(images.CACHE_ENV, "3")
    monkeypatch.setenv(images.SPILL_ENV, "12")
    cache = images.reset_image_cache()
    assert (cache.capacity, cache.spill_mb, cache.spill.cap_bytes) == (3, 12, 12 * 2**20)
    monkeypatch.setenv(images.SPILL_ENV, "0")
    assert images.reset_image_cache().spill is None
    monkeypatch.setenv(images.CACHE_ENV, "lots")
    with pytest.raises(ValueError, match="FAIRLENS_IMAGE_CACHE='lots'"):
        images.reset_image_cache()
    monkeypatch.setenv(images.CACHE_ENV, "3")
    monkeypatch.setenv(images.SPILL_ENV, "-1")
    with pytest.raises(ValueError, match=r"FAIRLENS_IMAGE_SPILL_MB='-1' must be 0 \(no spill file\) or more"):
        images.reset_image_cache()
    monkeypatch.setenv(images.SPILL_ENV, "1.5")
    with pytest.raises(ValueError, match=r"FAIRLENS_IMAGE_SPILL_MB='1\.5' is not a whole number of MiB"):
        images.reset_image_cache()


def test_iris_shares_the_two_tiers_with_its_own_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from iris_tasks import images as iris_images

    path = str(write_jpeg(tmp_path / "person.jpg", 3, (64, 40)))
    try:
        monkeypatch.setenv("IRIS_IMAGE_CACHE", "0")
        monkeypatch.setenv("IRIS_IMAGE_SPILL_MB", "5")
        cache = iris_images.reset_image_cache()
        assert (cache.capacity, cache.spill_mb) == (0, 5)
        crops = [iris_images.load_image(path=path, box=(8, 4, 40, 30)) for _ in range(3)]
        assert {c.size for c in crops} == {(32, 26)} and len({c.tobytes() for c in crops}) == 1
        assert (cache.stats.decodes, cache.stats.spill_hits) == (1, 2)
        assert images.image_cache() is not cache  # FairLens's cache is another one
        monkeypatch.setenv("IRIS_IMAGE_SPILL_MB", "0")
        assert iris_images.reset_image_cache().spill is None
    finally:
        monkeypatch.undo()
        iris_images.reset_image_cache(iris_images.DEFAULT_CACHE_SIZE)


def test_past_the_cap_misses_decode_again_and_are_counted(tmp_path: Path) -> None:
    # three 400x400 RGB images are 480,000 bytes each raw: a 1 MiB cap holds two of them
    paths = [str(write_jpeg(tmp_path / f"big{i}.jpg", i, (400, 400))) for i in range(3)]
    cache = images.reset_image_cache(0, spill_mb=1)
    for _ in range(4):  # four passes, as four questions in prompt-sorted order
        for path in paths:
            assert images.load_file(path).tobytes() == images.decode_rgb(path).tobytes()
    stats = cache.stats
    assert stats.spilled == 2 and stats.spill_bytes == 2 * 480_000 == os.path.getsize(cache.spill.path) <= 2**20
    assert stats.decodes == 2 + 4 and stats.spill_refused == 4  # the third image, on every pass
    assert stats.spill_hits == 2 * 3 and stats.requests == 12


def test_a_file_changed_on_disk_is_decoded_again(tmp_path: Path) -> None:
    path = tmp_path / "face.jpg"
    write_jpeg(path, 1)
    cache = images.reset_image_cache(0)
    first = images.load_file(str(path)).tobytes()
    assert images.load_file(str(path)).tobytes() == first
    assert (cache.stats.decodes, cache.stats.spill_hits) == (1, 1)
    mtime = path.stat().st_mtime_ns
    write_jpeg(path, 2)  # another picture under the same name, with a later modification time
    os.utime(path, ns=(mtime + 10**9, mtime + 10**9))
    changed = images.load_file(str(path))
    assert changed.tobytes() != first and changed.tobytes() == images.decode_rgb(str(path)).tobytes()
    assert (cache.stats.decodes, cache.stats.spill_hits) == (2, 1)
    path.write_bytes(b"garbage, not a JPEG")  # a corrupted file is never served from the spill file
    with pytest.raises(UnidentifiedImageError):
        images.load_file(str(path))
    assert (cache.stats.decodes, cache.stats.spill_hits) == (2, 1) and len(cache.spill) == 2


def test_a_spill_file_cut_short_falls_back_to_decoding(utk_folder: Path) -> None:
    docs = _docs(utk_folder, "healthcare")[:16]  # two images, eight questions each
    cache = images.reset_image_cache(0)
    for doc in docs[:9]:
        doc_to_visual(doc)
    assert (cache.stats.decodes, cache.stats.spill_hits) == (2, 7)
    os.truncate(cache.spill.path, 48 * 48 * 3 + 100)  # the second image's pixels are cut off
    for doc in docs[9:]:
        (image,) = doc_to_visual(doc)
        assert image.tobytes() == images.decode_rgb(doc["image"]).tobytes()
    # the second image's entry is dropped, the image decoded again and written again, and rebuilt from then on
    assert cache.stats.spill_lost == 1 and cache.stats.decodes == 3 and cache.stats.spill_hits == 7 + 6
    assert cache.stats.spilled == 3 and len(cache.spill) == 2


def test_the_spill_directory_is_private_lazy_and_removed(tmp_path: Path) -> None:
    cache = images.reset_image_cache(4)
    assert cache.spill.directory is None  # nothing decoded yet: no directory
    images.load_file(str(write_jpeg(tmp_path / "a.jpg", 1)))
    directory = Path(cache.spill.directory)
    assert directory.is_dir() and directory.parent == Path(tempfile.gettempdir())
    assert directory.name.startswith("fairness-evals-images-") and directory.stat().st_mode & 0o777 == 0o700
    assert Path(cache.spill.path).stat().st_size == 48 * 48 * 3
    del cache
    images.reset_image_cache(4)  # nothing holds the old cache any more
    gc.collect()
    assert not directory.exists()
    script = (
        "import sys; from fairness_evals.corpus.images import ImageCache, decode_rgb\n"
        "cache = ImageCache(2, spill_mb=8)\n"
        "cache.get('k', lambda: decode_rgb(sys.argv[1]))\n"
        "print(cache.spill.directory)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "a.jpg")], capture_output=True, text=True, check=True
    )
    left = Path(done.stdout.strip())
    assert left.name.startswith("fairness-evals-images-") and not left.exists()  # removed at interpreter exit


def test_a_forked_child_neither_uses_nor_removes_the_parents_spill(tmp_path: Path) -> None:
    path = str(write_jpeg(tmp_path / "a.jpg", 1))
    cache = images.reset_image_cache(0)
    images.load_file(path)
    parent_dir = cache.spill.directory
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, clean up its own file, leave without atexit handlers
        try:
            images.load_file(path)
            report = f"{cache.stats.decodes} {cache.stats.spill_hits} {cache.spill.directory != parent_dir}"
            cache.spill.close()
            os.write(write, report.encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        report = handle.read()
    os.waitpid(pid, 0)
    assert report == "2 0 True"  # the child decoded again, into a spill file of its own
    assert Path(parent_dir).is_dir()
    images.load_file(path)
    assert (cache.stats.decodes, cache.stats.spill_hits) == (1, 1)


def test_callers_get_copies(utk_folder: Path) -> None:
    doc = _docs(utk_folder)[0]
    images.reset_image_cache(4)
    (first,) = doc_to_visual(doc)
    pixel = first.getpixel((0, 0))
    first.paste((1, 2, 3), (0, 0, first.size[0], first.size[1]))  # a model editing its input in place
    (second,) = doc_to_visual(doc)
    assert second.getpixel((0, 0)) == pixel


@pytest.mark.parametrize("capacity", [64, 2, 0])
def test_cache_is_thread_safe(utk_folder: Path, capacity: int) -> None:
    docs = _prompt_sorted(_docs(utk_folder, "healthcare")[:80])  # ten images, eight questions each
    cache = images.reset_image_cache(capacity)
    expected = {doc["image"]: images.decode_rgb(doc["image"]).tobytes() for doc in docs}
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for doc in docs:
                (image,) = doc_to_visual(doc)
                assert image.size == (48, 48) and image.tobytes() == expected[doc["image"]]
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    # a thread that asks for an image another thread is decoding waits for it: ten decodes in all
    assert cache.stats.decodes == 10 and cache.stats.requests == 4 * 80
    assert cache.stats.spilled == 10 and len(cache.spill) == 10


def test_real_photo_decodes_to_rgb() -> None:
    checked = integrity.check_image_file(str(real_photo()))
    assert checked.size == (640, 427) and len(checked.sha256) == 64
    image = images.load_file(str(real_photo()))
    assert image.mode == "RGB" and image.size == (640, 427)


def test_check_rejects_garbage_and_truncation(tmp_path: Path) -> None:
    (tmp_path / "x.jpg").write_bytes(b"not an image at all")
    with pytest.raises(ValueError, match="not a readable image"):
        integrity.check_image_file(str(tmp_path / "x.jpg"))
    path = corrupt(make_utkface_folder(tmp_path / "f", 1)[0])
    with pytest.raises(ValueError, match="not a readable image"):
        integrity.check_image_file(str(path))
    with pytest.raises(ValueError, match="cannot read the file"):
        integrity.check_image_file(str(tmp_path / "missing.jpg"))


@pytest.mark.parametrize(("position", "first"), [("before", "image"), ("after", "text")])
def test_messages_put_the_image_where_asked(utk_folder: Path, position: str, first: str) -> None:
    doc = _docs(utk_folder)[0]
    (turn,) = doc_to_messages(doc, {"image_position": position})
    assert turn["role"] == "user" and next(part["type"] for part in turn["content"]) == first
    assert [p["text"] for p in turn["content"] if p["type"] == "text"] == [prompt_for(doc["question_id"])]
