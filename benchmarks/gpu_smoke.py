"""GPU smoke benchmark: the tiny-config TVRL trial (HunyuanVideo-1.5 policy, Qwen3.5 critic) on CUDA in bf16.

    python benchmarks/gpu_smoke.py [--steps 3] [--allow-cpu]

Builds the real classes from tiny configs (tests/policies/tiny_hunyuan.py, tests/rewards/tiny_qwen.py), saves
them with save_pretrained, loads them through `policies.hunyuan_video15` and `rewards.qwen_vl`, and times full
trainer steps (`tvrl_bench.training.loop.Trainer.step`): SDE rollouts with CFG, VAE decode, the critic's scores
and pixel gradients in one batched backward, 3x3 window credit, the credit-weighted GRPO update. Prints the
median step time and the peak CUDA memory (`torch.cuda.max_memory_allocated`).

Without CUDA it prints a message and exits 0; `--allow-cpu` runs the same trial on the CPU in float32.

`--fsdp` checks sharded training (training/parallel/sharding.py) as paper.gin configures it, under a distributed launch:

    torchrun --nproc_per_node N benchmarks/gpu_smoke.py --profile paper --fsdp [--full-size]

(N >= 1 GPUs; `accelerate launch --multi_gpu --num_processes N` for N >= 2 works too). It checks that accelerate's
FSDP plugin sharded the transformer (one unit per block, float32 master weights as DTensors, blocks computing in
bfloat16), times the tiny trial's steps and writes a gathered checkpoint that one process reads back. `--full-size`
instead shards the 8.3B HunyuanVideo-1.5 transformer (random weights, built on the meta device) and runs one
forward, backward and Muon + AdamW step at the paper's rollout size (81 x 352 x 624, batch 2 for CFG), printing the
peak memory per GPU. With `--allow-cpu` the same checks run on CPU processes through torch's fully_shard.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for the tiny-model builders in tests/

from tests.policies.tiny_hunyuan import save_tiny_hunyuan  # noqa: E402
from tests.rewards.tiny_qwen import save_tiny_qwen  # noqa: E402
from tvrl_bench.cli.script import UserError, at_least, run_script, script_parser  # noqa: E402
from tvrl_bench.training.processes import Processes  # noqa: E402
from tvrl_bench.training.loop import Trainer  # noqa: E402
from tvrl_bench.training.trial.built import build_trainer  # noqa: E402


def tiny_trial(folder: Path, dtype: str, device: str, profile: str = "toy", sharding=None) -> Trainer:
    """The tiny trial of `profile` on `device`: the models written to `folder` first, then built by the front door
    into training (one process each, so the processes are made after the models are written)."""
    policy = save_tiny_hunyuan(folder / "hunyuan")
    critic = save_tiny_qwen(folder / "qwen3_5", "qwen3_5")
    shared = [
        f"policies.hunyuan_video15.dtype = '{dtype}'",
        f"rewards.qwen_vl.path = '{critic}'",
        f"rewards.qwen_inputs.dtype = '{dtype}'",
        f"rewards.qwen_inputs.device = '{device}'",
        "training.schedule.num_steps = 4",
        "training.trial.prompts_per_step = 2",
        "training.trial.group_size = 2",
        "training.trial.micro_batch = 2",
    ]
    if profile == "paper":  # the official recipe as paper.gin ships it: only sizes and paths shrunk
        bindings = [b for b in policy.gin_bindings() if ".dtype" not in b and "lora" not in b] + shared + [
            "rewards.qwen_inputs.frames = 4",
            "rewards.qwen_inputs.max_pixels = 1536",
            "rewards.qwen_inputs.min_pixels = 256",
            "training.trial.num_gpus = 0",
        ]
        files = ["components/profiles/paper.gin", "components/evaluators/toy.gin", "components/datasets/toy.gin"]
    else:
        bindings = [b for b in policy.gin_bindings() if ".dtype" not in b] + shared + [
            "training.schedule.shift = 5.0",  # the tiny checkpoint's scheduler shift
        ]
        # the toy profile as an included preset: its own policy's bindings, which the HunyuanVideo policy leaves
        # unused, are then a preset's (as a profile's includes are), not a mistake of this config
        (folder / "toy_profile.gin").write_text("include 'components/profiles/toy.gin'\n")
        files = [str(folder / "toy_profile.gin"), "components/policies/hunyuan_video15_480p.gin",
                 "components/rewards/qwen3_5_9b.gin"]
    return build_trainer(files, bindings, folder / "checkpoint", cpu=device == "cpu", sharding=sharding)


def fsdp_checks(trainer: Trainer, folder: Path, cuda: bool) -> None:
    """What sharding must have done: units, master dtype, compute dtype; then a gathered checkpoint read back."""
    from torch.distributed.fsdp import FSDPModule
    from torch.distributed.tensor import DTensor

    transformer = trainer.policy.transformer
    blocks = len(transformer.transformer_blocks)
    units = [m for m in transformer.modules() if isinstance(m, FSDPModule)]
    assert trainer.sharded and len(units) >= blocks + 1, f"{len(units)} FSDP units for {blocks} blocks"
    assert all(isinstance(p, DTensor) and p.dtype == torch.float32 for p in trainer.parameters), "master weights"
    seen = []
    block = transformer.transformer_blocks[0]
    block = getattr(block, "_checkpoint_wrapped_module", block)  # inside the checkpoint wrapper, once gathered
    hook = block.register_forward_pre_hook(lambda module, args: seen.append(next(module.parameters()).dtype))
    trainer.step(99)
    hook.remove()
    assert seen and set(seen) == {torch.bfloat16}, f"blocks computed in {set(seen)}"
    trainer.save(1)
    if trainer.processes.is_main:
        saved = torch.load(folder / "checkpoint" / "state.pt", map_location="cpu", weights_only=False)
        assert [tuple(t.shape) for t in saved["parameters"].values()] == [tuple(p.shape) for p in trainer.parameters]
    via = "accelerate's FSDP plugin" if trainer.processes.uses_accelerate_fsdp else "torch fully_shard (CPU)"
    print(f"fsdp ok via {via}: {len(units)} units over {trainer.processes.world} processes, float32 master weights, "
          "bfloat16 blocks, gathered checkpoint read back")


def full_size_step(processes: Processes, sharding, device: str) -> None:
    """One training step of the 8.3B transformer, sharded, at the paper's rollout size; prints time and memory."""
    from diffusers.models.transformers.transformer_hunyuan_video15 import HunyuanVideo15Transformer3DModel

    from tvrl_bench.training.optimizers import MuonWithAdamW
    from tvrl_bench.training.parallel.sharding import shard_policy

    with torch.device("meta"):
        holder = torch.nn.Module()
        holder.transformer = HunyuanVideo15Transformer3DModel(task_type="t2v")
    count = sum(p.numel() for p in holder.transformer.parameters())
    shard_policy(holder, sharding, processes)
    holder.transformer.to_empty(device=device)
    with torch.no_grad():
        for p in holder.transformer.parameters():
            p.to_local().normal_(0, 0.02)
        for b in holder.transformer.buffers():
            b.zero_()
    optimizer = MuonWithAdamW(holder.transformer.parameters(), lr=1e-5, weight_decay=0.01, betas=(0.95, 0.95))
    config = holder.transformer.config
    t, h, w = 21, 22, 39  # 81 frames of 352 x 624 through the VAE's 4x16x16 compression
    kw = {"device": device, "dtype": torch.bfloat16}
    started = time.perf_counter()
    out = holder.transformer(
        hidden_states=torch.randn(2, config.in_channels, t, h, w, **kw), timestep=torch.full((2,), 500.0, **kw),
        encoder_hidden_states=torch.randn(2, 256, config.text_embed_dim, **kw),
        encoder_attention_mask=torch.ones(2, 256, device=device),
        encoder_hidden_states_2=torch.randn(2, 64, config.text_embed_2_dim, **kw),
        encoder_attention_mask_2=torch.ones(2, 64, device=device),
        image_embeds=torch.zeros(2, 729, config.image_embed_dim, **kw), return_dict=False)[0]
    out.float().square().mean().backward()
    optimizer.step()
    cuda = device == "cuda"
    if cuda:
        torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else float("nan")
    print(f"full size: {count / 1e9:.2f}B parameters over {processes.world} processes, one step "
          f"{time.perf_counter() - started:.1f} s, peak memory {peak:.1f} GiB per GPU")


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--steps", type=int, default=3, action=at_least(1), help="timed steps after one warm-up step (default 3)")
    parser.add_argument("--allow-cpu", action="store_true", help="run on the CPU in float32 when there is no GPU")
    parser.add_argument(
        "--profile", default="toy", choices=["toy", "paper"],
        help="'toy': toy.gin with the real classes (LoRA, window credit); 'paper': paper.gin's official recipe (full "
        "fine-tuning, Muon + AdamW, joint-prompt critic, routing-grid credit, per-check ratios, adaptive KL)",
    )
    parser.add_argument("--fsdp", action="store_true",
                        help="check sharded training (see above; run under torchrun / accelerate launch)")
    parser.add_argument("--full-size", action="store_true",
                        help="with --fsdp: one step of the 8.3B transformer at the paper's rollout size")
    return run_script(parser, smoke, argv)


def smoke(args: argparse.Namespace) -> int:
    if args.full_size and not args.fsdp:
        raise UserError("--full-size: the full-size step is a check of sharded training; add --fsdp (under torchrun)")
    cuda = torch.cuda.is_available()
    if not cuda and not args.allow_cpu:
        print("gpu_smoke: no CUDA device here; nothing measured (use --allow-cpu to check the code path on the CPU)")
        return 0
    device, dtype = ("cuda", "bfloat16") if cuda else ("cpu", "float32")
    sharding = None
    if args.fsdp:
        from tvrl_bench.training.parallel.sharding import ShardingSettings

        sharding = ShardingSettings(enabled=True, param_dtype="bfloat16", reduce_dtype="float32",
                                    master_dtype="float32", activation_checkpointing=True)  # as paper.gin
        if args.full_size:
            full_size_step(Processes(cpu=not cuda, sharding=sharding), sharding, device)
            return 0
    with tempfile.TemporaryDirectory() as tmp:
        trainer = tiny_trial(Path(tmp), dtype, device, args.profile, sharding)
        if args.fsdp:
            if cuda and not trainer.processes.uses_accelerate_fsdp:
                print("gpu_smoke --fsdp: accelerate did not enable FSDP; launch with torchrun --nproc_per_node N")
                return 1
            fsdp_checks(trainer, Path(tmp), cuda)
        trainer.step(0)
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        times = []
        for step in range(1, args.steps + 1):
            started = time.perf_counter()
            out = trainer.step(step)
            if cuda:
                torch.cuda.synchronize()
            times.append(time.perf_counter() - started)
            print(f"step {step}: {times[-1]:.3f} s reward_mean={out.metrics['train/reward_mean']:.4f}")
    peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else float("nan")
    name = torch.cuda.get_device_name() if cuda else "cpu"
    print(f"device={name} dtype={dtype} profile={args.profile} step_s={statistics.median(times):.3f} peak_mem_mib={peak:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
