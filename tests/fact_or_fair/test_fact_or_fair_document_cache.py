"""The on-disk document cache (:mod:`fact_fair_tasks.document_cache`): a hit is byte-identical to a build, any change
of a key or of the code and data misses, a damaged or forged entry is rebuilt rather than trusted (entries are signed with a
private per-installation key), concurrent writers leave one whole entry and one key, and an unwritable or disabled
cache costs only the build."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from fact_fair_tasks import document_cache, documents

SETTINGS = {"kind": "base", "seed": 0, "draws": 2, "conventions": "corrected"}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(tmp_path))
    monkeypatch.delenv("FAIRNESS_EVALS_DOCUMENT_CACHE", raising=False)
    document_cache._KEYS.clear()
    return tmp_path / document_cache.FOLDER


def built(kind: str = "base", **settings: object) -> pa.Table:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_EVALS_DOCUMENT_CACHE", "0")
        return documents.documents_table(kind, draws=2, **settings)[0]  # type: ignore[arg-type]


class Counting:
    """A build function that counts its calls."""

    def __init__(self, table: pa.Table) -> None:
        self.table, self.calls = table, 0

    def __call__(self) -> pa.Table:
        self.calls += 1
        return self.table


def entry(cache: Path) -> Path:
    (path,) = cache.glob(f"*{document_cache.SUFFIX}")
    return path


def test_a_hit_is_byte_identical_to_a_build(cache: Path) -> None:
    for kind in ("objective", "base", "attribution"):
        reference = built(kind)
        first, key = documents.documents_table(kind, draws=2)  # miss: built and stored
        documents._subjective_documents.cache_clear()
        documents._objective_documents.cache_clear()
        second, same_key = documents.documents_table(kind, draws=2)  # hit
        assert key == same_key
        assert documents._subjective_documents.cache_info().currsize == 0  # read, not built
        for table in (first, second):
            assert table.equals(reference, check_metadata=True)
            assert table.to_pylist() == reference.to_pylist()
    assert len(list(cache.glob("*.arrows"))) == 3 and not list(cache.glob("*.tmp"))


def test_load_or_build_builds_once(cache: Path) -> None:
    build = Counting(built())
    for _ in range(3):
        table, _ = document_cache.load_or_build(SETTINGS, build)
        assert table.equals(build.table)
    assert build.calls == 1


@pytest.mark.parametrize("change", [{"kind": "ingroup"}, {"seed": 1}, {"draws": 3}, {"conventions": "released"}])
def test_any_other_setting_misses(cache: Path, change: dict[str, object]) -> None:
    document_cache.load_or_build(SETTINGS, Counting(built()))
    build = Counting(built())
    document_cache.load_or_build({**SETTINGS, **change}, build)
    assert build.calls == 1
    assert document_cache.key({**SETTINGS, **change}) != document_cache.key(SETTINGS)


@pytest.mark.parametrize("source", document_cache.SOURCES)
def test_a_change_of_code_or_data_misses(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    """Every file in SOURCES (the builders and data/statistics.json, which holds the data version) is in the key."""
    document_cache.load_or_build(SETTINGS, Counting(built()))
    package = tmp_path / "package"
    for name in document_cache.SOURCES:
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(document_cache._PACKAGE / name, package / name)
    monkeypatch.setattr(document_cache, "_PACKAGE", package)
    document_cache.code_version.cache_clear()
    try:
        assert document_cache.key(SETTINGS) == entry(cache).name.removesuffix(document_cache.SUFFIX)  # same bytes
        with open(package / source, "ab") as handle:
            handle.write(b"\n")
        document_cache.code_version.cache_clear()
        build = Counting(built())
        document_cache.load_or_build(SETTINGS, build)
        assert build.calls == 1
    finally:
        document_cache.code_version.cache_clear()


def damage_flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def damage_truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(document_cache.MAGIC) + 100])


def damage_magic(path: Path) -> None:
    path.write_bytes(b"XXXXXXX\n" + path.read_bytes()[len(document_cache.MAGIC) :])


def damage_valid_digest_of_garbage(path: Path) -> None:
    import hashlib

    body = b"not an arrow stream" * 10
    path.write_bytes(document_cache.MAGIC + body + hashlib.sha256(body).digest())


def damage_empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize(
    "damage", [damage_flip, damage_truncate, damage_magic, damage_valid_digest_of_garbage, damage_empty]
)
def test_a_damaged_entry_is_rebuilt_not_trusted(cache: Path, damage, caplog: pytest.LogCaptureFixture) -> None:
    reference = built()
    document_cache.load_or_build(SETTINGS, Counting(reference))
    path = entry(cache)
    damage(path)
    build = Counting(reference)
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        table, _ = document_cache.load_or_build(SETTINGS, build)
    assert build.calls == 1 and table.equals(reference)
    assert "building the documents again" in caplog.text
    assert document_cache.read(path).equals(reference)  # rewritten whole
    again = Counting(reference)
    document_cache.load_or_build(SETTINGS, again)
    assert again.calls == 0


def test_an_entry_rewritten_with_a_recomputed_digest_is_not_trusted(
    cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 24 item 16: an entry replaced by other documents, with the sha256 digest recomputed, loaded as ours."""
    import hashlib

    reference = built()
    document_cache.load_or_build(SETTINGS, Counting(reference))
    path = entry(cache)
    forged = built(seed=1)  # well-formed documents, but not those of SETTINGS
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, forged.schema) as writer:
        writer.write_table(forged)
    body = sink.getvalue().to_pybytes()
    path.write_bytes(document_cache.MAGIC + body + hashlib.sha256(body).digest())
    build = Counting(reference)
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        table, _ = document_cache.load_or_build(SETTINGS, build)
    assert build.calls == 1 and table.equals(reference) and not table.equals(forged)
    assert "is not signed by this installation" in caplog.text


def test_the_key_is_private_made_once_and_refused_when_others_can_read_it(
    cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import os
    import stat

    document_cache.load_or_build(SETTINGS, Counting(built()))
    key = document_cache.key_path()
    assert key.parent == cache.parent and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert len(key.read_bytes()) == document_cache.KEY_BYTES
    assert not list(key.parent.glob("*.tmp"))
    first = key.read_bytes()
    document_cache._KEYS.clear()
    assert document_cache.installation_key() == first  # read again, not made again
    os.chmod(key, 0o644)
    document_cache._KEYS.clear()
    with caplog.at_level(logging.WARNING, logger="fairness_evals.fact_or_fair"):
        build = Counting(built())
        document_cache.load_or_build(SETTINGS, build)
        document_cache.load_or_build(SETTINGS, build)
    assert build.calls == 2  # no key to trust: the cache is neither read nor written
    assert "can be read or written by others (mode 644)" in caplog.text
    document_cache._KEYS.clear()


def test_disabled_cache_reads_and_writes_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRNESS_EVALS_DOCUMENT_CACHE", "0")
    build = Counting(built())
    document_cache.load_or_build(SETTINGS, build)
    document_cache.load_or_build(SETTINGS, build)
    assert build.calls == 2 and not cache.exists()


def test_an_unwritable_cache_costs_only_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("FAIRNESS_EVALS_CACHE", str(blocker))
    reference = built()
    table, _ = document_cache.load_or_build(SETTINGS, Counting(reference))
    assert table.equals(reference)


def test_least_recently_used_entries_go_beyond_the_size_bound(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    for seed in range(3):
        document_cache.load_or_build({**SETTINGS, "seed": seed}, Counting(built(seed=seed)))
    sizes = {p: p.stat().st_size for p in cache.glob("*.arrows")}
    assert len(sizes) == 3
    oldest = document_cache.folder() / f"{document_cache.key({**SETTINGS, 'seed': 0})}{document_cache.SUFFIX}"
    for age, path in enumerate(sorted(sizes, key=lambda p: p != oldest)):
        os.utime(path, (time.time() - 1000 + age, time.time() - 1000 + age))
    stale = cache / "entry.arrows.123.tmp"
    stale.write_bytes(b"partial")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    monkeypatch.setattr(document_cache, "MAX_BYTES", int(1.1 * sum(sizes.values())))  # three entries, not four
    document_cache.load_or_build({**SETTINGS, "seed": 3}, Counting(built(seed=3)))
    left = set(cache.glob("*.arrows"))
    assert oldest not in left and len(left) == 3 and not stale.exists()


_LOAD = """
import hashlib, json
from fact_fair_tasks import documents
table, _ = documents.documents_table("representativeness", draws=3)
print(hashlib.sha256(json.dumps(table.to_pylist(), sort_keys=True).encode()).hexdigest())
"""


def test_concurrent_processes_leave_one_whole_entry(cache: Path) -> None:
    """Three processes (three ranks of a data-parallel run) load the same documents into an empty cache at once."""
    import hashlib
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "FAIRNESS_EVALS_CACHE": str(cache.parent), "HF_DATASETS_OFFLINE": "1"}
    env.pop("FAIRNESS_EVALS_DOCUMENT_CACHE", None)
    processes = [
        subprocess.Popen([sys.executable, "-c", _LOAD], env=env, stdout=subprocess.PIPE, text=True) for _ in range(3)
    ]
    outputs = [process.communicate(timeout=300)[0].strip() for process in processes]
    assert [process.returncode for process in processes] == [0, 0, 0]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAIRNESS_EVALS_DOCUMENT_CACHE", "0")
        expected = documents.documents_table("representativeness", draws=3)[0].to_pylist()
    digest = hashlib.sha256(json.dumps(expected, sort_keys=True).encode()).hexdigest()
    assert outputs == [digest] * 3
    assert document_cache.read(entry(cache)).to_pylist() == expected
    assert not list(cache.glob("*.tmp"))
