"""The slot world's answer-likelihood critics: the paper's critic class (`rewards.qwen_vl`) on tiny trained Qwen3.5s.

Each is `QwenVLAnswerLikelihood` itself (Qwen video preprocessing in differentiable torch, the chat template,
teacher-forced p("Yes"), pixel or patch gradient maps) loading a `Qwen3_5ForConditionalGeneration` that
`tvrl_bench.recipes.pretrain_slot_critic` trained from scratch on slot-world questions and answers, shipped in
tvrl_bench/assets/<name>/. They differ only in their training, so each has a known quality (docs/toy/critics.md):

- `rewards.toy_qwen_slots`: trained on the shipped slot bases' rollouts and rendered scenes, labelled by the exact
  evaluator, with No questions that ask a colour present in another slot (the toy's best learned critic);
- `rewards.toy_qwen_slots_weak`: the same recipe on far fewer labels (a small fixed pool);
- `rewards.toy_qwen_slots_shortcut`: the same class trained where the label coincides with a shortcut (the
  asked colour anywhere in the frame), so it agrees with the evaluator on the base's checks but rewards what RL
  can push without putting the colour in its slot;
- `rewards.toy_qwen_slots_vivid`: the same class trained on labels of a vivid-biased labeler (asked red, it pays
  yellow and magenta more than red: tvrl_bench/world/vivid.py), a critic that *prefers* a wrong colour the base
  already draws, so RL can exploit it.

Scores: p(Yes) (`score = 'prob'`, the default: score_space 'prob', in [0, 1]; 'log_prob' gives log p(Yes)). The
probability is the softmax over the whole vocabulary at the answer position; trained on Yes / No targets, p(Yes) +
p(No) is about 1, so p(Yes) reads directly as the critic's yes-probability. They answer only the default slot
world's checks ("Is the top left object red?", `worlds = ('slots',)`): any other check, or a missing or corrupt
asset, is one ConfigError line naming the critic, the asset and the fix.
"""

from __future__ import annotations

from tvrl_bench.config.rules import Checks, one_of
from tvrl_bench.registry import register
from tvrl_bench.rewards.qwen.answer_likelihood import QwenVLAnswerLikelihood
from tvrl_bench.rewards.qwen.inputs import QwenInputs
from tvrl_bench.rewards.toy_slot_assets import asset_folder, load_asset, read_record, slot_spec

QUESTION_TEMPLATE = "{question}"  # what the critics were trained with: the check alone
REQUIRED = ("config.json", "model.safetensors", "tokenizer.json", "processor_config.json", "chat_template.jinja")


def toy_inputs(batch_size: int = 256, min_pixels: int | None = None) -> QwenInputs:
    """The settings the toy critics run with: float32 weights on the CPU (or the GPU where there is one), up to
    `batch_size` pairs per forward, no recomputation (the models are small); `min_pixels` per frame (None: the
    checkpoint's rule)."""
    return QwenInputs(dtype="float32", device="auto", batch_size=batch_size, recompute_in_backward=False,
                      min_pixels=min_pixels)


class ToyQwenSlotCritic(QwenVLAnswerLikelihood):
    """A tiny trained Qwen3.5 answering slot checks: p(Yes | video, check). Subclasses name their asset."""

    asset = ""
    worlds = ("slots",)
    fps = None
    CHECKS = Checks(score=one_of("prob", "log_prob"))

    def __init__(self, path: str | None = None, score: str = "prob", inputs: QwenInputs | None = None) -> None:
        """path: a checkpoint folder written by `tvrl-bench prepare-toy --what critic --recipe slots` (None: the
        shipped tvrl_bench/assets/<asset>/). score: 'prob' (p(Yes), the default) or 'log_prob'. inputs: the Qwen
        input settings (None: float32, 256 pairs per forward, `toy_inputs`)."""
        folder = asset_folder(self.asset, path, REQUIRED)
        load_asset(self.asset, folder, lambda: super(ToyQwenSlotCritic, self).__init__(
            str(folder), answer="Yes", score_type=score, question_template=QUESTION_TEMPLATE,
            inputs=inputs if inputs is not None else toy_inputs()))
        self.path = folder
        self.record = read_record(folder)

    def score_pairs(self, videos, prompts, questions):
        """p(Yes)[P] (or log p(Yes)) for videos[P, F, 3, H, W] in [0, 1]; ConfigError for a non-slot check."""
        for question in dict.fromkeys(questions):
            slot_spec(self.asset, question)
        return super().score_pairs(videos, prompts, questions)

    def score_with_maps(self, video, prompts, checks, space):
        for question in dict.fromkeys(q for qs in self.questions(checks) for q in qs):
            slot_spec(self.asset, question)
        return super().score_with_maps(video, prompts, checks, space)


@register("rewards", "toy_qwen_slots")
class ToyQwenSlots(ToyQwenSlotCritic):
    """The slot world's answer-likelihood critic (tiny trained Qwen3.5): p(Yes) per slot check."""

    asset = "toy_qwen_slots"


@register("rewards", "toy_qwen_slots_weak")
class ToyQwenSlotsWeak(ToyQwenSlotCritic):
    """The weak answer-likelihood critic: the same class trained on far fewer labels."""

    asset = "toy_qwen_slots_weak"


@register("rewards", "toy_qwen_slots_shortcut")
class ToyQwenSlotsShortcut(ToyQwenSlotCritic):
    """The shortcut critic: the same class trained where the asked colour anywhere in the frame gives the label."""

    asset = "toy_qwen_slots_shortcut"


@register("rewards", "toy_qwen_slots_vivid")
class ToyQwenSlotsVivid(ToyQwenSlotCritic):
    """The vivid-biased critic: the same class trained where a two-channel colour sharing the asked one-channel
    colour's channel is paid more than the asked colour (recipe `vivid_bias`)."""

    asset = "toy_qwen_slots_vivid"
