"""Multi-process plumbing on accelerate: ranks, gathering rollout results, synchronising gradients.

Under `accelerate launch --num_processes N` each process samples its share of the step's prompts; rewards are
gathered before group advantages, and gradients of the trainable parameters are averaged across processes
before the optimizer step (the policy is called through its own methods, not a DDP forward, so the all-reduce is
explicit). Parameters sharded by FSDP (training/parallel/sharding.py) are skipped: FSDP reduce-scatters (averages) their
gradients itself. In a plain single process every operation is the identity.

With `training.sharding.enabled` on GPUs, the Accelerator is built with accelerate's FSDP plugin (FSDP2); on the
CPU accelerate runs MULTI_CPU without FSDP and `training/parallel/sharding.py` applies torch's `fully_shard` directly.
"""

from __future__ import annotations

from typing import Any, Protocol

import torch


class ShardingRequest(Protocol):
    """What Processes reads of the trial's sharding settings (training/parallel/sharding.py's ShardingSettings, a
    layer above this module, is one)."""

    enabled: bool

    def accelerate_plugin(self) -> Any: ...


class Processes:
    """The accelerate state of this trial: rank, world size, device, gather and all-reduce helpers."""

    def __init__(self, cpu: bool = False, sharding: ShardingRequest | None = None):
        from accelerate import Accelerator
        from accelerate.utils import DistributedType

        plugin = None
        if sharding is not None and sharding.enabled and not cpu and torch.cuda.is_available():
            plugin = sharding.accelerate_plugin()
        self.accelerator = Accelerator(cpu=cpu, fsdp_plugin=plugin)
        self.rank = self.accelerator.process_index
        self.world = self.accelerator.num_processes
        self.device = self.accelerator.device
        self.uses_accelerate_fsdp = self.accelerator.distributed_type == DistributedType.FSDP

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def gather(self, tensor: torch.Tensor) -> torch.Tensor:
        """Concatenate a [n, ...] tensor over processes in rank order."""
        if self.world == 1:
            return tensor
        return self.accelerator.gather(tensor.contiguous().to(self.device)).to(tensor.device)

    def average_gradients(self, parameters: list[torch.nn.Parameter]) -> None:
        """All-reduce (mean) the gradients of `parameters` across processes; sharded (DTensor) parameters are left
        alone, FSDP has reduce-scattered their gradients already. A parameter without a gradient gets zeros, so the
        optimizer treats it alike with and without sharding (e.g. weight decay)."""
        if self.world == 1:
            return
        import torch.distributed as dist
        from torch.distributed.tensor import DTensor

        for p in parameters:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            if isinstance(p, DTensor):
                continue
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= self.world

    def any(self, flag: bool) -> bool:
        """Whether `flag` is true on any process (so every process takes the same branch, e.g. stopping after a
        signal that reached one process only)."""
        if self.world == 1:
            return flag
        import torch.distributed as dist

        value = torch.tensor([1.0 if flag else 0.0], device=self.device)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return bool(value.item() > 0)

    def same_everywhere(self, value: int) -> bool:
        """Whether every process passes the same integer (e.g. the step each resumes from)."""
        if self.world == 1:
            return True
        values = self.gather(torch.tensor([int(value)], device=self.device))
        return bool((values == values[0]).all())

    def barrier(self) -> None:
        if self.world > 1:
            self.accelerator.wait_for_everyone()
