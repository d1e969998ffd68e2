"""The text of every IRIS understanding prompt (templates in ``data/questions.json``).

- ``iris_ifs_und``: one question per image, asking its occupation (:func:`occupation_prompt`);
- ``iris_rfs_und``: the static knowledge probe (:func:`probe_prompt`) with a blank image; the paper's
  "This is {a gender}, {age}, {skin_tone} adult." with our wording of the labels (``a female``,
  ``middle-aged``, ``dark-skinned``), then the bracket's occupations as a comma-separated list;
- ``iris_bis_und``: six 1-10 ratings and six yes/no questions per image (:func:`steer_prompt`),
  ``{occupation}`` being the set's occupation name and ``{a_occupation}`` the same with its article.
"""

from __future__ import annotations

from collections.abc import Sequence

from iris_tasks.vocabulary import Question, occupation_names, probe_wording, question, with_article


def occupation_prompt() -> str:
    return question("IFS1").text


def probe_prompt(combination: tuple[str, str, str], candidates: Sequence[str]) -> str:
    """The probe for one attribute combination and bracket (candidates are occupation ids, in order)."""
    gender, age, skin = combination
    words = probe_wording()
    names = occupation_names()
    return question("RFS1").text.format(
        a_gender=words["gender"][gender],
        age=words["age"][age],
        skin_tone=words["skin_tone"][skin],
        n=len(candidates),
        candidates=", ".join(names[c] for c in candidates),
    )


def steer_prompt(item: Question, occupation: str) -> str:
    name = occupation_names()[occupation]
    return item.text.format(occupation=name, a_occupation=with_article(name))
