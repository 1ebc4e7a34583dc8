"""Training a slot-world answer-likelihood critic (rewards/toy_qwen_slots.py) from a seed: `pretrain_slot_critic`.

`pretrain_slot_critic(name, out_dir, seed, steps, progress)` builds the tiny Qwen3.5 of recipe `name`
(recipes/slot_critic_recipes.py RECIPES), trains it and writes to `out_dir` the checkpoint (config, weights,
tokenizer, processor, chat template) the registered critic `rewards.<name>` loads, and `pretrain.json`: recipe,
seed, steps, data size, world 'slots', wall and CPU seconds, the validation history and the final measures.
`tvrl-bench prepare-toy --what critic --recipe slots --critic <name>` calls it. One torch thread; the data,
initialisation and order come from the seed (and the rollouts from the recipe's noise seed).

Validation (every `eval_every` steps, the best checkpoint kept): agreement with the evaluator on the checks of
`validation_prompts` training prompts x `group` rollouts of the base 'slots' (noise seed `validation_seed`,
which neither the training data nor the critic card uses). Final measures: that agreement, accuracy on rendered
scenes (every Yes, and No questions asking a colour seen in another slot: whether the critic reads the slot),
and map locality (mean share of |d p(Yes) / d pixels| inside the asked check's slot on the validation rollouts).
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

import torch
import torch.nn.functional as F

from tvrl_bench.evaluators.critic_quality import agreement, mass_inside
from tvrl_bench.recipes.pretrain_critic import learning_rate
from tvrl_bench.recipes.slot_critic_data import (COLOURS, DEFAULT_SLOTS, base_rollouts, eval_signatures,
                                                 fixed_check_set, prompt_questions, questions, rendered, verdict_table)
from tvrl_bench.recipes.slot_critic_recipes import RECIPES, Example, ExampleSource, SlotCriticRecipe
from tvrl_bench.recipes.slot_qwen_build import answer_model, slot_processor, slot_tokenizer
from tvrl_bench.rewards.toy_qwen_slots import ToyQwenSlots, ToyQwenSlotsShortcut, ToyQwenSlotsVivid, ToyQwenSlotsWeak
from tvrl_bench.world.slots import parse_slot_prompt, slot_box

CRITICS = {cls.asset: cls for cls in (ToyQwenSlots, ToyQwenSlotsWeak, ToyQwenSlotsShortcut, ToyQwenSlotsVivid)}


@lru_cache(maxsize=8)
def cached_rollouts(base: str, prompts: int, group: int, seed: int,
                    profile: str) -> tuple[torch.Tensor, tuple[str, ...]]:
    """`base_rollouts`, sampled once per process (the three answer critics share their training rollouts)."""
    videos, texts = base_rollouts(base, prompts, group, seed, profile)
    return videos, tuple(texts)


class RunClock:
    """A run's step count (the recipe's unless given; at least 1), one torch thread, and its wall and CPU clocks."""

    def __init__(self, name: str, recipe_steps: int, steps: int | None) -> None:
        self.name = name
        self.steps = recipe_steps if steps is None else steps
        if self.steps < 1:
            raise ValueError(f"pretrain {name}: steps={self.steps}; need at least 1 step")
        torch.set_num_threads(1)
        self.start, self.start_cpu = time.time(), time.process_time()

    def cpu(self) -> float:
        return round(time.process_time() - self.start_cpu, 1)

    def record(self, seed: int, best_step: int) -> dict:
        """The head of the run's pretrain.json: critic, world, seed, steps, best step, wall and CPU seconds."""
        return {"critic": self.name, "world": "slots", "seed": seed, "steps": self.steps, "best_step": best_step,
                "time_s": round(time.time() - self.start, 1), "cpu_s": self.cpu(), "torch": torch.__version__,
                "threads": torch.get_num_threads()}


class Progress:
    """A tqdm bar over a run's steps with the loss and the last validation `figure` (silent without progress)."""

    def __init__(self, progress: bool, steps: int, name: str, figure: str) -> None:
        self.figure, self.bar = figure, None
        if progress:
            from tqdm import tqdm

            self.bar = tqdm(total=steps, desc=f"pretrain {name}", unit="step", mininterval=5.0)

    def tick(self, loss: float, history: list[dict]) -> None:
        if self.bar is not None:
            self.bar.update(1)
            last = f"{history[-1][self.figure]:.3f}" if history else "-"
            self.bar.set_postfix(loss=f"{loss:.3f}", **{self.figure: last}, refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def next_token_logits(critic, batch: list[Example]) -> torch.Tensor:
    """Logits [b, V] of the token after each example's chat text (the critic's own preprocessing and texts)."""
    videos = torch.stack([e.video for e in batch]).to(critic.device)
    texts = [critic.prompt_text("", e.question) for e in batch]
    kwargs, _ = critic.model_inputs(videos, texts)  # the answer "Yes" appended; left padding: all end together
    hidden = critic.model.model(**kwargs).last_hidden_state[:, -1 - len(critic.answer_ids)]
    return critic.model.lm_head(hidden).float()


def validate(critic, videos: torch.Tensor, prompts: list[str], table: torch.Tensor) -> float:
    """Agreement of p(Yes) > 0.5 with the evaluator on the prompts' checks of `videos`."""
    asked = prompt_questions(table, prompts)
    with torch.no_grad():
        p = critic.score_pairs(videos[[q.video for q in asked]], [""] * len(asked), [q.text() for q in asked])
    return round(agreement(p.cpu(), torch.tensor([bool(q.label) for q in asked])), 4)


def fixed_set_accuracy(critic) -> float:
    """Accuracy of p(Yes) > 0.5 on `fixed_check_set()` (what the shipped asset's test checks in seconds)."""
    videos, asked, _ = fixed_check_set()
    with torch.no_grad():
        p = critic.score_pairs(videos[[q.video for q in asked]], [""] * len(asked), [q.text() for q in asked]).cpu()
    return round(agreement(p, torch.tensor([bool(q.label) for q in asked])), 4)


def final_measures(critic, videos: torch.Tensor, prompts: list[str], table: torch.Tensor, seed: int) -> dict:
    """Validation agreement, rendered-scene accuracy (Yes, and No of a colour in another slot), map locality."""
    from tvrl_bench.training.scoring import score_videos

    rng, generator = random.Random(seed + 31), torch.Generator().manual_seed(seed + 31)
    scenes = rendered(256, rng, generator, frozenset(), intruder_p=0.0, degrade_p=0.0)
    scene_table = verdict_table(scenes)
    asked = questions(scene_table, rng, hard=1.0)
    with torch.no_grad():
        p = critic.score_pairs(scenes[[q.video for q in asked]], [""] * len(asked), [q.text() for q in asked]).cpu()
    label = torch.tensor([bool(q.label) for q in asked])
    hard = torch.tensor([not q.label and bool(scene_table[q.video, :, q.colour].any()) for q in asked])
    checks = [[f"Is the {s} object {c}?" for s, c in zip(DEFAULT_SLOTS, parse_slot_prompt(prompt)[0])]
              for prompt in prompts]
    maps = score_videos(critic, videos, prompts, checks, need_grads=True).grads  # [B, K, F, H, W]
    h, w = videos.shape[-2:]
    boxes = [[slot_box(s, h, w)] for _ in prompts for s in DEFAULT_SLOTS]
    share = mass_inside(maps.flatten(0, 1), boxes)
    return {"validation_agreement": validate(critic, videos, prompts, table),
            "fixed_set_accuracy": fixed_set_accuracy(critic),
            "rendered_yes_accuracy": round(agreement(p[label], label[label]), 4),
            "rendered_other_slot_no_accuracy": round(agreement(p[hard], label[hard]), 4),
            "map_locality": round(float(share.nanmean()), 4)}


def pretrain_slot_critic(name: str, out_dir: Path, seed: int = 0, steps: int | None = None,
                         progress: bool = True, recipe: SlotCriticRecipe | None = None) -> dict:
    """Train slot critic `name` (a key of RECIPES) from `seed`; write it to `out_dir`; return its summary.
    `recipe` replaces the named recipe (a smaller one for a smoke test)."""
    if name not in RECIPES:
        raise ValueError(f"unknown slot critic {name!r}; recipes are {', '.join(RECIPES)}")
    recipe = recipe or RECIPES[name]
    clock = RunClock(name, recipe.steps, steps)
    steps = clock.steps
    out_dir = Path(out_dir)
    tokenizer = slot_tokenizer("qwen3_5")
    processor = slot_processor("qwen3_5", tokenizer)
    model = answer_model(recipe.size, tokenizer, seed)
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed + 1)
        model.model.visual.pos_embed.weight.normal_(0.0, recipe.position_std)
    model.save_pretrained(out_dir)
    processor.save_pretrained(out_dir)
    critic = CRITICS[name](path=str(out_dir))
    for p in critic.model.parameters():
        p.requires_grad_(True)

    rollouts = torch.cat([cached_rollouts(b, recipe.rollout_prompts, recipe.group, recipe.rollout_seed,
                                          recipe.profile)[0] for b in recipe.bases])
    val_videos, val_prompts = cached_rollouts("slots", recipe.validation_prompts, recipe.group, recipe.validation_seed,
                                              recipe.profile)
    val_table = verdict_table(val_videos)
    source = ExampleSource(rollouts, recipe, seed, eval_signatures())
    token = {w: critic.processor.tokenizer.convert_tokens_to_ids(w) for w in ("Yes", "No", *COLOURS)}
    optimizer = torch.optim.AdamW(critic.model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    best, best_step, best_state, history = -1.0, 0, None, []
    bar = Progress(progress, steps, name, "validation_agreement")
    for step in range(steps):
        critic.model.train()
        batch = source.step()
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, recipe)
        loss = F.cross_entropy(next_token_logits(critic, batch), torch.tensor([token[e.target] for e in batch]))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(critic.model.parameters(), recipe.grad_clip)
        optimizer.step()
        if (step + 1) % recipe.eval_every == 0 or step == steps - 1:
            critic.model.eval()
            score = validate(critic, val_videos, list(val_prompts), val_table)
            history.append({"step": step + 1, "loss": round(loss.item(), 4), "validation_agreement": score,
                            "cpu_s": clock.cpu()})
            if score > best:
                best, best_step = score, step + 1
                best_state = {k: v.detach().clone() for k, v in critic.model.state_dict().items()}
        bar.tick(loss.item(), history)
    bar.close()
    critic.model.load_state_dict(best_state)
    critic.freeze()
    critic.model.save_pretrained(out_dir)
    measures = final_measures(critic, val_videos, list(val_prompts), val_table, seed)
    summary = {**clock.record(seed, best_step),
               "parameters": sum(p.numel() for p in critic.model.parameters()),
               "data": {**source.drawn, "pool": recipe.label_pool, "bases": list(recipe.bases),
                        "validation_videos": int(val_videos.shape[0])},
               "measures": measures, "recipe": asdict(recipe), "history": history}
    (out_dir / "pretrain.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


