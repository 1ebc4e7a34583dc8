"""Full (gathered) state of a sharded trial: checkpoints one process can load, digests, gradient clipping.

A sharded parameter (training/parallel/sharding.py) is a DTensor: each process holds a slice of dimension 0
(`Shard(0)`), its gradient and its optimizer states likewise. Checkpoints keep the layout of an unsharded trial, full
tensors on the CPU: `parameters` {str(i): tensor shaped like trainable parameter i}, the optimizer's own state_dict
with full state tensors, and the credit router's and objective's state. So a checkpoint written by a sharded trial
resumes a sharded or an unsharded trial alike, and a single process can read it with `torch.load`.

Gathering is collective (every process must call it, in the same order); only `keep` processes (the main one) keep
the CPU copies, one tensor at a time, so no process holds more than one full tensor beyond what it keeps. Restoring
slices each full tensor locally into the placement of the tensor it replaces (`distribute_tensor` with no source
rank: no communication).
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch


def is_sharded(tensor: Any) -> bool:
    """Whether `tensor` is a DTensor (a sharded parameter, gradient or optimizer state)."""
    from torch.distributed.tensor import DTensor

    return isinstance(tensor, DTensor)


def full_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """The whole tensor of a DTensor, on its mesh's device (collective: every process calls it).

    Also takes a DTensor whose local slice was copied to another device (an objective's `.cpu()` snapshot of a
    sharded parameter): the slice goes back to the mesh's device for the all-gather.
    """
    from torch.distributed.tensor import DTensor

    mesh = tensor.device_mesh
    local = tensor.to_local()
    if local.device.type != mesh.device_type:
        device = torch.device(mesh.device_type, torch.cuda.current_device()) if mesh.device_type == "cuda" else torch.device(mesh.device_type)
        tensor = DTensor.from_local(local.to(device), mesh, tensor.placements, run_check=False,
                                    shape=tensor.shape, stride=tensor.stride())
    return tensor.full_tensor()


def gather_tree(tree: Any, keep: bool) -> Any:
    """`tree` (dicts, lists, tuples, tensors, other values) with every DTensor replaced by its full tensor on the
    CPU on `keep` processes (None on the others); plain tensors are cloned to the CPU. Collective."""
    if is_sharded(tree):
        whole = full_tensor(tree)
        return whole.detach().cpu().clone() if keep else None
    if isinstance(tree, torch.Tensor):
        return tree.detach().cpu().clone() if keep else None
    if isinstance(tree, dict):
        return {k: gather_tree(v, keep) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(gather_tree(v, keep) for v in tree)
    return tree


def shard_like(full: torch.Tensor, template: torch.Tensor) -> torch.Tensor:
    """This process's slice of `full` (shaped like `template`'s global shape) as a DTensor placed like
    `template`, on its mesh's device and in its dtype (no communication)."""
    from torch.distributed.tensor import distribute_tensor

    if tuple(full.shape) != tuple(template.shape):
        raise ValueError(f"checkpoint tensor {tuple(full.shape)} does not fit the sharded tensor {tuple(template.shape)}")
    device = template.to_local().device
    if device.type != template.device_mesh.device_type:
        device = torch.device(template.device_mesh.device_type)
    return distribute_tensor(full.to(device=device, dtype=template.dtype), template.device_mesh, template.placements,
                             src_data_rank=None)


def shard_tree(saved: Any, template: Any) -> Any:
    """`saved` (a gathered tree) with each full tensor whose counterpart in `template` (the live object's own
    state_dict) is a DTensor sliced like it; everything else unchanged."""
    if is_sharded(template) and isinstance(saved, torch.Tensor):
        return shard_like(saved, template)
    if isinstance(saved, dict) and isinstance(template, dict):
        return {k: shard_tree(v, template.get(k)) for k, v in saved.items()}
    if isinstance(saved, (list, tuple)) and isinstance(template, (list, tuple)) and len(saved) == len(template):
        return type(saved)(shard_tree(v, t) for v, t in zip(saved, template))
    return saved


def shard_optimizer_state(optimizer: Any, saved: dict) -> dict:
    """A gathered optimizer state_dict made loadable by `optimizer` over sharded parameters: each state tensor
    shaped like its parameter (AdamW's moments, Muon's momentum) is sliced like the parameter. Handles an optimizer
    made of several (`.optimizers`, e.g. Muon + AdamW)."""
    parts = getattr(optimizer, "optimizers", None)
    if parts is not None:
        return {**saved, "optimizers": [shard_optimizer_state(o, s) for o, s in zip(parts, saved["optimizers"])]}
    params = [p for group in optimizer.param_groups for p in group["params"]]
    ids = [i for group in saved["param_groups"] for i in group["params"]]
    by_id = dict(zip(ids, params))
    state = {}
    for i, entry in saved["state"].items():
        p = by_id[i]
        state[i] = {k: shard_like(v, p) if is_sharded(p) and isinstance(v, torch.Tensor) and v.shape == p.shape else v
                    for k, v in entry.items()}
    return {**saved, "state": state}


def load_parameters(parameters: list[torch.nn.Parameter], saved: dict[str, torch.Tensor]) -> None:
    """Copy checkpoint `parameters` {str(i): full tensor} into the (sharded or plain) trainable parameters."""
    with torch.no_grad():
        for i, p in enumerate(parameters):
            value = saved[str(i)]
            p.copy_(shard_like(value, p) if is_sharded(p) else value.to(p.device))


def parameter_digest(parameters: list[torch.nn.Parameter]) -> str:
    """sha256 (16 hex digits) of the full trainable parameters in order; sharded ones are gathered (collective),
    so every process computes the same digest."""
    digest = hashlib.sha256()
    for p in parameters:
        value = full_tensor(p) if is_sharded(p) else p
        digest.update(value.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def clip_grad_norm(parameters: list[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """torch's clip_grad_norm_ for plain, sharded or mixed gradients; returns the total norm before clipping as a
    plain 0-d tensor (the same on every process)."""
    grads = [p.grad for p in parameters if p.grad is not None]
    sharded = [g for g in grads if is_sharded(g)]
    if not sharded:
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm)
    plain = [g for g in grads if not is_sharded(g)]
    norms = [torch.nn.utils.get_total_norm(sharded)]
    if plain:
        norms.append(torch.nn.utils.get_total_norm(plain))
    norms = [n.full_tensor() if is_sharded(n) else n for n in norms]
    total = torch.linalg.vector_norm(torch.stack([n.to(norms[0].device) for n in norms]))
    with_grads = [p for p in parameters if p.grad is not None]
    torch.nn.utils.clip_grads_with_norm_([p for p in with_grads if is_sharded(p.grad)], max_norm, total)
    if plain:
        torch.nn.utils.clip_grads_with_norm_([p for p in with_grads if not is_sharded(p.grad)], max_norm, total.to(plain[0].device))
    return total
