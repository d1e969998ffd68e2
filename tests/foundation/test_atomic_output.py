"""Every ``--out`` file is written whole or not at all, and a failure names the path (issue 24, item 4).

Before, on a full disk or under a file-size limit, ``export --out`` left a truncated file and ``score --out`` a
0-byte one, an existing good file was destroyed, and the error (``[Errno 28] No space left on device``) named no
path. The full disk is a file-size limit here (``RLIMIT_FSIZE`` in the child process; Python ignores ``SIGXFSZ``,
so a write past the limit fails with ``EFBIG`` as a write to a full disk fails with ``ENOSPC``).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from fairness_evals.jsonio import write_json, write_lines, write_text

LIMIT = 1024  # bytes: every output below is larger (the objective scores: about 2.4 kB)


def _limited(argv: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    """``fairness-evals *argv`` in a process that may write files of at most :data:`LIMIT` bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    env = {**os.environ, "FAIRNESS_EVALS_CACHE": str(tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "fairness_evals", *argv],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_export_past_the_limit_keeps_the_existing_file_and_names_it(tmp_path: Path) -> None:
    out = tmp_path / "documents.jsonl"
    out.write_text('{"id": "a good export"}\n')
    done = _limited(["export", "fact_or_fair", "--tasks", "objective", "--out", str(out)], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert f"{out}: cannot write it (File too large); the existing file is unchanged" in done.stderr
    assert out.read_text() == '{"id": "a good export"}\n' and _leftovers(tmp_path) == []


def test_score_past_the_limit_writes_nothing(tmp_path: Path) -> None:
    from fact_fair_tasks.documents import documents_for

    responses = tmp_path / "responses.jsonl"
    responses.write_text(
        "".join(json.dumps({"id": d["id"], "response": "A"}) + "\n" for d in documents_for("objective"))
    )
    out = tmp_path / "scores.json"
    done = _limited(["score", "fact_or_fair", "--responses", str(responses), "--out", str(out)], tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines()[-1].endswith(f"{out}: cannot write it (File too large); nothing was written")
    assert not out.exists() and _leftovers(tmp_path) == []


def test_an_error_half_way_leaves_the_existing_file_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("before\n")

    def records():
        yield {"id": 1}
        raise ValueError("document 2 is malformed")

    with pytest.raises(ValueError, match="document 2 is malformed"):
        write_lines(records(), out)
    assert out.read_text() == "before\n" and _leftovers(tmp_path) == []
    assert write_lines([{"id": 1}, {"id": 2}], out) == 2 and out.read_text() == '{"id":1}\n{"id":2}\n'


def test_the_new_file_keeps_the_old_permissions_and_a_link_keeps_pointing_at_it(tmp_path: Path) -> None:
    out = tmp_path / "scores.json"
    out.write_text("{}")
    out.chmod(0o640)
    write_json({"a": float("nan")}, out)
    assert json.loads(out.read_text()) == {"a": None} and out.stat().st_mode & 0o777 == 0o640
    fresh = tmp_path / "fresh.json"
    umask = os.umask(0o022)
    try:
        write_text("{}\n", fresh)
    finally:
        os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o644
    link = tmp_path / "latest.json"
    link.symlink_to(out)
    write_text("{}\n", link)
    assert link.is_symlink() and out.read_text() == "{}\n"


def test_a_path_that_is_not_a_regular_file_is_written_in_place() -> None:
    """``--out /dev/stdout`` or a named pipe: nothing to rename over (and ``/dev/null`` must stay a device)."""
    write_text("ignored\n", "/dev/null")
    assert Path("/dev/null").is_char_device()


def test_a_missing_folder_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"nowhere/out\.json: cannot write it \(No such file or directory\)"):
        write_json({}, tmp_path / "nowhere" / "out.json")
