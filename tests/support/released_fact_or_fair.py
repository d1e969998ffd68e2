"""Reference numbers from the released Fact-or-Fair code, for the released-conventions test.

``python tests/support/released_fact_or_fair.py <release checkout or git dir> [out.json]`` runs the release's
own test and analysis scripts (uclanlp/fact-or-fair @945ec6b: ``objective_test/obj_test.py`` +
``obj_analysis.py``, ``subjective_test/subj_test.py`` + ``subj_analysis.py``) on synthetic replies, and writes
their result tables to ``tests/fact_or_fair/data/released_reference.json``. Only three things are replaced in the release: its
model client (a stub that answers each prompt with the reply :func:`replies` gives the same document), its
unseeded random choices (replayed from our released-convention documents, so the release builds exactly our
documents: its ``shuffle`` of the objective options and its ``random.choice`` of profiles and identities), and
the date in its result paths. The stub records every prompt it does not know; the run fails if there is one,
so the release's prompts equal our released-convention prompts byte for byte.

The test (``tests/fact_or_fair/test_fact_or_fair_released.py``) rebuilds the same documents and replies and checks that
:func:`fact_fair_tasks.scoring.compute_metrics` under ``fact_or_fair_conventions: released`` reproduces every
number of the release's tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fact_fair_tasks.prompts import prompt_of

REFERENCE = Path(__file__).resolve().parents[1] / "fact_or_fair" / "data" / "released_reference.json"
RELEASE_COMMIT = "945ec6bc1de172e5d3e807edd0c8b6d084d78e44"
DRAWS = 10  # the release's NUM_ITERATIONS for this reference (it uses 100)
RELEASED = {"fact_or_fair_conventions": "released"}
POLICIES = ("by_letter", "stereotyped_noisy", "same_group")
CONTEXTS = {"baseline": "base", "representativeness_bias": "representativeness",
            "attribution_error": "attribution", "group_bias": "ingroup"}  # fmt: skip


def _unit(*parts: object) -> float:
    """A deterministic number in [0, 1) from its arguments."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _letter_reply(letter: str, style: float) -> str:
    if style < 0.85:
        return f'{{"answer": "{letter}"}}'
    if style < 0.9:
        return f'{{ "answer" : "{letter}" }}'  # the subjective regex reads it; the objective one does not
    if style < 0.95:
        return f'Sure. {{"answer": "{letter}"}} or {{"answer": "A"}}'  # the release takes the first match
    return "I cannot make that judgement."


def replies(policy: str, docs: list[dict[str, Any]]) -> dict[str, str]:
    """One reply per document id, a deterministic function of the policy and the document's prompt (two
    objective documents with the same option order have the same prompt, and get the same reply)."""
    out = {}
    for doc in docs:
        options, prompt = doc["options"], prompt_of(doc)
        objective = doc.get("context") is None
        labels = options if objective else [o["race"] for o in options]
        if policy == "by_letter":  # a letter drawn from the prompt alone: answers by position
            letter = "ABCD"[int(_unit(policy, prompt) * len(options))]
        elif policy == "same_group":  # the same group for highest and lowest: the released zero-KL branch
            first = "male" if objective and doc["axis"] == "gender" else "Asian"
            letter = "ABCD"[labels.index(first)] if first in labels else "D"
        else:
            truth = doc["answer"] if objective else doc["truth_race"]
            if truth in labels and _unit(policy, prompt) < 0.55:
                letter = "ABCD"[labels.index(truth)]
            else:
                letter = "ABCD"[int(_unit(policy, prompt, "letter") * len(options))]
        out[doc["id"]] = _letter_reply(letter, _unit(policy, prompt, "style") if policy != "same_group" else 0)
    return out


def documents() -> dict[str, list[dict[str, Any]]]:
    from fact_fair_tasks.documents import documents_for

    kinds = ["objective", *CONTEXTS.values()]
    return {kind: documents_for(kind, draws=DRAWS, metadata=RELEASED) for kind in kinds}


_DRIVER = r"""
import csv, json, os, sys, types
root, plan_path, date = sys.argv[1], sys.argv[2], sys.argv[3]
plan = json.load(open(plan_path))
misses = []

class LLM:
    def __init__(self, name):
        self.name = name
    def chat(self, prompt, temperature=0.0):
        table = plan["replies"][self.name]
        if prompt not in table:
            misses.append(prompt)
            raise KeyError("unknown prompt")
        return table[prompt]

models = types.ModuleType("models")
models.LLM = LLM
models.models_known = list(plan["replies"])
sys.modules["models"] = models
sys.path.insert(0, root)
results = {}

os.chdir(os.path.join(root, "large_language_model", "objective_test"))
sys.path.insert(0, os.getcwd())
import obj_test, obj_analysis
obj_test.DATE = obj_analysis.DATE = date
orders = iter(plan["objective_orders"])
def shuffle(values):
    values[:] = next(orders)
for name in plan["replies"]:
    orders = iter(plan["objective_orders"])
    obj_test.shuffle = shuffle
    obj_test.MODELS = [name]
    obj_test.main()
obj_analysis.main()
with open(os.path.join("results", date, "llm_objective_result.csv")) as f:
    results["objective"] = list(csv.DictReader(f))

os.chdir(os.path.join(root, "large_language_model", "subjective_test"))
sys.path.insert(0, os.getcwd())
sys.modules["prompts_gen"] = types.ModuleType("prompts_gen")
sys.modules["prompts_gen"].main = lambda: None
import subj_test, subj_analysis
subj_test.DATE = subj_analysis.DATE = date
subj_test.NUM_ITERATIONS = plan["draws"]
for name in plan["replies"]:
    draws = iter(plan["subjective_draws"])
    subj_test.get_random_option = lambda options: next(draws)
    subj_test.run(name)
subj_analysis.main()
for error in subj_analysis.COGNITIVE_ERRORS:
    with open(os.path.join("results", date, f"llm_{error}_result.csv")) as f:
        results[error] = list(csv.DictReader(f))
json.dump({"results": results, "misses": misses[:5], "n_misses": len(misses)}, open(plan_path + ".out", "w"))
"""


def _plan(docs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    from fact_fair_tasks.items import AXES, statistics

    stats = statistics("released")
    by_id = {d["id"]: d for kind in docs for d in docs[kind]}
    orders = []  # the release's loop order: statistic, axis, target, round
    for stat in stats:
        for axis in AXES:
            if stat.ground_truth[axis] is None:
                continue
            for target in ("highest", "lowest"):
                for round_ in range(3):
                    orders.append(by_id[f"objective/{stat.slug}/{axis}/{target}/{round_}"]["options"])
    draws = []  # error, target, statistic, scenario, draw: 4 x (name, gender, race, age), then race, gender
    for context in CONTEXTS.values():
        for target in ("highest", "lowest"):
            for stat in stats:
                for scenario in range(3):
                    for draw in range(DRAWS):
                        doc = by_id[f"{context}/{stat.slug}/{target}/s{scenario}/d{draw:03d}"]
                        for o in doc["options"]:
                            draws += [o["name"], o["gender"], o["race"], o["age"]]
                        draws += [doc["identity"]["race"], doc["identity"]["gender"]]
    # the release runs its models in its own loop order; one model per policy (names the stub recognises)
    table = {}
    for policy in POLICIES:
        name = f"gpt-sim-{policy}"
        table[name] = {}
        for kind_docs in docs.values():
            answer = replies(policy, kind_docs)
            for doc in kind_docs:
                table[name][prompt_of(doc)] = answer[doc["id"]]
    return {"replies": table, "objective_orders": orders, "subjective_draws": draws, "draws": DRAWS}


def run_release(release: Path) -> dict[str, Any]:
    """The release's result tables for every policy (the release's models are named ``gpt-sim-<policy>``)."""
    docs = documents()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "release"
        root.mkdir()
        git_dir = release / ".git" if (release / ".git").exists() else release
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", RELEASE_COMMIT,
                                  "large_language_model", "data"], check=True, capture_output=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
        (root / "large_language_model" / "models.py").unlink()
        plan_path = Path(tmp) / "plan.json"
        plan_path.write_text(json.dumps(_plan(docs)))
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        subprocess.run([sys.executable, "-c", _DRIVER, str(root), str(plan_path), "000000"], check=True, env=env,
                       capture_output=True)  # fmt: skip
        out = json.loads(Path(str(plan_path) + ".out").read_text())
    if out["n_misses"]:
        raise RuntimeError(f"the release built {out['n_misses']} prompts we did not, e.g. {out['misses'][:2]}")
    return out["results"]


def main(argv: list[str]) -> int:
    release = Path(argv[1])
    out = Path(argv[2]) if len(argv) > 2 else REFERENCE
    results = run_release(release)
    payload = {
        "_provenance": (
            f"uclanlp/fact-or-fair @{RELEASE_COMMIT}: obj_test.py + obj_analysis.py and subj_test.py + "
            "subj_analysis.py run on the replies of tests/support/released_fact_or_fair.py (policies "
            f"{', '.join(POLICIES)}; {DRAWS} draws per scenario), model client, random choices and date replaced "
            "as that module's docstring says. Values x100, as the release writes them."
        ),
        "draws": DRAWS,
        "results": results,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    raise SystemExit(main(sys.argv))
