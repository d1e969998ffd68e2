"""A very long reply is parsed from a bounded window and its file is read a line at a time (issue 34; red team
finding 12).

Before, one 200 MB reply in a responses file took 3.1 GB and 55 s to score (15x its size; ``bench/long_reply.py``):
the file was read whole, split, and every parser copied the reply several times. Now each parser reads a window
(:mod:`fairness_evals.reply_window`: a reply of up to 1 MiB characters whole, so no shorter reply's outcome changes)
and ``score`` streams its input (:func:`fairness_evals.jsonio.response_lines`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fact_fair_tasks.parsing import PARSED, UNPARSED, parse_answer
from fairlens_tasks.judging.parsing import InvalidReply, parse_verdicts
from fairlens_tasks.normalise import normalise
from fairness_evals.reply_window import LIMIT

FILLER = "The statistics of the United States vary by region, and many factors play a part in them. "
OPTIONS = [["male"], ["female"]]


def _filler(characters: int) -> str:
    return (FILLER * (characters // len(FILLER) + 1))[:characters]


def test_a_reply_up_to_the_limit_is_read_whole() -> None:
    """An answer in the middle of a reply of exactly :data:`LIMIT` characters counts, as before."""
    half = (LIMIT - len('{"answer": "B"}')) // 2
    reply = _filler(half) + '{"answer": "B"}' + _filler(LIMIT - half - len('{"answer": "B"}'))
    assert len(reply) == LIMIT
    assert parse_answer(reply, OPTIONS) == parse_answer(reply[: half + 40], OPTIONS)
    assert parse_answer(reply, OPTIONS).status == PARSED and parse_answer(reply, OPTIONS).letter == "B"


def test_fact_or_fair_reads_what_follows_the_last_think_and_both_ends() -> None:
    thinking = "<think>" + _filler(3 * LIMIT) + " so the answer is A. </think>"
    parsed = parse_answer(thinking + ' {"answer": "B"}', OPTIONS)
    assert (parsed.status, parsed.letter, parsed.rule) == (PARSED, "B", "json")
    both = '{"answer": "A"} ' + _filler(3 * LIMIT) + ' {"answer": "B"}'  # two answers, one at each end
    assert parse_answer(both, OPTIONS).status == UNPARSED and parse_answer(both, OPTIONS).rule == "json:several"
    middle = _filler(LIMIT) + ' {"answer": "B"} ' + _filler(LIMIT)  # the middle of a long reply is not read
    assert parse_answer(middle, OPTIONS).status == UNPARSED


def test_fairlens_iris_and_judge_read_their_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    options = ["Yes", "No", "Cannot tell"]
    assert normalise("Yes. " + _filler(3 * LIMIT), options).option == "Yes"
    assert normalise(_filler(LIMIT) + " Yes " + _filler(LIMIT), options).option is None  # the middle is not read

    from iris_tasks.commands import CLI
    from iris_tasks.documents import build
    from iris_tasks.scoring import readable_record
    from iris_tasks.settings import build_settings

    monkeypatch.setenv("IRIS_EMBEDDER", "none")  # the occupation named, or none: no embedding stage
    doc = build("iris_rfs_und", build_settings({"probe_rounds": 1}, CLI))[0]  # a probe: which of four occupations
    named = doc["candidates"][0]
    assert readable_record(doc, f"{named}\n" + _filler(3 * LIMIT))["answer"] == named
    assert readable_record(doc, _filler(LIMIT) + f"\n{named}\n" + _filler(LIMIT))["answer"] == ""

    verdicts = '{"verdicts": [{"verdict": "yes", "reason": "r"}]}'
    assert parse_verdicts(verdicts + _filler(3 * LIMIT), 1)[0].biased
    with pytest.raises(InvalidReply, match="no valid JSON object"):
        parse_verdicts(_filler(LIMIT) + verdicts, 1)  # the first JSON object is read from the reply's start


def test_one_long_reply_costs_a_few_times_its_size(tmp_path: Path) -> None:
    """``fairness-evals score`` of a responses file whose first reply is 40 MB: its peak memory grows by at most 5x
    the file (it grew 15x), and the reply, a long explanation ending in its answer, is parsed."""
    from fact_fair_tasks.documents import documents_for

    docs = documents_for("objective")
    short, long = tmp_path / "short.jsonl", tmp_path / "long.jsonl"
    for path, first in ((short, "B"), (long, _filler(40_000_000) + ' {"answer": "B"}')):
        rows = [{"id": docs[0]["id"], "response": first}] + [{"id": d["id"], "response": "A"} for d in docs[1:]]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    peaks = {}
    for path in (short, long):
        child = subprocess.Popen(
            [sys.executable, "-m", "fairness_evals", "score", "fact_or_fair", "--tasks", "objective", "--responses",
             str(path), "--out", str(path.with_suffix(".json"))],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        _, status, usage = os.wait4(child.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        peaks[path] = usage.ru_maxrss * 1024
        scores = json.loads(path.with_suffix(".json").read_text())["fact_or_fair_objective"]
        assert scores["parsed"] == len(docs)
    growth = (peaks[long] - peaks[short]) / long.stat().st_size
    assert growth < 5, f"peak memory grew {growth:.1f}x the file's size"
