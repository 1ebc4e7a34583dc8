"""Pretraining the learned toy critic (`rewards.toy_learned`): yes/no answers to toy checks, from a seed.

`pretrain_critic(out_dir, seed, steps, progress)` trains `ToyCriticNet` on (video, question, yes/no) examples and
writes `config.json`, `model.safetensors` (the best checkpoint by validation accuracy) and `pretrain.json`
(seed, steps, time, validation accuracy per check kind, the grounding figure). `tvrl-bench prepare-toy --what
critic` calls it. One torch thread; with a fixed step count the result is reproducible from the seed.

The recipe (`CriticRecipe`; TOYWORLD.md "Critics" has the measurements behind it):
- Data: every step draws `videos_per_step` fresh scenes with `training_batch` (the default `datasets.toy` eval
  scenes excluded) and `questions_per_video` questions per video. Each question is a Yes (one of the scene's
  `checks_for`) or a No (one of its `negative_checks`) with probability 1/2, so every kind is balanced. Half of
  the No object and motion questions are near misses (the colour of a sprite that is there with the other
  shape; the right sprite with another motion), which is what makes the critic look at shape and motion.
- Curriculum (`CriticRecipe.curriculum`): colour questions alone for the first 5% of the steps, then object,
  colour, shape and motion, and from 40% the background (and count, where the difficulty has it). Measured:
  with background questions from the start the easy question captured the question encoder and existence
  stayed at chance (TOYWORLD.md); without the colour-only warm-up the mixed kinds sat at chance for hundreds of
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
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import torch
import torch.nn.functional as F

from tvrl_bench.rewards.toy_critic_net import CriticConfig, ToyCriticNet
from tvrl_bench.world.checks import CheckSpec, checks_for, negative_checks, parse_check
from tvrl_bench.world.datasets import signatures, toy_prompt_set, training_batch
from tvrl_bench.world.difficulty import DEFAULT, Difficulty
from tvrl_bench.world.render import render_batch, sprite_masks
from tvrl_bench.world.scene import Scene

DEFAULT_STEPS = 3000


@dataclass(frozen=True)
class CriticRecipe:
    """Hyperparameters of critic pretraining (written to pretrain.json)."""

    videos_per_step: int = 16
    questions_per_video: int = 4
    lr: float = 1e-3
    weight_decay: float = 1e-4
    warmup_steps: int = 100
    final_lr_fraction: float = 0.1
    grad_clip: float = 1.0
    # (fraction of the steps, kinds asked from then on); count joins the last stage where the difficulty has it.
    curriculum: tuple[tuple[float, tuple[str, ...]], ...] = (
        (0.0, ("colour",)),
        (0.05, ("object", "colour", "shape", "motion")),
        (0.4, ("object", "colour", "shape", "motion", "background")),
    )
    kind_weights: tuple[tuple[str, float], ...] = (
        ("object", 2.0), ("colour", 1.0), ("shape", 1.0), ("motion", 2.0), ("background", 1.0), ("count", 1.0),
    )
    near_miss: float = 0.5
    augment_p: float = 0.3
    eval_every: int = 250
    validation_videos: int = 128


def default_eval_signatures() -> frozenset[tuple]:
    """Scene signatures of the default `datasets.toy` eval prompts: never trained on, never validated on."""
    return signatures(toy_prompt_set(n_train=0).eval)


@lru_cache(maxsize=8192)
def _spec(text: str) -> CheckSpec:
    return parse_check(text)


def _near_miss(spec: CheckSpec, scene: Scene) -> bool:
    """A No check about a sprite that is in the scene (its colour), wrong only in shape or motion."""
    sprite = next((s for s in scene.sprites if s.colour == spec.colour), None)
    if sprite is None:
        return False
    if spec.kind == "motion":
        return spec.shape == sprite.shape
    return spec.kind == "object"


def question_examples(
    scenes: list[Scene], kinds: tuple[str, ...], per_video: int, rng: random.Random, difficulty: Difficulty,
    recipe: CriticRecipe,
) -> tuple[list[int], list[str], list[int]]:
    """(video index, question, label 1 = Yes) triples: `per_video` per scene, kinds drawn by weight, Yes/No 1/2."""
    weights = dict(recipe.kind_weights)
    index, questions, labels = [], [], []
    for i, scene in enumerate(scenes):
        yes = [_spec(t) for t in checks_for(scene, difficulty.count_checks)]
        no = [_spec(t) for t in negative_checks(scene, difficulty)]
        for _ in range(per_video):
            for _attempt in range(20):
                kind = rng.choices(kinds, weights=[weights.get(k, 1.0) for k in kinds])[0]
                label = rng.random() < 0.5
                pool = [s for s in (yes if label else no) if s.kind == kind]
                if not label and kind in ("object", "motion"):
                    near = [s for s in pool if _near_miss(s, scene)]
                    if near and rng.random() < recipe.near_miss:
                        pool = near
                if pool:
                    break
            if not pool:
                raise ValueError(
                    f"pretrain_critic: no {'Yes' if label else 'No'} check of kinds {kinds} for scene {scene}; "
                    f"difficulty '{difficulty.name}' has too few colours, shapes or backgrounds to ask balanced questions"
                )
            index.append(i)
            questions.append(rng.choice(pool).text())
            labels.append(int(label))
    return index, questions, labels


def validation_examples(
    scenes: list[Scene], kinds: tuple[str, ...], rng: random.Random, difficulty: Difficulty
) -> tuple[list[int], list[str], list[int], list[str]]:
    """Per scene and kind one Yes and one No question (where the scene has one): (index, question, label, kind)."""
    index, questions, labels, of_kind = [], [], [], []
    for i, scene in enumerate(scenes):
        yes = [_spec(t) for t in checks_for(scene, difficulty.count_checks)]
        no = [_spec(t) for t in negative_checks(scene, difficulty)]
        for kind in kinds:
            for label, pool in ((1, yes), (0, no)):
                pool = [s for s in pool if s.kind == kind]
                if pool:
                    index.append(i)
                    questions.append(rng.choice(pool).text())
                    labels.append(label)
                    of_kind.append(kind)
    return index, questions, labels, of_kind


def degrade(videos: torch.Tensor, p: float, generator: torch.Generator) -> torch.Tensor:
    """videos[B, F, 3, H, W] in [0, 1] with, each with probability p per video: a random colour transform, a fade
    towards the frame's median colour, a 3 x 3 Gaussian blur (sigma 0.3-0.9 px), pixel noise (std up to 0.08)."""
    b, f, c, h, w = videos.shape

    def chosen() -> torch.Tensor:
        return (torch.rand(b, generator=generator) < p).float()[:, None, None, None, None]

    x = videos
    colour = torch.eye(3) + 0.07 * torch.randn(b, 3, 3, generator=generator)
    shift = 0.05 * torch.randn(b, 3, generator=generator)
    mixed = torch.einsum("bij,bfjhw->bfihw", colour, x) + shift[:, None, :, None, None]
    use = chosen()
    x = use * mixed + (1 - use) * x

    median = x.flatten(-2).median(-1).values[..., None, None]  # [B, F, 3, 1, 1]
    keep = 0.6 + 0.4 * torch.rand(b, generator=generator)[:, None, None, None, None]
    use = chosen()
    x = use * (median + keep * (x - median)) + (1 - use) * x

    sigma = 0.3 + 0.6 * torch.rand(b, generator=generator)
    taps = torch.exp(-torch.tensor([-1.0, 0.0, 1.0])[None] ** 2 / (2 * sigma[:, None] ** 2))
    taps = taps / taps.sum(1, keepdim=True)  # [B, 3]
    kernel = (taps[:, :, None] * taps[:, None, :]).repeat_interleave(f * c, 0)[:, None]  # [B*F*3, 1, 3, 3]
    padded = F.pad(x.reshape(1, b * f * c, h, w), (1, 1, 1, 1), mode="replicate")
    blurred = F.conv2d(padded, kernel, groups=b * f * c).reshape(b, f, c, h, w)
    use = chosen()
    x = use * blurred + (1 - use) * x

    std = 0.08 * torch.rand(b, generator=generator)[:, None, None, None, None]
    use = chosen()
    x = x + use * std * torch.randn(x.shape, generator=generator)
    return x.clamp(0, 1)


def curriculum_kinds(step: int, steps: int, recipe: CriticRecipe, difficulty: Difficulty) -> tuple[str, ...]:
    """The check kinds asked at `step` of `steps`: the last curriculum stage whose start fraction has passed."""
    kinds = recipe.curriculum[0][1]
    for start, stage in recipe.curriculum:
        if step >= int(start * steps):
            kinds = stage
    if difficulty.count_checks and kinds == recipe.curriculum[-1][1]:
        kinds = kinds + ("count",)
    return kinds


def full_curriculum_step(steps: int, recipe: CriticRecipe) -> int:
    """The first step of the last curriculum stage (where every kind is asked)."""
    return int(recipe.curriculum[-1][0] * steps)


@dataclass(frozen=True)
class StepBatch:
    """One training step's data: scenes, (augmented) videos[B, F, 3, H, W], and per question its video index,
    text, label (1 = Yes) and the kinds the curriculum allowed."""

    scenes: tuple[Scene, ...]
    videos: torch.Tensor
    index: list[int]
    questions: list[str]
    labels: list[int]
    kinds: tuple[str, ...]


def step_batch(
    step: int, steps: int, recipe: CriticRecipe, difficulty: Difficulty, excluded: frozenset[tuple],
    data_rng: random.Random, augment_rng: torch.Generator,
) -> StepBatch:
    """Fresh scenes (none in `excluded`), their questions by the curriculum, and the augmented videos."""
    kinds = curriculum_kinds(step, steps, recipe, difficulty)
    batch = training_batch(recipe.videos_per_step, data_rng, difficulty, exclude=excluded)
    index, questions, labels = question_examples(
        list(batch.scenes), kinds, recipe.questions_per_video, data_rng, difficulty, recipe
    )
    videos = degrade(batch.videos, recipe.augment_p, augment_rng)
    return StepBatch(batch.scenes, videos, index, questions, labels, kinds)


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
