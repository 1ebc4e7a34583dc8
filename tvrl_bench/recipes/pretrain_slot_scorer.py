"""Training the slot world's scalar video scorer (rewards/toy_scorer_slots.py, VideoAlign's class) from a seed.

`pretrain_slot_scorer(out_dir, seed, steps, progress)` builds a tiny `Qwen2VLForConditionalGeneration` with
VideoAlign's three special reward tokens and a reward head (recipes/slot_qwen_build.py), trains it through the
critic's own scoring path (VideoAlign's prompt layout, video rules, sequential positions and head) to predict the
exact evaluator's `overall` of a (video, prompt) pair, and writes VideoReward's folder layout (`model_config.json`,
`checkpoint-<steps>/model.pth` with the head and `tokenizer/`, `base/` the trained Qwen2-VL and its processor) and
`pretrain.json` (recipe, seed, steps, data size, world 'slots', wall and CPU seconds, validation history, final
measures).

Data: each step, half rollouts of the shipped slot bases with the prompt they were sampled for, half rendered
scenes whose prompt names another colour in 0-4 of the slots (drawn uniformly): overall spans 0 to 1. Loss: the
cross-entropy of sigmoid(TA head) against overall (a soft target), so the score estimates the share of checks
passed. Validation: mean absolute error and the correlation of the score with overall on the base 'slots'
rollouts of `validation_prompts` training prompts (noise seed `validation_seed`); the best checkpoint is kept.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from tvrl_bench.recipes.pretrain_critic import learning_rate
from tvrl_bench.recipes.pretrain_slot_critic import Progress, RunClock, cached_rollouts
from tvrl_bench.recipes.slot_critic_recipes import SlotTraining
from tvrl_bench.recipes.slot_critic_data import (COLOURS, DEFAULT_SLOTS, eval_signatures, fixed_check_set,
                                                 rendered, verdict_table)
from tvrl_bench.recipes.slot_qwen_build import chat_template, scorer_model, slot_processor, slot_tokenizer
from tvrl_bench.rewards.toy_scorer_slots import SCORE, ToyScorerSlots
from tvrl_bench.rewards.videoalign import VideoAlign
from tvrl_bench.rewards.videoalign_prompt import SPECIAL_TOKENS
from tvrl_bench.world.slots import parse_slot_prompt, slot_prompt


@dataclass(frozen=True)
class SlotScorerRecipe(SlotTraining):
    """The scalar scorer's recipe: SlotTraining's, 8,000 steps of `videos_per_step` (video, prompt) pairs, the
    video placed before the reward tokens by its chat template (slot_qwen_build.PLACES)."""

    steps: int = 8_000
    videos_per_step: int = 32
    video_place: str = "before_rewards"


RECIPE = SlotScorerRecipe()


def overall(table: torch.Tensor, prompts: list[str]) -> torch.Tensor:
    """[B] share of each prompt's slot checks that the evaluator passes, from a verdict table [B, K, C]."""
    colours = [[COLOURS.index(c) for c in parse_slot_prompt(p)[0]] for p in prompts]
    return torch.tensor([float(table[i, range(len(DEFAULT_SLOTS)), cs].float().mean()) for i, cs in enumerate(colours)])


def misprompted(table: torch.Tensor, rng: random.Random) -> list[str]:
    """Per rendered video a prompt naming the colour it shows in each slot, except in 0-4 slots (uniform) where
    it names another colour."""
    out = []
    for row in table:
        seen = [int(r.nonzero()[0, 0]) if bool(r.any()) else rng.randrange(len(COLOURS)) for r in row]
        wrong = set(rng.sample(range(len(DEFAULT_SLOTS)), rng.randint(0, len(DEFAULT_SLOTS))))
        names = [COLOURS[rng.choice([c for c in range(len(COLOURS)) if c != s])] if k in wrong else COLOURS[s]
                 for k, s in enumerate(seen)]
        out.append(slot_prompt(tuple(names), DEFAULT_SLOTS))
    return out


def write_layout(folder: Path, critic_head: torch.Tensor, tokenizer, steps: int) -> None:
    """VideoReward's model_config.json and checkpoint-<steps>/ (the head; the tokenizer) beside base/."""
    config = {
        "data_config": {"max_frame_pixels": 16 * 16, "num_frames": 4, "fps": None, "eval_dim": ["VQ", "MQ", "TA"],
                        "prompt_template_type": "detailed_special", "sample_type": "uniform"},
        "model_config": {"model_name_or_path": "base", "output_dim": 1, "use_special_tokens": True,
                         "reward_token": "special", "torch_dtype": "float32"},
        "peft_lora_config": {"lora_enable": False},
    }
    (folder / "model_config.json").write_text(json.dumps(config, indent=2) + "\n")
    checkpoint = folder / f"checkpoint-{steps}"
    checkpoint.mkdir(parents=True, exist_ok=True)
    torch.save({"rm_head.weight": critic_head.detach().clone()}, checkpoint / "model.pth")
    tokenizer.save_pretrained(checkpoint / "tokenizer")


def fixed_set_mae(critic) -> float:
    """Mean absolute error of the score against the evaluator's overall on `fixed_check_set()`'s scenes with prompts
    naming a wrong colour in 0-4 slots (drawn from a fixed seed): what the shipped asset's test checks."""
    videos, _, _ = fixed_check_set()
    table = verdict_table(videos)
    prompts = misprompted(table, random.Random(12_345))
    with torch.no_grad():
        score = critic.score_pairs(videos, prompts, [SCORE] * len(prompts)).cpu()
    return round(float((score - overall(table, prompts)).abs().mean()), 4)


def _measures(critic, videos: torch.Tensor, prompts: list[str], target: torch.Tensor) -> dict:
    with torch.no_grad():
        score = critic.score_pairs(videos, prompts, [SCORE] * len(prompts)).cpu()
    corr = float(torch.corrcoef(torch.stack([score, target]))[0, 1]) if target.std() > 0 else float("nan")
    return {"validation_mae": round(float((score - target).abs().mean()), 4), "validation_correlation": round(corr, 4)}


def pretrain_slot_scorer(out_dir: Path, seed: int = 0, steps: int | None = None, progress: bool = True,
                         recipe: SlotScorerRecipe = RECIPE) -> dict:
    """Train the scalar scorer from `seed`; write it to `out_dir` (see the module docstring); return its summary."""
    clock = RunClock("toy_scorer_slots", recipe.steps, steps)
    steps = clock.steps
    out_dir = Path(out_dir)
    tokenizer = slot_tokenizer("qwen2_vl")
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    tokenizer.chat_template = chat_template("qwen2_vl", recipe.video_place)  # VideoAlign reads the tokenizer's
    model = scorer_model(recipe.size, tokenizer, seed)
    model.save_pretrained(out_dir / "base")
    slot_processor("qwen2_vl", tokenizer, recipe.video_place).save_pretrained(out_dir / "base")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + 2)
        head = torch.nn.Linear(recipe.size.hidden, 1, bias=False).weight.detach()
    write_layout(out_dir, head, tokenizer, steps)
    critic = ToyScorerSlots(path=str(out_dir))
    trained = [*critic.model.parameters(), *critic.head.parameters()]
    for p in trained:
        p.requires_grad_(True)

    rollouts = [cached_rollouts(b, recipe.rollout_prompts, recipe.group, recipe.rollout_seed, recipe.profile)
                for b in recipe.bases]
    videos = torch.cat([v for v, _ in rollouts])
    texts = [t for _, ts in rollouts for t in ts]
    targets = overall(verdict_table(videos), texts)
    val_videos, val_prompts = cached_rollouts("slots", recipe.validation_prompts, recipe.group, recipe.validation_seed,
                                              recipe.profile)
    val_target = overall(verdict_table(val_videos), list(val_prompts))
    rng, generator, excluded = random.Random(seed), torch.Generator().manual_seed(seed), eval_signatures()
    optimizer = torch.optim.AdamW(trained, lr=recipe.lr, weight_decay=recipe.weight_decay)
    best, best_step, best_state, history, drawn = float("inf"), 0, None, [], 0
    bar = Progress(progress, steps, "toy_scorer_slots", "validation_mae")
    for step in range(steps):
        n_rendered = round(recipe.videos_per_step * recipe.rendered_share)
        rows = [rng.randrange(len(texts)) for _ in range(recipe.videos_per_step - n_rendered)]
        scenes = rendered(n_rendered, rng, generator, excluded)
        scene_table = verdict_table(scenes)
        scene_prompts = misprompted(scene_table, rng)
        batch = torch.cat([videos[rows], scenes])
        prompts = [texts[r] for r in rows] + scene_prompts
        target = torch.cat([targets[rows], overall(scene_table, scene_prompts)])
        drawn += n_rendered
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, recipe)
        critic.model.train()
        logit = VideoAlign.head_scores(critic, batch, prompts)[:, 2]  # the TA head before the sigmoid
        loss = F.binary_cross_entropy_with_logits(logit, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trained, recipe.grad_clip)
        optimizer.step()
        if (step + 1) % recipe.eval_every == 0 or step == steps - 1:
            critic.model.eval()
            measures = _measures(critic, val_videos, list(val_prompts), val_target)
            history.append({"step": step + 1, "loss": round(loss.item(), 4), **measures,
                            "cpu_s": clock.cpu()})
            if measures["validation_mae"] < best:
                best, best_step = measures["validation_mae"], step + 1
                best_state = ({k: v.detach().clone() for k, v in critic.model.state_dict().items()},
                              critic.head.weight.detach().clone())
        bar.tick(loss.item(), history)
    bar.close()
    critic.model.load_state_dict(best_state[0])
    critic.freeze()
    critic.model.save_pretrained(out_dir / "base")
    write_layout(out_dir, best_state[1], critic.processor.tokenizer, steps)
    summary = {**clock.record(seed, best_step),
               "parameters": sum(p.numel() for p in trained),
               "data": {"rollout_videos": int(videos.shape[0]), "rendered_videos": drawn, "bases": list(recipe.bases),
                        "validation_videos": int(val_videos.shape[0])},
               "measures": {**_measures(critic, val_videos, list(val_prompts), val_target),
                            "fixed_set_mae": fixed_set_mae(critic)},
               "recipe": asdict(recipe), "history": history}
    (out_dir / "pretrain.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary
