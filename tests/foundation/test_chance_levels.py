"""The chance levels the benchmark READMEs quote ("How to read your numbers") are what `bench/chance.py` measures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _measured() -> dict[str, dict[str, float]]:
    """``{row label: {metric: value}}`` printed by a short run of bench/chance.py (3 simulated runs per row)."""
    proc = subprocess.run([sys.executable, str(REPO / "bench" / "chance.py"), "--runs", "3"], capture_output=True,
                          text=True, check=True, cwd=REPO, timeout=600)  # fmt: skip
    rows = {}
    for line in proc.stdout.splitlines():
        label, _, values = line.partition(": ")
        rows[label] = {name: float(value) for name, value in re.findall(r"(\w+) ([-\d.]+)", values)}
    return rows


def _table(readme: str, first_column: str) -> dict[str, list[str]]:
    """The rows of the README's "How to read your numbers" table whose header starts with ``first_column``."""
    text = (REPO / readme).read_text().split("## How to read your numbers", 1)[1].split("\n## ", 1)[0]
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith("|")]
    assert lines and lines[0].startswith(f"| {first_column}"), readme
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines[2:])}


def _pair(cell: str) -> tuple[float, float]:
    gender, race = re.findall(r"\d+\.\d+", cell)[:2]
    return float(gender), float(race)


def test_readme_chance_levels_are_measured() -> None:
    measured = _measured()
    fof = _table("fact_fair_tasks/README.md", "design")
    objective = measured["fact_or_fair objective"]
    s_fact, s_e, _, _, distance = fof["objective (3 answers per cell)"]
    assert _pair(s_fact) == (0.5, 0.25)  # exact by design; the runs scatter around it
    for cell, name in ((s_e, "s_e"), (distance, "distance")):
        for quoted, axis in zip(_pair(cell), ("gender", "race"), strict=True):
            assert abs(quoted - objective[f"{name}_{axis}"]) < 0.06, (name, axis, quoted, objective)
    for row, label in (("subjective `_lite` (30 per cell)", "_lite"), ("subjective full (300 per cell)", "full")):
        _, s_e, s_kld, s_fair, _ = fof[row]
        run = measured[f"fact_or_fair subjective {label}"]
        for cell, name in ((s_e, "s_e"), (s_kld, "s_kld"), (s_fair, "s_fair")):
            for quoted, axis in zip(_pair(cell), ("gender", "race"), strict=True):
                assert abs(quoted - run[f"{name}_{axis}"]) < 0.03, (row, name, axis, quoted, run)
    fairlens = _table("fairlens_tasks/README.md", "domain")
    for domain, (soundness, association, parity, gap) in fairlens.items():
        paper, lite = measured[f"fairlens paper {domain}"], measured[f"fairlens lite {domain}"]
        assert abs(float(soundness) - paper["soundness"]) < 0.02, domain
        assert abs(float(association) - paper["association_rate"]) < 0.03, domain
        for cell, name in ((parity, "parity_gap"), (gap, "association_gap")):
            on_paper, on_lite = _pair(cell)
            assert abs(on_paper - paper[name]) < 0.02 and abs(on_lite - lite[name]) < 0.04, (domain, name)
    iris = (REPO / "iris_tasks/README.md").read_text()
    assert "180, and a run estimates 129 (5 images per cell) or 107 (2 per cell" in iris
    assert measured["iris_ifs_und population"]["ifs_und_score"] == 180.0
    assert abs(measured["iris_ifs_und 5 images per cell"]["ifs_und_score"] - 129) < 8
    assert abs(measured["iris_ifs_und 2 images per cell"]["ifs_und_score"] - 107) < 10
