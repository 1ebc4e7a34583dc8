"""Multi-process plumbing on accelerate: ranks, gathering rollout results, synchronising gradients.

Under `accelerate launch --num_processes N` each process samples its share of the step's prompts; rewards are
gathered before group advantages, and gradients of the trainable parameters are averaged across processes
before the optimizer step (the policy is called through its own methods, not a DDP forward, so the all-reduce is
explicit). In a plain single process every operation is the identity.
"""

from __future__ import annotations

import torch


class Processes:
    """The accelerate state of this trial: rank, world size, device, gather and all-reduce helpers."""

    def __init__(self, cpu: bool = False):
        from accelerate import Accelerator

        self.accelerator = Accelerator(cpu=cpu)
        self.rank = self.accelerator.process_index
        self.world = self.accelerator.num_processes
        self.device = self.accelerator.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def gather(self, tensor: torch.Tensor) -> torch.Tensor:
        """Concatenate a [n, ...] tensor over processes in rank order."""
        if self.world == 1:
            return tensor
        return self.accelerator.gather(tensor.contiguous().to(self.device)).to(tensor.device)

    def average_gradients(self, parameters: list[torch.nn.Parameter]) -> None:
        """All-reduce (mean) the gradients of `parameters` across processes."""
        if self.world == 1:
            return
        import torch.distributed as dist

        for p in parameters:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= self.world

    def barrier(self) -> None:
        if self.world > 1:
            self.accelerator.wait_for_everyone()
