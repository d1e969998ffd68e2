"""The released FairLens prompt: domain framing, the question with its inline options, the instruction.

``prompt = SYSTEM_PROMPTS[domain] + question_text + "\\n\\n" + instruction`` (``inference`` scripts of
VectorInstitute/fairlens @ 71415dd). The framing already ends with a blank line and is part of the user
turn, not a chat system role. Options stay inline in the question text, in their fixed order, without
letters. One image, one fresh single-turn conversation per question.
"""

from __future__ import annotations

import functools

from fairlens_tasks.questions import Question, closed_questions, instruction, system_prompt


def prompt_text(question: Question) -> str:
    """The exact text sent with the image for ``question``."""
    return system_prompt(question.domain) + question.text + "\n\n" + instruction()


@functools.lru_cache(maxsize=1)
def _prompts() -> dict[str, str]:
    return {q.id: prompt_text(q) for q in closed_questions()}


def prompt_for(question_id: str) -> str:
    """The prompt of the closed item ``question_id`` (documents store the id, not the 300-character text)."""
    return _prompts()[question_id]
