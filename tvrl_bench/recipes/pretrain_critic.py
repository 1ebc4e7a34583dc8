"""Pretraining the learned toy critic (`rewards.toy_learned`): yes/no answers to toy checks, from a seed.

`pretrain_critic(out_dir, seed, steps, progress)` trains `ToyCriticNet` on (video, question, yes/no) examples and
writes `config.json`, `model.safetensors` (the best checkpoint by validation accuracy) and `pretrain.json`
(seed, steps, time, validation accuracy per check kind, the grounding figure). `tvrl-bench prepare-toy --what
critic` calls it. One torch thread; with a fixed step count the result is reproducible from the seed.

The recipe (`CriticRecipe`; docs/toy/world.md "Critics" has the measurements behind it):
- Data: every step draws `videos_per_step` fresh scenes with `training_batch` (the default `datasets.toy` eval
  scenes excluded) and `questions_per_video` questions per video. Each question is a Yes (one of the scene's
  `checks_for`) or a No (one of its `negative_checks`) with probability 1/2, so every kind is balanced. Half of
  the No object and motion questions are near misses (the colour of a sprite that is there with the other
  shape; the right sprite with another motion), which is what makes the critic look at shape and motion.
- Curriculum (`CriticRecipe.curriculum`): colour questions alone for the first 5% of the steps, then object,
  colour, shape and motion, and from 40% the background (and count, where the difficulty has it). Measured:
  with background questions from the start the easy question captured the question encoder and existence
  stayed at chance (docs/toy/world.md); without the colour-only warm-up the mixed kinds sat at chance for hundreds of
  steps (the answer is an interaction of question and video, and colour is the easiest one to find).
- Augmentation (robustness to what an imperfect policy renders): each of a random colour transform
  (off-palette colours), a fade towards the frame's median colour (washed-out sprites), a Gaussian blur and
  pixel noise is applied to a video with probability `augment_p`; the answer does not change.
- AdamW with linear warm-up then cosine decay; every `eval_every` steps the network is scored on a fixed
  validation set (clean videos of training-distribution scenes, eval scenes excluded); the checkpoint with the
  best mean accuracy over check kinds is kept.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict
from pathlib import Path

import torch
import torch.nn.functional as F

from tvrl_bench.datasets.toy import training_batch
from tvrl_bench.recipes.critic_data import (
    DEFAULT_STEPS,
    CriticRecipe,
    default_eval_signatures,
    full_curriculum_step,
    curriculum_kinds,
    degrade,
    step_batch,
    validation_examples,
)
from tvrl_bench.rewards.toy_critic_net import CriticConfig, ToyCriticNet
from tvrl_bench.world.checks import CheckSpec
from tvrl_bench.world.difficulty import DEFAULT, Difficulty
from tvrl_bench.world.render import render_batch, sprite_masks
from tvrl_bench.world.scene import Scene

__all__ = ["CriticRecipe", "accuracy_by_kind", "existence_grounding", "learning_rate", "pretrain_critic", "train_critic"]


def learning_rate(step: int, steps: int, recipe: CriticRecipe) -> float:
    """Linear warm-up to recipe.lr, then cosine decay to final_lr_fraction * lr at the last step."""
    warmup = min(recipe.warmup_steps, max(steps // 10, 1))
    if step < warmup:
        return recipe.lr * (step + 1) / warmup
    progress = (step - warmup) / max(steps - warmup, 1)
    low = recipe.final_lr_fraction
    return recipe.lr * (low + (1 - low) * 0.5 * (1 + math.cos(math.pi * progress)))


@torch.no_grad()
def accuracy_by_kind(
    net: ToyCriticNet, videos: torch.Tensor, index: list[int], questions: list[str], labels: list[int],
    kinds: list[str], chunk: int = 512,
) -> dict[str, float]:
    """Accuracy of argmax answers per check kind, plus 'mean' over the kinds present."""
    was_training = net.training
    net.eval()
    features = net.features(videos)
    predicted = []
    for start in range(0, len(questions), chunk):
        rows = torch.tensor(index[start : start + chunk])
        predicted.append(net.answer(features[rows], questions[start : start + chunk]).argmax(1))
    net.train(was_training)
    correct = (torch.cat(predicted) == torch.tensor(labels)).float()
    out = {}
    for kind in dict.fromkeys(kinds):
        mask = torch.tensor([k == kind for k in kinds])
        out[kind] = round(float(correct[mask].mean()), 4)
    out["mean"] = round(sum(out.values()) / max(len(out), 1), 4)
    return out


def existence_grounding(net: ToyCriticNet, scenes: list[Scene]) -> dict[str, float | int | None]:
    """In two-sprite scenes, the fraction of object checks ("Is there a red circle?") whose |d log p(Yes) / d video|
    (summed over colour) has more mass on the named sprite's pixels than on the other sprite's; 'checks' = count."""
    two = [s for s in scenes if len(s.sprites) == 2]
    if not two:
        return {"object": None, "checks": 0}
    videos = render_batch(two)
    masks = sprite_masks(two)  # [B, 2, F, H, W]
    pairs = torch.arange(len(two)).repeat_interleave(2)
    named = torch.arange(2).repeat(len(two))
    questions = [CheckSpec("object", colour=s.sprites[j].colour, shape=s.sprites[j].shape).text() for s in two for j in range(2)]
    copies = videos[pairs].clone().requires_grad_(True)
    was_training = net.training
    net.eval()
    with torch.enable_grad():
        score = torch.log_softmax(net(copies, questions), 1)[:, 1]
        (grad,) = torch.autograd.grad(score.sum(), copies)
    net.train(was_training)
    magnitude = grad.abs().sum(2)  # [P, F, H, W]
    on_named = (magnitude * masks[pairs, named]).sum((1, 2, 3))
    on_other = (magnitude * masks[pairs, 1 - named]).sum((1, 2, 3))
    return {"object": round(float((on_named > on_other).float().mean()), 4), "checks": len(questions)}


def pretrain_critic(out_dir: Path, seed: int = 0, steps: int | None = None, progress: bool = True) -> dict:
    """Train the learned toy critic from `seed` for `steps` (default DEFAULT_STEPS) steps; write it to `out_dir`.

    Returns the summary also written to out_dir/pretrain.json.
    """
    return train_critic(Path(out_dir), seed=seed, steps=DEFAULT_STEPS if steps is None else steps, progress=progress)


def train_critic(
    out_dir: Path, seed: int, steps: int, progress: bool = True, recipe: CriticRecipe = CriticRecipe(),
    difficulty: Difficulty = DEFAULT, config: CriticConfig | None = None,
) -> dict:
    """`pretrain_critic` with the recipe, difficulty and architecture as parameters."""
    if steps < 1:
        raise ValueError(f"pretrain_critic: steps={steps}; need at least 1 step")
    torch.set_num_threads(1)
    start, start_cpu = time.time(), time.process_time()
    config = config or CriticConfig(frames=difficulty.frames, height=difficulty.height, width_px=difficulty.width)
    excluded = default_eval_signatures()
    all_kinds = curriculum_kinds(steps, steps, recipe, difficulty)
    full_step = full_curriculum_step(steps, recipe)

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = ToyCriticNet(config)
    data_rng = random.Random(seed)
    augment_rng = torch.Generator().manual_seed(seed)
    validation_rng = random.Random(seed + 7_919)
    val_scenes = list(training_batch(recipe.validation_videos, validation_rng, difficulty, exclude=excluded).scenes)
    val_index, val_questions, val_labels, val_kinds = validation_examples(val_scenes, all_kinds, validation_rng, difficulty)
    val_videos = render_batch(val_scenes)

    optimizer = torch.optim.AdamW(net.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    best = {"mean": -1.0}
    best_step, best_state, history = 0, None, []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=steps, desc="pretrain critic", unit="step", mininterval=5.0)
    net.train()
    for step in range(steps):
        data = step_batch(step, steps, recipe, difficulty, excluded, data_rng, augment_rng)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, recipe)
        logits = net.answer(net.features(data.videos)[torch.tensor(data.index)], data.questions)
        loss = F.cross_entropy(logits, torch.tensor(data.labels))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), recipe.grad_clip)
        optimizer.step()

        last = step == steps - 1
        if (step + 1) % recipe.eval_every == 0 or last:
            accuracy = accuracy_by_kind(net, val_videos, val_index, val_questions, val_labels, val_kinds)
            history.append({"step": step + 1, "loss": round(loss.item(), 4), **accuracy})
            # Kinds not yet trained sit at chance: only checkpoints of the full curriculum compete (the last step
            # always belongs to it, so there is always a best one).
            if step >= full_step and accuracy["mean"] > best["mean"]:
                best, best_step = accuracy, step + 1
                best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.3f}", val=f"{history[-1]['mean']:.3f}" if history else "-", refresh=False)
    if bar is not None:
        bar.close()
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()

    degraded_videos = degrade(val_videos, 1.0, torch.Generator().manual_seed(seed + 1))
    summary = {
        "seed": seed,
        "steps": steps,
        "best_step": best_step,
        "time_s": round(time.time() - start, 1),
        "cpu_s": round(time.process_time() - start_cpu, 1),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "difficulty": difficulty.name,
        "parameters": sum(p.numel() for p in net.parameters()),
        "validation_accuracy": best,
        "validation_accuracy_degraded": accuracy_by_kind(
            net, degraded_videos, val_index, val_questions, val_labels, val_kinds
        ),
        "existence_grounding": existence_grounding(net, val_scenes),
        "validation_pairs": len(val_questions),
        "recipe": asdict(recipe),
        "history": history,
    }
    out_dir = Path(out_dir)
    net.save(out_dir)
    (out_dir / "pretrain.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary
