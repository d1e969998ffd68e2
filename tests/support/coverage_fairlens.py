"""Seeded coverage simulations of the FairLens intervals (issue 13): do they cover the population value?

**Estimand.** FairLens samples images per (gender, race, age band) stratum (``fairlens_tasks.sampling``) and
asks every image every question of a domain; a deterministic (greedy) model answers. The population is the
faces each stratum's images are drawn from (for the paper, UTKFace's adults, ten times the sample; the
finite-population correction, 1 - f = 0.9 in variance, is ignored, which makes the bootstrap slightly
conservative there), and the model's answers on them. A metric's population value is its formula applied to
the expected counts of that design: each stratum weighted by the images the sampler allocates to it (which is
proportional to the corpus, up to rounding). So a rate is ``sum_s n_s E[events of an image of s] /
sum_s n_s E[answers of an image of s]``, and a gap, ratio or mean of gaps is the released formula of those
rates.

**Designs** (:data:`SIZES`): a corpus of 15,050 eligible faces whose strata are the product of the paper's
Table 1 margins (gender 855 / 650, race 622 / 353 / 171 / 276 / 83, age 519 / 876 / 110 of 1,505), sampled with
the package's own allocation rule at ``--sample-fraction`` 0.1 (``"paper"``: 1,505 images, the smallest
stratum 3) and 0.02 (``"lite"``: 301 images, the README's quick run; several strata of 1 image). With strata
that are the product of the margins, a policy that ignores age has a true age gap of 0 (up to the allocation's
rounding, 1e-4).

**Answer policies** (:data:`CLOSED_POLICIES`, :data:`OPEN_POLICIES`): every image draws a latent "prone"
flag with a probability that depends on its stratum (answers of one image are correlated, as a real model's
are); then each answer is drawn from the item's options (closed) or from a score distribution (open-ended)
given the flag. ``fair`` ignores every attribute (every true gap 0, every ratio 1); ``gender_race`` is biased
by gender and race and ignores age; ``refusing`` refuses whole images and leaves answers unparsed; ``rare``
gives adverse answers at 1-3% (the paper's Table 5 regime); open-ended ``unjudged`` leaves 10% of the answers
unjudged and 3% blank.

Each replicate draws a fresh sample of the design, answers it with the policy, and scores it with the package's
own code (:func:`fairlens_tasks.scoring.compute_metrics`, :func:`fairlens_tasks.open_scoring.
open_metrics_from_arrays`: 1,000 stratified resamples, the shipped interval methods). :func:`coverage_table`
summarises every interval-bearing metric (``coverage_simulation.Coverage``, named ``<size>/<policy>/<task>/
<metric>``); ``bench/coverage.py`` prints it and ``tests/fairlens/test_fairlens_coverage.py`` holds it to the
bar (coverage >= 0.93 at the paper's size, >= 0.90 at lite, mean width <= 2x the spread of the estimate).

**Bias** (:func:`bias_table`): the point estimates alone (:func:`fairlens_tasks.scoring.point_estimates`, before any
rule nulls them) of every comparison of groups, in designs with exactly n images in every group of one attribute
(:func:`design_for`, n in :data:`BIAS_SIZES`; the means and maximum of gaps in the race designs, whose race groups
are the smallest), under every closed policy; and the open-ended gaps at the declared minimum through the scorer.
The rows at the declared minimum (:data:`fairlens_tasks.statistics.GAP_MINIMUM`) carry the bias it allows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from coverage_simulation import Bias, Coverage, measure_bias, simulate

from fairlens_tasks.labels import AGE_BANDS, GENDERS, RACES
from fairlens_tasks.questions import CANNOT_TELL, Question, domain_open_questions, domain_questions
from fairlens_tasks.sampling import allocate

__all__ = [
    "BIAS_SIZES",
    "CLOSED_POLICIES",
    "OPEN_POLICIES",
    "SIZES",
    "TARGETS",
    "ClosedPolicy",
    "OpenPolicy",
    "bias_table",
    "closed_bias",
    "closed_metrics",
    "coverage_table",
    "design",
    "design_for",
    "open_metrics",
    "records_from_options",
    "simulate_closed",
    "simulate_open",
]

# Paper Table 1 (1,505 images): the margins the design's strata are the product of.
MARGINS = {
    "gender": {"Male": 855, "Female": 650},
    "race": {"White": 622, "Black": 353, "Asian": 171, "Indian": 276, "Other": 83},
    "age": {"young": 519, "middle": 876, "senior": 110},
}
CORPUS = 15_050  # eligible faces: the paper's 1,505 are a 10% sample
SIZES = {"paper": 0.1, "lite": 0.02}  # --sample-fraction of the corpus
TARGETS = {"paper": 0.93, "lite": 0.90}
DEFAULT_REPLICATES = 400
_QUIET = ("fairness_evals.fairlens",)  # the per-replicate warnings (e.g. a ratio withheld) are expected here
STRATA = [(g, r, b) for g in range(len(GENDERS)) for r in range(len(RACES)) for b in range(len(AGE_BANDS))]


def design(size: str) -> np.ndarray:
    """Images per stratum (30, gender-major as ``fairlens_tasks.sampling.STRATA``) of the design ``size``."""
    total = sum(MARGINS["gender"].values())
    shares = [
        MARGINS["gender"][GENDERS[g]] * MARGINS["race"][RACES[r]] * MARGINS["age"][AGE_BANDS[b]] / total**3
        for g, r, b in STRATA
    ]
    corpus = _largest_remainder(shares, CORPUS)
    return np.asarray(allocate(corpus, SIZES[size]), dtype=np.int64)


def _largest_remainder(shares: Sequence[float], total: int) -> list[int]:
    quotas = [s * total for s in shares]
    counts = [math.floor(q) for q in quotas]
    for i in sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - counts[i]), i))[: total - sum(counts)]:
        counts[i] += 1
    return counts


def _stratum_columns(sizes: np.ndarray) -> np.ndarray:
    """(n_images, 3) gender, race, age-band codes of a sample with ``sizes`` images per stratum."""
    return np.repeat(np.asarray(STRATA, dtype=np.int64), sizes, axis=0)


def _prone(codes: np.ndarray, base: float, gender: Sequence[float], race: Sequence[float]) -> np.ndarray:
    """P(an image is 'prone') per row of stratum codes: ``base + gender[g] + race[r]`` (age ignored)."""
    return np.clip(base + np.asarray(gender)[codes[:, 0]] + np.asarray(race)[codes[:, 1]], 0.0, 1.0)


# --------------------------------------------------------------------------------------------- closed policies
@dataclass(frozen=True)
class ClosedPolicy:
    """Answers to the closed items of ``domain``.

    An image is refused entirely with probability ``refuse``; otherwise each answer is unparsed with
    probability ``unparsed``, else an option: the adverse option (items with one) with probability
    ``adverse[prone]``; on association-only items a non-"Cannot tell" option with probability
    ``associate[prone]``; the rest of the mass goes to "Cannot tell" (share ``neutral``) and the other options.
    """

    name: str
    domain: str
    base: float = 0.3
    gender: tuple[float, float] = (0.0, 0.0)
    race: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    adverse: tuple[float, float] = (0.05, 0.3)
    associate: tuple[float, float] = (0.1, 0.6)
    neutral: float = 0.6
    unparsed: float = 0.05
    refuse: float = 0.0
    expected_withheld: frozenset[str] = field(default_factory=frozenset)

    def option_probabilities(self, question: Question, prone: int) -> np.ndarray:
        """P(each option | the image's flag), before unparsed answers and refusals."""
        k = len(question.options)
        p = np.zeros(k)
        ct = question.options.index(CANNOT_TELL) if CANNOT_TELL in question.options else None
        if question.adverse:
            a = question.options.index(question.adverse[0])
            p[a] = self.adverse[prone]
            rest = 1.0 - p[a]
            others = [i for i in range(k) if i != a and i != ct]
            if ct is not None:
                share = self.neutral if others else 1.0
                p[ct] += rest * share
                rest *= 1.0 - share
            for i in others:
                p[i] += rest / len(others)
        else:  # association-only items (6): Cannot tell or one of the roles
            assert ct is not None
            roles = [i for i in range(k) if i != ct]
            p[ct] = 1.0 - self.associate[prone]
            for i in roles:
                p[i] = self.associate[prone] / len(roles)
        return p

    def prone(self, codes: np.ndarray) -> np.ndarray:
        return _prone(codes, self.base, self.gender, self.race)


CLOSED_POLICIES = (
    ClosedPolicy("fair", "hiring"),
    ClosedPolicy("gender_race", "healthcare", base=0.2, gender=(0.0, 0.25), race=(0.0, 0.2, -0.1, 0.1, 0.3)),
    ClosedPolicy("refusing", "legal", gender=(0.0, 0.2), unparsed=0.15, refuse=0.3),
    ClosedPolicy("rare", "hiring", base=0.1, gender=(0.0, 0.1), race=(0.0, 0.1, 0.0, 0.05, 0.2), adverse=(0.005, 0.1)),
)


def _closed_truth(policy: ClosedPolicy, sizes: np.ndarray) -> dict[str, float]:
    """Population values of every interval-bearing closed metric under ``policy`` and the design ``sizes``."""
    from fairlens_tasks import scoring

    questions = domain_questions(policy.domain)
    codes = np.asarray(STRATA, dtype=np.int64)
    pi = policy.prone(codes)
    answered = 1.0 - policy.refuse
    parsed = answered * (1.0 - policy.unparsed)
    rows = []  # one expected record per (stratum, item): the same cells as the real matrix, as expectations
    for q in questions:
        p = parsed * (
            pi[:, None] * policy.option_probabilities(q, 1) + (1 - pi[:, None]) * policy.option_probabilities(q, 0)
        )
        sound = p[:, q.options.index(q.expected)]
        adverse = p[:, q.options.index(q.adverse[0])] if q.adverse else None
        ct = q.options.index(CANNOT_TELL) if CANNOT_TELL in q.options else None
        non_neutral = p.sum(axis=1) - (p[:, ct] if ct is not None else 0.0) if q.association else None
        rows.append((sound, adverse, non_neutral))
    cells = np.zeros((len(STRATA), scoring.LAYOUT.n_cells))
    layout = scoring.LAYOUT
    for sound, adverse, non_neutral in rows:
        for s, (g, r, b) in enumerate(STRATA):
            values = {
                "correct": sound[s], "answers": 1.0,
                "adverse": adverse[s] if adverse is not None else 0.0,
                "adverse_answers": 1.0 if adverse is not None else 0.0,
                "non_neutral": non_neutral[s] if non_neutral is not None else 0.0,
                "assoc_answers": 1.0 if non_neutral is not None else 0.0,
            }  # fmt: skip
            for name in ("correct", "answers", "non_neutral", "assoc_answers"):
                cells[s, layout.pooled(name)] += values[name]
            for attribute, code in (("gender", g), ("race", r), ("age", b)):
                for name, value in values.items():
                    cells[s, layout.group_cells(attribute, name)[code]] += value
    totals = (sizes[:, None] * cells).sum(axis=0)
    estimates = scoring._estimates(totals)
    return {name: estimates[name] for name in scoring.WITH_INTERVALS}


def closed_options(policy: ClosedPolicy, codes: np.ndarray, uniforms: tuple[np.ndarray, ...]) -> np.ndarray:
    """Option indices (n_images, n_items; -1 unparsed) of ``policy``'s answers for images with stratum codes
    ``codes``, from its uniform draws: per image the prone flag's and the refusal's, per answer the option's and the
    unparsed one's (:func:`closed_uniforms`)."""
    questions = domain_questions(policy.domain)
    prone_u, refuse_u, draw_u, unparsed_u = uniforms
    prone = (prone_u < policy.prone(codes)).astype(np.int64)
    k = max(len(q.options) for q in questions)
    cumulative = np.ones((2, len(questions), k))
    for j, q in enumerate(questions):
        for flag in (0, 1):
            c = np.cumsum(policy.option_probabilities(q, flag))
            cumulative[flag, j, : len(c)] = c
            cumulative[flag, j, len(c) - 1 :] = 1.0
    option = (draw_u[:, :, None] >= cumulative[prone]).sum(axis=2)
    option = np.minimum(option, np.array([len(q.options) for q in questions]) - 1)
    unparsed = (refuse_u < policy.refuse)[:, None] | (unparsed_u < policy.unparsed)
    return np.where(unparsed, -1, option)


def closed_shapes(domain: str, n: int) -> tuple[tuple[int, ...], ...]:
    """The shapes of the uniform draws of :func:`closed_options` for ``n`` images of ``domain``."""
    m = len(domain_questions(domain))
    return (n,), (n,), (n, m), (n, m)


def _closed_records(policy: ClosedPolicy, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One replicate's records (n_images * n_items, 10), as ``scoring.record_for`` would make them."""
    codes = _stratum_columns(sizes)
    uniforms = tuple(rng.random(shape) for shape in closed_shapes(policy.domain, len(codes)))
    return records_from_options(policy.domain, codes, closed_options(policy, codes, uniforms))


def records_from_options(domain: str, codes: np.ndarray, option: np.ndarray) -> np.ndarray:
    """The records (n_images * n_items, 10), as ``scoring.record_for`` makes them, of images with stratum codes
    ``codes`` (n, 3) answering each item of ``domain`` with the option index ``option`` (n, n_items; -1
    unparsed); images are units 0..n-1."""
    from fairlens_tasks import scoring

    f, width = scoring._F, len(scoring.RECORD_FIELDS)
    questions = domain_questions(domain)
    n = len(codes)
    index = np.array([q.index for q in questions])
    sound = np.array([q.options.index(q.expected) for q in questions])
    adverse = np.array([q.options.index(q.adverse[0]) if q.adverse else -2 for q in questions])
    ct = np.array([q.options.index(CANNOT_TELL) if CANNOT_TELL in q.options else -2 for q in questions])
    tagged = np.array([q.association is not None for q in questions])
    parsed = option >= 0
    rec = np.empty((n, len(questions), width), dtype=np.int64)
    rec[:, :, f["question"]] = index
    rec[:, :, f["status"]] = (~parsed).astype(np.int64)
    rec[:, :, f["correct"]] = (option == sound).astype(np.int64)
    rec[:, :, f["adverse"]] = np.where(adverse >= 0, (option == adverse).astype(np.int64), -1)
    rec[:, :, f["non_neutral"]] = np.where(tagged, (parsed & (option != ct)).astype(np.int64), -1)
    rec[:, :, f["gender"] : f["age_band"] + 1] = codes[:, None, :]
    rec[:, :, f["image"]] = np.arange(n)[:, None]
    rec[:, :, f["option"]] = option
    return rec.reshape(-1, width)


def closed_metrics() -> tuple[str, ...]:
    """The closed metrics whose intervals are judged: every one the task prints an interval for."""
    from fairlens_tasks import scoring

    return scoring.WITH_INTERVALS


def simulate_closed(policy: ClosedPolicy, size: str, *, replicates: int, seed: int) -> list[Coverage]:
    """Coverage of every closed interval under ``policy`` at the design ``size``."""
    from fairlens_tasks import scoring

    sizes, task = design(size), f"fairlens_{policy.domain}"
    return simulate(
        _closed_truth(policy, sizes),
        lambda rng, _: _closed_records(policy, sizes, rng),
        lambda records, _: scoring.compute_metrics(records, task=task, min_coverage=0.0),
        closed_metrics(),
        replicates=replicates,
        seed=seed,
        label=lambda metric: f"{size}/{policy.name}/{task}/{metric}",
        quiet=_QUIET,
    )


# --------------------------------------------------------------------------------------------- open policies
SCORES = np.array([0.0, 1 / 3, 0.5, 2 / 3, 1.0])


@dataclass(frozen=True)
class OpenPolicy:
    """Judged scores of the open answers of ``domain``: an answer is unjudged with probability ``unjudged``,
    blank (judged, score 0) with probability ``blank``, else its score is drawn from ``scores[prone]`` over
    :data:`SCORES` (0, 1/3, 1/2, 2/3, 1: biased opinions / opinions)."""

    name: str
    domain: str
    base: float = 0.3
    gender: tuple[float, float] = (0.0, 0.0)
    race: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    scores: tuple[tuple[float, ...], tuple[float, ...]] = ((0.8, 0.1, 0.05, 0.0, 0.05), (0.3, 0.2, 0.2, 0.1, 0.2))
    unjudged: float = 0.0
    blank: float = 0.0

    def prone(self, codes: np.ndarray) -> np.ndarray:
        return _prone(codes, self.base, self.gender, self.race)


OPEN_POLICIES = (
    OpenPolicy("fair", "hiring"),
    OpenPolicy(
        "unjudged", "legal", base=0.2, gender=(0.1, 0.0), race=(0.0, 0.15, 0.0, 0.05, 0.25), unjudged=0.1, blank=0.03
    ),
)


def _open_truth(policy: OpenPolicy, sizes: np.ndarray) -> dict[str, float]:
    from fairlens_tasks import open_scoring

    codes = np.asarray(STRATA, dtype=np.int64)
    pi = policy.prone(codes)
    dist = [np.asarray(d) for d in policy.scores]
    mean = [float(d @ SCORES) for d in dist]
    flag = [float(d[SCORES > open_scoring.FLAG_THRESHOLD].sum()) for d in dist]
    keep = 1.0 - policy.blank / (1.0 - policy.unjudged)  # judged answers that are not blank (blank scores 0)
    stratum_mean = keep * (pi * mean[1] + (1 - pi) * mean[0])
    stratum_flag = keep * (pi * flag[1] + (1 - pi) * flag[0])
    out: dict[str, float] = {}
    w = sizes.astype(np.float64)
    out["oe_bias_mean"] = float(w @ stratum_mean / w.sum())
    out["oe_flag_rate"] = float(w @ stratum_flag / w.sum())
    from fairlens_tasks.labels import ATTRIBUTES, GROUPS, metric_group

    for a_index, attribute in enumerate(ATTRIBUTES):
        means = []
        for g, group in enumerate(GROUPS[attribute]):
            mask = codes[:, a_index] == g
            m = float(w[mask] @ stratum_mean[mask] / w[mask].sum())
            means.append(m)
            out[f"oe_bias_mean_{attribute}_{metric_group(group)}"] = m
            out[f"oe_flag_rate_{attribute}_{metric_group(group)}"] = float(w[mask] @ stratum_flag[mask] / w[mask].sum())
        out[f"oe_bias_gap_{attribute}"] = max(means) - min(means)
    return out


def open_answers(policy: OpenPolicy, codes: np.ndarray, uniforms: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """(judged, score, empty) over the (image, item) answers of ``policy`` for images with stratum codes ``codes``,
    from its uniform draws: per image the prone flag's, per answer the score level's and the judgement's."""
    prone_u, level_u, roll = uniforms
    prone = (prone_u < policy.prone(codes)).astype(np.int64)
    cumulative = np.cumsum(np.asarray(policy.scores), axis=1)
    cumulative[:, -1] = 1.0
    level = (level_u[:, :, None] >= cumulative[prone][:, None, :]).sum(axis=2)
    score = SCORES[np.minimum(level, len(SCORES) - 1)]
    judged = roll >= policy.unjudged
    empty = judged & (roll < policy.unjudged + policy.blank)
    return judged.ravel(), np.where(judged & ~empty, score, 0.0).ravel(), empty.ravel()


def open_units(domain: str, codes: np.ndarray) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """(the answers' first five record fields: item, stratum codes, image; the shapes of the uniform draws of
    :func:`open_answers`) for images with stratum codes ``codes`` answering the open items of ``domain``."""
    from fairlens_tasks import open_scoring

    f, width = open_scoring._F, len(open_scoring.INT_FIELDS)
    questions = domain_open_questions(domain)
    n, m = len(codes), len(questions)
    ints = np.empty((n, m, width), dtype=np.int64)
    ints[:, :, f["question"]] = [q.index for q in questions]
    ints[:, :, f["gender"] : f["age_band"] + 1] = codes[:, None, :]
    ints[:, :, f["image"]] = np.arange(n)[:, None]
    return ints.reshape(-1, width), ((n,), (n, m), (n, m))


def _open_arrays(policy: OpenPolicy, sizes: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """One replicate's (ints, judged, score, empty, opinions), the arrays ``open_metrics_from_arrays`` scores."""
    codes = _stratum_columns(sizes)
    ints, shapes = open_units(policy.domain, codes)
    judged, score, empty = open_answers(policy, codes, tuple(rng.random(shape) for shape in shapes))
    return ints, judged, score, empty, np.where(judged & ~empty, 3, 0)


def open_metrics() -> tuple[str, ...]:
    """The open-ended metrics whose intervals are judged (every one the task prints an interval for), in the table's
    order: the pooled mean and flag rate, then per attribute its groups' means and flag rates and its gap."""
    from fairlens_tasks.labels import ATTRIBUTES, GROUPS, metric_group

    names = ["oe_bias_mean", "oe_flag_rate"]
    for attribute in ATTRIBUTES:
        for group in GROUPS[attribute]:
            names += [
                f"oe_bias_mean_{attribute}_{metric_group(group)}",
                f"oe_flag_rate_{attribute}_{metric_group(group)}",
            ]
        names.append(f"oe_bias_gap_{attribute}")
    return tuple(names)


def simulate_open(policy: OpenPolicy, size: str, *, replicates: int, seed: int) -> list[Coverage]:
    """Coverage of every open-ended interval under ``policy`` at the design ``size``."""
    from fairlens_tasks import open_scoring

    sizes, task = design(size), f"fairlens_open_{policy.domain}"
    return simulate(
        _open_truth(policy, sizes),
        lambda rng, _: _open_arrays(policy, sizes, rng),
        lambda arrays, _: open_scoring.open_metrics_from_arrays(*arrays, task=task, min_judged=0.0),
        open_metrics(),
        replicates=replicates,
        seed=seed,
        label=lambda metric: f"{size}/{policy.name}/{task}/{metric}",
        quiet=_QUIET,
    )


# --------------------------------------------------------------------------------------------- both
def coverage_table(size: str, *, replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> list[Coverage]:
    """Coverage of every FairLens interval (closed and open-ended) under every policy at the design ``size``
    ("paper" or "lite"); each policy has its own seed derived from ``seed``."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    table: list[Coverage] = []
    for i, policy in enumerate(CLOSED_POLICIES):
        table.extend(simulate_closed(policy, size, replicates=replicates, seed=seed * 1000 + i))
    for i, policy in enumerate(OPEN_POLICIES):
        table.extend(simulate_open(policy, size, replicates=replicates, seed=seed * 1000 + 100 + i))
    return table


def conservative(row: Coverage) -> str | None:
    """Why a row may be wider than twice its estimate's spread (fairlens_tasks/README.md, "Intervals"): a mean over
    attributes of gaps, a gap whose truth is 0, or a ratio whose truth is 1. The estimate, a maximum over pairwise
    differences, concentrates away from the truth, so its spread understates the width an interval reaching the truth
    must have (measured 1.8-2.5)."""
    statistic = row.name.split("/")[-1]
    if statistic in ("parity_gap", "association_gap"):
        return "mean over attributes of max-min gaps"
    if ("_gap" in statistic and row.truth < 1e-3) or (statistic.startswith("rate_ratio") and row.truth < 1.01):
        return "gap at 0 / ratio at 1"
    return None


# --------------------------------------------------------------------------------------------- bias of the estimates
#: Images in every group of the attribute a bias design is built for: a --limit run's 1 and 3, the declared minimum
#: 10, the quick run's smallest group (17 Other) and the paper's (83 Other).
BIAS_SIZES = (1, 3, 5, 10, 17, 30, 83)
BIAS_REPLICATES = 200
BIAS_UNIT = "images per group"
_ATTRIBUTE_INDEX = {"gender": 0, "race": 1, "age": 2}


def design_for(attribute: str, n: int) -> np.ndarray:
    """Images per stratum with exactly ``n`` images in every group of ``attribute``, each group's spread over its
    strata in turn (the other attributes' groups then hold about as many or more)."""
    from fairlens_tasks.labels import GROUPS

    sizes = np.zeros(len(STRATA), dtype=np.int64)
    axis = _ATTRIBUTE_INDEX[attribute]
    for group in range(len(GROUPS[attribute])):
        members = [s for s, codes in enumerate(STRATA) if codes[axis] == group]
        for k in range(n):
            sizes[members[k % len(members)]] += 1
    return sizes


def _gap_metrics(attribute: str) -> list[str]:
    names = [f"parity_gap_{attribute}", f"association_gap_{attribute}", f"rate_ratio_{attribute}"]
    return names + (["parity_gap", "association_gap", "association_gap_max"] if attribute == "race" else [])


def _allowed(names: Sequence[str], n: int) -> dict[str, float | None]:
    from fairlens_tasks import statistics as table

    declared = {m: s for s in (*table.CLOSED_STATISTICS, *table.OPEN_STATISTICS) for m in s.members}
    return {name: declared[name].minimum.bias for name in names if declared[name].minimum.answers == n}


def closed_bias(policy: ClosedPolicy, attribute: str, n: int, *, replicates: int, seed: int) -> list[Bias]:
    """The bias rows of the comparisons of ``attribute``'s groups (and, for race, the means and maximum of gaps) under
    ``policy`` with ``n`` images in every group of ``attribute``."""
    from fairlens_tasks import scoring

    sizes, names = design_for(attribute, n), _gap_metrics(attribute)
    truths = _closed_truth(policy, sizes)
    truths["association_gap_max"] = max(truths[f"association_gap_{a}"] for a in _ATTRIBUTE_INDEX)
    return measure_bias(
        truths, lambda rng, _: _closed_records(policy, sizes, rng), scoring.point_estimates, names,
        model=f"closed/{policy.name}", size=n, replicates=replicates, seed=seed, allowed=_allowed(names, n),
        quiet=_QUIET,
    )  # fmt: skip


def open_bias(policy: OpenPolicy, attribute: str, n: int, *, replicates: int, seed: int) -> list[Bias]:
    """The bias row of ``attribute``'s open-ended gap under ``policy`` with ``n`` images in every group of it, through
    the scorer (so only where the gap is printed: from the declared minimum on)."""
    from fairlens_tasks import open_scoring

    sizes, names = design_for(attribute, n), [f"oe_bias_gap_{attribute}"]
    task = f"fairlens_open_{policy.domain}"
    return measure_bias(
        _open_truth(policy, sizes), lambda rng, _: _open_arrays(policy, sizes, rng),
        lambda arrays: open_scoring.open_metrics_from_arrays(*arrays, task=task, min_judged=0.0), names,
        model=f"open/{policy.name}", size=n, replicates=replicates, seed=seed, allowed=_allowed(names, n),
        quiet=_QUIET,
    )  # fmt: skip


def bias_table(replicates: int | None = None) -> list[Bias]:
    """The bias of every comparison of groups: the closed policies at each size of :data:`BIAS_SIZES` for each
    attribute, and the open-ended policies' gaps at the declared minimum."""
    from fairlens_tasks.statistics import GAP_MINIMUM

    reps = replicates or BIAS_REPLICATES
    rows: list[Bias] = []
    for i, policy in enumerate(CLOSED_POLICIES):
        for a, attribute in enumerate(_ATTRIBUTE_INDEX):
            for n in BIAS_SIZES:
                rows += closed_bias(policy, attribute, n, replicates=reps, seed=10_000 * i + 100 * a + n)
    for i, policy in enumerate(OPEN_POLICIES):
        for a, attribute in enumerate(_ATTRIBUTE_INDEX):
            rows += open_bias(policy, attribute, GAP_MINIMUM.answers, replicates=reps, seed=90_000 + 100 * i + a)
    return rows
