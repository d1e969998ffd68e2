"""FairLens open-ended questions through the real ``inspect eval``, judged by a loopback judge through Inspect's grader
model role: the judge's prompts and parser, the judgement cache (shared with ``fairness-evals judge``), and the
refusal rules of the judge backends.

The model server answers three kinds of text (``tests/inspect/runs.py``: unbiased sentences, one biased sentence of
two, nothing); the judge (:func:`openai_server.keyword_judge`) calls a sentence biased when it holds the keyword, so
every answer's bias score is known from its text.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.model import ModelOutput
from openai_server import OpenAIServer, keyword_judge, running, status

from fairlens_tasks.judging import inspect_scorer as judge
from fairlens_tasks.judging.backends import JudgeConfigError
from fairlens_tasks.judging.pipeline import ERROR, REFUSED
from fairness_evals.inspect.headline import headline_names
from fairness_evals.inspect.logs import LoggedTask, read_logs
from tests.inspect.runs import KEYWORD, MODEL, fairness_evals, inspect_eval, loopback_env, open_reply

pytestmark = pytest.mark.harness

JUDGE_MODEL = "keyword"
TASK = "fairlens_open_hiring"


def judged(tmp: Path, corpus: Path, judge_server: OpenAIServer, cache: Path, *grader: str) -> LoggedTask:
    """``fairlens_open_hiring`` on ``corpus`` with the judgement cache ``cache``, the grader given by ``grader`` (a model
    role, or -T judge), the judge at ``JUDGE_BASE_URL``."""
    args = ["-T", f"corpus={corpus}", "-T", "sample_fraction=1", "-T", f"judge_cache={cache}", *grader]
    with running(OpenAIServer(open_reply, model_name=MODEL)) as model:
        env = {**loopback_env(model), "JUDGE_BASE_URL": judge_server.base_url, "JUDGE_API_KEY": "judge-key"}
        proc = inspect_eval(tmp, [TASK], "--model", f"openai-api/local/{MODEL}", *args, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    (entry,) = read_logs([tmp / "logs"])
    assert entry.failures() == [], entry.failures()
    return entry


@dataclass(frozen=True)
class FirstRun:
    entry: LoggedTask
    judge: OpenAIServer
    cache: Path


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory, face_corpus: Path) -> FirstRun:
    """The task judged through ``--model-role grader=...`` by the keyword judge, with a new judgement cache."""
    tmp = tmp_path_factory.mktemp("open")
    cache = tmp / "judge.sqlite"
    with running(OpenAIServer(keyword_judge(KEYWORD), model_name=JUDGE_MODEL)) as server:
        entry = judged(tmp, face_corpus, server, cache, "--model-role", f"grader=openai-api/judge/{JUDGE_MODEL}")
    return FirstRun(entry, server, cache)


def expected_score(text: str) -> float | None:
    """The bias score of an answer by the keyword judge's rule: biased sentences / sentences; None when blank."""
    sentences = [s for s in text.split(".") if s.strip()]
    return None if not sentences else sum(KEYWORD in s for s in sentences) / len(sentences)


def test_every_answer_is_judged_through_the_grader_with_our_prompts(first_run: FirstRun) -> None:
    entry, server = first_run.entry, first_run.judge
    assert len(entry.samples) == entry.documents == 5 * 9
    texts = {s.reply for s in entry.samples}
    assert len(texts) == 3 and "" in texts  # the three kinds of answer
    for s in entry.samples:
        assert s.judgement is not None and s.judgement["status"] == "judged"
        assert s.record is not None and s.record["judge"].startswith(f"openai:{JUDGE_MODEL};")
        expected = expected_score(s.reply)
        biased = sum(v["verdict"] == "yes" for v in s.judgement["verdicts"])
        assert (expected is None and s.judgement["empty"]) or biased / len(s.judgement["opinions"]) == expected
    # each distinct non-blank answer judged once (two calls: opinions, verdicts); a blank answer needs no call
    assert server.requests == 2 * 2
    scores = [expected_score(s.reply) or 0.0 for s in entry.samples]
    assert math.isclose(entry.metrics["oe_bias_mean"], sum(scores) / len(scores), abs_tol=1e-12)
    assert entry.metrics["unjudged_rate"] == 0.0


def test_the_log_metrics_equal_the_judge_command_on_the_same_answers(
    first_run: FirstRun, face_corpus: Path, tmp_path: Path
) -> None:
    """``fairness-evals judge`` of the log's answers, same model, same decoding (JSON mode off, as Inspect asks) and the
    same cache: every judgement comes from the cache, and every metric is the log's."""
    entry = first_run.entry
    responses = tmp_path / "answers.jsonl"
    responses.write_text("".join(json.dumps({"id": s.id, "response": s.reply}) + "\n" for s in entry.samples))
    out = tmp_path / "judged.json"
    corpus = ["--corpus", str(face_corpus), "--sample-fraction", "1", "--domain", "hiring"]
    cache = ["--cache", str(first_run.cache)]
    with running(OpenAIServer(script=[status(400)], model_name=JUDGE_MODEL)) as nobody:
        grader = ["--judge", f"openai:{JUDGE_MODEL}", "--base-url", nobody.base_url, "--json-mode", "0"]
        proc = fairness_evals("judge", str(responses), *grader, *cache, *corpus, "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert nobody.requests == 0  # the Inspect judge's cache rows are the judge command's
    result = json.loads(out.read_text())[TASK]
    for name in headline_names(TASK):
        value, theirs = entry.metrics[name], result.get(name)
        assert (theirs is None and math.isnan(value)) or math.isclose(value, theirs, abs_tol=1e-9), name
    values, _ = entry.statistics()
    assert all(
        (result.get(k) is None and math.isnan(v)) or math.isclose(v, result[k], abs_tol=1e-9) for k, v in values.items()
    )


def test_a_second_run_takes_its_judgements_from_the_cache(
    first_run: FirstRun, face_corpus: Path, tmp_path: Path
) -> None:
    """The grader named by ``-T judge`` this time, at an address that refuses every request: nothing is asked."""
    entry = first_run.entry
    with running(OpenAIServer(script=[status(400)], model_name=JUDGE_MODEL)) as refusing:
        grader = ["-T", f"judge=openai-api/judge/{JUDGE_MODEL}"]
        again = judged(tmp_path, face_corpus, refusing, first_run.cache, *grader)
    assert refusing.requests == 0
    assert json.dumps(again.metrics) == json.dumps(entry.metrics)  # the same numbers (NaN where null)


# --------------------------------------------------------------------------- the refusal rules, in process
class Grader:
    """A stand-in for an Inspect model: ``generate`` returns ``output`` or raises ``error``."""

    def __init__(self, output: ModelOutput | None = None, error: BaseException | None = None) -> None:
        self.output, self.error, self.calls = output, error, 0

    def __str__(self) -> str:
        return f"openai-api/judge/{JUDGE_MODEL}"

    async def generate(self, messages: Any) -> ModelOutput:
        self.calls += 1
        if self.error is not None:
            raise self.error
        assert self.output is not None
        return self.output


class HTTPError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(f"status {code}")
        self.status_code = code


def outcome_of(grader: Grader, text: str, tmp_path: Path) -> Any:
    arguments = {**judge.JUDGE_ARGUMENTS, "judge_cache": str(tmp_path / "cache.sqlite")}
    settings = judge.judge_settings(grader, arguments)  # type: ignore[arg-type]
    return anyio.run(judge.judge, text, grader, settings)


@pytest.mark.parametrize(
    ("grader", "expected"),
    [
        (Grader(ModelOutput.from_content("m", "", stop_reason="content_filter")), REFUSED),
        (Grader(error=HTTPError(400)), REFUSED),
        (Grader(error=HTTPError(422)), REFUSED),
        (Grader(error=HTTPError(429)), ERROR),
        (Grader(error=HTTPError(500)), ERROR),
        (Grader(error=TimeoutError("slow")), ERROR),
    ],
    ids=["content filter", "400", "422", "429", "500", "timeout"],
)
def test_refusals_and_failed_calls_follow_the_backends_rules(grader: Grader, expected: str, tmp_path: Path) -> None:
    outcome = outcome_of(grader, f"An answer judged as {expected} ({id(grader)}).", tmp_path)
    assert outcome.status == expected and grader.calls == 1 and outcome.score is None


@pytest.mark.parametrize("code", [401, 403, 404])
def test_a_rejected_key_or_model_stops_the_run(code: int, tmp_path: Path) -> None:
    with pytest.raises(JudgeConfigError, match=f"HTTP {code}"):
        outcome_of(Grader(error=HTTPError(code)), f"An answer the judge cannot see ({code}).", tmp_path)


def test_a_refusal_is_cached_as_the_judges_answer(tmp_path: Path) -> None:
    """A refused answer is stored as refused (a refusal is final for this judge), so a later run reads it from the
    cache; the open scoring then withholds every bias score of the task (its rule)."""
    from fairlens_tasks.judging.cache import JudgmentCache, response_id, response_sha256
    from fairlens_tasks.judging.prompts import JUDGE_PROMPT_VERSION

    grader = Grader(ModelOutput.from_content("m", "", stop_reason="content_filter"))
    text = "An answer the filter stops."
    assert outcome_of(grader, text, tmp_path).status == REFUSED
    settings = judge.judge_settings(grader, {**judge.JUDGE_ARGUMENTS})  # type: ignore[arg-type]
    with JudgmentCache(tmp_path / "cache.sqlite", read_only=True) as cache:
        stored = cache.get_many(settings.identity, JUDGE_PROMPT_VERSION, {response_id(text): response_sha256(text)})
    assert [o.status for o in stored.values()] == [REFUSED]
