"""How an IRIS understanding run is configured: which corpora, which sample, the probe, the mapper.

lmms-eval 0.7.3 has no task-argument flag, so the tasks read environment variables (which lmms-eval passes
through, and which its ``--config`` file can set under ``env:``), as the FairLens tasks do.

============================ =================================================================== ==========
environment variable         meaning                                                             default
============================ =================================================================== ==========
IRIS_CORPUS                  image corpus of ``iris_ifs_und`` (and of the SDS half of            none
                             ``iris_rfs_und``): a FACET ``annotations.csv`` (or a folder holding
                             it), a CSV / JSON-lines / JSON manifest, or ``hf:NAME``
IRIS_IMAGE_ROOT              FACET only: the folder holding the FACET images (searched by file   the CSV's
                             name, sub-folders included)                                          folder
IRIS_STEER_CORPUS            counterfactual sets of ``iris_bis_und``: a manifest or ``hf:NAME``  none
                             with a ``pair_id`` (set id) per image
IRIS_SAMPLE_FRACTION         seeded stratified fraction of the images (IFS) / sets (BIS), (0, 1] 1
IRIS_MAX_PER_CELL            at most this many images per occupation x gender x age x skin cell  no cap
IRIS_SEED                    sampling and probe-bracket seed                                     0
IRIS_ON_BAD_INPUT            ``stop``: bad input stops the run; ``skip``: skip and count it      stop
IRIS_HF_SPLIT                split of an ``hf:`` IRIS_CORPUS                                     only/test
IRIS_HF_COLUMNS              ``image=COL,occupation=COL,gender=COL,age=COL,skin_tone=COL``       role names
IRIS_STEER_HF_SPLIT          split of an ``hf:`` IRIS_STEER_CORPUS                               only/test
IRIS_STEER_HF_COLUMNS        as IRIS_HF_COLUMNS, plus ``pair_id=COL``                            role names
IRIS_LABEL_MAP               JSON (text or file) renaming label values, e.g.                     none
                             ``{"age": {"adult": "middle"}, "occupation": {"cop": "lawman"}}``
IRIS_PROBE_ROUNDS            reshuffles of the RFS-Und probe per attribute combination           5
IRIS_PROBE_BRACKET           occupations per probe question (2, 4, 13, 26 or 52)                 4
IRIS_MAPPING_THRESHOLD       cosine threshold of the mapper's embedding stage                    0.6
IRIS_EMBEDDER                sentence-transformers folder, or ``none`` (see iris_tasks.embedder)  MiniLM
IRIS_IMAGE_CACHE             decoded images kept in memory                                       8
IRIS_IMAGE_SPILL_MB          cap of the on-disk tier of raw decoded pixels, MiB; 0 = off          4096
IRIS_MIN_COVERAGE            least share of a score's answers that must count (mapped, parsed)   0.5
                             for the score to be reported (``iris_min_coverage`` in score
                             ``--metadata``); below it the score and its interval are NaN
============================ =================================================================== ==========
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals.corpus.settings import (
    HF_PREFIX,  # noqa: F401  (other modules import it from here)
    SettingsError,
    corpus_location,
    hf_columns,
    label_map,
    skip_bad_input,
)

IMAGE_ROLES = ("image", "occupation", "gender", "age", "skin_tone")
STEER_ROLES = (*IMAGE_ROLES, "pair_id")
LABEL_MAP_KEYS = ("occupation", "gender", "age", "skin_tone")
BRACKET_SIZES = (2, 4, 13, 26, 52)  # the divisors of 52 above 1: every bracket has the same size

DEFAULTS: dict[str, Any] = {
    "sample_fraction": 1.0,
    "seed": 0,
    "probe_rounds": 5,
    "probe_bracket": 4,
    "threshold": 0.6,
    "min_coverage": 0.5,
}

ENV = {
    "corpus": "IRIS_CORPUS",
    "image_root": "IRIS_IMAGE_ROOT",
    "steer_corpus": "IRIS_STEER_CORPUS",
    "sample_fraction": "IRIS_SAMPLE_FRACTION",
    "max_per_cell": "IRIS_MAX_PER_CELL",
    "seed": "IRIS_SEED",
    "on_bad_input": "IRIS_ON_BAD_INPUT",
    "hf_split": "IRIS_HF_SPLIT",
    "hf_columns": "IRIS_HF_COLUMNS",
    "steer_hf_split": "IRIS_STEER_HF_SPLIT",
    "steer_hf_columns": "IRIS_STEER_HF_COLUMNS",
    "label_map": "IRIS_LABEL_MAP",
    "probe_rounds": "IRIS_PROBE_ROUNDS",
    "probe_bracket": "IRIS_PROBE_BRACKET",
    "threshold": "IRIS_MAPPING_THRESHOLD",
    "min_coverage": "IRIS_MIN_COVERAGE",
}
#: How a setting is named where the caller's ``names`` do not name it (the score command's ``--metadata`` keys).
METADATA_NAMES = {"min_coverage": "iris_min_coverage"}

CLI_HOW_TO_CONFIGURE = {
    "corpus": (
        "give --corpus: a FACET annotations.csv (images under --image-root), a CSV or JSON-lines manifest (columns "
        "path, occupation, gender, age, skin_tone) or hf:NAME (see iris_tasks/README.md, 'Corpora')"
    ),
    "steer_corpus": (
        "give --steer-corpus: a CSV or JSON-lines manifest of counterfactual sets (columns path, occupation, gender, "
        "age, skin_tone, pair_id) or hf:NAME (see iris_tasks/README.md, 'Corpora')"
    ),
}
HOW_TO_CONFIGURE = {
    "corpus": (
        "set IRIS_CORPUS to a FACET annotations.csv (images under IRIS_IMAGE_ROOT), a CSV or JSON-lines manifest "
        "(columns path, occupation, gender, age, skin_tone) or hf:NAME, e.g. `IRIS_CORPUS=/data/facet/annotations.csv "
        "IRIS_IMAGE_ROOT=/data/facet/images lmms-eval --tasks iris_ifs_und ...`, or put it under `env:` in an "
        "lmms-eval --config file (see iris_tasks/README.md, 'Corpora')"
    ),
    "steer_corpus": (
        "set IRIS_STEER_CORPUS to a CSV or JSON-lines manifest of counterfactual sets (columns path, occupation, "
        "gender, age, skin_tone, pair_id) or hf:NAME, e.g. `IRIS_STEER_CORPUS=/data/steer.csv lmms-eval --tasks "
        "iris_bis_und ...`, or put it under `env:` in an lmms-eval --config file (see iris_tasks/README.md, 'Corpora')"
    ),
}


@dataclass(frozen=True)
class Settings:
    """Everything that decides what an IRIS understanding run asks."""

    corpus: str | None = None
    image_root: str | None = None
    steer_corpus: str | None = None
    sample_fraction: float = 1.0
    max_per_cell: int | None = None
    seed: int = 0
    skip_bad_input: bool = False
    hf_split: str | None = None
    hf_columns: tuple[tuple[str, str], ...] = tuple((r, r) for r in IMAGE_ROLES)
    steer_hf_split: str | None = None
    steer_hf_columns: tuple[tuple[str, str], ...] = tuple((r, r) for r in STEER_ROLES)
    label_map: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    probe_rounds: int = 5
    probe_bracket: int = 4
    threshold: float = 0.6
    min_coverage: float = 0.5
    names: Mapping[str, str] = field(default_factory=lambda: ENV, compare=False, hash=False, repr=False)

    def label_map_dict(self) -> dict[str, dict[str, str]]:
        return {attribute: dict(pairs) for attribute, pairs in self.label_map}

    def require(self, which: str) -> str:
        """The corpus ``which`` ("corpus" or "steer_corpus"), or SettingsError saying how to set it."""
        value = getattr(self, which)
        if not value:
            task = "iris_ifs_und" if which == "corpus" else "iris_bis_und"
            raise SettingsError(f"IRIS ({task}) has no image corpus to evaluate: {self.how_to_configure(which)}")
        return value

    def name(self, key: str) -> str:
        """How the caller names setting ``key`` (an environment variable, a command-line option or a metadata key)."""
        return self.names.get(key) or METADATA_NAMES.get(key) or ENV[key]

    def how_to_configure(self, which: str) -> str:
        """How to give the corpus ``which`` in the caller's terms (environment variables, or the command's options)."""
        from_cli = self.name(which).startswith("--")
        return (CLI_HOW_TO_CONFIGURE if from_cli else HOW_TO_CONFIGURE)[which]


def _number(raw: Any, name: str, kind: type, low: float, high: float, hint: str) -> Any:
    """``raw`` (a number, or the text of an environment variable or option) as ``kind`` within [low, high]; ``true``
    and ``false`` are not numbers."""
    try:
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise TypeError
        value = kind(str(raw).strip()) if kind is int else kind(raw)
    except (TypeError, ValueError):
        raise SettingsError(f"{name}={raw!r} is not a number; {hint}") from None
    if not (isinstance(value, int) or math.isfinite(value)) or not low <= value <= high:
        raise SettingsError(f"{name}={raw!r} is out of range; {hint}")
    return value


def _label_map(raw: str | None, name: str) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    return label_map(raw, name, LABEL_MAP_KEYS, example='{"age": {"adult": "middle"}}', use=", ".join(LABEL_MAP_KEYS))


def _corpus(raw: Any, name: str) -> str | None:
    if raw is None or not str(raw).strip():
        return None
    return corpus_location(str(raw).strip(), name)


def build_settings(values: Mapping[str, Any], names: Mapping[str, str]) -> Settings:
    """Settings from raw ``values`` (keys as in :data:`ENV`); ``names`` says how to name them in errors."""

    def given(key: str) -> bool:
        return values.get(key) not in (None, "")

    skip = skip_bad_input(values.get("on_bad_input"), names["on_bad_input"])
    image_root = values.get("image_root")
    if given("image_root"):
        image_root = str(Path(str(image_root)).expanduser().resolve())
        if not Path(image_root).is_dir():
            raise SettingsError(f"{names['image_root']}={values['image_root']!r}: no such folder")
    bracket = DEFAULTS["probe_bracket"]
    if given("probe_bracket"):
        bracket = _number(values["probe_bracket"], names["probe_bracket"], int, 2, 52, "use 2, 4, 13, 26 or 52")
        if bracket not in BRACKET_SIZES:
            raise SettingsError(
                f"{names['probe_bracket']}={bracket} must divide the 52 occupations evenly: use 2, 4, 13, 26 or 52"
            )
    cap = None
    if given("max_per_cell"):
        cap = _number(values["max_per_cell"], names["max_per_cell"], int, 1, 10**9, "give a whole number >= 1")
    return Settings(
        corpus=_corpus(values.get("corpus"), names["corpus"]),
        image_root=image_root or None,
        steer_corpus=_corpus(values.get("steer_corpus"), names["steer_corpus"]),
        sample_fraction=_number(
            values["sample_fraction"], names["sample_fraction"], float, 1e-12, 1.0, "give a fraction in (0, 1]"
        )
        if given("sample_fraction")
        else DEFAULTS["sample_fraction"],
        max_per_cell=cap,
        seed=_number(values["seed"], names["seed"], int, 0, 2**63 - 1, "give a whole number >= 0")
        if given("seed")
        else DEFAULTS["seed"],
        skip_bad_input=skip,
        hf_split=str(values["hf_split"]).strip() if given("hf_split") else None,
        hf_columns=hf_columns(values.get("hf_columns"), names["hf_columns"], IMAGE_ROLES),
        steer_hf_split=str(values["steer_hf_split"]).strip() if given("steer_hf_split") else None,
        steer_hf_columns=hf_columns(values.get("steer_hf_columns"), names["steer_hf_columns"], STEER_ROLES),
        label_map=_label_map(values.get("label_map"), names["label_map"]),
        probe_rounds=_number(values["probe_rounds"], names["probe_rounds"], int, 1, 1000, "give a whole number 1-1000")
        if given("probe_rounds")
        else DEFAULTS["probe_rounds"],
        probe_bracket=bracket,
        threshold=_number(values["threshold"], names["threshold"], float, 0.0, 1.0, "give a cosine in [0, 1]")
        if given("threshold")
        else DEFAULTS["threshold"],
        min_coverage=_number(
            values["min_coverage"],
            names.get("min_coverage") or METADATA_NAMES["min_coverage"],
            float,
            0.0,
            1.0,
            "give a share in [0, 1]",
        )
        if given("min_coverage")
        else DEFAULTS["min_coverage"],
        names=names,
    )


def settings_from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings in ``environ`` (default ``os.environ``)."""
    env = os.environ if environ is None else environ
    return build_settings({key: env.get(var) for key, var in ENV.items()}, ENV)
