"""Critics that write their scores as digits (VideoScore2, UnifiedReward-2.0): teacher-forced expected scores.

The critic's published prompt asks for K scores in a fixed answer format, e.g.
`Alignment Score (1-5): X\\nPhysics Score (1-5): Y\\nStyle Score (1-5): Z`. The answer template names each score
slot (`{alignment}`, ...). Score k of a video is read where the model would write slot k's digit: the answer is
teacher-forced up to that slot and the score is the expectation of the digit under the softmax over the allowed
digit tokens (METHOD.md section 1), differentiable w.r.t. the video:

    s_k = sum_d d * softmax_d(logit[d] for d in digits)                           (score_type "expected")
    s_k = d_max * softmax_{d_max}                                                 (score_type "max_normed":
          VideoScore2's published soft score, the best digit times its renormalised probability)

With `decimal_places = n > 0` the slot is a decimal number: the integer digit's expectation plus, for each
decimal place j, 10**-j times the expectation of that decimal digit (0-9), each read after the greedy digits
before it.

Earlier slots (k' < k) must hold some digits before slot k is read. `context = "greedy"` fills them as greedy
decoding would (the argmax over the allowed digit tokens, found by extra forward passes without gradients, once
per digit); an integer `context = c` fills every earlier slot with c (no extra passes). Digits chosen greedily
are constants: gradients flow through the read positions' logits only.

Vision input, two published ways (`vision`):
- "video": qwen-vl-utils' `fetch_video` rules (`qwen_vl_utils_video.QwenVLUtilsVideo`: frames by fps or count,
  uniform indices, smart_resize with factor = patch * merge and its pixel budget), then the checkpoint's video
  processor's normalisation and patchify, one `<|video_pad|>` block (Qwen2.5-VL: `second_per_grid_ts =
  temporal_patch_size / rope_fps`, the fps the reference passes to the processor);
- "images": `num_images` frames at indices int(i * total / n) given as separate images, each resized by the
  checkpoint's image processor rule (per-image pixel budget), one `<|image_pad|>` block each.

Pairs are scored in batches of `batch_size` (padded on `padding_side`; Qwen's M-RoPE positions come from the
model's own code through `mm_token_type_ids`), each batch's differentiable forward checkpointed when
`recompute_in_backward`. The model is loaded by `qwen_vl.load_qwen_vl` (Qwen2.5-VL, Qwen2-VL, Qwen3-VL, Qwen3.5)
and frozen.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, replace
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint

from tvrl_bench.rewards.base import Reward
from tvrl_bench.rewards.qwen_layout import (
    QwenVisionTokens,
    expand_video_tokens,
    layout_texts,
    mm_token_type_ids,
    pad_sequences,
    tokenize_texts,
)
from tvrl_bench.rewards.qwen_video import QwenVideoSettings
from tvrl_bench.rewards.qwen_vl import load_qwen_vl, render_prompt
from tvrl_bench.rewards.qwen_vl_utils_video import QwenVLUtilsVideo, preprocess_videos, sample_images

VISION_MODES = ("video", "images")
_INTERPOLATIONS = {2: "bilinear", 3: "bicubic"}  # PIL resample codes the image processors store
SCORE_TYPES = ("expected", "max_normed")


@dataclass(frozen=True)
class AnswerTemplate:
    """An answer format split at its score slots: segments[0] slot[0] segments[1] ... slot[K-1] segments[K]."""

    segments: tuple[str, ...]
    slots: tuple[str, ...]

    @classmethod
    def parse(cls, template: str, score_names: tuple[str, ...], param: str) -> "AnswerTemplate":
        """Split `template` at its `{name}` fields; each score name must appear exactly once."""
        segments, slots, text = [], [], ""
        for literal, field, spec, conversion in string.Formatter().parse(template):
            text += literal
            if field is None:
                continue
            if spec or conversion:
                raise ValueError(f"{param}: slot '{{{field}}}' must be a plain field (no format spec)")
            segments.append(text)
            slots.append(field)
            text = ""
        segments.append(text)
        if sorted(slots) != sorted(score_names) or len(set(slots)) != len(slots):
            raise ValueError(
                f"{param}={template!r} must hold each score name exactly once as a field "
                f"({', '.join('{' + n + '}' for n in score_names)}); found {slots}"
            )
        return cls(tuple(segments), tuple(slots))


def image_settings_from_processor(image_processor: Any) -> QwenVideoSettings:
    """The image processor's patchify / resize / normalise settings, in the shared settings record."""
    size = dict(image_processor.size)
    min_pixels = size.get("shortest_edge") or getattr(image_processor, "min_pixels", None)
    max_pixels = size.get("longest_edge") or getattr(image_processor, "max_pixels", None)
    resample = getattr(image_processor, "resample", 3)
    resample = int(getattr(resample, "value", resample))
    return QwenVideoSettings(
        family="qwen2_vl",  # images: a per-image pixel budget, one frame repeated to the temporal patch size
        patch_size=int(image_processor.patch_size),
        temporal_patch_size=int(image_processor.temporal_patch_size),
        merge_size=int(image_processor.merge_size),
        min_pixels=int(min_pixels),
        max_pixels=int(max_pixels),
        do_sample_frames=False,
        image_mean=tuple(float(m) for m in image_processor.image_mean),
        image_std=tuple(float(s) for s in image_processor.image_std),
        interpolation=_INTERPOLATIONS.get(resample, "bicubic"),
    )


@dataclass
class _Pair:
    """One pair's teacher-forced sequence being built: token ids, plan steps left, and read positions."""

    ids: list[int]
    steps: list[tuple]
    reads: list[tuple[int, str, float]]  # (position, "int" | "dec", weight)


class QwenDigitScoreCritic(Reward):
    """Base of the digit-score critics; subclasses fix the prompt, answer format and score names."""

    uses_checks = False
    component_name = "qwen_digit_scores"
    score_space = "score"

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
        frames: int | None = None,
        fps: float | None = 2.0,
        num_images: int = 16,
        min_pixels: int | None = None,
        max_pixels: int | None = None,
        max_total_tokens: int | None = 128000,
        count_rounding: str = "floor",
        video_fps: float = 24.0,
        rope_fps: float | None = 2.0,
        system_prompt: str | None = None,
        batch_size: int = 1,
        padding_side: str = "left",
        recompute_in_backward: bool = True,
        dtype: str = "bfloat16",
        device: str = "auto",
        attn_implementation: str = "sdpa",
    ) -> None:
        super().__init__()
        name = f"rewards.{self.component_name}"
        self._check_parameters(name, prompt_template, digits, decimal_places, context, score_type, vision,
                               video_fps, batch_size, padding_side, rope_fps)
        self.score_names = tuple(score_names)
        self.template = AnswerTemplate.parse(answer_template, self.score_names, f"{name}.answer_template")
        model, processor, model_type = load_qwen_vl(path, dtype, device, attn_implementation, param=f"{name}.path")
        self.model, self.processor, self.model_type = model, processor, model_type
        self.tokens = QwenVisionTokens.from_processor(processor)
        self.prompt_template = prompt_template
        self.system_prompt = system_prompt
        self.vision = vision
        self.video_fps = float(video_fps)
        self.rope_fps = rope_fps
        self.num_images = int(num_images)
        self.decimal_places = int(decimal_places)
        self.context = context
        self.score_type = score_type
        self.batch_size = batch_size
        self.padding_side = padding_side
        self.recompute_in_backward = recompute_in_backward

        tok = processor.tokenizer
        self.int_values = list(range(digits[0], digits[1] + 1))
        self.int_ids = [self._single_token(tok, str(d), name) for d in self.int_values]
        self.dec_values = list(range(10))
        self.dec_ids = [self._single_token(tok, str(d), name) for d in self.dec_values]
        self.dot_ids = list(tok(".", add_special_tokens=False)["input_ids"])
        self.segment_ids = [list(tok(s, add_special_tokens=False)["input_ids"]) for s in self.template.segments]

        if vision == "video":
            self.video_settings = QwenVideoSettings.from_processor(processor.video_processor)
            factor = self.video_settings.factor
            self.video_rules = QwenVLUtilsVideo(
                fps=None if frames is not None else fps, nframes=frames, count_rounding=count_rounding,
                factor=factor, min_pixels=128 * factor * factor, max_pixels=768 * factor * factor,
                total_pixels=None if max_total_tokens is None else max_total_tokens * factor * factor * 0.9,
            ).with_overrides(min_pixels=min_pixels, max_pixels=max_pixels)
            self.frames, self.fps = self.video_rules.nframes, self.video_rules.fps
        else:
            settings = image_settings_from_processor(processor.image_processor)
            overrides = {k: v for k, v in (("min_pixels", min_pixels), ("max_pixels", max_pixels)) if v is not None}
            self.image_settings = replace(settings, **overrides)
            self.frames, self.fps = self.num_images, None
        self.size = None
        self._prompt_cache: dict[str, str] = {}
        self.freeze()

    @staticmethod
    def _check_parameters(name, prompt_template, digits, decimal_places, context, score_type, vision, video_fps,
                          batch_size, padding_side, rope_fps) -> None:
        fields = {f for _, f, _, _ in string.Formatter().parse(prompt_template) if f is not None}
        if fields != {"prompt"}:
            raise ValueError(f"{name}.prompt_template must contain the field {{prompt}} and no other (found "
                             f"{sorted(fields)}); write literal braces as {{{{ and }}}}")
        lo, hi = digits
        if not 0 <= lo < hi <= 9:
            raise ValueError(f"{name}.digits={tuple(digits)} must be (low, high) single digits with low < high")
        if decimal_places < 0:
            raise ValueError(f"{name}.decimal_places={decimal_places} must be 0 or more")
        if not (context == "greedy" or (isinstance(context, int) and lo <= context <= hi)):
            raise ValueError(f"{name}.context={context!r} must be 'greedy' or a digit in {lo}..{hi}")
        if score_type not in SCORE_TYPES:
            raise ValueError(f"{name}.score_type='{score_type}' must be one of {SCORE_TYPES}")
        if score_type == "max_normed" and decimal_places:
            raise ValueError(f"{name}: score_type='max_normed' reads one digit; set decimal_places = 0")
        if vision not in VISION_MODES:
            raise ValueError(f"{name}.vision='{vision}' must be one of {VISION_MODES}")
        if video_fps <= 0:
            raise ValueError(f"{name}.video_fps={video_fps} must be positive")
        if rope_fps is not None and rope_fps <= 0:
            raise ValueError(f"{name}.rope_fps={rope_fps} must be positive or None")
        if batch_size < 1:
            raise ValueError(f"{name}.batch_size={batch_size} must be at least 1")
        if padding_side not in ("left", "right"):
            raise ValueError(f"{name}.padding_side='{padding_side}' must be 'left' or 'right'")

    @staticmethod
    def _single_token(tokenizer: Any, text: str, name: str) -> int:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(ids) != 1:
            raise ValueError(f"{name}: the tokenizer splits '{text}' into {len(ids)} tokens; score digits must be "
                             "single tokens")
        return int(ids[0])

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    # ---- prompt -------------------------------------------------------------------------------------------------
    def prompt_text(self, prompt: str) -> str:
        """The chat text for a video and its generation prompt (one vision placeholder per video / image), ending
        with the generation prompt of the assistant turn."""
        if prompt not in self._prompt_cache:
            user_text = self.prompt_template.format(prompt=prompt)
            if self.vision == "video":
                text = render_prompt(self.processor, user_text, self.system_prompt)
            else:
                text = render_images_prompt(self.processor, self.num_images, user_text, self.system_prompt)
            token = self.tokens.video_token if self.vision == "video" else self.tokens.image_token
            expected = 1 if self.vision == "video" else self.num_images
            if text.count(token) != expected:
                raise ValueError(f"the chat template wrote {text.count(token)} '{token}' tokens; expected {expected}")
            self._prompt_cache[prompt] = text
        return self._prompt_cache[prompt]

    # ---- vision -------------------------------------------------------------------------------------------------
    def vision_inputs(self, videos: torch.Tensor) -> tuple[dict[str, torch.Tensor], list[list[str]]]:
        """(model keyword arguments for videos[b, F, 3, H, W], per video the texts replacing its placeholders:
        one for "video", `num_images` for "images")."""
        device = self.device
        if self.vision == "video":
            inputs = preprocess_videos(videos, self.video_rules, self.video_settings, self.video_fps)
            texts = layout_texts([self.tokens.video_token] * len(videos), inputs, self.video_settings, self.tokens)
            kwargs = {"pixel_values_videos": inputs.pixel_values_videos,
                      "video_grid_thw": inputs.video_grid_thw.to(device)}
            if self.model_type == "qwen2_5_vl":
                tps = self.video_settings.temporal_patch_size
                seconds = ([tps / self.rope_fps] * len(videos) if self.rope_fps is not None
                           else inputs.second_per_grid_ts(tps))
                kwargs["second_per_grid_ts"] = torch.tensor(seconds, device=device)
            return kwargs, [[t] for t in texts]
        pixels, grids, placeholders = [], [], []
        merge = self.image_settings.merge_size ** 2
        for video in videos:
            p, g = sample_images(video, self.num_images, self.image_settings)
            pixels.append(p)
            grids.append(g)
            placeholders.append([self.tokens.image_token * (t * h * w // merge) for t, h, w in g.tolist()])
        return {"pixel_values": torch.cat(pixels), "image_grid_thw": torch.cat(grids).to(device)}, placeholders

    def _prefix_ids(self, texts: list[str], placeholders: list[list[str]]) -> list[list[int]]:
        """Token ids of each chat text + the answer's first segment, with the vision placeholders expanded."""
        token = self.tokens.video_token if self.vision == "video" else self.tokens.image_token
        laid_out = expand_video_tokens(texts, [ph for per_video in placeholders for ph in per_video], token)
        return tokenize_texts(self.processor.tokenizer, [t + self.template.segments[0] for t in laid_out])

    # ---- teacher forcing ----------------------------------------------------------------------------------------
    def _plan(self, slot: int) -> list[tuple]:
        """The steps that build the sequence for reading slot `slot` (after the answer's first segment)."""
        steps: list[tuple] = []
        for j in range(slot):
            if self.context == "greedy":
                steps.append(("greedy", "int"))
                if self.decimal_places:
                    steps.append(("append", self.dot_ids))
                    steps.extend([("greedy", "dec")] * self.decimal_places)
            else:
                ids = [self.int_ids[self.int_values.index(int(self.context))]]
                if self.decimal_places:
                    ids += self.dot_ids + [self.dec_ids[0]] * self.decimal_places
                steps.append(("append", ids))
            steps.append(("append", self.segment_ids[j + 1]))
        steps.append(("read", "int", 1.0))
        for place in range(1, self.decimal_places + 1):
            steps.append(("greedy", "int" if place == 1 else "dec"))
            if place == 1:
                steps.append(("append", self.dot_ids))
            steps.append(("read", "dec", 10.0 ** -place))
        return steps

    def _digit_ids(self, kind: str) -> list[int]:
        return self.int_ids if kind == "int" else self.dec_ids

    def build_sequences(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> list[_Pair]:
        """Teacher-forced token ids and read positions for each pair (no gradients; greedy digits resolved)."""
        with torch.no_grad():
            vision, placeholders = self.vision_inputs(videos.detach())
            prefix = self._prefix_ids([self.prompt_text(p) for p in prompts], placeholders)
            pairs = [_Pair(ids, self._plan(self.template.slots.index(q)), []) for ids, q in zip(prefix, questions)]
            while True:
                waiting = []
                for index, pair in enumerate(pairs):
                    while pair.steps and pair.steps[0][0] != "greedy":
                        step = pair.steps.pop(0)
                        if step[0] == "append":
                            pair.ids = pair.ids + list(step[1])
                        else:
                            pair.reads.append((len(pair.ids) - 1, step[1], step[2]))
                    if pair.steps:
                        waiting.append(index)
                if not waiting:
                    return pairs
                kinds = [pairs[i].steps[0][1] for i in waiting]
                logits = self._digit_logits(
                    _select_vision(vision, waiting, self), [pairs[i].ids for i in waiting],
                    [[len(pairs[i].ids) - 1] for i in waiting], kinds,
                )
                for i, kind, row in zip(waiting, kinds, logits):
                    pairs[i].steps.pop(0)
                    pairs[i].ids = pairs[i].ids + [self._digit_ids(kind)[int(row[0].argmax())]]

    def _digit_logits(
        self, vision: dict[str, torch.Tensor], sequences: list[list[int]], positions: list[list[int]],
        kinds: list[str] | list[list[str]],
    ) -> list[list[torch.Tensor]]:
        """Per sequence, per read position, the float32 logits [n_digits] of the digit tokens (one forward)."""
        input_ids, attention_mask = pad_sequences(sequences, self.tokens.pad_token_id, self.padding_side)
        device = self.device
        kwargs = {
            "input_ids": input_ids.to(device),
            "attention_mask": attention_mask.to(device),
            "mm_token_type_ids": mm_token_type_ids(input_ids, self.tokens).to(device),
            "use_cache": False,
            **vision,
        }
        hidden = self.model.model(**kwargs).last_hidden_state  # [b, L, D]
        length = input_ids.shape[1]
        out = []
        for row, (seq, pos, kind) in enumerate(zip(sequences, positions, kinds)):
            offset = length - len(seq) if self.padding_side == "left" else 0
            picked = hidden[row, torch.tensor(pos, device=hidden.device) + offset]  # [R, D]
            row_kinds = [kind] * len(pos) if isinstance(kind, str) else kind
            logits = self.model.lm_head(picked).float()
            out.append([logits[r, self._digit_ids(k)] for r, k in enumerate(row_kinds)])
        return out

    def _expected(self, logits: torch.Tensor, kind: str) -> torch.Tensor:
        values = torch.tensor(self.int_values if kind == "int" else self.dec_values, dtype=logits.dtype,
                              device=logits.device)
        probs = torch.softmax(logits, dim=-1)
        if self.score_type == "max_normed":
            best = probs.argmax()
            return values[best] * probs[best]
        return (probs * values).sum()

    def _score_batch(self, videos: torch.Tensor, sequences: list[list[int]], reads: list[list[tuple]]) -> torch.Tensor:
        """Scores [b] (float32) of pairs whose token sequences and read positions are known. Differentiable."""
        vision, _ = self.vision_inputs(videos)
        logits = self._digit_logits(vision, sequences, [[r[0] for r in rs] for rs in reads],
                                    [[r[1] for r in rs] for rs in reads])
        scores = []
        for row_logits, rs in zip(logits, reads):
            scores.append(sum(w * self._expected(row_logits[i], kind) for i, (_, kind, w) in enumerate(rs)))
        return torch.stack(scores)

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


def _select_vision(vision: dict[str, torch.Tensor], rows: list[int], critic: QwenDigitScoreCritic) -> dict:
    """The vision inputs of a subset of the batch's videos (rows), for a forward over those pairs only."""
    if critic.vision == "video":
        grid_key, pixel_key, per_video = "video_grid_thw", "pixel_values_videos", 1
    else:
        grid_key, pixel_key, per_video = "image_grid_thw", "pixel_values", critic.num_images
    grids = vision[grid_key]
    sizes = grids.prod(-1).tolist()
    starts = [0]
    for s in sizes:
        starts.append(starts[-1] + s)
    pix, grid_rows = [], []
    for r in rows:
        first, last = r * per_video, (r + 1) * per_video
        pix.append(vision[pixel_key][starts[first] : starts[last]])
        grid_rows.extend(range(first, last))
    out = {pixel_key: torch.cat(pix), grid_key: grids[grid_rows]}
    if "second_per_grid_ts" in vision:
        out["second_per_grid_ts"] = vision["second_per_grid_ts"][rows]
    return out


def render_images_prompt(processor: Any, num_images: int, text: str, system_prompt: str | None = None) -> str:
    """The chat text of one user turn (`num_images` images, then `text`) and the generation prompt (thinking off
    where the template has the switch, as `qwen_vl.render_prompt`)."""
    messages: list[dict[str, Any]] = []
    if system_prompt is not None:
        messages.append({"role": "system", "content": [{"type": "text", "text": system_prompt}]})
    content = [{"type": "image"} for _ in range(num_images)] + [{"type": "text", "text": text}]
    messages.append({"role": "user", "content": content})
    extra = {"enable_thinking": False} if "enable_thinking" in str(processor.chat_template or "") else {}
    return processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, **extra)
