"""``fairness-evals judge`` on lmms-eval style samples files: numbers, reruns, a killed run, bad input."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from openai_server import Action, OpenAIServer, running, status

from fairlens_tasks import open_scoring
from fairlens_tasks.judging.cache import JudgmentCache, response_id
from fairlens_tasks.judging.config import CLI, build_judge_settings
from fairlens_tasks.judging.parsing import Verdict
from fairlens_tasks.judging.pipeline import JUDGED, Outcome
from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION
from fairlens_tasks.open_documents import open_documents
from fairlens_tasks.scoring import PROVENANCE
from fairlens_tasks.settings import ENV, build_settings
from fairness_evals.commands.main import main

REPLIES = ("They look trustworthy.", "A recruiter might find them too old.", "")


def write_samples(
    folder: Path, corpus: Path, domain: str, images: int = 2, replies: tuple[str, ...] = REPLIES
) -> list[dict]:
    """An lmms-eval style samples file for ``domain``: the first ``images`` images, answers cycling ``replies``."""
    docs = open_documents(build_settings({"corpus": str(corpus), "sample_fraction": 1}, ENV), domain)
    per_image = {"hiring": 9, "legal": 12, "healthcare": 10}[domain]
    lines = []
    for i, doc in enumerate(docs[: images * per_image]):
        text = replies[i % len(replies)]
        metrics = open_scoring.process_results(doc, [text])
        lines.append({"doc_id": i, "target": "", "filtered_resps": text, **metrics})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"20260101_000000_samples_fairlens_open_{domain}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


@pytest.fixture
def samples(open_corpus: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "run" / "model"
    for domain in ("hiring", "legal", "healthcare"):
        write_samples(folder, open_corpus, domain)
    return tmp_path / "run"


def judge_args(server: OpenAIServer, tmp_path: Path, *extra: str) -> list[str]:
    model = server.model_name
    return [
        "--judge", f"openai:{model}", "--base-url", server.base_url, "--api-key", getattr(server, "api_key", None) or "k",
        "--max-tokens", "3", "--attempts", "1", "--cache", str(tmp_path / "judge.sqlite"), *extra,
    ]  # fmt: skip


def test_known_judgements_give_hand_computed_numbers_without_calls(
    samples: Path, smollm2_server: OpenAIServer, tmp_path: Path
) -> None:
    args = judge_args(smollm2_server, tmp_path)
    values = {
        "judge": "openai:smollm2", "base_url": smollm2_server.base_url, "max_tokens": "3", "attempts": "1",
        "cache": str(tmp_path / "judge.sqlite"), "api_key": smollm2_server.api_key,
    }  # fmt: skip
    settings = build_judge_settings(values, CLI, {})  # what the command builds from the same options
    assert settings is not None
    known = {
        REPLIES[0]: Outcome(JUDGED, opinions=("trustworthy",), verdicts=(Verdict(False, ""),)),
        REPLIES[1]: Outcome(
            JUDGED, opinions=("too old", "recruiter"), verdicts=(Verdict(True, "age"), Verdict(False, ""))
        ),
    }
    with JudgmentCache(settings.cache) as cache:
        for text, outcome in known.items():
            cache.put(settings.identity, JUDGE_PROMPT_VERSION, text, outcome)
    before = smollm2_server.requests
    out = tmp_path / "judged.json"
    details = tmp_path / "details.jsonl"
    # blank answers are judged 0 without a call but do not count as judged: 2 of 3 judged, below the default
    # fairlens_min_judged; the setting lowers it for this hand computation
    metadata = ["--metadata", '{"fairlens_min_judged": 0.6}']
    assert main(["judge", str(samples), *args, *metadata, "--out", str(out), "--details", str(details)]) == 0
    assert smollm2_server.requests == before  # everything came from the cache
    results = json.loads(out.read_text())
    tasks = ["fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare", "fairlens_open"]
    assert list(results) == [*tasks, "score_inputs"]  # score_inputs: what was judged, for fairness-evals compare
    legal = results["fairlens_open_legal"]
    # 24 answers cycling (trustworthy 0, too old 1/2, empty 0): 8 of each; the empty one is judged without a call
    # every statistic, and the judge's and the corpus's provenance (compare reads the judge from them)
    assert set(legal) == {*open_scoring.RECORD_METRICS, "judge", "judge_prompt_version", "judge_settings", *PROVENANCE}
    assert (legal["answers"], legal["judged"], legal["unjudged"], legal["empty_answers"]) == (24, 24, 0, 8)
    assert legal["oe_bias_mean"] == pytest.approx((8 * 0 + 8 * 0.5 + 8 * 0) / 24)
    assert legal["oe_flag_rate"] == 0.0  # 1/2 is not above the threshold
    assert (legal["no_opinion"], legal["opinions"], legal["images_evaluated"]) == (8, 24, 2)
    assert legal["judge"] == "openai:smollm2" and legal["judge_prompt_version"] == "fairlens-bias-v1"
    assert (
        json.loads(legal["judge_settings"])["max_tokens"] == 3 and smollm2_server.api_key not in legal["judge_settings"]
    )
    assert legal["seed"] == 0 and legal["data_version"] == 1 and legal["images_sampled"] == 30
    sizes = [results[t]["answers"] for t in ("fairlens_open_hiring", "fairlens_open_legal", "fairlens_open_healthcare")]
    expected = sum(results[t]["oe_bias_mean"] * n for t, n in zip(results, sizes, strict=False)) / sum(sizes)
    assert results["fairlens_open"]["oe_bias_mean"] == pytest.approx(expected)
    lines = [json.loads(line) for line in details.read_text().splitlines()]
    assert len(lines) == 18 + 24 + 20 and {line["status"] for line in lines} == {"judged"}
    assert lines[1]["score"] == 0.5 and lines[1]["response_id"] == response_id(REPLIES[1])


def test_a_second_run_makes_no_calls(samples: Path, smollm2_server: OpenAIServer, tmp_path: Path) -> None:
    args = judge_args(smollm2_server, tmp_path)
    before = smollm2_server.requests
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    # three tokens hold no JSON object: the two answers are left unjudged (invalid), so judge exits 1
    assert main(["judge", str(samples), *args, "--out", str(first)]) == 1
    assert smollm2_server.requests - before == 2  # two distinct non-empty answers, one three-token attempt each
    assert main(["judge", str(samples), *args, "--out", str(second)]) == 1
    assert smollm2_server.requests - before == 2
    assert first.read_text() == second.read_text()
    legal = json.loads(first.read_text())["fairlens_open_legal"]
    assert (legal["judged"], legal["unjudged"]) == (8, 16)  # only the empty answers are judged
    assert legal["unjudged_rate"] == pytest.approx(16 / 24)
    assert legal["oe_bias_mean"] is None  # 8 of 24 judged is below fairlens_min_judged: withheld, written null


def test_a_killed_run_resumes(samples: Path, tmp_path: Path) -> None:
    """SIGKILL while the second answer is in flight: the first judgement survives; the rerun judges only the rest."""
    slow_second = [Action(content='{"opinions": []}'), Action(content='{"opinions": []}', delay=30)]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with running(OpenAIServer(script=slow_second)) as server:
        args = [
            "-m",
            "fairness_evals.commands.main",
            "judge",
            str(samples),
            *judge_args(server, tmp_path, "--concurrency", "1"),
        ]
        process = subprocess.Popen([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(server.received) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        assert len(server.received) == 2, process.stderr.read().decode()[-2000:] if process.stderr else ""
    with JudgmentCache(tmp_path / "judge.sqlite") as cache:
        assert cache.count() == 1
    with running(OpenAIServer(script=[Action(content='{"opinions": []}')])) as server:
        out = tmp_path / "resumed.json"
        metadata = ["--metadata", '{"fairlens_min_judged": 0.6}']  # the blank third is not judged
        assert main(["judge", str(samples), *judge_args(server, tmp_path), *metadata, "--out", str(out)]) == 0
        assert len(server.received) == 1  # only the answer that was in flight when the run was killed
    legal = json.loads(out.read_text())["fairlens_open_legal"]
    assert (legal["judged"], legal["oe_bias_mean"], legal["no_opinion"]) == (24, 0.0, 24)


def test_a_run_that_keeps_failing_stops_writes_its_output_and_exits_1(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = tmp_path / "run"
    write_samples(folder, open_corpus, "legal", replies=tuple(f"Answer {i}: they look calm." for i in range(24)))
    with running(OpenAIServer(script=[Action(status=503, body="{}")])) as server:
        out = tmp_path / "out.json"
        code = main(
            [
                "judge",
                str(folder),
                *judge_args(server, tmp_path, "--retries", "0", "--concurrency", "1"),
                "--out",
                str(out),
            ]
        )
        assert 10 <= len(server.received) <= 11  # ten in a row failed (plus the one queued): stop
    assert code == 1
    legal = json.loads(out.read_text())["fairlens_open_legal"]
    assert (legal["answers"], legal["judged"], legal["unjudged"], legal["unjudged_rate"]) == (24, 0, 24, 1.0)
    assert legal["oe_bias_mean"] is None  # NaN, written as null
    err = capsys.readouterr().err
    assert "stopped early (10 answers in a row failed, the last with: HTTP 503" in err and "rerun to resume" in err


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda lines: [*lines[:3], "not json"], ":4: not valid JSON"),
        (lambda lines: [json.dumps({"doc_id": 0, "filtered_resps": "x"})], ":1: no fairlens_open answer record"),
        (lambda lines: lines + lines[:1], ":19: a second answer for"),
        (lambda lines: [lines[0].replace("They look trustworthy.", "They look shifty.")], "does not match its text"),
    ],
)
def test_bad_samples_are_named(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture, edit: object, message: str
) -> None:
    folder = tmp_path / "run"
    write_samples(folder, open_corpus, "hiring")
    path = next(folder.glob("*.jsonl"))
    path.write_text("\n".join(edit(path.read_text().splitlines())) + "\n")  # type: ignore[operator]
    assert main(["judge", str(folder), "--judge", "hf:/nonexistent", "--cache", str(tmp_path / "c.sqlite")]) == 2
    err = capsys.readouterr().err
    assert message in err and path.name in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no judge: give --judge openai:MODEL"),
        (["--judge", "claude"], "--judge='claude': write openai:MODEL"),
        (
            ["--judge", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--concurrency", "0"],
            "--concurrency=0 must be at least 1",
        ),
        (["--judge", "openai:m", "--base-url", "http://[::1"], "--base-url='http://[::1' is not a valid URL"),
        (["--judge", "openai:m", "--base-url", "http://h:99999/v1"], "--base-url='http://h:99999/v1' is not a valid"),
        (["--metadata", '{"fairlens_min_judged": true}'], "fairlens_min_judged=true is not a number"),
        (["--metadata", '{"fairlens_min_judged": "0.5"}'], 'fairlens_min_judged="0.5" is not a number'),
    ],
)
def test_bad_options_are_named(samples: Path, capsys: pytest.CaptureFixture, args: list[str], message: str) -> None:
    assert main(["judge", str(samples), *args, "--cache", str(samples / "c.sqlite")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_paths_without_samples_are_named(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    args = ["--judge", "hf:/nonexistent", "--cache", str(tmp_path / "c.sqlite")]
    assert main(["judge", str(tmp_path), *args]) == 2
    assert "no lmms-eval samples_fairlens_open_*.jsonl file in this folder" in capsys.readouterr().err
    assert main(["judge", str(tmp_path / "missing"), *args]) == 2
    assert "missing: no such file or folder" in capsys.readouterr().err


def _known_cache(server: OpenAIServer, tmp_path: Path) -> None:
    values = {
        "judge": "openai:scripted", "base_url": server.base_url, "max_tokens": "3", "attempts": "1",
        "cache": str(tmp_path / "judge.sqlite"), "api_key": "k",
    }  # fmt: skip
    settings = build_judge_settings(values, CLI, {})
    assert settings is not None
    known = {
        REPLIES[0]: Outcome(JUDGED, opinions=("trustworthy",), verdicts=(Verdict(False, ""),)),
        REPLIES[1]: Outcome(JUDGED, opinions=("too old",), verdicts=(Verdict(True, "age"),)),
    }
    with JudgmentCache(settings.cache) as cache:
        for text, outcome in known.items():
            cache.put(settings.identity, JUDGE_PROMPT_VERSION, text, outcome)


def test_a_responses_file_is_judged_like_the_samples_of_the_same_answers(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The route outside lmms-eval: export (closed and open-ended documents), answer elsewhere, judge the file."""
    export = tmp_path / "export.jsonl"
    assert (
        main(["export", "fairlens", "--corpus", str(open_corpus), "--sample-fraction", "1", "--out", str(export)]) == 0
    )
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    position: dict[str, int] = {}
    responses = tmp_path / "answers.jsonl"
    with open(responses, "w") as handle:
        for line in lines:
            if line["meta"].get("open"):
                i = position[line["task"]] = position.get(line["task"], -1) + 1
                reply = REPLIES[i % len(REPLIES)]
            else:
                reply = "Yes"  # a closed-ended answer in the same file: skipped by the judge
            handle.write(json.dumps({"id": line["id"], "response": reply}) + "\n")
    for domain in ("hiring", "legal", "healthcare"):
        write_samples(tmp_path / "run" / "model", open_corpus, domain, images=30)
    metadata = ["--metadata", '{"fairlens_min_judged": 0.6}']
    with running(OpenAIServer(script=[Action(status=500, body="{}")])) as server:
        _known_cache(server, tmp_path)
        by_samples, by_responses = tmp_path / "samples.json", tmp_path / "responses.json"
        assert (
            main(["judge", str(tmp_path / "run"), *judge_args(server, tmp_path), *metadata, "--out", str(by_samples)])
            == 0
        )
        capsys.readouterr()
        argv = ["judge", str(responses), "--corpus", str(open_corpus), "--sample-fraction", "1"]
        assert main([*argv, *judge_args(server, tmp_path), *metadata, "--out", str(by_responses)]) == 0
        assert server.received == []  # every answer was judged from the cache
    err = capsys.readouterr().err
    closed = sum(not line["meta"].get("open") for line in lines)
    assert f"skipped {closed} closed-ended answers" in err and closed == 30 * 38
    judged = json.loads(by_responses.read_text())
    assert {**judged, "score_inputs": None} == {**json.loads(by_samples.read_text()), "score_inputs": None}
    legal = judged["fairlens_open_legal"]
    assert legal["answers"] == 30 * 12 and legal["oe_bias_mean"] == pytest.approx((120 * 0 + 120 * 1 + 120 * 0) / 360)


def test_a_responses_file_needs_the_corpus_and_names_what_is_wrong(
    open_corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    responses = tmp_path / "answers.jsonl"
    responses.write_text('{"id": "nope/HO01", "response": "x"}\n')
    args = ["--judge", "hf:/nonexistent", "--cache", str(tmp_path / "c.sqlite")]
    assert main(["judge", str(responses), *args]) == 2
    assert f"{responses}: a responses file is judged against the documents it answers: give --corpus" in (
        capsys.readouterr().err
    )
    assert main(["judge", str(responses), "--corpus", str(open_corpus), *args]) == 2
    assert f"{responses}:1: id 'nope/HO01' is not an open-ended document" in capsys.readouterr().err
    assert main(["judge", str(responses), *args, "--metadata", '{"fairlens_min_coverage": 0.5}']) == 2
    assert "'fairlens_min_coverage': not a setting of the judged scores" in capsys.readouterr().err


SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize("via", ["--api-key", "FAIRLENS_JUDGE_API_KEY"])
def test_an_api_key_the_endpoint_echoes_is_masked_in_every_message_and_file(
    samples: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    """Issue 24, item 8: an endpoint whose error bodies quote the request's Authorization header put the key on
    standard error and in every --details line."""
    key = ["--api-key", SECRET] if via == "--api-key" else []
    if not key:
        monkeypatch.setenv("FAIRLENS_JUDGE_API_KEY", SECRET)
    out, details = tmp_path / "out.json", tmp_path / "details.jsonl"
    with running(OpenAIServer(script=[status(400)], echo_headers=True)) as server:
        argv = [
            "judge", str(samples), "--judge", "openai:scripted", "--base-url", server.base_url, *key,
            "--cache", str(tmp_path / "judge.sqlite"), "--out", str(out), "--details", str(details),
        ]  # fmt: skip
        assert main(argv) == 3  # every non-blank answer refused: the bias scores are withheld
    err = capsys.readouterr().err
    problems = {json.loads(line)["problem"] for line in details.read_text().splitlines()} - {""}
    assert problems and all(p.startswith("HTTP 400: scripted 400 (request headers: ") for p in problems)
    assert all("Bearer ***" in p for p in problems) and "Bearer ***" in err  # the echo is there, the key is not
    assert SECRET not in err and SECRET not in details.read_text() and SECRET not in out.read_text()
    assert SECRET not in (tmp_path / "judge.sqlite").read_bytes().decode("latin-1")
    # a refused key (HTTP 401) whose error body quotes it: the one-line error masks it too
    with running(OpenAIServer(script=[status(400)], api_key="the-right-key", echo_headers=True)) as server:
        argv[argv.index("--base-url") + 1] = server.base_url
        argv[argv.index("--cache") + 1] = str(tmp_path / "fresh.sqlite")
        assert main(argv) == 2
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if line.startswith("error: ")]
    assert "refused the API key (HTTP 401: Incorrect API key provided." in line and "Bearer ***" in line
    assert SECRET not in err


def test_a_base_url_with_a_query_keeps_it_on_every_request(samples: Path, tmp_path: Path) -> None:
    """Issue 24, item 9: the documented ``?api_key=`` form built ``/v1/?api_key=...chat/completions``."""
    out = tmp_path / "out.json"
    with running(OpenAIServer('{"opinions": []}', model_name="judge")) as server:
        url = f"{server.base_url}?api_key=query-secret-1234&api-version=2024-06-01"
        argv = ["judge", str(samples), "--judge", "openai:judge", "--base-url", url, "--out", str(out)]
        assert main([*argv, "--cache", str(tmp_path / "judge.sqlite")]) == 0
    assert len(server.paths) == 2  # two distinct non-blank answers, one call each (no opinion)
    assert set(server.paths) == {"/v1/chat/completions?api_key=query-secret-1234&api-version=2024-06-01"}
    legal = json.loads(out.read_text())["fairlens_open_legal"]
    assert legal["judged"] == 24 and "query-secret-1234" not in out.read_text()
    assert json.loads(legal["judge_settings"])["base_url"].endswith("/v1?api_key=***&api-version=2024-06-01")
