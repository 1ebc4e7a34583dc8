"""Step-throughput benchmark on the toy default, everything measured side by side in one process.

- Matmul rate: one torch thread, dense float32 matmuls of the toy transformer's shapes (rows = 16 CFG samples x
  268 tokens) and 1024^3; the best of them is the hardware's rate on its own matrix products (`matmul`).
- FLOPs of a step: torch.utils.flop_counter.FlopCounterMode over a full step, counting the CPU flash-attention
  kernel too (FlopCounterMode has formulas for the CUDA attention kernels only; the same formulas are mapped onto
  the CPU kernel here, so attention's matrix products count whichever way the step computes them). The count
  without attention is printed as well.
- Step time: the median wall time of full training steps (8 rollouts, 10 SDE steps with CFG, 5 trained
  transitions, toy_oracle, AdamW), TVRL (window3) and GRPO (uniform) with every optimisation on, and TVRL with
  them all off (`reference`: diffusers' own forward, the update recomputing the trained transitions), the three
  trainers taking turns step by step so they see the same machine load.
- Batched vs per-check-loop credit: critic scores plus per-check pixel gradients for B videos x K = 4 checks.

peak_fraction = median over steps of (step FLOPs / step time) / matmul rate.
Last line: peak_fraction=<ratio> rollouts_per_s=<TVRL rollouts per second> tvrl_over_grpo=<ratio> step_s=<TVRL
median step> batched_speedup=<ratio> reference_step_s=<seconds> speedup=<reference / TVRL>.

    python benchmarks/step.py [--steps 10] [--no-reference] [--policy-path DIR] [--gin_bindings B ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import gin
import torch
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count

from tvrl_bench.cli.script import UserError, at_least, run_script, scratch, script_parser
from tvrl_bench.config import load_config
from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.scoring import score_videos, score_videos_looped
from tvrl_bench.training.trial.built import build_trainer
from tvrl_bench.world.declaration import DEFAULT_PROFILE

# The toy transformer's matmuls at micro_batch 8 with CFG: 16 samples x (256 video + 12 text) tokens, width 64.
ROWS = 16 * 268
MATMUL_SHAPES = [(ROWS, 64, 64), (ROWS, 64, 192), (ROWS, 64, 256), (ROWS, 256, 64), (1024, 1024, 1024)]
# Every optimisation off: diffusers' own forward and the update's recomputed forward.
REFERENCE = ["policies.toy.fast = False", "training.trial.keep_rollout_graph = False"]


def matmul_rates(repeats: int = 20) -> dict[tuple[int, int, int], float]:
    """GFLOP/s of a float32 matmul [M, K] @ [K, N] for each (M, K, N) of MATMUL_SHAPES (median of `repeats`)."""
    rates = {}
    for m, k, n in MATMUL_SHAPES:
        a, b = torch.randn(m, k), torch.randn(k, n)
        out = torch.empty(m, n)
        torch.mm(a, b, out=out)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            torch.mm(a, b, out=out)
            times.append(time.perf_counter() - started)
        rates[(m, k, n)] = 2 * m * k * n / statistics.median(times) / 1e9
    return rates


def _cpu_attention(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(query_shape, key_shape, value_shape)


def _cpu_attention_backward(grad_out_shape, query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(grad_out_shape, query_shape, key_shape, value_shape)


ATTENTION_FLOPS = {
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _cpu_attention,
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward: _cpu_attention_backward,
}


def trainer(credit: str, policy_path: str | None, folder: Path, bindings: list[str] = ()) -> Trainer:
    extra = [f"policies.toy.path = '{policy_path}'"] if policy_path else []
    return build_trainer([DEFAULT_PROFILE, f"components/credit/{credit}.gin"], extra + list(bindings),
                         folder)


def step_flops(t: Trainer, step: int) -> tuple[float, float]:
    """(FLOPs with attention, FLOPs without attention) of trainer t's step `step`."""
    with FlopCounterMode(display=False, custom_mapping=ATTENTION_FLOPS) as counter:
        t.step(step)
    counts = counter.get_flop_counts()["Global"]
    attention = sum(v for k, v in counts.items() if "attention" in str(k))
    return float(counter.get_total_flops()), float(counter.get_total_flops() - attention)


def step_times(trainers: dict[str, Trainer], steps: range) -> dict[str, list[float]]:
    """Wall time of each trainer's steps, the trainers taking turns in a rotating order."""
    times: dict[str, list[float]] = {name: [] for name in trainers}
    names = list(trainers)
    for i, step in enumerate(steps):
        for name in names[i % len(names):] + names[: i % len(names)]:
            started = time.perf_counter()
            trainers[name].step(step)
            times[name].append(time.perf_counter() - started)
    return times


def credit_times(repeats: int, policy_path: str | None, folder: Path,
                 bindings: list[str] = ()) -> tuple[list[float], list[float], int]:
    t = trainer("window3", policy_path, folder, bindings)
    items = [it for it in t.train_items if len(it.checks) >= 4][:2]
    group = t.s.group_size
    prompts = [it.prompt for it in items for _ in range(group)]
    checks = [list(it.checks[:4]) for it in items for _ in range(group)]
    videos = t.evaluation.generate(1).expand(len(prompts), -1, -1, -1, -1).contiguous()
    videos = (videos + 0.05 * torch.randn(videos.shape, generator=torch.Generator().manual_seed(0))).clamp(0, 1)
    batched, looped = [], []
    for _ in range(repeats + 1):
        started = time.perf_counter()
        score_videos(t.s.reward, videos, prompts, checks, need_grads=True)
        batched.append(time.perf_counter() - started)
        started = time.perf_counter()
        score_videos_looped(t.s.reward, videos, prompts, checks)
        looped.append(time.perf_counter() - started)
    return batched[1:], looped[1:], len(prompts)


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("--steps", type=int, default=10, action=at_least(1), help="timed steps per trainer (default 10)")
    parser.add_argument("--credit-repeats", type=int, default=30, action=at_least(1),
                        help="timed credit computations (default 30)")
    parser.add_argument("--no-reference", action="store_true", help="skip the unoptimised TVRL trainer")
    parser.add_argument("--policy-path", help="toy policy folder (default: the shipped one)")
    parser.add_argument("--gin_bindings", nargs="*", default=[],
                        help="extra gin bindings for every trainer, e.g. 'training.trial.prompts_per_step = 2'")
    return run_script(parser, benchmark, argv)


def benchmark(args: argparse.Namespace) -> None:
    if args.policy_path is not None and not Path(args.policy_path).is_dir():
        raise UserError(f"--policy-path {args.policy_path}: no such folder; pass a toy policy folder, or leave the "
                        "flag out for the shipped policy")
    extra = [f"policies.toy.path = '{args.policy_path}'"] if args.policy_path else []
    try:  # a config mistake in seconds, before the timings
        load_config([DEFAULT_PROFILE, *(f"components/credit/{c}.gin" for c in ("window3", "uniform"))],
                    extra + args.gin_bindings)
    finally:
        gin.clear_config()
    torch.set_num_threads(1)
    with scratch("tvrl-bench-step-") as work:  # the trainers' checkpoint folders
        measure(args, work.folder)


def measure(args: argparse.Namespace, folder: Path) -> None:
    print(f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    rates = matmul_rates()
    for (m, k, n), rate in rates.items():
        print(f"matmul {m}x{k} @ {k}x{n}: {rate:.1f} GFLOP/s")
    peak = max(rates.values())  # GFLOP/s

    names = {"tvrl": ("window3", args.gin_bindings), "grpo": ("uniform", args.gin_bindings)}
    if not args.no_reference:
        names["reference"] = ("window3", REFERENCE + args.gin_bindings)
    trainers = {n: trainer(c, args.policy_path, folder / n, b) for n, (c, b) in names.items()}
    for t in trainers.values():
        t.step(0)  # warm-up
    timed = range(1, args.steps + 1)
    times = step_times(trainers, timed)
    # The same steps again on fresh trainers under the FLOP counter (a step's FLOPs depend on its prompts only).
    flops: dict[str, list[tuple[float, float]]] = {}
    for name in ("tvrl", "reference"):
        if name in trainers:
            counter_trainer = trainer(*names[name][:1], args.policy_path, folder / f"{name}-flops", names[name][1])
            counter_trainer.step(0)
            flops[name] = [step_flops(counter_trainer, step) for step in timed]

    batched, looped, videos = credit_times(args.credit_repeats, args.policy_path, folder / "credit", args.gin_bindings)
    rollouts = trainers["tvrl"].local_prompts * trainers["tvrl"].s.group_size  # this process's rollouts per step
    medians = {n: statistics.median(ts) for n, ts in times.items()}
    achieved = {n: statistics.median(f[0] / s for f, s in zip(flops[n], times[n])) for n in flops}
    fractions = {n: achieved[n] / 1e9 / peak for n in achieved}
    for n in ("tvrl", "grpo", "reference"):
        if n in medians:
            line = f"{n} step: median {medians[n]:.3f} s over {len(times[n])} steps"
            if n in flops:
                total = statistics.mean(f[0] for f in flops[n]) / 1e9
                plain = statistics.mean(f[1] for f in flops[n]) / 1e9
                line += (f"; {total:.1f} GFLOP per step ({plain:.1f} without attention), {achieved[n] / 1e9:.1f} GFLOP/s, "
                         f"{fractions[n]:.2f} of the matmul rate {peak:.1f} GFLOP/s")
            print(line)
    b, l = statistics.median(batched), statistics.median(looped)
    print(f"credit, B x K = {videos} x 4 pairs: batched {b * 1000:.1f} ms, per-check loop {l * 1000:.1f} ms")
    print(f"machine load (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    v, g = medians["tvrl"], medians["grpo"]
    last = (f"peak_fraction={fractions['tvrl']:.3f} rollouts_per_s={rollouts / v:.2f} tvrl_over_grpo={v / g:.3f} "
            f"step_s={v:.3f} batched_speedup={l / b:.2f}")
    if "reference" in medians:
        last += f" reference_step_s={medians['reference']:.3f} speedup={medians['reference'] / v:.2f}"
    print(last)


if __name__ == "__main__":
    sys.exit(main())
