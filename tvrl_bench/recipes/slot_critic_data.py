"""Training data of the slot world's learned critics: videos, every slot x colour verdict of the exact evaluator,
and balanced yes/no questions drawn from them.

- `verdict_table(videos)`: bool[B, K, C], the exact evaluator's answer (evaluators/toy.py, slot checks) to "Is the
  <slot k> object <colour c>?" for every slot and colour of the default slot world; every label comes from it.
- `base_rollouts(base, prompts, group, seed, profile)`: videos of a shipped slot base (`policies.toy` base 'slots'
  or 'slots_clean') sampled exactly as the trial of `profile` samples them (its SDE sampler, schedule, CFG; the
  recipe names the profile, `SlotTraining.profile`, and its pretrain.json records it) for its first `prompts`
  training prompts, `group` rollouts each, from noise `seed`.
- `rendered(n, rng, generator)`: ground truth of n fresh scenes (the default eval scenes excluded), a share of
  them degraded (colour transform, fade, blur, noise: recipes/critic_data.py `degrade`) or with a rectangle of
  another colour painted into a slot (what an imperfect policy draws); labels are the evaluator's on the result.
- `questions(table, rng, hard)`: per video one (slot, colour, label) question, Yes or No with probability 1/2;
  a share `hard` of the No questions asks a colour that is in another slot (what makes a critic read the slot).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from tvrl_bench.datasets.toy_slots import slot_prompt_set, slot_signatures, slot_training_batch
from tvrl_bench.evaluators.toy import ToyEvaluator
from tvrl_bench.recipes.critic_data import degrade
from tvrl_bench.world.checks import CheckSpec
from tvrl_bench.world.palette import rgb
from tvrl_bench.world.slots import SLOTS, slot_box

COLOURS = SLOTS.colours
DEFAULT_SLOTS = SLOTS.slots  # the default slot world's slot names row by row (world/vocabulary.py: SLOT_NAMES by grid)


@dataclass(frozen=True)
class Question:
    """One (video, check) example: video row, slot index, colour index, label (1 = Yes)."""

    video: int
    slot: int
    colour: int
    label: int

    def text(self) -> str:
        """'Is the top left object red?'"""
        return CheckSpec("slot", colour=COLOURS[self.colour], slot=DEFAULT_SLOTS[self.slot]).text()


def verdict_table(videos: torch.Tensor, evaluator: ToyEvaluator | None = None) -> torch.Tensor:
    """bool[B, K, C]: the exact evaluator's verdict on every slot k and colour c of videos[B, F, 3, H, W]."""
    evaluator = evaluator or ToyEvaluator()
    specs = [CheckSpec("slot", colour=c, slot=s) for s in DEFAULT_SLOTS for c in COLOURS]
    array = videos.detach().to("cpu", torch.float32).numpy()
    rows = [evaluator.verdicts(video, specs) for video in array]
    return torch.tensor(rows, dtype=torch.bool).reshape(len(rows), len(DEFAULT_SLOTS), len(COLOURS))


def prompt_colours(table: torch.Tensor) -> list[int]:
    """Per (video, slot) row of a verdict table the colour the evaluator sees there, or -1 (none passes)."""
    flat = table.reshape(-1, table.shape[-1])
    return [int(row.nonzero()[0, 0]) if bool(row.any()) else -1 for row in flat]


def base_rollouts(base: str, prompts: int, group: int, seed: int, profile: str,
                  micro_batch: int = 32) -> tuple[torch.Tensor, list[str]]:
    """(videos[prompts * group, F, 3, H, W], their prompts): the shipped base `base` in the trial of `profile` (the
    recipe names it), sampled exactly as that trial's training step samples (`BuiltTrial.sample`), for the first
    `prompts` training prompts of its dataset, `micro_batch` prompts' rollouts at a time, from rollout noise `seed`."""
    from tvrl_bench.training.trial.built import build_trial

    trial = build_trial([profile], [f"policies.toy.base = '{base}'"])
    items = list(trial.dataset.train)[:prompts]
    texts = [item.prompt for item in items for _ in range(group)]
    videos = [trial.sample(texts[start : start + micro_batch], trial.noise("critic-data", base, start, seed=seed),
                           group=group).videos
              for start in range(0, len(texts), micro_batch)]
    return torch.cat(videos).float().clamp(0, 1), texts


def eval_signatures() -> frozenset:
    """The default `datasets.toy_slots` eval colourings: kept out of the rendered training scenes."""
    return slot_signatures(slot_prompt_set(n_train=0).eval)


def paint_intruders(videos: torch.Tensor, p: float, rng: random.Random) -> torch.Tensor:
    """videos[B, F, 3, H, W] with, per video with probability p, a rectangle (1-5 px a side) of a random sprite
    colour painted at a random place of a random slot, in every frame (an imperfect policy's mixed slot)."""
    out = videos.clone()
    height, width = videos.shape[-2:]
    for b in range(videos.shape[0]):
        if rng.random() >= p:
            continue
        x0, y0, x1, y1 = slot_box(rng.choice(DEFAULT_SLOTS), height, width)
        w, h = rng.randint(1, 5), rng.randint(1, 5)
        x, y = rng.randint(x0, x1 - w), rng.randint(y0, y1 - h)
        out[b, :, :, y : y + h, x : x + w] = torch.tensor(rgb(rng.choice(COLOURS)))[:, None, None]
    return out


def rendered(n: int, rng: random.Random, generator: torch.Generator, excluded: frozenset,
             intruder_p: float = 0.3, degrade_p: float = 0.15) -> torch.Tensor:
    """videos[n, F, 3, H, W]: ground truth of n fresh scenes (colourings in `excluded` redrawn), with intruders
    (`paint_intruders`) and degradations (`degrade`, each of its four with probability degrade_p)."""
    videos = slot_training_batch(n, rng, SLOTS, exclude=excluded).videos
    return degrade(paint_intruders(videos, intruder_p, rng), degrade_p, generator)


def questions(table: torch.Tensor, rng: random.Random, hard: float, rows: list[int] | None = None) -> list[Question]:
    """One question per video row (`rows`, default all): a random slot, Yes or No with probability 1/2 (the
    other when the slot has no colour of that answer); a No asks, with probability `hard`, a colour that the
    evaluator sees in another slot where there is one."""
    out = []
    for position, i in enumerate(range(table.shape[0]) if rows is None else rows):
        k = rng.randrange(table.shape[1])
        verdicts = table[i, k]
        want = rng.random() < 0.5
        pool = [c for c in range(table.shape[2]) if bool(verdicts[c]) == want]
        if not pool:
            want = not want
            pool = [c for c in range(table.shape[2]) if bool(verdicts[c]) == want]
        if not want and rng.random() < hard:
            elsewhere = [c for c in pool if bool(table[i, :, c].any())]
            pool = elsewhere or pool
        c = rng.choice(pool)
        out.append(Question(position, k, c, int(verdicts[c])))
    return out


def prompt_questions(table: torch.Tensor, prompts: list[str]) -> list[Question]:
    """The checks a trial asks (each prompt's colour per slot), with the evaluator's labels: what the critic is
    scored on during RL."""
    from tvrl_bench.world.slots import parse_slot_prompt

    out = []
    for i, prompt in enumerate(prompts):
        colours, _ = parse_slot_prompt(prompt)
        for k, colour in enumerate(colours):
            c = COLOURS.index(colour)
            out.append(Question(i, k, c, int(table[i, k, c])))
    return out


def fixed_check_set(n: int = 48, seed: int = 12_345) -> tuple[torch.Tensor, list[Question], list[str]]:
    """A small fixed set for a shipped critic's quick check: (videos[n, F, 3, H, W] of rendered scenes; two
    questions per video about one slot: its colour (Yes) and a colour seen in another slot, or else any other
    colour (No); each video's prompt). Its figures are recorded in the critic's pretrain.json."""
    from tvrl_bench.world.slots import slot_prompt

    rng = random.Random(seed)
    batch = slot_training_batch(n, rng, SLOTS)
    table = verdict_table(batch.videos)
    asked = []
    for i in range(n):
        k = rng.randrange(len(DEFAULT_SLOTS))
        absent = [c for c in range(len(COLOURS)) if not bool(table[i, k, c])]
        elsewhere = [c for c in absent if bool(table[i, :, c].any())]
        for c in (int(table[i, k].nonzero()[0, 0]), rng.choice(elsewhere or absent)):
            asked.append(Question(i, k, c, int(table[i, k, c])))
    return batch.videos, asked, [slot_prompt(s.colours, s.slots) for s in batch.scenes]
