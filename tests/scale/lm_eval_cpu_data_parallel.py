"""``lm_eval`` with one extra model, ``hf-cpu-data-parallel``: lm-eval's own ``hf`` model, data-parallel on CPU.

lm-eval 0.4.13's ``hf`` model (``lm_eval/models/huggingface.py``) takes its rank and world size from accelerate only
when it sees more than one GPU (``elif gpus > 1:``); on a CPU every launched process keeps rank 0 of 1 and evaluates
every document. This subclass sets them from the same ``Accelerator`` the parent already built, exactly as the GPU
branch does, so the harness's real evaluator splits the requests across processes, pads the ranks and gathers the
samples and per-sample metrics on rank 0 (gloo backend) — the code paths a multi-GPU run takes.

Run it where you would run ``-m lm_eval``, e.g.
``ACCELERATE_USE_CPU=1 accelerate launch --multi_gpu --num_processes 2 lm_eval_cpu_data_parallel.py --model
hf-cpu-data-parallel ...`` or ``ACCELERATE_USE_CPU=1 torchrun --nproc_per_node 2 lm_eval_cpu_data_parallel.py ...``.
"""

from __future__ import annotations

from lm_eval.__main__ import cli_evaluate
from lm_eval.api.registry import register_model
from lm_eval.models.huggingface import HFLM


@register_model("hf-cpu-data-parallel")
class CPUDataParallelHFLM(HFLM):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        accelerator = getattr(self, "accelerator", None)
        if accelerator is not None and accelerator.num_processes > 1:
            self._rank = accelerator.local_process_index
            self._world_size = accelerator.num_processes


if __name__ == "__main__":
    cli_evaluate()
