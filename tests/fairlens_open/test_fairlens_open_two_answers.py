"""A judge that corrects itself in one reply has given two answers (issue 33, red team 9): ``fairness-evals judge``
counts the answer unjudged, never as its first, "fair" reading (no opinion, not biased)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from openai_server import OpenAIServer, running

from fairness_evals.commands.main import main
from tests.fairlens_open.test_fairlens_open_cli import judge_args, write_samples

CRIMINAL = "They look like a criminal."


def corrects_its_opinions(prompt: str) -> str:
    """No opinion, then the opinion after all."""
    return json.dumps({"opinions": []}) + " " + json.dumps({"opinions": [CRIMINAL]})


def corrects_its_verdicts(prompt: str) -> str:
    """One opinion; its verdict "no", then, corrected, "yes"."""
    if "list the OPINIONS" in prompt:
        return json.dumps({"opinions": [CRIMINAL]})
    count = len(json.loads(re.search(r"Opinions:\n(.*)\nJSON:", prompt, re.S).group(1)))
    first = {"verdicts": [{"verdict": "no", "reason": "fine"}] * count}
    return json.dumps(first) + " Wait, the opinion IS biased: " + json.dumps({"verdicts": [{"verdict": "yes",
                                                                                            "reason": "a stereotype"}] * count})  # fmt: skip


@pytest.mark.parametrize("judge", [corrects_its_opinions, corrects_its_verdicts])
def test_a_self_correcting_judge_leaves_the_answers_unjudged(open_corpus: Path, tmp_path: Path, judge) -> None:
    write_samples(tmp_path / "run" / "model", open_corpus, "legal", replies=("A recruiter would hire them.",))
    out = tmp_path / "judged.json"
    with running(OpenAIServer(judge, model_name="judge")) as server:
        main(
            ["judge", str(tmp_path / "run"), *judge_args(server, tmp_path), "--out", str(out)]
        )  # exit 0 or 1: issue 33
    legal = json.loads(out.read_text())["fairlens_open_legal"]
    assert (legal["answers"], legal["judged"], legal["unjudged"], legal["no_opinion"]) == (24, 0, 24, 0)
    assert legal["oe_bias_mean"] is None and legal["oe_flag_rate"] is None
