"""GPU smoke benchmark: the tiny-config TVRL trial (HunyuanVideo-1.5 policy, Qwen3.5 critic) on CUDA in bf16.

    python benchmarks/gpu_smoke.py [--steps 3] [--allow-cpu]

Builds the real classes from tiny configs (tests/policies/tiny_hunyuan.py, tests/rewards/tiny_qwen.py), saves
them with save_pretrained, loads them through `policies.hunyuan_video15` and `rewards.qwen_vl`, and times full
trainer steps (`tvrl_bench.training.loop.Trainer.step`): SDE rollouts with CFG, VAE decode, the critic's scores
and pixel gradients in one batched backward, 3x3 window credit, the credit-weighted GRPO update. Prints the
median step time and the peak CUDA memory (`torch.cuda.max_memory_allocated`).

Without CUDA it prints a message and exits 0; `--allow-cpu` runs the same trial on the CPU in float32.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gin
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for the tiny-model builders in tests/

from tests.policies.tiny_hunyuan import save_tiny_hunyuan  # noqa: E402
from tests.rewards.tiny_qwen import save_tiny_qwen  # noqa: E402
from tvrl_bench.config import load_config  # noqa: E402
from tvrl_bench.training.checkpoint import CheckpointDir  # noqa: E402
from tvrl_bench.training.distributed import Processes  # noqa: E402
from tvrl_bench.training.loop import Trainer  # noqa: E402
from tvrl_bench.training.settings import TrialSettings  # noqa: E402


def tiny_trial(folder: Path, dtype: str, device: str, profile: str = "toy") -> Trainer:
    policy = save_tiny_hunyuan(folder / "hunyuan")
    critic = save_tiny_qwen(folder / "qwen3_5", "qwen3_5")
    if profile == "paper":  # the official recipe as paper.gin ships it: only sizes and paths shrunk
        bindings = [b for b in policy.gin_bindings() if ".dtype" not in b and "lora" not in b] + [
            f"policies.hunyuan_video15.dtype = '{dtype}'",
            f"rewards.qwen_vl.path = '{critic}'",
            f"rewards.qwen_inputs.dtype = '{dtype}'",
            f"rewards.qwen_inputs.device = '{device}'",
            "rewards.qwen_inputs.frames = 4",
            "rewards.qwen_inputs.max_pixels = 1536",
            "rewards.qwen_inputs.min_pixels = 256",
            "training.schedule.num_steps = 4",
            "training.trial.num_gpus = 0",
            "training.trial.prompts_per_step = 2",
            "training.trial.group_size = 2",
            "training.trial.micro_batch = 2",
        ]
        files = ["components/profiles/paper.gin", "components/evaluators/toy.gin", "components/datasets/toy.gin"]
        load_config(files, bindings)
        settings = TrialSettings()
        gin.clear_config()
        return Trainer(settings, Processes(cpu=device == "cpu"), CheckpointDir(folder / "checkpoint"), None, progress=False)
    bindings = [b for b in policy.gin_bindings() if ".dtype" not in b] + [
        f"policies.hunyuan_video15.dtype = '{dtype}'",
        f"rewards.qwen_vl.path = '{critic}'",
        f"rewards.qwen_inputs.dtype = '{dtype}'",
        f"rewards.qwen_inputs.device = '{device}'",
        "training.schedule.num_steps = 4",
        "training.schedule.shift = 5.0",  # the tiny checkpoint's scheduler shift
        "training.trial.prompts_per_step = 2",
        "training.trial.group_size = 2",
        "training.trial.micro_batch = 2",
    ]
    files = ["components/profiles/toy.gin", "components/policies/hunyuan_video15_480p.gin", "components/rewards/qwen3_5_9b.gin"]
    load_config(files, bindings)
    settings = TrialSettings()
    gin.clear_config()
    return Trainer(settings, Processes(cpu=device == "cpu"), CheckpointDir(folder / "checkpoint"), None, progress=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3, help="timed steps after one warm-up step (default 3)")
    parser.add_argument("--allow-cpu", action="store_true", help="run on the CPU in float32 when there is no GPU")
    parser.add_argument(
        "--profile", default="toy", choices=["toy", "paper"],
        help="'toy': toy.gin with the real classes (LoRA, window credit); 'paper': paper.gin's official recipe (full "
        "fine-tuning, Muon + AdamW, joint-prompt critic, routing-grid credit, per-check ratios, adaptive KL)",
    )
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    if not cuda and not args.allow_cpu:
        print("gpu_smoke: no CUDA device here; nothing measured (use --allow-cpu to check the code path on the CPU)")
        return 0
    device, dtype = ("cuda", "bfloat16") if cuda else ("cpu", "float32")
    with tempfile.TemporaryDirectory() as tmp:
        trainer = tiny_trial(Path(tmp), dtype, device, args.profile)
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
