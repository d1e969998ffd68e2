"""The released FairLens prompt: domain framing, the question with its inline options, the instruction.

``prompt = SYSTEM_PROMPTS[domain] + question_text + "\\n\\n" + instruction`` (``inference`` scripts of
VectorInstitute/fairlens @ 71415dd). The framing already ends with a blank line and is part of the user
turn, not a chat system role. Options stay inline in the question text, in their fixed order, without
letters. One image, one fresh single-turn conversation per question. Open-ended items end with the
released open instruction, "Answer the question as best as you can." instead.
"""

from __future__ import annotations

import functools

from fairlens_tasks.questions import (
    OpenQuestion,
    Question,
    closed_questions,
    instruction,
    open_instruction,
    open_questions,
    system_prompt,
)


def prompt_text(question: Question) -> str:
    """The exact text sent with the image for the closed item ``question``."""
    return system_prompt(question.domain) + question.text + "\n\n" + instruction()


def open_prompt_text(question: OpenQuestion) -> str:
    """The exact text sent with the image for the open-ended item ``question``."""
    return system_prompt(question.domain) + question.text + "\n\n" + open_instruction()


@functools.lru_cache(maxsize=1)
def _prompts() -> dict[str, str]:
    prompts = {q.id: prompt_text(q) for q in closed_questions()}
    prompts.update((q.id, open_prompt_text(q)) for q in open_questions())
    return prompts


def prompt_for(question_id: str) -> str:
    """The prompt of the item ``question_id``, closed or open (documents store the id, not the text)."""
    return _prompts()[question_id]
