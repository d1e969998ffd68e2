"""Our task, group and tag names as each harness's own index sees them (never a hand-kept list)."""

from __future__ import annotations

from fairness_evals.extras import require
from fairness_evals.paths import task_paths


def harness_index(harness: str) -> list[tuple[str, str]]:
    """``(kind, name)`` for every name our folders define, kind one of group/task/tag, sorted.

    Built with the harness's ``TaskManager`` over our folders only (``include_defaults=False``), so a
    YAML that the harness silently skips is missing here too, which is what the index test checks. Without
    lmms-eval (the ``lmms`` extra), :class:`fairness_evals.extras.MissingExtraError` for ``lmms-eval``.
    """
    paths = task_paths(harness)
    if not paths:
        return []
    if harness == "lm-eval":
        from lm_eval.tasks import TaskManager

        manager = TaskManager(include_path=paths, include_defaults=False)
    else:
        lmms_tasks = require("lmms_eval.tasks", "listing the lmms-eval tasks (FairLens, IRIS, text-to-image)")
        manager = lmms_tasks.TaskManager("ERROR", include_path=paths, include_defaults=False)
    kinds = {"group": manager.all_groups, "task": manager.all_subtasks, "tag": manager.all_tags}
    return sorted((kind, name) for kind, names in kinds.items() for name in names)
