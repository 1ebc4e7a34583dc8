"""Sharded full fine-tuning (FSDP2): the policy's parameters, gradients and optimizer states split over processes.

`training.sharding` (gin) says which module of the policy is sharded (`root`, the transformer), which of its
submodules become their own shard units (`units`, by class name: each transformer block), the mixed precision
(gathered parameters in `param_dtype`, gradients reduce-scattered in `reduce_dtype`, sharded master weights in
`master_dtype`), activation checkpointing of the units and CPU offload. `shard_policy` applies it once, before the
optimizer is built:

- on GPUs through accelerate's FSDP plugin (`accelerate_plugin`, given to the Accelerator by
  `training/processes.py::Processes`; `fsdp_version=2`, so accelerate calls torch's `fully_shard`);
- on the CPU (accelerate runs several CPU processes as MULTI_CPU and ignores an FSDP plugin) through torch's
  `fully_shard` directly, with the same units, mixed-precision policy and checkpoint wrappers.

FSDP2 gathers a unit's parameters in the unit's forward pre-hook, so the policy must call the root and every unit
as modules (`module(...)`): both HunyuanVideo-1.5 policies do through diffusers' forward; the toy policy's lean
forward reads block weights directly, so its `prepare_for_sharding` hook (the Policy contract's, called before
sharding) switches it to diffusers' forward (same weights, same result to float rounding). Every unit, the root
included, reshards after its forward: nothing keeps gathered copies between forwards, so optimizer steps and
reference swaps (KL, anchor) always act on what the next forward gathers. Gradients of sharded parameters are
reduce-scattered (averaged) by FSDP itself; checkpoints, parameter digests and evaluation are handled by
`training/parallel/sharded_state.py` and `training/parallel/sharded_eval.py`.
"""

from __future__ import annotations

import logging
import warnings
from typing import TYPE_CHECKING, Any

import torch

from tvrl_bench.config import ConfigError
from tvrl_bench.registry import register

if TYPE_CHECKING:
    from tvrl_bench.policies.base import Policy
    from tvrl_bench.training.processes import Processes

log = logging.getLogger("tvrl_bench.trial")

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
BLOCK_CLASS = "HunyuanVideo15TransformerBlock"  # the transformer block of both policies (diffusers)


@register("training", "sharding")
class ShardingSettings:
    """FSDP2 for full fine-tuning: parameters, gradients and optimizer states sharded over the trial's processes.

    enabled: shard the policy's `root` over every process of the trial (full sharding: each unit gathers its
        parameters for its own forward and backward only). With one process nothing is sharded.
    root: attribute path of the sharded module in the policy ('transformer' in both policies). The policy must
        call it and its units as modules, `module(...)` (FSDP gathers parameters in forward hooks).
    units: class names of the root's submodules that become their own shard units (default: each HunyuanVideo-1.5
        transformer block); the root's other parameters form the last unit. Empty: the root is the one unit.
    param_dtype: dtype the gathered parameters (and so the forward and backward) compute in: 'bfloat16',
        'float16' or 'float32'; None keeps the stored dtype.
    reduce_dtype: dtype of the gradient reduce-scatter (None: param_dtype).
    master_dtype: dtype of the sharded trained parameters, their gradients and optimizer states; 'float32'
        upcasts a bfloat16 policy so that updates of lr 1e-5 are not rounded away (None: as loaded). Needs
        param_dtype (the dtype the policy's inputs arrive in).
    activation_checkpointing: recompute each unit's activations in the backward pass (torch's checkpoint_wrapper
        around each unit, as accelerate applies it).
    cpu_offload: keep sharded parameters, gradients and optimizer states in CPU memory between uses (GPUs only).
    """

    def __init__(
        self,
        enabled: bool = False,
        root: str = "transformer",
        units: tuple[str, ...] = (BLOCK_CLASS,),
        param_dtype: str | None = None,
        reduce_dtype: str | None = None,
        master_dtype: str | None = None,
        activation_checkpointing: bool = False,
        cpu_offload: bool = False,
    ):
        self.enabled, self.root = bool(enabled), root
        self.units = (units,) if isinstance(units, str) else tuple(units)
        self.param_dtype, self.reduce_dtype, self.master_dtype = param_dtype, reduce_dtype, master_dtype
        self.activation_checkpointing, self.cpu_offload = bool(activation_checkpointing), bool(cpu_offload)
        for name in ("param_dtype", "reduce_dtype", "master_dtype"):
            value = getattr(self, name)
            if value is not None and value not in DTYPES:
                raise ConfigError(
                    f"training.sharding.{name} = {value!r} must be one of {', '.join(map(repr, DTYPES))} or None; "
                    f"e.g. training.sharding.{name} = 'bfloat16'"
                )
        if master_dtype is not None and param_dtype is None:
            raise ConfigError(
                f"training.sharding.master_dtype = {master_dtype!r} needs training.sharding.param_dtype (the dtype "
                "the policy computes in, which its inputs arrive in); add training.sharding.param_dtype = 'bfloat16'"
            )
        if self.activation_checkpointing and not self.units:
            raise ConfigError(
                "training.sharding.activation_checkpointing = True checkpoints each unit, but training.sharding.units "
                f"is empty; name the block class, e.g. training.sharding.units = ['{BLOCK_CLASS}']"
            )
        if not root or not all(isinstance(u, str) and u for u in self.units):
            raise ConfigError(
                f"training.sharding.root = {root!r} and training.sharding.units = {units!r} must name a module path "
                f"and class names, e.g. training.sharding.root = 'transformer', training.sharding.units = ['{BLOCK_CLASS}']"
            )

    def mixed_precision(self) -> Any:
        """torch's MixedPrecisionPolicy for every unit (inputs of each unit cast to param_dtype)."""
        from torch.distributed.fsdp import MixedPrecisionPolicy

        dtype = lambda name: DTYPES[name] if name is not None else None  # noqa: E731
        return MixedPrecisionPolicy(param_dtype=dtype(self.param_dtype), reduce_dtype=dtype(self.reduce_dtype))

    def accelerate_plugin(self) -> Any:
        """accelerate's FullyShardedDataParallelPlugin (FSDP2) with these settings, for `Accelerator(fsdp_plugin=)`."""
        from accelerate.utils import FullyShardedDataParallelPlugin

        return FullyShardedDataParallelPlugin(
            fsdp_version=2,
            reshard_after_forward=True,
            auto_wrap_policy="transformer_based_wrap" if self.units else "NO_WRAP",
            transformer_cls_names_to_wrap=list(self.units) if self.units else None,
            mixed_precision_policy=self.mixed_precision(),
            activation_checkpointing=self.activation_checkpointing,
            cpu_offload=self.cpu_offload,
            state_dict_type="FULL_STATE_DICT",
            cpu_ram_efficient_loading=False,
        )


def root_module(policy: torch.nn.Module, settings: ShardingSettings) -> torch.nn.Module:
    """The policy's submodule at `settings.root` (a dotted attribute path)."""
    try:
        module = policy.get_submodule(settings.root)
    except AttributeError:
        children = ", ".join(repr(name) for name, _ in policy.named_children())
        raise ConfigError(
            f"training.sharding.root = {settings.root!r}: {type(policy).__name__} has no such submodule; name one of "
            f"its modules ({children}), e.g. training.sharding.root = 'transformer'"
        ) from None
    return module


def unit_modules(root: torch.nn.Module, settings: ShardingSettings) -> list[tuple[str, torch.nn.Module]]:
    """(name, module) of the outermost submodules of `root` whose class is named in `settings.units`."""
    found: list[tuple[str, torch.nn.Module]] = []
    for name, module in root.named_modules():
        if module is root or type(module).__name__ not in settings.units:
            continue
        if not any(name.startswith(f"{outer}.") for outer, _ in found):
            found.append((name, module))
    missing = set(settings.units) - {type(m).__name__ for _, m in found}
    if missing:
        classes = sorted({type(m).__name__ for m in root.modules()} - {type(root).__name__},
                         key=lambda name: ("Block" not in name, name))  # block classes first
        raise ConfigError(
            f"training.sharding.units names {sorted(missing)}, but {settings.root} ({type(root).__name__}) holds no "
            f"module of that class; name classes it holds (e.g. {', '.join(classes[:6])}), e.g. "
            f"training.sharding.units = ['{BLOCK_CLASS}'], or [] to shard it as one unit"
        )
    return found


def shard_policy(policy: Policy, settings: ShardingSettings | None, processes: Processes) -> bool:
    """Shard `policy`'s root in place (call before building the optimizer; its parameters become DTensors).

    Returns whether anything was sharded: False when sharding is off or the trial runs on one process.
    """
    import torch.distributed as dist

    if settings is None or not settings.enabled:
        return False
    root = root_module(policy, settings)
    units = unit_modules(root, settings)  # checked on one process too: a mistake shows before a multi-GPU launch
    if processes.world == 1 and not dist.is_initialized():
        log.info("training.sharding.enabled: one process, nothing to shard")
        return False
    policy.prepare_for_sharding()  # every unit reached through its module forward (see module doc)
    # The transformer returns a reshaped (view) tensor; both policies combine it out of place only, which is what
    # this warning asks for, so it would only alarm in every trial log.
    warnings.filterwarnings("ignore", message=r"FSDP2-wrapped module .* returned a view tensor")
    if settings.master_dtype is not None:
        master = DTYPES[settings.master_dtype]
        for p in root.parameters():
            if p.requires_grad and p.dtype != master:
                p.data = p.data.to(master)
    if settings.activation_checkpointing and getattr(root, "gradient_checkpointing", False):
        root.disable_gradient_checkpointing()  # diffusers' own: with ours too, each block would be recomputed twice
        log.info("training.sharding.activation_checkpointing replaces the policy's own gradient checkpointing")
    if processes.uses_accelerate_fsdp:
        from accelerate.utils.fsdp_utils import fsdp2_apply_ac, fsdp2_prepare_model

        if settings.activation_checkpointing:
            fsdp2_apply_ac(processes.accelerator, root)
        fsdp2_prepare_model(processes.accelerator, root)
        path = "accelerate's FSDP plugin"
    else:
        _torch_fully_shard(root, units, settings, processes.device)
        path = "torch fully_shard"
    root.set_reshard_after_forward(True)  # the root too: no gathered copy outlives a forward (see module doc)
    log.info("sharded %s over %d processes with %s: %d units (%s) + the root; param %s, reduce %s, master %s, "
             "activation checkpointing %s", settings.root, processes.world, path, len(units),
             ", ".join(sorted(settings.units)) or "none", settings.param_dtype or "as stored",
             settings.reduce_dtype or "as param", settings.master_dtype or "as loaded", settings.activation_checkpointing)
    return True


def _torch_fully_shard(root: torch.nn.Module, units: list[tuple[str, torch.nn.Module]], settings: ShardingSettings,
                       device: torch.device) -> None:
    """torch's FSDP2 with the settings accelerate's plugin would apply: checkpoint wrappers around the units, one
    `fully_shard` per unit, then the root."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    if settings.cpu_offload:
        raise ConfigError(
            "training.sharding.cpu_offload = True offloads to the CPU from GPUs; this trial runs on the CPU already: "
            "remove the binding (or run on GPUs)"
        )
    mesh = init_device_mesh(device.type, (torch.distributed.get_world_size(),))
    options = {"mesh": mesh, "mp_policy": settings.mixed_precision(), "reshard_after_forward": True}
    if settings.activation_checkpointing:
        from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

        wrapped = []
        for name, module in units:
            wrapper = checkpoint_wrapper(module, preserve_rng_state=False)
            root.set_submodule(name, wrapper)
            wrapped.append((name, wrapper))
        units = wrapped
    for _, module in units:
        fully_shard(module, **options)
    fully_shard(root, **options)
