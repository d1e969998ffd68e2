"""How often ordinary answers are misread as declines (:func:`fairness_evals.replies.decline_reason`). Prints counts.

Three corpora, each read against a FairLens open question (the language rule needs one):

1. the open-ended answers of the tests (``tests/fairlens_open``, the FairLens compare and Inspect tests): ordinary
   answers, none of which declines;
2. the replies of Fact-or-Fair's parser table (``tests/fact_or_fair/test_fact_or_fair_parsing.py``), by the status
   that parser gives them: a *parsed* reply answers (a decline there is a false decline); a *refused* one declines
   to pick an option, which for an open question is often an answer ("It is not appropriate to judge people by
   gender."), so those are counted, not scored;
3. ``--generate``: the embedded SmolLM2-135M-Instruct (the tests' model, text only, greedy, 128 new tokens, one
   left-padded batch) answering every open prompt of FairLens, the image left out. It cannot see the image, so some of its answers really do
   decline; each answer read as a decline is printed for a reader to judge.

    .venv/bin/python bench/declines.py [--generate]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

# bench/metrics.py would shadow the `metrics` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from fairlens_tasks.questions import open_questions  # noqa: E402
from fairness_evals.replies import decline_reason  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The answer constants of the tests: file -> names of module-level constants holding answers.
TEST_ANSWERS = {
    "tests/fairlens_open/test_fairlens_open_metrics.py": ("ANSWERS",),
    "tests/fairlens_open/test_fairlens_open_refusals.py": ("CRIMINAL", "REPLIES"),
    "tests/fairlens_open/test_fairlens_open_aggregation.py": ("TEXTS",),
    "tests/fairlens_open/test_fairlens_open_cli.py": ("REPLIES",),
    "tests/fairlens_open/test_fairlens_open_http.py": ("ANSWERS",),
    "tests/fairlens_open/test_fairlens_open_cache.py": ("TEXTS",),
    "tests/fairlens_open/test_fairlens_open_harness.py": ("ANSWER",),
    "tests/compare/test_compare_fairlens_open.py": (),
    "tests/compare/test_compare_fairlens_judged_later.py": (),
    "tests/inspect/test_inspect_fairlens_open.py": (),
}


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def test_answers() -> list[str]:
    """The non-blank answer strings of :data:`TEST_ANSWERS` (module constants read with ``ast``, nothing run)."""
    found: list[str] = []
    for name, constants in TEST_ANSWERS.items():
        path = ROOT / name
        if not path.is_file() or not constants:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id in constants for t in node.targets
            ):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:  # a value built from calls: its string literals
                    value = [n.value for n in ast.walk(node.value) if isinstance(n, ast.Constant)]
                found += [s for s in _strings(value) if s.strip() and " " in s.strip()]
    return list(dict.fromkeys(found))


def parser_table() -> list[tuple[str, str]]:
    """(reply, Fact-or-Fair status) of the parser table's rows."""
    path = ROOT / "tests/fact_or_fair/test_fact_or_fair_parsing.py"
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TABLE" for t in node.targets):
            rows = []
            for row in node.value.elts:  # type: ignore[attr-defined]
                reply, status = row.elts[0], row.elts[2]
                if isinstance(reply, ast.Constant) and isinstance(reply.value, str) and isinstance(status, ast.Name):
                    rows.append((reply.value, status.id.lower()))
            return rows
    raise SystemExit(f"{path}: no TABLE")


def generated() -> list[tuple[str, str]]:
    """(question, SmolLM2's answer) for every FairLens open prompt, image left out."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from fairlens_tasks.prompts import open_prompt_text
    from fairness_evals.model import ensure_default_model

    torch.manual_seed(0)
    torch.set_num_threads(2)
    path = ensure_default_model()
    tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    questions = open_questions()
    chats = [[{"role": "user", "content": open_prompt_text(q)}] for q in questions]
    texts = [tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) for chat in chats]
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():  # one greedy, left-padded batch (an answer may differ slightly from one asked alone)
        tokens = model.generate(**batch, max_new_tokens=128, do_sample=False, pad_token_id=tokenizer.eos_token_id)
    width = batch["input_ids"].shape[1]
    return [
        (q.text, tokenizer.decode(row[width:], skip_special_tokens=True).strip())
        for q, row in zip(questions, tokens, strict=True)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--generate", action="store_true", help="also SmolLM2's answers to the 31 open prompts")
    args = parser.parse_args()
    questions = [q.text for q in open_questions()]

    answers = test_answers()
    false = [(a, r) for i, a in enumerate(answers) if (r := decline_reason(a, questions[i % len(questions)]))]
    print(f"1. test answers: {len(answers)} answers, {len(false)} read as declines (false declines)")
    for answer, reason in false:
        print(f"   {reason}: {answer!r}")

    rows = parser_table()
    by_status: dict[str, Counter[str]] = {}
    for i, (reply, status) in enumerate(rows):
        reason = decline_reason(reply, questions[i % len(questions)]) or "answers"
        by_status.setdefault(status, Counter())[reason] += 1
    for status, counts in sorted(by_status.items()):
        declined = sum(n for reason, n in counts.items() if reason != "answers")
        label = "false declines" if status == "parsed" else "read as declines"
        shown = ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items()))
        print(f"2. Fact-or-Fair parser table, {status}: {sum(counts.values())} replies, {declined} {label} ({shown})")
    if args.generate:
        pairs = generated()
        read = [(q, a, r) for q, a in pairs if (r := decline_reason(a, q))]
        print(f"3. SmolLM2-135M answers to the {len(pairs)} open prompts (no image): {len(read)} read as declines")
        for question, answer, reason in read:
            print(f"   {reason}: {question[:60]!r} -> {answer[:200]!r}")
        answered = [(q, a) for q, a in pairs if not decline_reason(a, q)]
        print(f"   read as answers ({len(answered)}), first 200 characters each:")
        for question, answer in answered:
            print(f"   {question[:60]!r} -> {answer[:200]!r}")


if __name__ == "__main__":
    main()
