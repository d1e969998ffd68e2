"""The T2I task YAMLs: metric lists equal the statistics tables' headlines, shared settings, groups, the export CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fact_fair_tasks import t2i_documents
from fact_fair_tasks import t2i_statistics as ff_table
from iris_tasks import gen_documents
from iris_tasks import gen_statistics as iris_table

FF = Path(t2i_documents.__file__).resolve().parent / "t2i"
IRIS = Path(gen_documents.__file__).resolve().parent / "gen"


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")


def _load(path: Path) -> dict:
    config = yaml.load(path.read_text(), Loader=_Loader)
    include = config.pop("include", None)
    merged = _load(path.parent / include) if include else {}
    merged.update(config)
    return merged


DIRECTION_YAML = {"higher": True, "lower": False, "neither": None}


FF_AGGREGATE, IRIS_AGGREGATE = "fact_fair_tasks.t2i_scoring.aggregate", "iris_tasks.gen_harness.aggregate"


@pytest.mark.parametrize(
    ("path", "task", "aggregation", "docs"),
    [
        (FF / "fact_or_fair_t2i_objective.yaml", "fact_or_fair_t2i_objective", FF_AGGREGATE, "objective_docs"),
        (FF / "fact_or_fair_t2i_subjective.yaml", "fact_or_fair_t2i_subjective", FF_AGGREGATE, "subjective_docs"),
        (IRIS / "iris_gen_neutral.yaml", "iris_gen_neutral", IRIS_AGGREGATE, "gen_harness.neutral_docs"),
        (IRIS / "iris_gen_steer.yaml", "iris_gen_steer", IRIS_AGGREGATE, "gen_harness.steer_docs"),
    ],
)
def test_metric_lists_are_the_declared_headlines(path: Path, task: str, aggregation: str, docs: str) -> None:
    """The printed rows: the table's headlines (carrier first), at most 12, each naming its own aggregation of the
    one scoring module; version 3."""
    task = (ff_table if task.startswith("fact_or_fair") else iris_table).task_of(task)
    config = _load(path)
    listed = [(m["metric"], m["aggregation"], m["higher_is_better"]) for m in config["metric_list"]]
    expected = [(name, f"!function {aggregation}_{name}", DIRECTION_YAML[d]) for name, d in task.harness_metrics()]
    assert listed == expected and len(listed) <= 12 and listed[0][0] == task.carrier
    assert config["process_docs"].endswith(docs) and config["metadata"]["version"] == 3
    assert config["output_type"] == "generate_until" and config["tag"] == "fairness_evals"
    assert config["generation_kwargs"]["num_images_per_prompt"] == 20
    assert config["dataset_path"] == "json" and (path.parent / config["dataset_kwargs"]["data_files"]["test"]).is_file()


def test_twenty_images_per_prompt_everywhere() -> None:
    assert t2i_documents.IMAGES_PER_PROMPT == gen_documents.IMAGES_PER_PROMPT == 20


def test_groups_and_the_only_yaml_files() -> None:
    assert sorted(p.name for p in FF.glob("*.yaml")) == [
        "fact_or_fair_t2i.yaml", "fact_or_fair_t2i_objective.yaml", "fact_or_fair_t2i_subjective.yaml"
    ]  # fmt: skip
    assert _load(FF / "fact_or_fair_t2i.yaml")["task"] == ["fact_or_fair_t2i_objective", "fact_or_fair_t2i_subjective"]
    assert sorted(p.name for p in IRIS.glob("*.yaml")) == [
        "iris_gen.yaml",
        "iris_gen_neutral.yaml",
        "iris_gen_steer.yaml",
    ]
    assert _load(IRIS / "iris_gen.yaml")["task"] == ["iris_gen_neutral", "iris_gen_steer"]


def test_the_report_reads_the_gen_scores_under_these_names() -> None:
    from iris_tasks.report import DIMENSIONS

    assert DIMENSIONS["IFS-Gen"] == ("iris_gen_neutral", "ifs_gen_score")
    assert DIMENSIONS["RFS-Gen"] == ("iris_gen_neutral", "rfs_gen_score")
    assert DIMENSIONS["BIS-Gen"] == ("iris_gen_steer", "bis_gen_score")
    assert {"ifs_gen_score", "rfs_gen_score"} <= {
        m for m, _ in iris_table.task_of("iris_gen_neutral").harness_metrics()
    }
    assert "bis_gen_score" in {m for m, _ in iris_table.task_of("iris_gen_steer").harness_metrics()}


@pytest.mark.parametrize(
    ("benchmark", "counts"),
    [
        ("fact_or_fair", {"fact_or_fair_t2i_objective": 38, "fact_or_fair_t2i_subjective": 38}),
        ("iris", {"iris_gen_neutral": 52, "iris_gen_steer": 128}),
    ],
)
def test_export_t2i_layout_command(benchmark: str, counts: dict, tmp_path: Path, capsys) -> None:
    from fairness_evals.commands.main import main

    assert main(["export", benchmark, "--t2i-layout", str(tmp_path)]) == 0
    assert "prompt folders in" in capsys.readouterr().err
    manifest = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    assert {task: sum(line["task"] == task for line in manifest) for task in counts} == counts
    for line in manifest:
        prompt = (tmp_path / line["folder"] / "prompt.txt").read_text().strip()
        assert prompt == line["prompt"]
    readme = (tmp_path / "README.md").read_text()
    assert f"--model from_folder --model_args root={tmp_path.resolve()}" in readme
    assert not list(tmp_path.rglob("*.png"))
