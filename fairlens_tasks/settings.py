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

The two thresholds and the position rule are *scoring* settings. Each reaches the scoring one way: lmms-eval reads
the variable once, when it builds the documents (:func:`scoring_from_env`); every document carries the value, every
logged record's provenance records it where it is not the default (:func:`changed`), and the aggregation takes it
from the records (:func:`recorded`), never from the environment. ``fairness-evals score``/``judge`` take the same
settings as ``--metadata`` keys (the second column), else the values the samples they read recorded, else the
defaults.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
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

#: The corpus settings, in the order of the table above: their variables (``FAIRLENS_<KEY>``) and options.
KEYS = ("corpus", "sample_fraction", "seed", "image_list", "on_bad_input", "hf_split", "hf_columns", "label_map")
ENV = {key: f"FAIRLENS_{key.upper()}" for key in KEYS}
CLI = {key: "--" + key.replace("_", "-") for key in KEYS} | {"on_bad_input": "--skip-bad-input"}

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
#: The setting that keeps the closed tasks' fairness scores where the answers follow the option position, and its
#: environment variable (``fairness_evals.position``).
POSITION_NULLS_KEY, POSITION_NULLS_ENV = "fairlens_position_nulls", "FAIRLENS_POSITION_NULLS"
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
#: The scoring settings of each question set (the keyword argument of its scoring each one is): the documents carry
#: them and each logged record's provenance records them (:func:`scoring_from_env`, :func:`recorded`).
SCORING_KEYS: dict[str, dict[str, str]] = {
    "closed": {"fairlens_min_coverage": "min_coverage", POSITION_NULLS_KEY: "position_nulls"},
    "open": {"fairlens_min_judged": "min_judged"},
}


@dataclass(frozen=True)
class Threshold:
    """A coverage threshold and its setting (named in the warning that a score is NaN)."""

    value: float
    key: str


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


def coverage_threshold(key: str, given: float | None = None) -> Threshold:
    """The threshold ``key`` (``fairlens_min_coverage`` or ``fairlens_min_judged``): ``given`` (a ``--metadata``
    value, a JSON number, or the one a run's records carry) if not None, else the declared default; a value that is
    not a number in [0, 1] is a :class:`SettingsError` naming the key. The scoring never reads the environment: the
    harness reads it when it builds the documents (:func:`scoring_from_env`)."""
    if key not in THRESHOLDS:
        raise SettingsError(f"unknown FairLens threshold {key!r}; expected one of {', '.join(THRESHOLDS)}")
    if given is not None:
        return Threshold(_share(given, key), key)
    return Threshold(THRESHOLDS[key][1], key)


def settings_from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings in ``environ`` (default ``os.environ``)."""
    env = os.environ if environ is None else environ
    return build_settings({key: env.get(var) for key, var in ENV.items()}, ENV)


def position_nulls_on(given: bool | None = None) -> bool:
    """Whether the fairness scores are null where the answers follow the option position: ``given`` (a
    ``--metadata`` value, or the one a run's records carry: true or false) if not None, else true. Anything else is
    a :class:`SettingsError` naming the key."""
    if given is None:
        return True
    if not isinstance(given, bool):
        raise SettingsError(f"{POSITION_NULLS_KEY}={given!r} must be true or false")
    return given


def scoring_from_env(questions: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The scoring settings of the question set ``questions`` (:data:`SCORING_KEYS`) in ``environ`` (default
    ``os.environ``), each its declared default where its variable is unset: read once, when lmms-eval builds the
    documents, which carry them to the records (lmms-eval 0.7.3 has no task-argument flag). A value that is not a
    share in [0, 1], or not true or false, is a :class:`SettingsError` naming the variable."""
    env = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for key in SCORING_KEYS[questions]:
        variable = POSITION_NULLS_ENV if key == POSITION_NULLS_KEY else THRESHOLDS[key][0]
        raw = str(env.get(variable) or "").strip()
        if key == POSITION_NULLS_KEY:
            if raw.lower() not in ("", *_TRUE, *_FALSE):
                raise SettingsError(f"{variable}={raw!r} must be true or false (1 or 0)")
            out[key] = raw.lower() not in _FALSE
        else:
            out[key] = _share(raw, variable, text=True) if raw else THRESHOLDS[key][1]
    return out


#: The scoring settings' defaults, per question set (what :func:`scoring_from_env` gives with no variable set).
DEFAULTS_OF: dict[str, dict[str, Any]] = {questions: scoring_from_env(questions, {}) for questions in SCORING_KEYS}


def changed(values: Mapping[str, Any], questions: str) -> dict[str, Any]:
    """The scoring settings of ``questions`` that ``values`` (a document) sets to other than the declared defaults:
    what a logged record's provenance records (a line of a run at the defaults grows by nothing)."""
    defaults = DEFAULTS_OF[questions]
    return {key: values[key] for key in defaults if values.get(key) is not None and values[key] != defaults[key]}


def recorded(provenances: Iterable[Mapping[str, Any] | None], questions: str, task: str) -> dict[str, Any]:
    """The scoring keyword arguments (:data:`SCORING_KEYS`) the logged records of one task carry in their
    provenance (:func:`changed`; a record without one was scored under the default): the value they share. Records
    scored under two values of a setting are a :class:`SettingsError` naming both, never pooled."""
    defaults = DEFAULTS_OF[questions]
    found = [p if isinstance(p, Mapping) else {} for p in provenances]
    out: dict[str, Any] = {}
    for key, argument in SCORING_KEYS[questions].items():
        values = {defaults[key] if p.get(key) is None else p[key] for p in found}
        if len(values) > 1:
            shown = " and ".join(sorted(map(repr, values)))
            raise SettingsError(f"{task}: its records were scored under two {key} settings ({shown}): score them apart")
        if values:
            out[argument] = values.pop()
    return out
