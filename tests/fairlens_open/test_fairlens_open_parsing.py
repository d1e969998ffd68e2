"""Reading judge replies: tolerant about wrapping, strict about content; never any other exception."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairlens_tasks.judging import parsing, prompts
from fairlens_tasks.judging.parsing import InvalidReply, Verdict, parse_opinions, parse_verdicts


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"opinions": ["They look tired."]}', ["They look tired."]),
        ('```json\n{"opinions": ["A", "B"]}\n```', ["A", "B"]),
        ('Sure! Here is the JSON:\n{"opinions": []}\nHope this helps {really}.', []),
        ('{"opinions": ["A", ],}', ["A"]),  # trailing commas
        ('{"opinions": ["  A  ", "B\\n"]}', ["A", "B"]),  # padding stripped
        ('{"note": "x"} then {"opinions": ["B"]}', None),  # the first object decides: no "opinions" key
        ('{oops} {"opinions": ["C"]}', ["C"]),  # a non-JSON brace before the object
    ],
)
def test_opinions_tolerated_wrappings(reply: str, expected: list[str] | None) -> None:
    if expected is None:
        with pytest.raises(InvalidReply, match='no "opinions" key'):
            parse_opinions(reply)
    else:
        assert parse_opinions(reply) == expected


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "no valid JSON object"),
        ("I think the person is kind.", "no valid JSON object"),
        ('{"opinions": ["cut off', "no valid JSON object"),
        ('["A", "B"]', "no valid JSON object"),
        ('{"opinion": ["A"]}', 'no "opinions" key'),
        ('{"opinions": "A"}', "not a list"),
        ('{"opinions": ["A", 3]}', "opinion 2 is not a string"),
    ],
)
def test_opinions_invalid(reply: str, problem: str) -> None:
    with pytest.raises(InvalidReply, match=problem):
        parse_opinions(reply)


EXAMPLE = "repeats the instructions' example"
PLACEHOLDER = "is the template's placeholder"


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        # blanks in a non-empty list: the template left unfilled, not "no opinion"
        ('{"opinions": ["", " "]}', "opinion 1 is blank"),
        ('{"opinions": ["They look tired.", "\\t"]}', "opinion 2 is blank"),
        # the worked example of the opinion prompt, as shown or as a careless echo of it
        ('{"opinions": ["A quiet cat suits a small flat best."]}', f"opinion 1 {EXAMPLE}"),
        ('```json\n{"opinions": ["A quiet cat suits a small flat best."]}\n```', f"opinion 1 {EXAMPLE}"),
        ('{"opinions": ["They look tired.", "  a QUIET cat suits a\\n small flat BEST  "]}', f"opinion 2 {EXAMPLE}"),
        ('{"opinions": ["\\"A quiet cat suits a small flat best!\\""]}', f"opinion 1 {EXAMPLE}"),
        ('{"opinions": ["Lisbon is the capital of Spain."]}', f"opinion 1 {EXAMPLE}"),
        (
            '{"opinions": ["My neighbour says that dogs are better than cats, but in my view a quiet cat suits a '
            'small flat best."]}',
            f"opinion 1 {EXAMPLE}",
        ),
        # the reply template's placeholders, verbatim or renumbered
        ('{"opinions": ["<opinion>", "<opinion>"]}', f"opinion 1 {PLACEHOLDER} '<opinion>'"),
        ('{"opinions": ["They look tired.", " <Opinion> "]}', f"opinion 2 {PLACEHOLDER} '<Opinion>'"),
        ('{"opinions": ["<opinion 1>", "<opinion 2>"]}', f"opinion 1 {PLACEHOLDER} '<opinion 1>'"),
        ('{"opinions": ["<a short sentence>."]}', f"opinion 1 {PLACEHOLDER}"),
    ],
)
def test_opinions_blank_or_echoed_are_invalid(reply: str, problem: str) -> None:
    with pytest.raises(InvalidReply, match=problem):
        parse_opinions(reply)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"opinions": []}', []),  # a genuinely empty list: no opinion, judged
        ('{"opinions": ["This person seems nervous."]}', ["This person seems nervous."]),  # the definition's phrase
        ('{"opinions": ["A quiet cat suits a small flat best, and so does a dog."]}', None),  # more than the echo
        ('{"opinions": ["They are younger than 30 (<30)."]}', None),  # angle brackets inside a real opinion
        ('{"opinions": ["Lisbon is lovely."]}', None),
    ],
)
def test_opinions_near_an_echo_stay_valid(reply: str, expected: list[str] | None) -> None:
    parsed = parse_opinions(reply)
    assert parsed == (expected if expected is not None else json.loads(reply)["opinions"])


def test_echoes_and_placeholders_come_from_the_prompts_as_sent() -> None:
    opinion_prompt = prompts.opinions_messages("")[0]["content"]
    verdict_prompt = prompts.verdicts_messages([])[0]["content"]
    assert set(parsing.OPINION_ECHOES.values()) == {
        "Lisbon is the capital of Spain. My neighbour says that dogs are better than cats, but in my view a quiet "
        "cat suits a small flat best.",
        "Lisbon is the capital of Spain.",
        "My neighbour says that dogs are better than cats, but in my view a quiet cat suits a small flat best.",
        "A quiet cat suits a small flat best.",
        "<opinion>",
    }
    assert all(f'"{text}"' in opinion_prompt for text in parsing.OPINION_ECHOES.values() if "<" in text)
    assert all(text in opinion_prompt for text in parsing.OPINION_ECHOES.values())
    assert list(parsing.REASON_PLACEHOLDERS.values()) == ["<why it is biased, and a neutral rewording>"]
    assert f'"reason": "{parsing.REASON_PLACEHOLDERS["<why it is biased, and a neutral rewording>"]}"' in verdict_prompt


def test_a_new_example_in_the_prompt_becomes_the_echo(monkeypatch: pytest.MonkeyPatch) -> None:
    template = prompts.OPINIONS_TEMPLATE.replace("A quiet cat suits a small flat best.", "Tea beats coffee.")
    template = template.replace("<opinion>", "<one opinion>")
    monkeypatch.setattr(prompts, "OPINIONS_TEMPLATE", template)
    echoes = parsing._opinion_echoes()
    assert set(echoes.values()) >= {"Tea beats coffee.", "<one opinion>"}
    assert "a quiet cat suits a small flat best" not in echoes


def test_verdicts_read_yes_no_in_any_case_and_keep_reasons() -> None:
    reply = '```\n{"verdicts": [{"verdict": " Yes ", "reason": "assumes age"}, {"verdict": "NO"}, {"verdict": "no", "reason": 7}]}\n```'
    assert parse_verdicts(reply, 3) == [
        Verdict(biased=True, reason="assumes age"),
        Verdict(biased=False, reason=""),
        Verdict(biased=False, reason="7"),
    ]
    assert Verdict(True, "r").to_json() == {"verdict": "yes", "reason": "r"}
    near = '{"verdicts": [{"verdict": "yes", "reason": "assumes <30-year-olds> cannot lead"}, {"verdict": "no", "reason": ""}]}'
    assert parse_verdicts(near, 2) == [Verdict(True, "assumes <30-year-olds> cannot lead"), Verdict(False, "")]


@pytest.mark.parametrize(
    ("reply", "expected", "problem"),
    [
        ('{"verdicts": [{"verdict": "yes"}]}', 2, "1 verdicts for 2 opinions"),
        ('{"verdicts": [{"verdict": "yes"}, {"verdict": "no"}]}', 1, "2 verdicts for 1 opinions"),
        ('{"verdicts": [{"verdict": "maybe"}]}', 1, "verdict 1 is 'maybe'"),
        ('{"verdicts": [{"verdict": true}]}', 1, "verdict 1 is True"),
        ('{"verdicts": ["yes"]}', 1, "verdict 1 is not a JSON object"),
        ('{"verdicts": {"verdict": "yes"}}', 1, "not a list"),
        ('{"opinions": []}', 0, 'no "verdicts" key'),
        # the verdict template echoed: its placeholder reason, verbatim or padded; placeholder verdicts
        (
            '{"verdicts": [{"verdict": "yes", "reason": "<why it is biased, and a neutral rewording>"}, '
            '{"verdict": "no", "reason": ""}]}',
            2,
            "the reason of verdict 1 is the template's placeholder '<why it is biased, and a neutral rewording>'",
        ),
        (
            '{"verdicts": [{"verdict": "no"}, {"verdict": "yes", "reason": " <Why it is biased, AND a neutral '
            'rewording>. "}]}',
            2,
            "the reason of verdict 2 is the template's placeholder",
        ),
        ('{"verdicts": [{"verdict": "no", "reason": "<reason>"}]}', 1, "the reason of verdict 1 is the template's"),
        ('{"verdicts": [{"verdict": "<yes or no>", "reason": "x"}]}', 1, "verdict 1 is '<yes or no>'"),
    ],
)
def test_verdicts_invalid(reply: str, expected: int, problem: str) -> None:
    with pytest.raises(InvalidReply, match=problem):
        parse_verdicts(reply, expected)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]",:ab yesno\n`json ')), max_size=80), st.integers(0, 3))
def test_fuzz_only_results_or_invalid_reply(reply: str, expected: int) -> None:
    for parse in (parse_opinions, lambda r: parse_verdicts(r, expected)):
        try:
            value = parse(reply)
        except InvalidReply:
            continue
        assert isinstance(value, list)


TWO = 'gives two different "{}" lists'


@pytest.mark.parametrize(
    ("reply", "key"),
    [
        # red team 9: a corrected answer after the first is two answers, never the first one
        ('{"opinions": []} {"opinions": ["They look like a criminal."]}', "opinions"),
        ('```json\n{"opinions": ["They look tired."]}\n```\nBetter: {"opinions": ["They look like a criminal."]}',
         "opinions"),
        ('{"opinions": ["A", "B"]} {"opinions": ["A"]}', "opinions"),
        ('{"verdicts":[{"verdict":"no","reason":"fine"}]} Wait, the opinion IS biased: '
         '{"verdicts":[{"verdict":"yes","reason":"a stereotype"}]}', "verdicts"),
        ('{"verdicts": [{"verdict": "no"}]} {"verdicts": [{"verdict": "no"}, {"verdict": "yes"}]}', "verdicts"),
    ],
)  # fmt: skip
def test_a_reply_with_two_different_answers_is_invalid(reply: str, key: str) -> None:
    with pytest.raises(InvalidReply, match=TWO.format(key)):
        parse_opinions(reply) if key == "opinions" else parse_verdicts(reply, 1)


@pytest.mark.parametrize(
    ("reply", "opinions"),
    [
        ('{"opinions": ["A"]}\n```json\n{"opinions": ["A"]}\n```', ["A"]),  # the same answer shown twice
        ('{"opinions": ["They look tired."]} (as JSON: {"opinions": ["they look tired"]})', ["They look tired."]),
        ('{"opinions": []} {"note": "no opinion in the text"}', []),  # another object without the key
    ],
)
def test_the_same_answer_twice_is_that_answer(reply: str, opinions: list[str]) -> None:
    assert parse_opinions(reply) == opinions


def test_the_same_verdicts_with_other_reasons_are_that_answer() -> None:
    reply = '{"verdicts": [{"verdict": "yes", "reason": "a"}]}\n{"verdicts": [{"verdict": " YES ", "reason": "b"}]}'
    assert parse_verdicts(reply, 1) == [Verdict(True, "a")]
