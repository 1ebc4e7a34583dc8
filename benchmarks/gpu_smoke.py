"""GPU smoke benchmark: one TVRL step of the tiny-config HunyuanVideo-1.5 policy on CUDA in bf16.

    python benchmarks/gpu_smoke.py [--steps 3] [--frames 9 --height 32 --width 32] [--layers 1 --heads 2]

Builds a tiny HunyuanVideo-1.5 pipeline of the real diffusers/transformers classes (tests/policies/tiny_hunyuan.py),
loads it through `policies.hunyuan_video15`, and times full steps: SAGE SDE rollouts with CFG, VAE decode, a
differentiable critic's (video, check) scores with their pixel gradients in one batched backward, 3 x 3 window
credit, group advantages, the credit-weighted GRPO loss over the trained transitions, backward and an AdamW
step. Prints the mean/min step time and the peak CUDA memory (`torch.cuda.max_memory_allocated`).

Without CUDA it prints a message and exits 0; `--allow-cpu` runs the same step on the CPU (float32) to check
the code path. The step is assembled from the component contracts directly (`tvrl_step`); once the trainer is
settled, `tvrl_step` can be replaced by one optimizer step of `tvrl_bench.training`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.policies.tiny_hunyuan

from tvrl_bench.credit.window import WindowRouter  # noqa: E402
from tvrl_bench.objectives.advantages import group_advantages  # noqa: E402
from tvrl_bench.objectives.grpo import CreditWeightedGRPO  # noqa: E402
from tvrl_bench.rewards.base import Reward  # noqa: E402
from tvrl_bench.samplers.sage import SageSampler  # noqa: E402
from tvrl_bench.samplers.schedule import Schedule  # noqa: E402
from tvrl_bench.tokens import latent_to_tokens  # noqa: E402

PROMPTS = ["a red ball rolls to the left across a wooden table", 'a neon sign that says "open" flickers at night']


class ColourCritic(Reward):
    """Toy differentiable critic with two score heads: mean brightness and mean redness of the video."""

    uses_checks = False
    score_names = ("brightness", "redness")

    def __init__(self):
        super().__init__()
        self.freeze()

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        brightness = videos.mean(dim=(1, 2, 3, 4))
        redness = (videos[:, :, 0] - videos[:, :, 1:].mean(dim=2)).mean(dim=(1, 2, 3))
        is_brightness = torch.tensor([q == "brightness" for q in questions], device=videos.device)
        return torch.where(is_brightness, brightness, redness)


@dataclass
class StepResult:
    loss: float
    reward_mean: float
    seconds: float


def critic_grads(reward: Reward, video: torch.Tensor, prompts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Rewards R[B] and |d r_ik / d video_i| summed over colour, grads[B, K, F, H, W], from one batched backward."""
    checks = [()] * len(prompts)
    index, pair_prompts, questions, flat = reward.pairs(video, prompts, checks)
    b, k = len(prompts), len(reward.score_names)
    copies = video.detach()[index].clone().requires_grad_(True)
    with torch.enable_grad():
        scores = reward.score_pairs(copies, pair_prompts, questions)
        (grad,) = torch.autograd.grad(scores.sum(), copies)
    grads = grad.abs().sum(dim=2).new_zeros(b * k, *video.shape[1:2], *video.shape[3:])
    grads[flat.to(grads.device)] = grad.abs().sum(dim=2)
    rewards = scores.detach().new_zeros(b * k).index_put((flat.to(scores.device),), scores.detach())
    return rewards.reshape(b, k).mean(dim=1), grads.reshape(b, k, *grads.shape[1:])


def tvrl_step(policy, sampler, schedule, reward, router, objective, optimizer, prompts, group_size, generator) -> StepResult:
    """One TVRL optimizer step over len(prompts) x group_size rollouts (see the module docstring)."""
    start = time.perf_counter()
    device = next(policy.parameters()).device
    batch_prompts = [p for p in prompts for _ in range(group_size)]
    groups = torch.arange(len(prompts)).repeat_interleave(group_size)
    cond = policy.encode(batch_prompts)
    sigmas = schedule.sigmas().tolist()
    trained = schedule.stochastic_steps()
    x = torch.randn(len(batch_prompts), *policy.latent_shape(), generator=generator).to(device)
    transitions = []
    with torch.no_grad():
        for i in range(schedule.num_steps):
            s, s_next = sigmas[i], sigmas[i + 1]
            v = policy.velocity(x, torch.full((x.shape[0],), s, device=device), cond)
            if i in trained:
                noise = torch.randn(x.shape, generator=generator).to(device)
                x_next, mean, var = sampler.step(x, v, s, s_next, noise=noise)
                logp = latent_to_tokens(sampler.log_prob(x_next, mean, var), policy.token_grid)
                transitions.append((x, x_next, s, s_next, logp))
            else:
                x_next = x + v * (s_next - s)  # the final deterministic step
            x = x_next
        video = policy.decode(x)
    rewards, grads = critic_grads(reward, video, batch_prompts)
    advantages = group_advantages(rewards.cpu(), groups).to(device)
    weights = router(grads, video, policy.token_grid).reshape(len(batch_prompts), -1).to(device)
    optimizer.zero_grad(set_to_none=True)
    total = 0.0
    for x_t, x_next, s, s_next, logp_old in transitions:
        v = policy.velocity(x_t, torch.full((x_t.shape[0],), s, device=device), cond)
        _, mean, var = sampler.step(x_t, v, s, s_next, noise=torch.zeros_like(x_t))
        logp_new = latent_to_tokens(sampler.log_prob(x_next, mean, var), policy.token_grid)
        loss, _ = objective.loss(logp_new[:, None], logp_old[:, None], advantages, weights)
        (loss / len(transitions)).backward()
        total += float(loss.detach()) / len(transitions)
    optimizer.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return StepResult(total, float(rewards.mean()), time.perf_counter() - start)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="timed optimizer steps after one warm-up step")
    parser.add_argument("--frames", type=int, default=9, help="video frames (4k + 1)")
    parser.add_argument("--height", type=int, default=32, help="video height in pixels (multiple of 16)")
    parser.add_argument("--width", type=int, default=32, help="video width in pixels (multiple of 16)")
    parser.add_argument("--layers", type=int, default=1, help="transformer blocks of the tiny model")
    parser.add_argument("--heads", type=int, default=2, help="attention heads of the tiny model")
    parser.add_argument("--head-dim", type=int, default=8, help="attention head dimension (multiple of 4)")
    parser.add_argument("--group-size", type=int, default=4, help="rollouts per prompt (2 prompts)")
    parser.add_argument("--num-steps", type=int, default=4, help="denoising steps per rollout (the last is ODE)")
    parser.add_argument("--allow-cpu", action="store_true", help="without CUDA, run on the CPU in float32 instead of exiting")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cuda = torch.cuda.is_available()
    if not cuda and not args.allow_cpu:
        print("gpu_smoke: no CUDA device on this machine; nothing was measured (use --allow-cpu to check the code path).")
        return 0
    from tests.policies.tiny_hunyuan import save_tiny_hunyuan
    from tvrl_bench.policies.hunyuan_video15 import HunyuanVideo15Policy

    torch.set_num_threads(1 if not cuda else torch.get_num_threads())
    device, dtype = ("cuda", "bfloat16") if cuda else ("cpu", "float32")
    with tempfile.TemporaryDirectory() as folder:
        tiny = save_tiny_hunyuan(folder, layers=args.layers, heads=args.heads, head_dim=args.head_dim)
        kwargs = {**tiny.policy_kwargs, "frames": args.frames, "height": args.height, "width": args.width}
        policy = HunyuanVideo15Policy(tiny.path, **{**kwargs, "dtype": dtype, "device": device})
    schedule = Schedule(num_steps=args.num_steps, shift=policy.scheduler_shift)
    sampler, reward, router = SageSampler(), ColourCritic().to(device), WindowRouter(k=3)
    objective = CreditWeightedGRPO()
    optimizer = torch.optim.AdamW(policy.trainable_parameters(), lr=1e-4)
    generator = torch.Generator().manual_seed(0)
    step = lambda: tvrl_step(policy, sampler, schedule, reward, router, objective, optimizer, PROMPTS, args.group_size, generator)  # noqa: E731

    step()  # warm-up: kernels, allocator, prompt cache
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    results = [step() for _ in range(args.steps)]
    times = [r.seconds for r in results]
    rollouts = len(PROMPTS) * args.group_size
    print(f"device: {torch.cuda.get_device_name() if cuda else 'cpu'}  dtype: {dtype}")
    print(f"video: {args.frames} x {args.height} x {args.width}  latent: {policy.latent_shape()}  rollouts/step: {rollouts}")
    print(f"step time: mean {sum(times) / len(times):.3f} s  min {min(times):.3f} s over {len(times)} steps")
    if cuda:
        print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**20:.1f} MiB (torch.cuda.max_memory_allocated)")
    print(f"last loss: {results[-1].loss:.4g}  mean reward: {results[-1].reward_mean:.4g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
