"""Critics that write their scores as digits (VideoScore2, UnifiedReward-2.0): teacher-forced expected scores.

The critic's published prompt asks for K scores in a fixed answer format, e.g.
`Alignment Score (1-5): X\\nPhysics Score (1-5): Y\\nStyle Score (1-5): Z`. The answer template names each score
slot (`{alignment}`, ...). Score k of a video is read where the model would write slot k's digit: the answer is
teacher-forced up to that slot and the score is the expectation of the digit under the softmax over the allowed
digit tokens (docs/method.md section 1), differentiable w.r.t. the video:

    s_k = sum_d d * softmax_d(logit[d] for d in digits)                           (score_type "expected")
    s_k = d_max * softmax_{d_max}                                                 (score_type "max_normed":
          VideoScore2's published soft score, the best digit times its renormalised probability)

With `decimal_places = n > 0` the slot is a decimal number: the integer digit's expectation plus, for each
decimal place j, 10**-j times the expectation of that decimal digit (0-9), each read after the greedy digits
before it.

Earlier slots (k' < k) must hold some digits before slot k is read. `context = "greedy"` fills them as greedy
decoding would (the argmax over the allowed digit tokens, found by extra forward passes without gradients, once
per digit); an integer `context = c` fills every earlier slot with c (no extra passes). Digits chosen greedily
are constants: gradients flow through the read positions' logits only. The sequences are planned in
rewards/qwen/teacher_forcing.py and built by `digit_sequences.DigitSequenceBuilder`; the chat texts are
`digit_prompts.DigitPrompts`, the digit logits and scores `digit_reader.DigitReader`.

Vision input, two published ways (`vision`, rewards/qwen/digit_vision.py: `VideoVision`, `ImageVision`):
- "video": qwen-vl-utils' `fetch_video` rules (`qwen_vl_utils_video.QwenVLUtilsVideo`: frames by fps or count,
  uniform indices, smart_resize with factor = patch * merge and its pixel budget), then the checkpoint's video
  processor's normalisation and patchify, one `<|video_pad|>` block (Qwen2.5-VL: `second_per_grid_ts =
  temporal_patch_size / rope_fps`, the fps the reference passes to the processor);
- "images": `num_images` frames at indices int(i * total / n) given as separate images, each resized by the
  checkpoint's image processor rule (per-image pixel budget), one `<|image_pad|>` block each.

Frame sampling, pixel budget, batching, weights and placement are the shared `rewards.qwen_inputs` settings
(rewards/qwen/inputs.py). Pairs are scored in batches of `batch_size` (padded on `padding_side`; Qwen's M-RoPE
positions come from the model's own code through `mm_token_type_ids`), each batch's differentiable forward
checkpointed when `recompute_in_backward`. The model is loaded by `qwen/loading.py` (Qwen2.5-VL, Qwen2-VL,
Qwen3-VL, Qwen3.5) and frozen.
"""

from __future__ import annotations

import torch
from torch.utils.checkpoint import checkpoint

from tvrl_bench.config.rules import Checks, Relation, Rule, Values, integer, one_of, optional, positive, template
from tvrl_bench.rewards.base import Reward
from tvrl_bench.rewards.qwen import digit_vision
from tvrl_bench.rewards.qwen.digit_prompts import DigitPrompts
from tvrl_bench.rewards.qwen.digit_reader import SCORE_TYPES, DigitReader
from tvrl_bench.rewards.qwen.digit_sequences import DigitSequenceBuilder
from tvrl_bench.rewards.qwen.digit_vision import VISION_MODES, ImageVision, VideoVision
from tvrl_bench.rewards.qwen.inputs import QwenInputs, resolve_inputs
from tvrl_bench.rewards.qwen.layout import QwenVisionTokens
from tvrl_bench.rewards.qwen.loading import load_qwen_vl
from tvrl_bench.rewards.qwen.teacher_forcing import AnswerTemplate, DigitTokens, PairSequence
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings


def _digit_range(value: object) -> bool:
    return (isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(d, int) for d in value)
            and 0 <= value[0] < value[1] <= 9)


def _context_digit(v: Values) -> str | None:
    context, (lo, hi) = v["context"], v["digits"]
    if context == "greedy" or lo <= context <= hi:
        return None
    return f"{v.binding('context')} must be 'greedy' or a digit in {lo}..{hi}, e.g. {v.name('context')} = 'greedy'"


def _one_digit_when_max_normed(v: Values) -> str | None:
    if v["score_type"] != "max_normed" or not v["decimal_places"]:
        return None
    return (f"{v.binding('score_type')} reads one digit, but {v.binding('decimal_places')}; bind "
            f"{v.name('decimal_places')} = 0")


class QwenDigitScoreCritic(Reward):
    """Base of the digit-score critics; subclasses fix the prompt, answer format and score names."""

    uses_checks = False
    component_name = "qwen_digit_scores"
    score_space = "score"

    CHECKS = Checks(
        [Relation(("context", "digits"), _context_digit),
         Relation(("score_type", "decimal_places"), _one_digit_when_max_normed)],
        prompt_template=optional(template({"prompt"}, example="'{prompt}'")),  # None: the published prompt
        digits=Rule(_digit_range, "(low, high) single digits with low < high", "(1, 5)"),
        decimal_places=integer(0, example="0", note="digits read after the leading one"),
        context=Rule(lambda v: v == "greedy" or (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 9),
                     "'greedy' or a digit of the score range", "'greedy'"),
        score_type=one_of(*SCORE_TYPES),
        vision=one_of(*VISION_MODES),
        num_images=integer(1, example="16"),
        max_total_tokens=optional(integer(1, example="128000")),
        rope_fps=optional(positive("2.0")),
    )

    def __init__(
        self,
        path: str,
        prompt_template: str,
        answer_template: str,
        score_names: tuple[str, ...],
        digits: tuple[int, int] = (1, 5),
        decimal_places: int = 0,
        context: str | int = "greedy",
        score_type: str = "expected",
        vision: str = "video",
        num_images: int = 16,
        max_total_tokens: int | None = 128000,
        count_rounding: str = "floor",
        rope_fps: float | None = 2.0,
        system_prompt: str | None = None,
        inputs: QwenInputs | None = None,
    ) -> None:
        """Subclasses document the parameters; `inputs` is as `rewards.qwen_vl`'s (fps None:
        2 fps, qwen-vl-utils' per-frame budget of 128-768 tokens; batch_size None: 1)."""
        super().__init__()
        name = f"rewards.{self.component_name}"
        self.inputs = resolve_inputs(name, inputs)
        self.score_names = tuple(score_names)
        self.template = AnswerTemplate.parse(answer_template, self.score_names, f"{name}.answer_template")
        model, processor, model_type = load_qwen_vl(path, self.inputs, param=f"{name}.path")
        self.model, self.processor, self.model_type = model, processor, model_type
        self.tokens = QwenVisionTokens.from_processor(processor)
        self.digits = DigitTokens.from_tokenizer(processor.tokenizer, digits, self.template, name)
        self.prompt_template = prompt_template
        self.system_prompt = system_prompt
        self.vision = vision
        self.video_fps = float(self.inputs.video_fps)
        self.rope_fps = rope_fps
        self.num_images = int(num_images)
        self.decimal_places = int(decimal_places)
        self.context = context
        self.score_type = score_type
        self.batch_size = self.inputs.batch(1)
        self.padding_side = self.inputs.padding_side
        self.recompute_in_backward = self.inputs.recompute_in_backward
        if vision == "video":
            self.video_settings = QwenVideoSettings.from_processor(processor.video_processor)
            self.video_rules = digit_vision.video_rules(
                self.inputs, self.video_settings.factor, count_rounding, max_total_tokens
            )
            self.frames, self.fps = self.video_rules.nframes, self.video_rules.fps
            self.vision_input = VideoVision(self.video_rules, self.video_settings, self.video_fps, self.tokens,
                                            seconds_per_grid=model_type == "qwen2_5_vl", rope_fps=rope_fps)
        else:
            self.image_settings = digit_vision.image_settings(processor.image_processor, self.inputs)
            self.frames, self.fps = self.num_images, None
            self.vision_input = ImageVision(self.image_settings, self.num_images, self.tokens)
        self.size = None
        self.digit_prompts = DigitPrompts(processor, prompt_template, system_prompt, self.vision_input.token,
                                          None if vision == "video" else self.num_images, self.template.segments[0])
        self.reader = DigitReader(model, self.tokens, self.digits, self.padding_side, score_type)
        self.sequences = DigitSequenceBuilder(self.vision_input, self.digit_prompts, self.reader, self.template,
                                              self.digits, context, self.decimal_places)
        self.freeze()

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def prompt_text(self, prompt: str) -> str:
        """The chat text for a video and its generation prompt (one vision placeholder per video / image), ending
        with the generation prompt of the assistant turn."""
        return self.digit_prompts.text(prompt)

    def vision_inputs(self, videos: torch.Tensor) -> tuple[dict[str, torch.Tensor], list[list[str]]]:
        """(model keyword arguments for videos[b, F, 3, H, W], per video the texts replacing its placeholders)."""
        return self.vision_input.encode(videos, self.device)

    def build_sequences(
        self, videos: torch.Tensor, prompts: list[str], questions: list[str]
    ) -> list[PairSequence]:
        """Teacher-forced token ids and read positions for videos[b, F, 3, H, W] and their prompts and score
        names (no gradients; greedy digits resolved by forward passes over the pairs still waiting)."""
        return self.sequences.build(videos, prompts, questions)

    def _score_batch(self, videos: torch.Tensor, sequences: list[list[int]], reads: list[list[tuple]]) -> torch.Tensor:
        """Scores [b] (float32) of pairs whose token sequences and read positions are known. Differentiable."""
        vision, _ = self.vision_inputs(videos)
        return self.reader.scores(vision, sequences, reads)

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """Scores [P] for videos[P, F, 3, H, W] in [0, 1]: the expected digit score of each pair's dimension.

        `questions` are score names (`score_names`). Differentiable w.r.t. `videos`; batches of `batch_size`.
        """
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"expected videos[P, F, 3, H, W], got shape {tuple(videos.shape)}")
        if not (len(prompts) == len(questions) == videos.shape[0]):
            raise ValueError(f"got {videos.shape[0]} videos, {len(prompts)} prompts and {len(questions)} questions; "
                             "score_pairs needs one prompt and one score name per video")
        unknown = sorted(set(questions) - set(self.score_names))
        if unknown:
            raise ValueError(f"rewards.{self.component_name} scores {self.score_names}; unknown score names {unknown}")
        on_device = videos.to(self.device)
        recompute = self.recompute_in_backward and torch.is_grad_enabled() and videos.requires_grad
        scores = []
        for start in range(0, videos.shape[0], self.batch_size):
            chunk = on_device[start : start + self.batch_size]
            pairs = self.build_sequences(chunk, prompts[start : start + self.batch_size],
                                         questions[start : start + self.batch_size])
            sequences, reads = [p.ids for p in pairs], [p.reads for p in pairs]
            if recompute:
                scores.append(checkpoint(self._score_batch, chunk, sequences, reads, use_reentrant=False))
            else:
                scores.append(self._score_batch(chunk, sequences, reads))
        return torch.cat(scores).to(videos.device)

