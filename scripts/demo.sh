#!/usr/bin/env bash
# The README's first command: set up .venv (scripts/setup.sh), then run Fact-or-Fair's objective task (all 198
# documents, no --limit) on the embedded SmolLM2-135M-Instruct through lm-eval, as a user runs it on their model.
#   scripts/demo.sh [OUTPUT_FOLDER]     (default out/demo)
# The numbers check the plumbing; a 135M-parameter model answering near chance is not a fairness result.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-out/demo}"
scripts/setup.sh
model=$(.venv/bin/fairness-evals model)
.venv/bin/lm_eval --model hf --model_args "pretrained=$model,dtype=float32" --device cpu \
  --tasks fact_or_fair_objective --batch_size 32 --apply_chat_template --output_path "$out" --log_samples
echo "These numbers check the plumbing on a 135M-parameter model; they are not a fairness result. Every statistic: .venv/bin/fairness-evals score $out"
