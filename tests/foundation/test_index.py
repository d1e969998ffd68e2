"""Every task, group and tag our YAMLs define is in each harness's index, and docs/tasks.md lists exactly those."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from fairness_evals.index import harness_index
from fairness_evals.paths import HARNESSES, task_paths

README = Path(__file__).resolve().parents[2] / "docs" / "tasks.md"


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: None)


def _load(path: Path) -> dict:
    """A YAML config with its ``include:`` files merged in (later includes and local keys win)."""
    config = yaml.load(path.read_text(), Loader=_Loader)
    includes = config.pop("include", [])
    merged: dict = {}
    for include in [includes] if isinstance(includes, str) else includes:
        merged.update(_load(path.parent / include))
    merged.update(config)
    return merged


def _yaml_names(harness: str) -> set[tuple[str, str]]:
    names: set[tuple[str, str]] = set()
    for folder in task_paths(harness):
        for path in Path(folder).rglob("*.yaml"):
            config = _load(path)
            if "group" in config:
                names.add(("group", config["group"]))
            elif "task" in config:
                names.add(("task", config["task"]))
            tags = config.get("tag") or []
            for tag in [tags] if isinstance(tags, str) else tags:
                names.add(("tag", tag))
    return names


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_yaml_name_is_in_the_harness_index(harness: str) -> None:
    defined = _yaml_names(harness)
    indexed = set(harness_index(harness))
    assert defined, f"no YAML of ours for {harness}"
    assert defined <= indexed, f"silently skipped by {harness}: {sorted(defined - indexed)}"
    assert {name for _, name in indexed} == {name for _, name in defined}


def test_readme_task_list_equals_the_index() -> None:
    text = README.read_text()
    start, end = text.index("<!-- task-list:start -->"), text.index("<!-- task-list:end -->")
    rows = re.findall(r"^\| `([a-z0-9_]+)` \| (lm-eval|lmms-eval) \| (task|group|tag) \|", text[start:end], re.M)
    listed = {(harness, kind, name) for name, harness, kind in rows}
    indexed = {(h, kind, name) for h in HARNESSES for kind, name in harness_index(h)}
    assert listed == indexed, {"missing from README": sorted(indexed - listed), "not indexed": sorted(listed - indexed)}
