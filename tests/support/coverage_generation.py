"""Coverage simulations of the image-generation intervals (issue 13): Fact-or-Fair T2I and IRIS generation.

The estimand of every generation interval is the value of the **generator's population of images for the
benchmark's fixed prompts**: the prompts are a census (38 per Fact-or-Fair T2I task, 52 neutral and 128
steering IRIS prompts), the images per prompt are the sample. A simulated generator is a set of per-prompt
distributions with known values; each replicate draws ``n`` images per prompt from it, builds the records
``process_results`` would build, and scores them with the production ``compute_metrics`` (so the printing
rules are part of what is measured). ``coverage_table(size)`` is what ``bench/coverage.py`` prints and the
tests check: ``"paper"`` is 20 images per prompt (the Fact-or-Fair paper's, IRIS's default here), ``"lite"``
5 (the quick look the READMEs suggest with ``--gen_kwargs num_images_per_prompt=5``).

Generators (all seeded):

- Fact-or-Fair T2I, per (statistic, level) row a gender and a race distribution; 0, 1 or 2 faces per image
  (5 %, 85 %, 10 %), each labelled independently: ``stereotyped`` (one gender 60-95 %, one race dominant,
  every class >= 0.75 %), ``mixed`` (Dirichlet(2) shares), ``balanced`` (near-uniform, the scores near 1);
- IRIS neutral, per occupation a distribution over the 18 gender x age x skin cells, 5 % of images without a
  face: ``stereotyped`` (one cell holds 60 % plus a Dirichlet(1) share), ``mixed`` (Dirichlet(2)),
  ``uniform`` (every RD is 0: the stress case of a perfectly fair generator);
- IRIS steering, per prompt a success probability: ``gap`` (stereotypical 0.6-0.9, counter-stereotypical
  0.3-0.7) and ``no_gap`` (both alike, so ΔGSR = 0 and BIS-Gen = 85).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from coverage_simulation import Bias, Coverage, measure_bias, simulate

SIZES = {"paper": 20, "lite": 5}
#: Replicates and bootstrap resamples per simulated run (the tests' budget; ``bench/coverage.py`` may pass more).
REPLICATES = 100
RESAMPLES = 400
FACES_PER_IMAGE = (0.05, 0.85, 0.10)
#: The tasks' loggers, silenced while a simulation runs (each replicate would log its warnings).
QUIET = ("fairness_evals.fact_or_fair", "fairness_evals.iris", "fairness_evals.t2i")


def _coverage(
    title: str,
    truths: dict[str, float],
    metrics: Sequence[str],
    records: Callable[[np.random.Generator], list[dict]],
    compute: Callable[..., dict[str, Any]],
    replicates: int,
    seed: int,
) -> list[Coverage]:
    """The rows ``<title> <metric>`` of one generator: each replicate draws its records, then the seed of the
    task's own bootstrap (``compute(records, n_resamples=RESAMPLES, seed=...)``), from the simulation's generator."""
    return simulate(
        truths,
        lambda rng, _: (records(rng), int(rng.integers(2**31))),
        lambda drawn, _: compute(drawn[0], n_resamples=RESAMPLES, seed=drawn[1]),
        metrics,
        replicates=replicates,
        seed=seed,
        label=lambda metric: f"{title} {metric}",
        quiet=QUIET,
    )


# ------------------------------------------------------------------------------------ Fact-or-Fair T2I
def t2i_population(kind: str, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the gender (38, 2) and race (38, 4) distributions of a simulated generator."""
    from fact_fair_tasks.t2i_scoring import N_ROWS

    rng = np.random.default_rng([seed, {"stereotyped": 0, "mixed": 1, "balanced": 2}[kind]])
    gender, race = np.zeros((N_ROWS, 2)), np.zeros((N_ROWS, 4))
    for row in range(N_ROWS):
        if kind == "stereotyped":
            major = rng.uniform(0.6, 0.95)
            alpha = np.full(4, 0.5)
            alpha[rng.integers(4)] = 6.0
            shares = 0.97 * rng.dirichlet(alpha) + 0.03 / 4
            male = major if rng.random() < 0.5 else 1.0 - major
        elif kind == "mixed":
            male = rng.uniform(0.2, 0.8)
            shares = 0.95 * rng.dirichlet(np.full(4, 2.0)) + 0.05 / 4
        else:
            male = rng.uniform(0.45, 0.55)
            shares = rng.dirichlet(np.full(4, 40.0))
        gender[row], race[row] = (male, 1.0 - male), shares
    return gender, race


def t2i_truths(gender: np.ndarray, race: np.ndarray) -> dict[str, float]:
    """Every score's population value (the production statistics on the population shares)."""
    from fact_fair_tasks.t2i_scoring import N_COLUMNS, N_ROWS, axis_statistics

    counts = np.zeros((1, N_ROWS, N_COLUMNS))
    counts[0, :, 0:2], counts[0, :, 2:6] = gender * 1e9, race * 1e9
    rows = list(range(N_ROWS))
    return {
        f"{name}_{axis}": float(f(counts)[0])
        for axis in ("gender", "race")
        for name, f in axis_statistics(axis, rows).items()
    }


def t2i_records(rng: np.random.Generator, gender: np.ndarray, race: np.ndarray, n_images: int) -> list[dict]:
    """One simulated run: the records ``process_results`` would give, ``n_images`` images per prompt."""
    records = []
    for row in range(gender.shape[0]):
        faces = rng.choice(3, size=n_images, p=FACES_PER_IMAGE)
        images = []
        for k in faces:
            g = rng.multinomial(k, gender[row]).tolist()
            r = rng.multinomial(k, race[row]).tolist()
            images.append([0 if k else 1, *g, *r, int(k), 0])
        records.append({"kind": 0, "row": row, "images": images, "missing": 0, "expected": n_images, "failed": [],
                        "metadata": {}, "spec": "", "validation": "", "doc_sha": str(row), "data_version": 1})  # fmt: skip
    return records


def t2i_metrics() -> tuple[str, ...]:
    """The Fact-or-Fair T2I scores whose intervals are judged (both axes)."""
    from fact_fair_tasks.t2i_scoring import SCORES

    return tuple(f"{name}_{axis}" for axis in ("gender", "race") for name in SCORES)


def t2i_coverage(kind: str, n_images: int, *, replicates: int = REPLICATES, seed: int = 0) -> list[Coverage]:
    from fact_fair_tasks import t2i_scoring

    gender, race = t2i_population(kind)
    return _coverage(
        f"T2I {kind}",
        t2i_truths(gender, race),
        t2i_metrics(),
        lambda rng: t2i_records(rng, gender, race, n_images),
        t2i_scoring.compute_metrics,
        replicates,
        seed,
    )


# ------------------------------------------------------------------------------------ IRIS neutral
def neutral_population(kind: str, seed: int = 1) -> np.ndarray:
    """Per occupation (52), the distribution over the 18 gender x age x skin cells (gender-major order)."""
    from iris_tasks.neutral_gen import N_OCCUPATIONS

    rng = np.random.default_rng([seed, {"stereotyped": 0, "mixed": 1, "uniform": 2}[kind]])
    out = np.zeros((N_OCCUPATIONS, 18))
    for o in range(N_OCCUPATIONS):
        if kind == "stereotyped":
            share = 0.4 * rng.dirichlet(np.ones(18))
            share[rng.integers(18)] += 0.6
        elif kind == "mixed":
            share = rng.dirichlet(np.full(18, 2.0))
        else:
            share = np.full(18, 1.0 / 18)
        out[o] = share
    return out


def _cell_labels(cell: int) -> tuple[int, int, int]:
    return cell // 9, (cell // 3) % 3, cell % 3


def neutral_truths(cells: np.ndarray) -> dict[str, float]:
    from iris_tasks.neutral_gen import GRANULAR, N_COLUMNS, N_OCCUPATIONS, image_columns, score_arrays

    counts = np.zeros((1, N_OCCUPATIONS, N_COLUMNS))
    for cell in range(18):
        for column in image_columns([0, *_cell_labels(cell), 1]):
            counts[0, :, column] += cells[:, cell] * 1e9
    values = score_arrays(counts)
    return {name: float(values[name][0]) for name in (*GRANULAR, "ifs_gen_score", "rfs_gen_score")}


def neutral_records(rng: np.random.Generator, cells: np.ndarray, n_images: int) -> list[dict]:
    records = []
    for o in range(cells.shape[0]):
        images = []
        for cell, face in zip(rng.choice(18, size=n_images, p=cells[o]), rng.random(n_images) > 0.05, strict=True):
            images.append([0, *_cell_labels(int(cell)), 1, 0] if face else [1, -1, -1, -1, 0, 0])
        records.append({"task": "iris_gen_neutral", "doc_index": o, "occupation": o, "type": -1, "flipped": -1,
                        "target": [], "images": images, "missing": 0, "expected": n_images, "failed": [],
                        "metadata": {}, "spec": "", "validation": "", "doc_sha": str(o), "data_version": 1})  # fmt: skip
    return records


def neutral_metrics() -> tuple[str, ...]:
    """The IRIS neutral-generation values whose intervals are judged (none is printed: the module docstring)."""
    from iris_tasks.neutral_gen import GRANULAR

    return (*GRANULAR, "ifs_gen_score", "rfs_gen_score")


def neutral_coverage(kind: str, n_images: int, *, replicates: int = REPLICATES, seed: int = 0) -> list[Coverage]:
    from iris_tasks import neutral_gen

    cells = neutral_population(kind)
    return _coverage(
        f"IRIS neutral {kind}",
        neutral_truths(cells),
        neutral_metrics(),
        lambda rng: neutral_records(rng, cells, n_images),
        neutral_gen.compute_metrics,
        replicates,
        seed,
    )


# ------------------------------------------------------------------------------------ IRIS steering
def steer_population(kind: str, seed: int = 1) -> tuple[list[dict], np.ndarray]:
    """The 128 steering documents' types and targets, and each prompt's success probability."""
    from iris_tasks.gen_documents import ATTRIBUTES, documents
    from iris_tasks.gen_harness import label_index

    docs = documents("steer")
    rng = np.random.default_rng([seed, {"gap": 0, "no_gap": 1}[kind]])
    success = np.zeros(len(docs))
    for i, doc in enumerate(docs):
        stereo = doc["prompt_type"] == "stereotypical"
        success[i] = rng.uniform(0.6, 0.9) if stereo or kind == "no_gap" else rng.uniform(0.3, 0.7)
    shapes = [
        {"type": 0 if d["prompt_type"] == "stereotypical" else 1,
         "flipped": ATTRIBUTES.index(d["flipped"]) if d.get("flipped") else -1,
         "target": [label_index(a, d[f"target_{a}"]) for a in ATTRIBUTES]}
        for d in docs
    ]  # fmt: skip
    return shapes, success


def steer_truths(shapes: Sequence[dict], success: np.ndarray) -> dict[str, float]:
    from metrics.iris import DIMENSION_PARAMETERS

    stereo = float(np.mean([p for s, p in zip(shapes, success, strict=True) if s["type"] == 0]))
    counter = float(np.mean([p for s, p in zip(shapes, success, strict=True) if s["type"] == 1]))
    delta = max(0.0, stereo - counter)
    k, scale = DIMENSION_PARAMETERS["BIS-Gen"]
    return {"gsr_stereotypical": stereo, "gsr_counter": counter, "delta_gsr": delta,
            "bis_gen_score": scale * math.exp(-k * delta)}  # fmt: skip


def steer_records(rng: np.random.Generator, shapes: Sequence[dict], success: np.ndarray, n_images: int) -> list[dict]:
    records = []
    for i, (shape, p) in enumerate(zip(shapes, success, strict=True)):
        target = shape["target"]
        images = []
        for hit in rng.random(n_images) < p:
            wrong = [target[0], target[1], (target[2] + 1) % 3]
            images.append([0, *(target if hit else wrong), 1, 0])
        records.append({"task": "iris_gen_steer", "doc_index": i, "occupation": 0, **shape, "images": images,
                        "missing": 0, "expected": n_images, "failed": [], "metadata": {}, "spec": "",
                        "validation": "", "doc_sha": str(i), "data_version": 1})  # fmt: skip
    return records


#: The IRIS steering values whose intervals are judged.
STEER_METRICS = ("gsr_stereotypical", "gsr_counter", "delta_gsr", "bis_gen_score")


def steer_coverage(kind: str, n_images: int, *, replicates: int = REPLICATES, seed: int = 0) -> list[Coverage]:
    from iris_tasks import bis_gen

    shapes, success = steer_population(kind)
    return _coverage(
        f"IRIS steer {kind}",
        steer_truths(shapes, success),
        STEER_METRICS,
        lambda rng: steer_records(rng, shapes, success, n_images),
        bis_gen.compute_metrics,
        replicates,
        seed,
    )


# ------------------------------------------------------------------------------------ tables
DESIGNS: dict[str, tuple[Callable[..., list[Coverage]], tuple[str, ...]]] = {
    "t2i": (t2i_coverage, ("stereotyped", "mixed", "balanced")),
    "neutral": (neutral_coverage, ("stereotyped", "mixed", "uniform")),
    "steer": (steer_coverage, ("gap", "no_gap")),
}


def coverage_table(
    size: str, *, replicates: int = REPLICATES, designs: Sequence[str] = tuple(DESIGNS)
) -> list[Coverage]:
    """Coverage of every generation interval at ``size`` ("paper": 20 images per prompt, "lite": 5)."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {list(SIZES)}, got {size!r}")
    n_images = SIZES[size]
    rows: list[Coverage] = []
    for name in designs:
        run, kinds = DESIGNS[name]
        for kind in kinds:
            rows.extend(run(kind, n_images, replicates=replicates))
    return rows


# ------------------------------------------------------------------------------------ bias of the point estimates
#: The share of a task's prompts evaluated, in the documents' order (a ``--limit`` prefix: ``--limit 20`` is 0.53 of
#: a Fact-or-Fair T2I task, 0.38 of the neutral and 0.16 of the steering IRIS prompts), at which the bias is measured
#: with the paper's 20 and the lite 5 images per prompt; 1 is the whole design, the declared minimum.
BIAS_FRACTIONS = (0.1, 0.25, 0.5, 0.75, 1.0)
#: Images per prompt at which the whole design's bias is measured (the declared minimum's bias is read at the lite
#: and paper sizes, 5 and 20; 1 and 2 are what a generator returning one image per prompt gives).
BIAS_IMAGES = (1, 2, 5, 10, 20)
BIAS_REPLICATES = 200
BIAS_UNIT = {
    "images": "images per prompt, every prompt of the design evaluated",
    "": "share of the design's prompts evaluated (a --limit prefix)",
}


def _neutral_values(cells: np.ndarray) -> dict[str, float]:
    """Every value of the neutral task on the population (the production ``score_arrays`` on its shares)."""
    from iris_tasks.neutral_gen import N_COLUMNS, N_OCCUPATIONS, image_columns, score_arrays

    counts = np.zeros((1, N_OCCUPATIONS, N_COLUMNS))
    for cell in range(18):
        for column in image_columns([0, *_cell_labels(cell), 1]):
            counts[0, :, column] += cells[:, cell] * 1e9
    return {name: float(values[0]) for name, values in score_arrays(counts).items()}


def _steer_values(shapes: Sequence[dict], success: np.ndarray) -> dict[str, float]:
    """Every value of the steering task on the population: each prompt's expected image vector (a success with its
    probability, else the wrong skin group :func:`steer_records` draws) through the production ``score_arrays``."""
    from iris_tasks.bis_gen import image_vector, score_arrays

    total = 0.0
    for shape, p in zip(shapes, success, strict=True):
        target = shape["target"]
        wrong = [target[0], target[1], (target[2] + 1) % 3]
        total = total + p * image_vector(shape, [0, *target, 1, 0]) + (1 - p) * image_vector(shape, [0, *wrong, 1, 0])
    return {name: float(values[0]) for name, values in score_arrays(np.asarray(total)[None]).items()}


def _bias_tasks() -> list[tuple[str, str, dict[str, float], Callable[..., list[dict]], Callable[..., dict]]]:
    """(task, generator, truths, records(rng, n_images), estimate(records)) of every simulated generator."""
    from fact_fair_tasks import t2i_scoring
    from iris_tasks import bis_gen, neutral_gen

    out = []
    for kind in ("stereotyped", "mixed", "balanced"):
        gender, race = t2i_population(kind)
        out.append(("fact_or_fair_t2i_objective", kind, t2i_truths(gender, race),
                    lambda rng, n, g=gender, r=race: t2i_records(rng, g, r, n), t2i_scoring.point_estimates))  # fmt: skip
    for kind in ("stereotyped", "mixed", "uniform"):
        cells = neutral_population(kind)
        out.append(("iris_gen_neutral", kind, _neutral_values(cells),
                    lambda rng, n, c=cells: neutral_records(rng, c, n), neutral_gen.point_estimates))  # fmt: skip
    for kind in ("gap", "no_gap"):
        shapes, success = steer_population(kind)
        out.append(("iris_gen_steer", kind, _steer_values(shapes, success),
                    lambda rng, n, s=shapes, p=success: steer_records(rng, s, p, n), bis_gen.point_estimates))  # fmt: skip
    return out


def _declared_bias(task: str) -> dict[str, float | None]:
    """Each member's declared bias (its statistic's estimate minimum) of ``task``; None without one."""
    from fact_fair_tasks.t2i_statistics import T2I_TASKS
    from iris_tasks.gen_statistics import GEN_TASKS

    found = next(t for t in (*T2I_TASKS, *GEN_TASKS) if t.name == task)
    return {m: s.minimum.bias if s.minimum else None for s in found.statistics for m in s.members}


def task_bias(task: str, generator: str, truths: dict[str, float], records: Callable[..., list[dict]],
              estimate: Callable[..., dict], *, replicates: int, seed: int) -> list[Bias]:  # fmt: skip
    """The bias rows of one generator of ``task``: every declared value at each share of :data:`BIAS_FRACTIONS` of the
    prompts (a prefix of each replicate's documents) with 20 and 5 images per prompt (designs ``"<task> paper"`` and
    ``"<task> lite"``), and with the whole design at each size of :data:`BIAS_IMAGES` (``"<task> images"``). The rows
    of the whole design at the lite and paper sizes carry the bias the declaration allows."""
    declared = _declared_bias(task)
    names = [name for name in truths if declared.get(name) is not None] or list(truths)
    short = task.removeprefix("fact_or_fair_").removeprefix("iris_")
    rows: list[Bias] = []
    allowed_sizes = set(SIZES.values())
    for n in sorted({*BIAS_IMAGES, *allowed_sizes}):
        drawn = [records(np.random.default_rng([seed, n, r]), n) for r in range(replicates)]
        at_minimum = {name: declared[name] for name in names} if n in allowed_sizes else None
        if n in BIAS_IMAGES:
            rows += measure_bias(
                truths, lambda _, i, d=drawn: d[i], estimate, names, model=f"{short} images/{generator}", size=n,
                replicates=replicates, seed=seed, allowed=at_minimum, quiet=QUIET,
            )  # fmt: skip
        if n in allowed_sizes:
            size = next(s for s, v in SIZES.items() if v == n)
            for fraction in BIAS_FRACTIONS:
                rows += measure_bias(
                    truths, lambda _, i, d=drawn, f=fraction: d[i][: max(1, round(f * len(d[i])))], estimate, names,
                    model=f"{short} {size}/{generator}", size=fraction, replicates=replicates, seed=seed,
                    allowed=at_minimum if fraction == 1.0 else None, quiet=QUIET,
                )  # fmt: skip
    return rows


def bias_table(replicates: int | None = None) -> list[Bias]:
    """The bias of every declared value's point estimate of the three generation tasks (:func:`task_bias`; the
    subjective Fact-or-Fair T2I task shares the objective one's scores and design size)."""
    reps = replicates or BIAS_REPLICATES
    rows: list[Bias] = []
    for i, (task, generator, truths, records, estimate) in enumerate(_bias_tasks()):
        rows += task_bias(task, generator, truths, records, estimate, replicates=reps, seed=8_000 + i)
    return rows
