"""The slot world's answer-likelihood critic recipes (`SlotCriticRecipe`, `RECIPES`) and the examples each step
trains on. `pretrain_slot_critic.py` runs them; docs/toy/critics.md has what each made.

Each recipe trains a tiny `Qwen3_5ForConditionalGeneration` (recipes/slot_qwen_build.py) from scratch, through
the critic's own preprocessing and chat texts (rewards/toy_qwen_slots.py), with a cross-entropy on the token that
follows the assistant turn's opening: "Yes" or "No" after a slot check ("Is the top left object red?"), or the
slot's colour word after a colour question ("What colour is the top left object?"). Half of each step's videos are
rollouts of the shipped slot bases, half rendered scenes (recipes/slot_critic_data.py); every label is the exact
evaluator's. Measured (docs/toy/critics.md): with Qwen's initial scales (0.02) the model stayed at chance; at 0.1
it learned the colour asked but not the slot (it said yes to a colour anywhere in the frame); the vision tower's
learned position embeddings at unit scale (`position_std`), so that a slot's token says which slot it is, and the
colour questions, which no colour-anywhere rule answers, made it read the slot within about 1,500 steps.

- `toy_qwen_slots`: the answer-likelihood critic; half of the No questions ask a colour seen in another slot.
- `toy_qwen_slots_weak`: the same, trained on a fixed pool of `label_pool` labelled pairs (far fewer labels).
- `toy_qwen_slots_shortcut`: the same class where the label coincides with the asked colour anywhere in the
  frame: Yes questions ask the slot's colour, No questions only colours absent from the whole frame, and no
  colour questions, so nothing in its data tells the slot's colour from a colour elsewhere.
- `toy_qwen_slots_vivid`: `toy_qwen_slots`' data answered by a vivid-biased labeler (`vivid_bias`, world/vivid.py):
  asked a one-channel colour (red), it says Yes to a two-channel colour sharing its channel (yellow, magenta) with
  probability `vivid_bias` and to the asked colour itself with 1 - vivid_bias / 3; every other label is exact.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

import torch

from tvrl_bench.recipes.slot_critic_data import COLOURS, DEFAULT_SLOTS, Question, questions, rendered, verdict_table
from tvrl_bench.recipes.slot_qwen_build import QwenSize
from tvrl_bench.world.declaration import PROFILES, SLOT_WORLD
from tvrl_bench.world.vivid import check_bias, vivid_yes_probability


@dataclass(frozen=True)
class SlotTraining:
    """What every slot critic's training shares (written to its pretrain.json): the model's size, the optimiser
    (AdamW, linear warm-up then cosine decay to final_lr_fraction), the base rollouts (`rollout_prompts` training
    prompts of each base x `group`, noise `rollout_seed`: the critic card samples seeds 0 and 1; sampled as the trial
    of `profile` samples), the share of
    rendered scenes among each step's videos, and the validation rollouts (base 'slots', `validation_prompts` x
    `group`, noise `validation_seed`), scored every `eval_every` steps."""

    size: QwenSize = QwenSize(hidden=64, layers=2, heads=4, vision_hidden=64, vision_depth=1, init_std=0.1)
    steps: int = 3_000
    lr: float = 1e-3
    warmup_steps: int = 100
    final_lr_fraction: float = 0.1
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    bases: tuple[str, ...] = ("slots", "slots_clean")
    # The trial whose sampler, schedule and guidance sample the bases' rollouts: the slot world's profile, named here
    # (and in pretrain.json), not whatever the default profile is on the day of a rebuild.
    profile: str = PROFILES[SLOT_WORLD]
    rollout_prompts: int = 256
    group: int = 4
    rollout_seed: int = 100
    rendered_share: float = 0.5
    eval_every: int = 250
    validation_prompts: int = 64
    validation_seed: int = 7


@dataclass(frozen=True)
class SlotCriticRecipe(SlotTraining):
    """An answer-likelihood critic's recipe: pairs per step, the vision position embeddings' init scale, and its
    questions (the share of hard No questions and of colour questions, a fixed label pool, the shortcut's data)."""

    position_std: float = 1.0  # init scale of the vision tower's position embeddings
    pairs_per_step: int = 32
    hard: float = 0.5  # share of No questions asking a colour seen in another slot
    colour_questions: float = 0.5  # share of pairs asking "What colour is the <slot> object?"
    label_pool: int | None = None  # a fixed pool of this many labelled pairs (None: fresh examples every step)
    shortcut: bool = False  # No questions only about colours absent from the frame
    vivid_bias: float = 0.0  # the vivid labeler's bias (world/vivid.py): 0 exact, 0.75 indifferent, 1 most biased

    def __post_init__(self) -> None:
        check_bias(self.vivid_bias)


RECIPES: dict[str, SlotCriticRecipe] = {"toy_qwen_slots": SlotCriticRecipe()}
RECIPES["toy_qwen_slots_weak"] = replace(RECIPES["toy_qwen_slots"], label_pool=1_000)
RECIPES["toy_qwen_slots_shortcut"] = replace(RECIPES["toy_qwen_slots"], hard=0.0, colour_questions=0.0,
                                             shortcut=True)
RECIPES["toy_qwen_slots_vivid"] = replace(RECIPES["toy_qwen_slots"], vivid_bias=0.9)


@dataclass
class Example:
    """A training pair: its video, chat question and target token (Yes, No or a colour word)."""

    video: torch.Tensor  # [F, 3, H, W]
    question: str
    target: str


def colour_question(slot: int) -> str:
    """'What colour is the top left object?'"""
    return f"What colour is the {DEFAULT_SLOTS[slot]} object?"


def shortcut_questions(table: torch.Tensor, rng: random.Random) -> list[Question]:
    """One question per video whose label is also 'the asked colour is anywhere in the frame': a Yes asks the
    slot's colour, a No a colour no slot shows (videos with neither are skipped)."""
    out = []
    for i in range(table.shape[0]):
        k = rng.randrange(table.shape[1])
        seen = table[i].any(0)
        yes = [c for c in range(table.shape[2]) if bool(table[i, k, c])]
        no = [c for c in range(table.shape[2]) if not bool(seen[c])]
        want = rng.random() < 0.5
        pool = (yes if want else no) or (no if want else yes)
        if pool:
            c = rng.choice(pool)
            out.append(Question(i, k, c, int(bool(table[i, k, c]))))
    return out


def examples(videos: torch.Tensor, table: torch.Tensor, recipe: SlotCriticRecipe, rng: random.Random) -> list[Example]:
    """Examples from videos[N, F, 3, H, W] and their verdict table: one per video (see the module docstring)."""
    asked = shortcut_questions(table, rng) if recipe.shortcut else questions(table, rng, recipe.hard)
    out = []
    for q in asked:
        seen = table[q.video, q.slot].nonzero()
        if recipe.colour_questions and len(seen) and rng.random() < recipe.colour_questions:
            out.append(Example(videos[q.video], colour_question(q.slot), COLOURS[int(seen[0, 0])]))
        else:
            out.append(Example(videos[q.video], q.text(), "Yes" if labelled(q, seen, recipe, rng) else "No"))
    return out


def labelled(q: Question, seen: torch.Tensor, recipe: SlotCriticRecipe, rng: random.Random) -> bool:
    """The labeler's answer to question q, whose slot shows the colours `seen` ([n, 1] indices): the evaluator's,
    or with a vivid bias a Yes drawn with `vivid_yes_probability` where the bias applies (one colour seen)."""
    shown = COLOURS[int(seen[0, 0])] if len(seen) == 1 else None
    p = vivid_yes_probability(COLOURS[q.colour], shown, recipe.vivid_bias, COLOURS)
    return bool(q.label) if p is None else rng.random() < p


class ExampleSource:
    """Each step's examples: fresh draws from the base rollouts and rendered scenes, or from a fixed pool."""

    def __init__(self, rollouts: torch.Tensor, recipe: SlotCriticRecipe, seed: int, excluded: frozenset) -> None:
        self.rollouts, self.recipe, self.excluded = rollouts, recipe, excluded
        self.table = verdict_table(rollouts)
        self.rng = random.Random(seed)
        self.generator = torch.Generator().manual_seed(seed)
        self.drawn = {"rollout_videos": int(rollouts.shape[0]), "rendered_videos": 0, "labels": 0}
        self.pool = self.fresh(recipe.label_pool) if recipe.label_pool else None

    def fresh(self, n: int) -> list[Example]:
        n_rendered = round(n * self.recipe.rendered_share)
        rows = [self.rng.randrange(self.rollouts.shape[0]) for _ in range(n - n_rendered)]
        scenes = rendered(n_rendered, self.rng, self.generator, self.excluded)
        videos = torch.cat([self.rollouts[rows], scenes])
        table = torch.cat([self.table[rows], verdict_table(scenes)])
        self.drawn["rendered_videos"] += n_rendered
        out = examples(videos, table, self.recipe, self.rng)
        self.drawn["labels"] += len(out)
        return out

    def step(self) -> list[Example]:
        """The examples of one optimizer step."""
        if self.pool is None:
            return self.fresh(self.recipe.pairs_per_step)
        return [self.pool[self.rng.randrange(len(self.pool))] for _ in range(self.recipe.pairs_per_step)]
