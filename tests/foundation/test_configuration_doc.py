"""``docs/configuration.md`` has a row for every environment variable the package reads, and for no other.

The variables the code reads are collected two ways, so that a new one shows up however it is added:

* from the settings tables and name constants of the modules that read them (a table that grows a row grows this
  set); the generation tasks read each of their metadata keys from the variable of the same name in capitals
  (:func:`fairness_evals.generation.t2i_tasks.read_metadata`), so those keys count in capitals;
* from the product source (:data:`PRODUCT`): every string literal that is a whole ``FAIRLENS_*``, ``IRIS_*``,
  ``FACT_OR_FAIR_*`` or ``FAIRNESS_EVALS_*`` name, and every literal name passed to ``environ.get``, ``getenv`` or
  ``environ[...]`` (``XDG_CACHE_HOME``, ``OPENAI_API_KEY``). Tests are not scanned: their variables are not settings.

The page's rows are those of its tables headed ``environment variable | task metadata key | CLI flag | default |
what it does | read by``. Beside the variables, the metadata keys must be the code's, each option must sit in its
variable's row, and the defaults the settings tables hold must be the page's.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Any

import pytest
from harness import REPO

DOC = REPO / "docs" / "configuration.md"
#: The product source: the five packages and the start-up hook the wheel installs.
PRODUCT = (
    *(REPO / name for name in ("fairness_evals", "fact_fair_tasks", "fairlens_tasks", "iris_tasks", "metrics")),
    REPO / "_fairness_evals_hook.py",
)
COLUMNS = ("environment variable", "task metadata key", "CLI flag", "default", "what it does", "read by")
NONE = "–"
#: A whole variable name of ours.
OURS = re.compile(r"(?:FAIRLENS|IRIS|FACT_OR_FAIR|FAIRNESS_EVALS)_[A-Z0-9_]+")
#: Any variable name (one passed to the environment by its literal name).
VARIABLE = re.compile(r"[A-Z][A-Z0-9_]*")
METADATA_KEY = re.compile(r"[a-z][a-z0-9_]*")
SPAN = re.compile(r"`([^`]+)`")


# --------------------------------------------------------------------------- what the code reads
def _reads_environment(node: ast.expr) -> bool:
    """Whether ``node`` is the environment or a mapping standing for it (``os.environ``, ``environ``, ``env``)."""
    text = ast.unparse(node)
    return text == "env" or text.endswith("environ")


def scanned_names(source: str) -> set[str]:
    """The variable names ``source`` holds: string literals that are a whole name of ours, and literal names passed to
    ``<environment>.get``, ``getenv`` or ``<environment>[...]``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and OURS.fullmatch(node.value):
            found.add(node.value)
        argument: ast.expr | None = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            named = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if named == "getenv" or (
                named == "get" and isinstance(func, ast.Attribute) and _reads_environment(func.value)
            ):
                argument = node.args[0]
        elif isinstance(node, ast.Subscript) and _reads_environment(node.value):
            argument = node.slice
        if (
            isinstance(argument, ast.Constant)
            and isinstance(argument.value, str)
            and VARIABLE.fullmatch(argument.value)
        ):
            found.add(argument.value)
    return found


def source_variables() -> set[str]:
    """:func:`scanned_names` over every Python file of :data:`PRODUCT`."""
    files = [path for root in PRODUCT for path in ([root] if root.is_file() else sorted(root.rglob("*.py")))]
    assert len(files) > 100, files  # the packages are there
    return {name for path in files for name in scanned_names(path.read_text(encoding="utf-8"))}


def generation_keys() -> tuple[str, ...]:
    """The metadata keys of the generation tasks, each read from the variable of its name in capitals."""
    from fact_fair_tasks import t2i_scoring
    from iris_tasks import gen_settings

    return (*t2i_scoring.SETTING_KEYS, *gen_settings.SETTING_KEYS)


def table_variables() -> set[str]:
    """The variables named by the settings tables and name constants of the modules that read them."""
    from fact_fair_tasks import document_cache, t2i_scoring
    from fairlens_tasks import images as fairlens_images
    from fairlens_tasks import settings as fairlens
    from fairlens_tasks.judging import config as judge
    from fairlens_tasks.judging import redact
    from fairness_evals.generation import image_outcomes
    from iris_tasks import embedder, gen_settings
    from iris_tasks import images as iris_images
    from iris_tasks import settings as iris

    return {
        *fairlens.ENV.values(),
        *(variable for variable, _ in fairlens.THRESHOLDS.values()),
        fairlens.POSITION_NULLS_ENV,
        *judge.ENV.values(),
        *redact.KEY_VARIABLES,
        fairlens_images.CACHE_ENV,
        fairlens_images.SPILL_ENV,
        *iris.ENV.values(),
        iris_images.CACHE_ENV,
        iris_images.SPILL_ENV,
        embedder.EMBEDDER_ENV,
        gen_settings.CLASSIFIER_ENV,
        t2i_scoring.CLASSIFIER_ENV,
        *(key.upper() for key in generation_keys()),
        document_cache.ENVIRONMENT,
        image_outcomes.SHARED_CLASSIFIER_ENV,
        image_outcomes.SHARED_VALIDATION_ENV,
    }


def code_variables() -> set[str]:
    return table_variables() | source_variables()


def code_metadata_keys() -> set[str]:
    """Every task-metadata / ``--metadata`` key a task or command takes."""
    from fact_fair_tasks import documents
    from fairlens_tasks import settings as fairlens
    from iris_tasks import commands as iris_cli

    return {
        *documents.SETTING_KEYS, *fairlens.THRESHOLDS, fairlens.POSITION_NULLS_KEY, *iris_cli.METADATA_SETTINGS,
        *generation_keys(),
    }  # fmt: skip


# --------------------------------------------------------------------------- what the page says
def doc_rows(text: str) -> list[dict[str, str]]:
    """The rows of every table of ``text`` headed by :data:`COLUMNS`, as {column: cell}."""
    rows: list[dict[str, str]] = []
    in_table = False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if tuple(cells) == COLUMNS:
            in_table = True
        elif in_table and not set("".join(cells)) <= set("-: "):
            assert len(cells) == len(COLUMNS), f"docs/configuration.md: a row of {len(cells)} cells: {line}"
            rows.append(dict(zip(COLUMNS, cells, strict=True)))
    return rows


def variable_of(row: dict[str, str]) -> str | None:
    """The row's variable (its first cell: one name in backticks, or "–")."""
    cell = row["environment variable"]
    if cell == NONE:
        return None
    match = re.fullmatch(r"`([^`]+)`", cell)
    assert match and VARIABLE.fullmatch(match.group(1)), f"docs/configuration.md: not one variable: {cell!r}"
    return match.group(1)


def metadata_keys_of(row: dict[str, str]) -> list[str]:
    cell = row["task metadata key"]
    keys = SPAN.findall(cell)
    assert cell == NONE or (keys and all(METADATA_KEY.fullmatch(key) for key in keys)), cell
    return keys


def row_key(row: dict[str, str]) -> str:
    """What names a row: its variable, else its metadata key, else its first option."""
    return variable_of(row) or next(iter(metadata_keys_of(row)), "") or SPAN.findall(row["CLI flag"])[0]


def rows() -> list[dict[str, str]]:
    found = doc_rows(DOC.read_text(encoding="utf-8"))
    assert len(found) > 50, "docs/configuration.md has lost its tables"
    return found


def by_key() -> dict[str, dict[str, str]]:
    return {row_key(row): row for row in rows()}


def doc_variables() -> list[str]:
    return [name for row in rows() if (name := variable_of(row)) is not None]


# --------------------------------------------------------------------------- the tests
def test_every_variable_the_code_reads_is_a_row() -> None:
    missing = sorted(code_variables() - set(doc_variables()))
    assert not missing, f"read by the code, no row in docs/configuration.md: {', '.join(missing)}"


def test_every_row_names_a_variable_the_code_reads() -> None:
    stale = sorted(set(doc_variables()) - code_variables())
    assert not stale, f"rows of docs/configuration.md that nothing reads: {', '.join(stale)}"


def test_each_variable_and_each_row_key_is_one_row() -> None:
    repeated = [name for name, n in Counter(doc_variables()).items() if n > 1]
    assert not repeated, repeated
    keys = [row_key(row) for row in rows()]
    assert len(keys) == len(set(keys)), [key for key, n in Counter(keys).items() if n > 1]


def test_the_metadata_keys_are_the_codes() -> None:
    documented = {key for row in rows() for key in metadata_keys_of(row)}
    assert documented == code_metadata_keys(), (
        f"not in the page: {sorted(code_metadata_keys() - documented)}; not the code's: "
        f"{sorted(documented - code_metadata_keys())}"
    )


def _routes() -> list[tuple[str, str, str]]:
    """(variable, column, what that column of its row must name): each setting's option and metadata key."""
    from fairlens_tasks import settings as fairlens
    from fairlens_tasks.judging import config as judge
    from iris_tasks import commands as iris_cli
    from iris_tasks import settings as iris

    pairs = [
        *((fairlens.ENV[key], "CLI flag", option) for key, option in fairlens.CLI.items()),
        *((judge.ENV[key], "CLI flag", option) for key, option in judge.CLI.items()),
        *((iris.ENV[key], "CLI flag", option) for key, option in iris_cli.CLI.items()),
        *((variable, "task metadata key", key) for key, (variable, _) in fairlens.THRESHOLDS.items()),
        (fairlens.POSITION_NULLS_ENV, "task metadata key", fairlens.POSITION_NULLS_KEY),
        *((iris.ENV[setting], "task metadata key", key) for key, setting in iris_cli.METADATA_SETTINGS.items()),
        *((key.upper(), "task metadata key", key) for key in generation_keys()),
    ]
    assert len(pairs) > 40
    return pairs


def test_each_option_and_metadata_key_is_in_its_variables_row() -> None:
    table = by_key()
    wrong = [
        f"{variable}: {column} should name {wanted!r}"
        for variable, column, wanted in _routes()
        if not any(span.split()[-1] == wanted for span in SPAN.findall(table.get(variable, {}).get(column, "")))
    ]
    assert not wrong, wrong


def _shown(value: Any) -> str:
    """A default as the page writes it: ``1``/``0`` for a flag, ``0.1`` or ``120`` for a number."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def code_defaults() -> dict[str, Any]:
    """Row key -> the code's default, for every setting whose default a table or constant holds."""
    import argparse

    from fact_fair_tasks import documents, t2i_scoring
    from fact_fair_tasks.items import CONVENTIONS
    from fairlens_tasks import settings as fairlens
    from fairlens_tasks.judging import config as judge
    from fairness_evals.commands import compare as compare_cli
    from fairness_evals.corpus import images
    from fairness_evals.generation import image_outcomes
    from iris_tasks import gen_settings
    from iris_tasks import images as iris_images
    from iris_tasks import settings as iris
    from iris_tasks.answer_shares import DEFAULT_MIN_COVERAGE
    from metrics.iris.scoring import MBTI_THRESHOLD

    compare = argparse.ArgumentParser()
    compare_cli.add_arguments(compare)
    return {
        fairlens.ENV["sample_fraction"]: fairlens.DEFAULT_SAMPLE_FRACTION,
        fairlens.ENV["seed"]: fairlens.DEFAULT_SEED,
        **{variable: default for variable, default in fairlens.THRESHOLDS.values()},
        **{judge.ENV[key]: value for key, value in judge.DEFAULTS.items()},
        judge.ENV["max_tokens"]: judge.DEFAULT_MAX_TOKENS,
        "OPENAI_BASE_URL": judge.OPENAI_URL,
        **{iris.ENV[key]: value for key, value in iris.DEFAULTS.items()},
        **{name: images.DEFAULT_CACHE_SIZE for name in ("FAIRLENS_IMAGE_CACHE", iris_images.CACHE_ENV)},
        **{name: images.DEFAULT_SPILL_MB for name in ("FAIRLENS_IMAGE_SPILL_MB", iris_images.SPILL_ENV)},
        **{
            name: image_outcomes.DEFAULT_SPEC
            for name in (t2i_scoring.CLASSIFIER_ENV, gen_settings.CLASSIFIER_ENV, image_outcomes.SHARED_CLASSIFIER_ENV)
        },
        t2i_scoring.MIN_COVERAGE_KEY.upper(): t2i_scoring.DEFAULT_MIN_COVERAGE,
        t2i_scoring.CONVENTIONS_KEY.upper(): t2i_scoring.CONVENTIONS[0],
        t2i_scoring.ROWS_KEY.upper(): t2i_scoring.ROW_RULES[0],
        "fact_or_fair_seed": documents.DEFAULT_SEED,
        "fact_or_fair_draws": documents.DEFAULT_DRAWS,
        "fact_or_fair_conventions": CONVENTIONS[0],
        "fact_or_fair_min_coverage": documents.DEFAULT_MIN_COVERAGE,
        "fact_or_fair_position_nulls": documents.scoring_settings({})["position_nulls"],
        fairlens.POSITION_NULLS_ENV: fairlens.scoring_from_env("closed", {})[fairlens.POSITION_NULLS_KEY],
        **{f"compare --{name}": compare.get_default(name) for name in ("alpha", "resamples", "seed")},
        "iris-profile --threshold": MBTI_THRESHOLD,
        "iris-profile --min-coverage": DEFAULT_MIN_COVERAGE,
    }


def test_the_defaults_are_the_codes() -> None:
    table = by_key()
    wrong = [
        f"{key}: the code's default is `{_shown(value)}`, the page says {table[key]['default']!r}"
        if key in table
        else f"{key}: no row"
        for key, value in code_defaults().items()
        if key not in table or _shown(value) not in SPAN.findall(table[key]["default"])
    ]
    assert not wrong, wrong


def test_the_scanner_finds_literal_names_and_names_passed_to_the_environment() -> None:
    source = """
import os
NAME = "IRIS_NEW_SETTING"
os.environ.get("XDG_SOMETHING")
os.getenv("OPENAI_OTHER", "")
os.environ["PLAIN"]
env.get("FAIRLENS_VIA_MAPPING")
settings.get("NOT_THE_ENVIRONMENT")
LABEL = "IRIS_HF_SPLIT / IRIS_STEER_HF_SPLIT"
PREFIX = "IRIS_"
"""
    assert scanned_names(source) == {
        "IRIS_NEW_SETTING",
        "XDG_SOMETHING",
        "OPENAI_OTHER",
        "PLAIN",
        "FAIRLENS_VIA_MAPPING",
    }


def test_the_page_reader_reads_rows_and_refuses_a_cell_that_is_not_one_variable() -> None:
    text = "\n".join(
        [
            "| " + " | ".join(COLUMNS) + " |",
            "|---|---|---|---|---|---|",
            "| `IRIS_SEED` | – | `--seed` | `0` | seed | `iris_tasks.settings` |",
            "| – | `fact_or_fair_seed` | `--seed` | `0` | seed | `fact_fair_tasks.documents` |",
            "",
            "| other | table |",
            "| `NOT_A_ROW` | x |",
        ]
    )
    found = doc_rows(text)
    assert [variable_of(row) for row in found] == ["IRIS_SEED", None]
    assert [row_key(row) for row in found] == ["IRIS_SEED", "fact_or_fair_seed"]
    with pytest.raises(AssertionError, match="not one variable"):
        variable_of({"environment variable": "`IRIS_SEED`, `IRIS_CORPUS`"})
