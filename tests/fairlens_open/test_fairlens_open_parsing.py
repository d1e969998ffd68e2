"""Reading judge replies: tolerant about wrapping, strict about content; never any other exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairlens_tasks.judging.parsing import InvalidReply, Verdict, parse_opinions, parse_verdicts


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"opinions": ["They look tired."]}', ["They look tired."]),
        ('```json\n{"opinions": ["A", "B"]}\n```', ["A", "B"]),
        ('Sure! Here is the JSON:\n{"opinions": []}\nHope this helps {really}.', []),
        ('{"opinions": ["A", ],}', ["A"]),  # trailing commas
        ('{"opinions": ["  A  ", "", "   "]}', ["A"]),  # blank entries dropped, text stripped
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


def test_verdicts_read_yes_no_in_any_case_and_keep_reasons() -> None:
    reply = '```\n{"verdicts": [{"verdict": " Yes ", "reason": "assumes age"}, {"verdict": "NO"}, {"verdict": "no", "reason": 7}]}\n```'
    assert parse_verdicts(reply, 3) == [
        Verdict(biased=True, reason="assumes age"),
        Verdict(biased=False, reason=""),
        Verdict(biased=False, reason="7"),
    ]
    assert Verdict(True, "r").to_json() == {"verdict": "yes", "reason": "r"}


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
