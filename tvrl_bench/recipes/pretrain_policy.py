"""Pretraining the toy policy by flow matching: the recipe behind `tvrl_bench/assets/toy_policy`.

Reproducible from a seed and a fixed number of optimizer steps (never wall-clock minutes). The settings are those
measured in docs/toy/world.md ("Policy"): default difficulty 16 x 16 x 8, spatial patch 2 and temporal patch 2
(256 tokens), width 64 (2 heads x 32), 3 layers; the network predicts the clean video x0 and the loss is the
squared error of the velocity it implies; AdamW lr 1e-3 with 300 linear warm-up steps, batch 16, 10% prompt
dropout (the empty prompt '' is the <null> token, the unconditional input of guidance), logit-normal noise
levels, an EMA of the weights (0.999, with warm-up); one torch thread.

One step, for videos[B, F, 3, H, W] in [0, 1]:
    x0 = 2 video - 1 as [B, 3, F, H, W];  x1 ~ N(0, I);  sigma = sigmoid(N(0, 1));  x = (1 - sigma) x0 + sigma x1
    x0_hat = net(x, sigma, prompt);  v_hat = (x - x0_hat) / sigma,  v = x1 - x0
    loss = mean ||v_hat - v||^2 = mean ||x0_hat - x0||^2 / sigma^2   (sigma clamped at `loss_sigma_min`)
Why the velocity loss on an x0 output: an x0 output learns far faster than a velocity output at this width
(docs/toy/world.md); between the two losses, measured on the same seed and data (docs/toy/policy.md), the unweighted x0
loss (`loss="x0"`, kept as an option) learned faster for 2,000 steps, then the two stayed within noise of each
other; the velocity loss's checkpoint scored higher on the eval set at 6,000 steps.

Every `val_every` steps the EMA weights sample held-out validation prompts (CFG 3, 16 deterministic Euler steps:
`training.step.rollout.generate`, the sampler the trainer evaluates with) and the exact evaluator scores them; the
EMA weights with the best validation `overall` are kept and written. Validation prompts and the eval set of
`datasets.toy` (default seed and sizes) are both kept out of pretraining; the final scores are on that eval set.
"""

from __future__ import annotations

import json
import platform
import random
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch

from tvrl_bench.recipes.caption_noise import CaptionNoise
from tvrl_bench.recipes.flow_matching import (Ema, PolicyRecipe, draw_noise, drop_prompts, flow_matching_loss,
                                              learning_rate, pretrained_parameters, to_latents)
from tvrl_bench.recipes.worlds import SpriteWorldData, pretrain_world

# The named recipes `tvrl-bench prepare-toy --recipe` builds (docs/toy/policy.md describes each).
_V2 = PolicyRecipe(
    steps=10_000, width=96, heads=3, layers=4, patch_t=4, loss="balanced", logit_mean=0.5, val_every=1000,
    lean_forward=True,
)
RECIPES: dict[str, PolicyRecipe] = {
    "v1": PolicyRecipe(),
    "v2": _V2,
    "v2_18k": replace(_V2, steps=18_000),
    "v2_noisy_captions": replace(_V2, init="v2_18k", steps=1_500, batch=32, lr=1e-4, warmup=0, ema=0.0,
                                 val_every=1_500, caption_noise=CaptionNoise(p=0.8, kind="colour")),
    # The slot world (world/slots.py): first a clean base that draws every colour in every slot, then the default
    # base fine-tuned on captions whose slot colours are swapped independently (docs/toy/policy.md).
    "slots_clean": PolicyRecipe(world="slots", steps=2_000, width=64, heads=2, layers=3, patch_t=4, loss="balanced",
                                logit_mean=0.5, val_every=2_000, lean_forward=True),
}
RECIPES["slots"] = replace(RECIPES["slots_clean"], init="slots_clean", steps=1_500, batch=32, lr=1e-4, warmup=0,
                           ema=0.0, val_every=1_500, caption_noise=CaptionNoise(p=0.5, kind="colour"))

# Offsets from the pretraining seed: validation / evaluation sampling noise, caption corruption (the validation
# prompts' offset, VALIDATION_STREAM, is in recipes/worlds.py).
SAMPLING_STREAM, CAPTION_STREAM = 104_729, 15_485_863


def toy_vocabulary() -> list[str]:
    """Every word the sprite world's grammar writes (recipes/worlds.py SpriteWorldData.vocabulary)."""
    return SpriteWorldData().vocabulary()


def split_prompts(seed: int, n_val: int, n_eval: int) -> tuple[tuple, tuple, frozenset]:
    """The sprite world's (validation PromptItems, eval PromptItems, signatures to keep out of pretraining)
    (recipes/worlds.py SpriteWorldData.split)."""
    return SpriteWorldData().split(seed, n_val, n_eval)


def build_policy(folder: Path, seed: int, recipe: PolicyRecipe):
    """A freshly initialised ToyPolicy written to and loaded from `folder`, with its text encoder trainable."""
    from tvrl_bench.policies.toy import ToyPolicy

    world = pretrain_world(recipe.world)
    model = dict(width=recipe.width, heads=recipe.heads, layers=recipe.layers, patch=recipe.patch, patch_t=recipe.patch_t)
    ToyPolicy.create(folder, world.vocabulary(), seed=seed, text_dim=recipe.width, **model)
    policy = ToyPolicy(str(folder), guidance=recipe.guidance, frames=world.frames, height=world.height, width=world.width,
                       fast=recipe.lean_forward)
    policy.text_encoder.requires_grad_(True)
    return policy


def shipped_base(recipe: PolicyRecipe):
    """The shipped base `recipe.init`, loaded to be fine-tuned (transformer trainable, text encoder frozen)."""
    from tvrl_bench.policies.toy import ToyPolicy

    world = pretrain_world(recipe.world)
    return ToyPolicy(base=recipe.init, guidance=recipe.guidance, frames=world.frames, height=world.height,
                     width=world.width, fast=recipe.lean_forward)


@torch.no_grad()
def evaluate_policy(policy, items: tuple, seed: int, recipe: PolicyRecipe, evaluator=None) -> dict[str, float]:
    """The exact evaluator's metrics {"overall", <category>...} of videos sampled for PromptItems `items`
    (CFG `recipe.guidance`, `recipe.sample_steps` deterministic Euler steps, noise from `seed`)."""
    from tvrl_bench.samplers.ode import OdeSampler
    from tvrl_bench.training.schedule import Schedule
    from tvrl_bench.training.ode import generate
    from tvrl_bench.evaluators.toy import ToyEvaluator

    was_training = policy.training
    policy.eval()
    guidance, policy.guidance = policy.guidance, recipe.guidance
    try:
        prompts = [i.prompt for i in items]
        generator = torch.Generator().manual_seed(seed)
        videos = generate(policy, OdeSampler(), Schedule(num_steps=recipe.sample_steps), prompts, generator, recipe.micro_batch)
    finally:
        policy.guidance = guidance
        policy.train(was_training)
    metrics, _ = (evaluator or ToyEvaluator()).evaluate_detailed(videos, prompts, [i.checks for i in items])
    return metrics


def pretrain_policy(
    out_dir: Path,
    seed: int = 0,
    steps: int | None = None,
    progress: bool = True,
    recipe: PolicyRecipe | None = None,
) -> dict[str, Any]:
    """Pretrain the toy policy from `seed` for `steps` optimizer steps (None: the recipe's) and write the best
    EMA checkpoint (transformer/, text_encoder/) and pretrain.json to `out_dir`. Returns pretrain.json's content.
    """
    from tqdm.auto import tqdm

    recipe = recipe or PolicyRecipe()
    if steps is not None:
        recipe = replace(recipe, steps=steps)
    out_dir = Path(out_dir)
    started, cpu_started = time.perf_counter(), time.process_time()

    world = pretrain_world(recipe.world)
    validation, eval_items, excluded = world.split(seed, recipe.n_val, recipe.n_eval)
    if recipe.init is None:
        with tempfile.TemporaryDirectory(prefix="toy-policy-init-") as init:
            policy = build_policy(Path(init), seed, recipe)
        params = pretrained_parameters(policy)
    else:
        policy = shipped_base(recipe)
        params = [p for p in policy.transformer.parameters() if p.requires_grad]
    policy.train()
    optimizer = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=recipe.weight_decay)
    ema = Ema(policy, recipe.ema)
    data_rng = random.Random(seed)
    caption_rng = random.Random(seed + CAPTION_STREAM)
    generator = torch.Generator().manual_seed(seed)
    sample_seed = seed + SAMPLING_STREAM

    history: list[dict[str, Any]] = []
    best: dict[str, Any] = {"overall": -1.0}
    best_state: dict[str, torch.Tensor] | None = None
    smoothed = None
    bar = tqdm(total=recipe.steps, desc="pretrain toy policy", unit="step", disable=not progress, dynamic_ncols=True)
    for step in range(recipe.steps):
        batch = world.batch(recipe.batch, data_rng, excluded)
        x0 = to_latents(batch.videos)
        prompts = drop_prompts(world.captions(batch, recipe.caption_noise, caption_rng), generator, recipe.prompt_dropout)
        noise, sigma = draw_noise(x0, generator, recipe)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, recipe)
        loss = flow_matching_loss(policy, x0, prompts, noise, sigma, recipe)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"pretrain_policy: non-finite loss {loss.item()} at step {step + 1} (seed {seed})")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if recipe.grad_clip:
            torch.nn.utils.clip_grad_norm_(params, recipe.grad_clip)
        optimizer.step()
        ema.update(step)
        value = loss.item()
        smoothed = value if smoothed is None else 0.98 * smoothed + 0.02 * value
        bar.update(1)
        bar.set_postfix(loss=f"{smoothed:.4f}", best=f"{best['overall']:.3f}" if best_state is not None else "-")

        done = step + 1
        if done % recipe.val_every == 0 or done == recipe.steps:
            metrics = evaluate_policy(ema.model, validation, sample_seed, recipe)
            record = {"step": done, "loss": round(smoothed, 6), "seconds": round(time.perf_counter() - started, 1), **_rounded(metrics)}
            history.append(record)
            improved = metrics["overall"] > best["overall"]
            if improved:
                best = {"step": done, **metrics}
                best_state = {k: v.detach().clone() for k, v in ema.model.state_dict().items()}
            line = ", ".join(f"{k} {v:.3f}" for k, v in metrics.items())
            bar.write(f"step {done}/{recipe.steps}: loss {smoothed:.4f}; validation (EMA, {len(validation)} prompts): {line}"
                      + ("  [best]" if improved else ""))
    bar.close()

    ema.model.load_state_dict(best_state)
    final = evaluate_policy(ema.model, eval_items, sample_seed, recipe)
    out_dir.mkdir(parents=True, exist_ok=True)
    ema.model.save_pretrained(out_dir)
    summary = {
        "seed": seed,
        "steps": recipe.steps,
        "best_step": best["step"],
        "wall_seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(time.process_time() - cpu_started, 1),
        "torch_threads": torch.get_num_threads(),
        "recipe": asdict(recipe),  # recipe.world: the world it was trained on (world/declaration.py)
        "video": {"frames": world.frames, "height": world.height, "width": world.width},
        "validation": {"n_prompts": len(validation), "best": _rounded(best), "history": history},
        "eval": {"dataset": f"{'datasets.toy' if recipe.world == 'sprites' else 'datasets.toy_slots'} eval (seed 0)", "n_prompts": len(eval_items), "scores": _rounded(final)},
        "versions": {"torch": torch.__version__, "python": platform.python_version()},
    }
    (out_dir / "pretrain.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def _rounded(metrics: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()}

