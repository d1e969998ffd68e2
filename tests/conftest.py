"""Shared test set-up: make ``tests/support`` importable and keep every run offline."""

from __future__ import annotations

import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "support"))

# Bytecode is cached (in __pycache__, which git ignores) even where the environment says not to: under
# PYTHONDONTWRITEBYTECODE=1 (this machine image sets it) each xdist worker rewrote and compiled every test module
# again (about 12 s at collection), and each of the ~300 processes the suite starts compiled our modules again.
# Processes that test how an install behaves set their own environment (tests/support/installed.py).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Property tests (hypothesis) draw their examples from a fixed seed, with no example database: every run on every
# machine tries the same examples. HYPOTHESIS_PROFILE=explore draws fresh ones (then pin what they find as a test).
from hypothesis import settings as _hypothesis  # noqa: E402

_hypothesis.register_profile("seeded", derandomize=True, database=None)
_hypothesis.register_profile("explore", derandomize=False)
_hypothesis.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "seeded"))

# Tests never reach a model or dataset hub; anything that tries must fail fast, not hang.
for _name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_name, "1")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# Under pytest-xdist each worker's torch gets its share of the cores: the worker's own models and every harness run
# the tests start (they inherit this environment). With torch's default of one thread per core, two workers on two
# cores spin against each other: a 4-document SmolLM2 lm-eval run of ``fact_or_fair`` took 260 s of CPU (10 minutes) on
# a busy two-core machine and 61 s (87 s) with one thread, its samples and results byte for byte the same (as were the
# log-likelihoods of a run of ``fact_or_fair_mc``). A setting of the caller's own is kept.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _share = max(1, _cores() // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    os.environ.setdefault("OMP_NUM_THREADS", str(_share))
    if "torch" in sys.modules:  # imported before this file (by a plugin): the variable no longer reaches it
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


# ----------------------------------------------------------------------------- shared harness runs
# Real harness runs that several test modules read (the end-to-end checks and the report). With pytest-xdist
# each worker has its own session, so a run is built once per test session under a file lock in the
# directory that all workers share, and reused by the others.
import pytest  # noqa: E402
from filelock import FileLock  # noqa: E402


def shared_run(tmp_path_factory: pytest.TempPathFactory, name: str, build) -> Path:
    """``build(folder) -> Path`` once per test session (across xdist workers); later callers reuse it."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / f"shared-{name}"
    with FileLock(str(root) + ".lock"):
        done = root / "done"
        if done.exists():
            return Path(done.read_text())
        root.mkdir(parents=True, exist_ok=True)
        out = build(root)
        done.write_text(str(out))
        return out


@pytest.fixture
def shared_cnn_detections(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """For the test that asks for it: each CNN face detection of an image is computed once per test session, across
    xdist workers, and read back after that (same pixels, same detector; see ``tests/support/cnn_cache.py``)."""
    from cnn_cache import share_cnn_detections

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    share_cnn_detections(monkeypatch, root / "shared-cnn-detections")


def _run_served_lm_eval(tmp: Path, tasks: str, limit: int, *, log_likelihood: bool = False) -> Path:
    """lm_eval with ``--limit``, the chat template and logged samples against a loopback OpenAI-compatible server:
    every chat reply a valid answer (``fact_or_fair_reply``), or with ``log_likelihood`` prompt-token
    log-probabilities from a fixed function of the token ids (``local-completions``, SmolLM2's tokenizer). Not a
    model: the runs check the plumbing a real run goes through, instantly (the embedded model's own generation and
    log-likelihoods are run by the README demo, the scale tests and the oldest lm-eval's tests)."""
    from harness import DEV_BIN, offline_env, run
    from models import smollm2
    from openai_server import OpenAIServer, fact_or_fair_reply, running

    out = tmp / "out"
    with running(OpenAIServer(fact_or_fair_reply, model_name="loopback")) as server:
        if log_likelihood:
            model = ["--model", "local-completions", "--model_args",
                     f"model=loopback,base_url={server.base_url}/completions,num_concurrent=8,max_retries=1,"
                     f"tokenizer_backend=huggingface,tokenizer={smollm2()}"]  # fmt: skip
        else:
            model = ["--model", "local-chat-completions", "--model_args",
                     f"model=loopback,base_url={server.base_url}/chat/completions,num_concurrent=8,max_retries=1",
                     "--apply_chat_template"]  # fmt: skip
        run(
            [str(DEV_BIN / "lm_eval"), *model, "--tasks", tasks, "--limit", str(limit), "--output_path", str(out),
             "--log_samples"],
            env=offline_env(tmp), cwd=tmp, timeout=900,
        )  # fmt: skip
    return out


@pytest.fixture(scope="session")
def fact_or_fair_generation_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lm_eval ``local-chat-completions`` against a loopback server giving valid answers, ``fact_or_fair`` and the
    base lite task, 4 documents each, chat template."""
    return shared_run(
        tmp_path_factory,
        "fact-or-fair-generation",
        lambda tmp: _run_served_lm_eval(tmp, "fact_or_fair,fact_or_fair_subjective_base_lite", 4),
    )


@pytest.fixture(scope="session")
def fact_or_fair_loglikelihood_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lm_eval ``local-completions`` against a loopback server's fixed prompt-token log-probabilities, the
    log-likelihood group ``fact_or_fair_mc``, 8 documents per task."""
    return shared_run(
        tmp_path_factory,
        "fact-or-fair-mc",
        lambda tmp: _run_served_lm_eval(tmp, "fact_or_fair_mc", 8, log_likelihood=True),
    )


def _run_fairlens_dummy(tmp: Path) -> Path:
    from faces import make_utkface_folder
    from harness import offline_env, run_lmms_eval

    corpus = tmp / "faces"
    make_utkface_folder(corpus, 1, seed=11)
    env = offline_env(tmp, FAIRLENS_CORPUS=str(corpus), FAIRLENS_SAMPLE_FRACTION="1")
    return run_lmms_eval(tmp, "dummy", "response=Yes", "fairlens", env=env)


@pytest.fixture(scope="session")
def fairlens_dummy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lmms-eval, the weight-free ``dummy`` model answering "Yes" to everything, FairLens on 30 synthetic faces."""
    return shared_run(tmp_path_factory, "fairlens-dummy", _run_fairlens_dummy)


def _run_iris_und_dummy(tmp: Path) -> Path:
    from harness import offline_env, run_lmms_eval

    from tests.iris.conftest import CORNERS, image_rows, steer_rows, write_manifest

    images, steer = tmp / "images", tmp / "steer"
    occupations = ["doctor", "nurse", "carpenter", "teacher"]
    corpus = write_manifest(images / "images.csv", image_rows(images, occupations))
    sets = {f"set-{chr(97 + i)}": occupation for i, occupation in enumerate(occupations)}
    steer_corpus = write_manifest(steer / "steer.csv", steer_rows(steer, sets, CORNERS))
    env = {k: v for k, v in offline_env(tmp).items() if not k.startswith("IRIS_")}
    env.update(IRIS_CORPUS=str(corpus), IRIS_STEER_CORPUS=str(steer_corpus), IRIS_PROBE_ROUNDS="1")
    return run_lmms_eval(tmp, "dummy", "response=7 doctor", "iris_und", "--limit", "30", env=env)


@pytest.fixture(scope="session")
def iris_und_dummy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lmms-eval, the ``dummy`` model answering "7 doctor", the IRIS understanding group ``iris_und`` on the IRIS
    tests' synthetic corpora (72 images, 4 counterfactual sets), one probe round, 30 documents per task."""
    return shared_run(tmp_path_factory, "iris-und-dummy", _run_iris_und_dummy)


def _run_fairlens_cannot_tell(tmp: Path) -> Path:
    import yaml
    from faces import make_utkface_folder
    from harness import DEV_BIN, offline_env, run

    corpus = tmp / "faces"
    make_utkface_folder(corpus, 1, seed=11)
    config = tmp / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "model": "dummy",
                "model_args": "response=Cannot tell",
                "tasks": "fairlens",
                "batch_size": 1,
                "output_path": str(tmp / "out"),
                "log_samples": True,
                "env": {
                    "FAIRLENS_CORPUS": str(corpus),
                    "FAIRLENS_SAMPLE_FRACTION": "1",
                    "FAIRLENS_MIN_COVERAGE": "0.2",
                },
            }
        )
    )
    env = {k: v for k, v in offline_env(tmp).items() if not k.startswith("FAIRLENS_")}
    proc = run([str(DEV_BIN / "lmms-eval"), "--config", str(config)], env=env, cwd=tmp, timeout=900)
    (tmp / "lmms-eval.stdout").write_text(proc.stdout)
    return tmp


@pytest.fixture(scope="session")
def fairlens_cannot_tell_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lmms-eval, the ``dummy`` model answering "Cannot tell" to everything, the ``fairlens`` group on 30 synthetic
    faces (one per stratum, ``faces/``), every setting from a config file's ``env`` block (``lmms-eval --config
    run.yaml``), a minimum coverage of 0.2 among them. The folder holds ``faces/``, ``run.yaml``, ``out/`` (the
    output) and ``lmms-eval.stdout`` (what it printed). Read by the FairLens harness tests (the config file, the
    "Cannot tell" numbers) and the position tests (the threshold travels in the records)."""
    return shared_run(tmp_path_factory, "fairlens-cannot-tell", _run_fairlens_cannot_tell)


#: What :func:`diffusers_run` asks lmms-eval beside the pipeline's path and the output folder: model arguments, task and
#: further flags (the scale tests run the same command on two processes).
DIFFUSERS_MODEL_ARGS = "num_inference_steps=2,height=32,width=32"
DIFFUSERS_TASK = "iris_gen_neutral"
DIFFUSERS_FLAGS = ("--limit", "3", "--gen_kwargs", "num_images_per_prompt=2")


def diffusers_env(tmp: Path, site: Path, **extra: str) -> dict[str, str]:
    """The environment of :func:`diffusers_run`: the backends registered from ``site`` (a ``.dist-info`` on
    ``PYTHONPATH``, :func:`t2i_images.plugin_site`), the generation tests' HOG classifier, one thread per process
    (a one- and a two-process run then write the same image bytes)."""
    from harness import offline_env

    from tests.generation.conftest import HOG_CLASSIFIER

    return offline_env(tmp, PYTHONPATH=str(site), **HOG_CLASSIFIER, **{"OMP_NUM_THREADS": "1", **extra})


def _diffusers_run(tmp: Path) -> Path:
    from harness import run_lmms_eval
    from t2i_images import plugin_site
    from tiny_diffusion import build_tiny_stable_diffusion

    pipeline = build_tiny_stable_diffusion(tmp / "tiny_sd")
    run_lmms_eval(
        tmp, "diffusers_t2i", f"pretrained={pipeline},output_dir={tmp / 'generated'},{DIFFUSERS_MODEL_ARGS}",
        DIFFUSERS_TASK, *DIFFUSERS_FLAGS, env=diffusers_env(tmp, plugin_site(tmp / "site")),
    )  # fmt: skip
    return tmp


@pytest.fixture(scope="session")
def diffusers_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lmms-eval, our ``diffusers_t2i`` backend with a tiny random pipeline (``tiny_sd/``), ``iris_gen_neutral``, 3
    prompts x 2 images (``generated/``), output in ``out/``, the backends' ``.dist-info`` in ``site/``. Read by the
    generation tests (plumbing) and the scale tests (the one-process run a two-process run must equal)."""
    return shared_run(tmp_path_factory, "t2i-diffusers", _diffusers_run)


@pytest.fixture(scope="session")
def plumbing_only_vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny random LLaVA model of ``tests/support/tiny_vlm.py`` (seed 0: every build is the same model), built once
    per test session across xdist workers for every test that runs it (``llava_hf``) or serves it."""
    from tiny_vlm import build_plumbing_only_vlm

    return shared_run(tmp_path_factory, "tiny-random-llava", lambda tmp: build_plumbing_only_vlm(tmp / "model"))


def _run_tiny_vlm(tmp: Path, model: Path) -> Path:
    from faces import make_utkface_folder
    from harness import lmms_eval_process

    from tests.iris.conftest import CORNERS, image_rows, steer_rows, write_manifest

    make_utkface_folder(tmp / "faces", 1, seed=5)
    (tmp / "images").mkdir()
    (tmp / "steer").mkdir()
    images = write_manifest(tmp / "images" / "images.csv", image_rows(tmp / "images", [*TINY_VLM_SETS.values()]))
    steer = write_manifest(tmp / "steer" / "steer.csv", steer_rows(tmp / "steer", TINY_VLM_SETS, CORNERS))
    proc = lmms_eval_process(
        ["--model", "llava_hf", "--model_args", f"pretrained={model},device=cpu,device_map=cpu,dtype=float32",
         "--tasks", "fairlens,iris_und", "--limit", "3", "--batch_size", "1", "--output_path", str(tmp / "out"),
         "--log_samples"],
        tmp,
        {"FAIRLENS_CORPUS": str(tmp / "faces"), "FAIRLENS_SEED": "3", "IRIS_CORPUS": str(images),
         "IRIS_STEER_CORPUS": str(steer), "IRIS_SEED": "3"},
        clear=("FAIRLENS_", "IRIS_"),
    )  # fmt: skip
    (tmp / "stdout.txt").write_text(proc.stdout, encoding="utf-8")
    (tmp / "stderr.txt").write_text(proc.stderr, encoding="utf-8")
    return tmp


#: The IRIS corpora of :func:`tiny_vlm_run`: counterfactual set -> occupation (the images show the same four).
TINY_VLM_SETS = {"set-a": "doctor", "set-b": "nurse", "set-c": "carpenter", "set-d": "teacher"}


@pytest.fixture(scope="session")
def tiny_vlm_run(tmp_path_factory: pytest.TempPathFactory, plumbing_only_vlm: Path) -> Path:
    """lmms-eval ``llava_hf`` (the chat path) with the tiny random VLM, ``--tasks fairlens,iris_und --limit 3``, once
    per test session: the FairLens corpus ``faces/`` (one image per stratum, seed 5, ``FAIRLENS_SEED=3``), the IRIS
    corpora ``images/images.csv`` and ``steer/steer.csv`` (``IRIS_SEED=3``), the output ``out/`` and what lmms-eval
    printed (``stdout.txt``, ``stderr.txt``). Read by the FairLens and IRIS plumbing tests."""
    return shared_run(tmp_path_factory, "tiny-vlm-fairlens-iris", lambda tmp: _run_tiny_vlm(tmp, plumbing_only_vlm))


@pytest.fixture(scope="session")
def lm_eval_0411(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lm-eval 0.4.11, the oldest version we declare, unpacked once per test session from the wheel
    ``scripts/setup.sh test`` downloads: the folder to put first on ``PYTHONPATH``."""

    def unpack(root: Path) -> Path:
        import zipfile

        from harness import REPO

        wheels = sorted((REPO / ".venv" / "test-wheels").glob("lm_eval-0.4.11-*.whl"))
        assert wheels, "no lm_eval 0.4.11 wheel under .venv/test-wheels: run scripts/setup.sh test"
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(root)
        return root

    return shared_run(tmp_path_factory, "lm-eval-0.4.11", unpack)


Sweep = tuple[Path, str, list[dict]]


def _shared_sweep(tmp_path_factory: pytest.TempPathFactory, version: str, oldest: Path) -> Sweep:
    """The zero-shot sweep (``tests/support/zero_shot_sweep.py``) under lm-eval ``version``, once per test session:
    the output folder, what the harness printed and every request body the server got."""
    import json

    from zero_shot_sweep import sweep

    def build(tmp: Path) -> Path:
        out, printed, received = sweep(tmp, version, oldest)
        (tmp / "printed.txt").write_text(printed, encoding="utf-8")
        (tmp / "received.json").write_text(json.dumps(received), encoding="utf-8")
        return out

    out = shared_run(tmp_path_factory, f"zero-shot-sweep-{version}", build)
    printed = (out.parent / "printed.txt").read_text(encoding="utf-8")
    return out, printed, json.loads((out.parent / "received.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def sweep(tmp_path_factory: pytest.TempPathFactory, lm_eval_0411: Path) -> Sweep:
    """The zero-shot sweep with the installed lm-eval (0.4.13) (also read by the ``--limit 20`` tests of
    ``tests/fact_or_fair/test_fact_or_fair_limit.py``)."""
    return _shared_sweep(tmp_path_factory, "0.4.13", lm_eval_0411)


@pytest.fixture(scope="session")
def sweep_0411(tmp_path_factory: pytest.TempPathFactory, lm_eval_0411: Path) -> Sweep:
    """The zero-shot sweep with lm-eval 0.4.11 (also read by the oldest lm-eval's test of the group rows' arrows)."""
    return _shared_sweep(tmp_path_factory, "0.4.11", lm_eval_0411)
