"""How a FairLens run is configured: which face corpus, which sample, what to do with bad input.

lmms-eval 0.7.3 has no task-argument flag (no ``--metadata``; ``lmms_eval_specific_kwargs`` reach only
``doc_to_text``/``doc_to_visual``, after the documents exist), so the tasks read environment
variables, which lmms-eval passes through unchanged and which its ``--config`` file can set in an
``env:`` block. ``fairness-evals export/score fairlens`` take the same settings as options.

========================== ======================== =========================================================
environment variable       command-line option      meaning (default)
========================== ======================== =========================================================
FAIRLENS_CORPUS            --corpus                 UTKFace folder, CSV / JSON-lines manifest, or hf:NAME (required)
FAIRLENS_SAMPLE_FRACTION   --sample-fraction        stratified sample fraction in (0, 1] (0.1, the paper's 10%)
FAIRLENS_SEED              --seed                   sampling seed (0)
FAIRLENS_IMAGE_LIST        --image-list             FairLens images_metadata.json: use exactly these images
FAIRLENS_ON_BAD_INPUT      --skip-bad-input         "stop" (default): bad input stops the run; "skip": skip and count
FAIRLENS_HF_SPLIT          --hf-split               dataset split (the only split, else "test")
FAIRLENS_HF_COLUMNS        --hf-columns             column mapping, e.g. "image=img,gender=sex,race=race,age=age"
FAIRLENS_LABEL_MAP         --label-map              JSON (text or file): {"race": {"East Asian": "Asian"}, ...}
FAIRLENS_IMAGE_CACHE       (environment only)       decoded images kept in memory (8)
FAIRLENS_IMAGE_SPILL_MB    (environment only)       cap of the on-disk tier of raw decoded pixels, MiB (4096; 0 = off)
FAIRLENS_MIN_COVERAGE      fairlens_min_coverage    closed tasks: least share of parsed answers for a fairness score (0.5)
FAIRLENS_MIN_JUDGED        fairlens_min_judged      open-ended tasks: least share of judged answers for a bias score (0.8)
FAIRLENS_POSITION_NULLS    fairlens_position_nulls  closed tasks: false keeps the fairness scores of answers that follow
                                                    the option position (true: they are null)
========================== ======================== =========================================================

The two thresholds and the position rule are *scoring* settings: ``fairness-evals score``/``judge`` take them as
``--metadata`` keys (the second column), the harness reads the variables when it aggregates
(:func:`coverage_threshold`, :func:`position_nulls_on`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairlens_tasks.benchmark import BENCHMARK as DECLARED
from fairness_evals.corpus.settings import (
    HF_PREFIX,
    SettingsError,
    corpus_location,
    hf_columns,
    label_map,
    skip_bad_input,
)

DEFAULT_SAMPLE_FRACTION = 0.1
DEFAULT_SEED = 0
HF_ROLES = ("image", "gender", "race", "age")

ENV = {
    "corpus": "FAIRLENS_CORPUS",
    "sample_fraction": "FAIRLENS_SAMPLE_FRACTION",
    "seed": "FAIRLENS_SEED",
    "image_list": "FAIRLENS_IMAGE_LIST",
    "on_bad_input": "FAIRLENS_ON_BAD_INPUT",
    "hf_split": "FAIRLENS_HF_SPLIT",
    "hf_columns": "FAIRLENS_HF_COLUMNS",
    "label_map": "FAIRLENS_LABEL_MAP",
}
CLI = {
    "corpus": "--corpus",
    "sample_fraction": "--sample-fraction",
    "seed": "--seed",
    "image_list": "--image-list",
    "on_bad_input": "--skip-bad-input",
    "hf_split": "--hf-split",
    "hf_columns": "--hf-columns",
    "label_map": "--label-map",
}

HOW_TO_CONFIGURE = (
    "set FAIRLENS_CORPUS to a UTKFace folder, a CSV or JSON-lines manifest (columns path, gender, race, age) "
    "or hf:NAME, e.g. `FAIRLENS_CORPUS=/data/UTKFace lmms-eval --tasks fairlens ...`, or put it under `env:` "
    "in an lmms-eval --config file (see fairlens_tasks/README.md, 'Corpus configuration')"
)


@dataclass(frozen=True)
class Settings:
    """Everything that decides which images a FairLens run evaluates."""

    corpus: str
    sample_fraction: float = DEFAULT_SAMPLE_FRACTION
    seed: int = DEFAULT_SEED
    image_list: str | None = None
    skip_bad_input: bool = False
    hf_split: str | None = None
    hf_columns: tuple[tuple[str, str], ...] = tuple((role, role) for role in HF_ROLES)
    label_map: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    names: Mapping[str, str] = field(default_factory=lambda: ENV, compare=False, hash=False, repr=False)

    @property
    def is_hf(self) -> bool:
        return self.corpus.startswith(HF_PREFIX)

    @property
    def hf_name(self) -> str:
        return self.corpus[len(HF_PREFIX) :]

    def column(self, role: str) -> str:
        return dict(self.hf_columns)[role]

    def label_map_dict(self) -> dict[str, dict[str, str]]:
        return {attribute: dict(pairs) for attribute, pairs in self.label_map}


def _fraction(raw: Any, name: str) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise SettingsError(f"{name}={raw!r} is not a number; give a fraction in (0, 1], e.g. 0.1") from None
    if not (math.isfinite(value) and 0 < value <= 1):
        raise SettingsError(f"{name}={raw!r} must lie in (0, 1] (1 keeps every image)")
    return value


def _seed(raw: Any, name: str) -> int:
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise SettingsError(f"{name}={raw!r} is not a whole number") from None
    if value < 0:
        raise SettingsError(f"{name}={raw!r} must be 0 or more")
    return value


def _columns(raw: str | None, name: str) -> tuple[tuple[str, str], ...]:
    return hf_columns(raw, name, HF_ROLES)


def _label_map(raw: str | None, name: str) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    return label_map(
        raw, name, ("gender", "race", "age"), example='{"race": {"East Asian": "Asian"}}', use="gender, race or age"
    )


def build_settings(values: Mapping[str, Any], names: Mapping[str, str]) -> Settings:
    """Settings from raw ``values`` (keys as in :data:`ENV`); ``names`` says how to name them in errors."""
    corpus = values.get("corpus")
    if corpus is None or not str(corpus).strip():
        raise SettingsError(f"FairLens has no face corpus to evaluate: {HOW_TO_CONFIGURE}")
    corpus = corpus_location(str(corpus).strip(), names["corpus"])
    skip = skip_bad_input(values.get("on_bad_input"), names["on_bad_input"])
    image_list = values.get("image_list")
    if image_list:
        if corpus.startswith(HF_PREFIX) or not Path(corpus).is_dir():
            raise SettingsError(f"{names['image_list']} needs {names['corpus']} to be a UTKFace folder")
        image_list = str(Path(str(image_list)).expanduser().resolve())
        if not Path(image_list).is_file():
            raise SettingsError(f"{names['image_list']}={values.get('image_list')!r}: no such file")
    fraction = values.get("sample_fraction")
    seed = values.get("seed")
    split = values.get("hf_split")
    return Settings(
        corpus=corpus,
        sample_fraction=DEFAULT_SAMPLE_FRACTION
        if fraction in (None, "")
        else _fraction(fraction, names["sample_fraction"]),
        seed=DEFAULT_SEED if seed in (None, "") else _seed(seed, names["seed"]),
        image_list=image_list or None,
        skip_bad_input=skip,
        hf_split=str(split).strip() if split else None,
        hf_columns=_columns(values.get("hf_columns"), names["hf_columns"]),
        label_map=_label_map(values.get("label_map"), names["label_map"]),
        names=names,
    )


DEFAULT_MIN_COVERAGE = DECLARED.settings["fairlens_min_coverage"]
DEFAULT_MIN_JUDGED = DECLARED.settings["fairlens_min_judged"]
#: metadata key -> (environment variable, default)
THRESHOLDS: dict[str, tuple[str, float]] = {
    "fairlens_min_coverage": ("FAIRLENS_MIN_COVERAGE", DEFAULT_MIN_COVERAGE),
    "fairlens_min_judged": ("FAIRLENS_MIN_JUDGED", DEFAULT_MIN_JUDGED),
}


@dataclass(frozen=True)
class Threshold:
    """A coverage threshold and where it came from (named in the warning that a score is NaN)."""

    value: float
    key: str
    source: str

    def how_to_change(self) -> str:
        variable = THRESHOLDS[self.key][0]
        return f"set {self.key} (score/judge --metadata) or {variable} (lmms-eval) to change it"


def _share(raw: Any, name: str, *, text: bool = False) -> float:
    """``raw`` as a share in [0, 1]: a number, or (``text``: an environment variable's value) its text; ``true`` is
    not a number."""
    try:
        kinds = (int, float, str) if text else (int, float)
        if isinstance(raw, bool) or not isinstance(raw, kinds):
            raise TypeError
        value = float(raw)
    except (TypeError, ValueError):
        raise SettingsError(f"{name}={raw!r} is not a number; give a share in [0, 1], e.g. 0.5") from None
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise SettingsError(f"{name}={raw!r} must lie in [0, 1] (0 reports every score)")
    return value


def coverage_threshold(
    key: str, given: float | str | None = None, environ: Mapping[str, str] | None = None
) -> Threshold:
    """The threshold ``key`` (``fairlens_min_coverage`` or ``fairlens_min_judged``): ``given`` (a
    ``--metadata`` value: a JSON number) if not None, else its environment variable, else the default; a value
    that is not a number in [0, 1] is a :class:`SettingsError` naming the key or the variable."""
    if key not in THRESHOLDS:
        raise SettingsError(f"unknown FairLens threshold {key!r}; expected one of {', '.join(THRESHOLDS)}")
    variable, default = THRESHOLDS[key]
    if given is not None:
        return Threshold(_share(given, key), key, key)
    env = os.environ if environ is None else environ
    raw = env.get(variable)
    if raw is not None and str(raw).strip():
        return Threshold(_share(raw, variable, text=True), key, variable)
    return Threshold(default, key, "default")


def settings_from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings in ``environ`` (default ``os.environ``)."""
    env = os.environ if environ is None else environ
    return build_settings({key: env.get(var) for key, var in ENV.items()}, ENV)


#: The setting that keeps the closed tasks' fairness scores where the answers follow the option position, and its
#: environment variable (``fairness_evals.position``).
POSITION_NULLS_KEY, POSITION_NULLS_ENV = "fairlens_position_nulls", "FAIRLENS_POSITION_NULLS"
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def position_nulls_on(given: bool | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the fairness scores are null where the answers follow the option position: ``given`` (a
    ``--metadata`` value: true or false) if not None, else ``FAIRLENS_POSITION_NULLS`` (``1``/``true``/``yes``/``on``
    or ``0``/``false``/``no``/``off``), else true. Anything else is a :class:`SettingsError` naming the key or the
    variable."""
    if given is not None:
        if not isinstance(given, bool):
            raise SettingsError(f"{POSITION_NULLS_KEY}={given!r} must be true or false")
        return given
    env = os.environ if environ is None else environ
    raw = str(env.get(POSITION_NULLS_ENV) or "").strip().lower()
    if not raw:
        return True
    if raw not in _TRUE + _FALSE:
        raise SettingsError(f"{POSITION_NULLS_ENV}={env.get(POSITION_NULLS_ENV)!r} must be true or false (1 or 0)")
    return raw in _TRUE
