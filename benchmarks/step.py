"""Step-time benchmark on the toy default, measured side by side in one process with the same seed.

- TVRL (3x3 window credit) vs GRPO (uniform credit): the median wall time of full training steps, alternating
  the two trainers step by step so both see the same machine load.
- Batched vs per-check-loop credit: critic scores plus per-check pixel gradients for B videos x K = 4 checks,
  one forward and backward over all pairs vs one forward and backward per check.

Last line: tvrl_over_grpo=<ratio> batched_speedup=<ratio> step_s=<seconds> (step_s = TVRL's median step).

    python benchmarks/step.py [--steps 12] [--policy-path DIR]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gin
import torch

from tvrl_bench.config import load_config
from tvrl_bench.training.checkpoint import CheckpointDir
from tvrl_bench.training.distributed import Processes
from tvrl_bench.training.loop import Trainer
from tvrl_bench.training.scoring import score_videos, score_videos_looped
from tvrl_bench.training.settings import TrialSettings


def trainer(credit: str, policy_path: str | None, folder: str) -> Trainer:
    bindings = [f"policies.toy.path = '{policy_path}'"] if policy_path else []
    load_config(["components/profiles/toy.gin", f"components/credit/{credit}.gin"], bindings)
    settings = TrialSettings()
    gin.clear_config()
    return Trainer(settings, Processes(cpu=True), CheckpointDir(folder), None, progress=False)


def step_times(steps: int, policy_path: str | None) -> tuple[list[float], list[float]]:
    grpo = trainer("uniform", policy_path, "/tmp/tvrl-bench-step-grpo")
    tvrl = trainer("window3", policy_path, "/tmp/tvrl-bench-step-tvrl")
    grpo.step(0), tvrl.step(0)  # warm-up
    times: dict[str, list[float]] = {"grpo": [], "tvrl": []}
    for step in range(1, steps + 1):
        for name, t in (("grpo", grpo), ("tvrl", tvrl)) if step % 2 else (("tvrl", tvrl), ("grpo", grpo)):
            started = time.perf_counter()
            t.step(step)
            times[name].append(time.perf_counter() - started)
    return times["grpo"], times["tvrl"]


def credit_times(repeats: int, policy_path: str | None) -> tuple[list[float], list[float], int]:
    t = trainer("window3", policy_path, "/tmp/tvrl-bench-step-credit")
    items = [it for it in t.train_items if len(it.checks) >= 4][:2]
    group = t.s.group_size
    prompts = [it.prompt for it in items for _ in range(group)]
    checks = [list(it.checks[:4]) for it in items for _ in range(group)]
    videos = t.generate_eval(1).expand(len(prompts), -1, -1, -1, -1).contiguous()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=12, help="timed steps per method (default 12)")
    parser.add_argument("--credit-repeats", type=int, default=30, help="timed credit computations (default 30)")
    parser.add_argument("--policy-path", help="toy policy folder (default: the shipped one)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    grpo, tvrl = step_times(args.steps, args.policy_path)
    batched, looped, videos = credit_times(args.credit_repeats, args.policy_path)
    g, v = statistics.median(grpo), statistics.median(tvrl)
    b, l = statistics.median(batched), statistics.median(looped)
    print(f"GRPO (uniform) step: median {g:.3f} s over {len(grpo)} steps")
    print(f"TVRL (window3) step: median {v:.3f} s over {len(tvrl)} steps")
    print(f"credit, B x K = {videos} x 4 pairs: batched {b * 1000:.1f} ms, per-check loop {l * 1000:.1f} ms")
    print(f"tvrl_over_grpo={v / g:.3f} batched_speedup={l / b:.2f} step_s={v:.3f}")


if __name__ == "__main__":
    main()
