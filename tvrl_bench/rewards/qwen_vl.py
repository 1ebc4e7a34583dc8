"""Answer-likelihood critic on Qwen VL models: r = log p(answer | video, question), teacher-forced.

Loads a Qwen3.5 (`Qwen3_5ForConditionalGeneration`), Qwen3-VL (`Qwen3VLForConditionalGeneration`), Qwen2.5-VL
(`Qwen2_5_VLForConditionalGeneration`) or Qwen2-VL (`Qwen2VLForConditionalGeneration`) checkpoint and its
processor from a local folder; the class follows the config's `model_type`. The model is frozen.

For each (video, question) pair the chat template renders one user turn holding the video and the question
(`question_template`), then the generation prompt with thinking off where the template has the switch
(Qwen3.5: `enable_thinking=False` renders an empty `<think>\\n\\n</think>\\n\\n` block). The reference answer's
tokens ("Yes") are appended and scored teacher-forced: the score is the sum over the answer tokens of
log p(token | everything before), or its exponential with `score_type="prob"` (METHOD.md: log-prob default).

The video goes through the differentiable preprocessing of `qwen_video` (identical to the checkpoint's video
processor) and the token layout of `qwen_layout` (identical to the processor's text), so the score is
differentiable w.r.t. the video pixels. Pairs are scored in batches of `batch_size`, padded on `padding_side`;
position ids (M-RoPE) come from the model's own code through `mm_token_type_ids`. With `recompute_in_backward`,
each batch's forward is checkpointed: only the batch's video is kept and the forward is recomputed during the
backward pass, so the memory held until backward is one batch's activations, not all P pairs'.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint

from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.rewards.qwen_layout import (
    QwenVisionTokens,
    layout_texts,
    mm_token_type_ids,
    pad_sequences,
    tokenize_texts,
)
from tvrl_bench.rewards.qwen_video import QwenVideoSettings, preprocess_videos, sample_frame_indices
from tvrl_bench.rewards.qwen_credit import patch_credit
from tvrl_bench.rewards.qwen_joint import (
    DEFAULT_JOINT_TEMPLATE,
    answer_token_positions,
    check_joint_template,
    joint_answer,
    joint_question,
)

# config.model_type -> transformers class name
MODEL_CLASSES = {
    "qwen3_5": "Qwen3_5ForConditionalGeneration",
    "qwen3_vl": "Qwen3VLForConditionalGeneration",
    "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
    "qwen2_vl": "Qwen2VLForConditionalGeneration",
}
DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32, "float16": torch.float16}
SCORE_TYPES = ("log_prob", "prob")
DEFAULT_QUESTION_TEMPLATE = "{question} Please answer Yes or No."
PROMPT_MODES = ("per_check", "joint")


def resolve_device(device: str) -> torch.device:
    """'auto' -> cuda when available, else cpu; anything else as torch names it."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def load_qwen_vl(path: str | Path, dtype: str = "bfloat16", device: str = "auto", attn_implementation: str = "sdpa",
                 param: str = "path") -> tuple[Any, Any, str]:
    """(model, processor, model_type) from a local checkpoint folder; the model is in eval mode on `device`.

    `param` names the gin parameter in error messages (e.g. 'rewards.qwen_vl.path').
    """
    import transformers

    folder = Path(path).expanduser()
    if not str(path) or not folder.is_dir():
        raise ValueError(
            f"{param}='{path}' is not a folder. Set it to a local checkpoint folder (config.json, weights, "
            "tokenizer and processor files), e.g. downloaded with `huggingface-cli download Qwen/Qwen3.5-9B "
            "--local-dir /checkpoints/Qwen3.5-9B`."
        )
    if not (folder / "config.json").is_file():
        raise ValueError(f"{param}='{path}' has no config.json: it is not a transformers checkpoint folder")
    if dtype not in DTYPES:
        raise ValueError(f"dtype='{dtype}' is not supported; use one of {', '.join(DTYPES)}")
    config = transformers.AutoConfig.from_pretrained(folder)
    if config.model_type not in MODEL_CLASSES:
        raise ValueError(
            f"{param}='{path}' holds a '{config.model_type}' model; this critic loads "
            f"{', '.join(MODEL_CLASSES)} (Qwen3.5, Qwen3-VL, Qwen2.5-VL, Qwen2-VL)"
        )
    model_class = getattr(transformers, MODEL_CLASSES[config.model_type])
    model = model_class.from_pretrained(folder, dtype=DTYPES[dtype], attn_implementation=attn_implementation)
    processor = transformers.AutoProcessor.from_pretrained(folder)
    return model.to(resolve_device(device)).eval(), processor, config.model_type


def render_prompt(processor: Any, question: str, system_prompt: str | None = None) -> str:
    """The chat text of one user turn (a video, then the question) followed by the generation prompt.

    Thinking is switched off where the template has the switch (`enable_thinking`, Qwen3 / Qwen3.5 templates);
    templates without it (Qwen3-VL Instruct, Qwen2.5-VL) never think, so nothing is passed to them.
    """
    messages: list[dict[str, Any]] = []
    if system_prompt is not None:
        messages.append({"role": "system", "content": [{"type": "text", "text": system_prompt}]})
    messages.append({"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]})
    extra = {"enable_thinking": False} if "enable_thinking" in str(processor.chat_template or "") else {}
    return processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, **extra)


def _check_template(template: str) -> None:
    fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    if "question" not in fields or not fields <= {"question", "prompt"}:
        raise ValueError(
            f"question_template={template!r} must contain '{{question}}' and may contain '{{prompt}}' only "
            f"(found fields: {sorted(fields)})"
        )


@register("rewards", "qwen_vl")
class QwenVLAnswerLikelihood(Reward):
    """Qwen3.5 / Qwen3-VL / Qwen2.5-VL critic: teacher-forced log p("Yes" | video, question), differentiable."""

    def __init__(
        self,
        path: str,
        answer: str = "Yes",
        score_type: str = "log_prob",
        question_template: str = DEFAULT_QUESTION_TEMPLATE,
        system_prompt: str | None = None,
        frames: int | None = None,
        fps: float | None = None,
        video_fps: float = 24.0,
        min_pixels: int | None = None,
        max_pixels: int | None = None,
        batch_size: int = 4,
        padding_side: str = "left",
        recompute_in_backward: bool = True,
        prompt_mode: str = "per_check",
        joint_template: str = DEFAULT_JOINT_TEMPLATE,
        dtype: str = "bfloat16",
        device: str = "auto",
        attn_implementation: str = "sdpa",
    ) -> None:
        """
        Args:
            path: local checkpoint folder (config.json, weights, tokenizer, processor, chat template).
            answer: the reference answer whose tokens are scored.
            score_type: "log_prob" (sum of the answer tokens' log-probs) or "prob" (its exponential).
            question_template: the user text after the video; fields {question} (the check) and {prompt}.
            system_prompt: a system message, or None for the template's default.
            frames: sample this many frames per video (exclusive with fps); None: the processor's rule.
            fps: sample at this rate (frames per second of video time); None with frames None: the processor's.
            video_fps: frame rate of the videos the critic receives (timestamps and fps sampling use it).
            min_pixels, max_pixels: the resize budget (Qwen3.5/Qwen3-VL: over all sampled frames; Qwen2/2.5-VL:
                per frame); None: the processor's.
            batch_size: pairs per forward pass.
            padding_side: "left" or "right" padding of a batch's token sequences.
            recompute_in_backward: checkpoint each batch (keep only its video; recompute during backward).
            prompt_mode: "per_check" (one sequence per (video, check), the answer scored alone) or "joint" (the
                official TVRL prompt: one sequence per video listing all checks as JSON, teacher-forced on the
                all-"Yes" JSON answer; check k scores the token starting its value; rewards/qwen_joint.py).
                In joint mode `batch_size` counts videos, and answer / score_type apply per check token.
            joint_template: the joint user text; fields {questions} (the JSON list) and {prompt}.
            dtype: "bfloat16", "float32" or "float16" weights.
            device: "auto" (cuda if available), "cpu", "cuda", "cuda:1", ...
            attn_implementation: transformers attention backend ("sdpa", "eager", "flash_attention_2").
        """
        super().__init__()
        if score_type not in SCORE_TYPES:
            raise ValueError(f"rewards.qwen_vl.score_type='{score_type}' must be one of {SCORE_TYPES}")
        if padding_side not in ("left", "right"):
            raise ValueError(f"rewards.qwen_vl.padding_side='{padding_side}' must be 'left' or 'right'")
        if batch_size < 1:
            raise ValueError(f"rewards.qwen_vl.batch_size={batch_size} must be at least 1")
        if frames is not None and fps is not None:
            raise ValueError("rewards.qwen_vl: set either frames or fps for frame sampling, not both")
        if video_fps <= 0:
            raise ValueError(f"rewards.qwen_vl.video_fps={video_fps} must be positive")
        _check_template(question_template)
        if prompt_mode not in PROMPT_MODES:
            raise ValueError(f"rewards.qwen_vl.prompt_mode='{prompt_mode}' must be one of {PROMPT_MODES}")
        check_joint_template(joint_template)

        model, processor, model_type = load_qwen_vl(
            path, dtype, device, attn_implementation, param="rewards.qwen_vl.path"
        )
        self.model = model
        self.processor = processor
        self.model_type = model_type
        self.video_settings = QwenVideoSettings.from_processor(processor.video_processor).with_overrides(
            num_frames=frames, fps=fps, min_pixels=min_pixels, max_pixels=max_pixels
        )
        self.tokens = QwenVisionTokens.from_processor(processor)
        self.answer = answer
        self.answer_ids = list(processor.tokenizer(answer, add_special_tokens=False)["input_ids"])
        if not self.answer_ids:
            raise ValueError(f"rewards.qwen_vl.answer={answer!r} has no tokens")
        self.score_type = score_type
        self.question_template = question_template
        self.system_prompt = system_prompt
        self.video_fps = float(video_fps)
        self.batch_size = batch_size
        self.padding_side = padding_side
        self.recompute_in_backward = recompute_in_backward
        self.prompt_mode = prompt_mode
        self.joint_template = joint_template
        # Declared preprocessing: frames sampled (None: by fps), fps sampled at, size chosen per input by
        # smart_resize within [min_pixels, max_pixels] (see video_settings), hence None here.
        s = self.video_settings
        self.frames = s.num_frames if s.do_sample_frames else None
        self.fps = s.fps if s.do_sample_frames and s.num_frames is None else None
        self.size = None
        self._prompt_cache: dict[tuple[str, str], str] = {}
        self.freeze()

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    grad_spaces = ("pixels", "critic")

    @property
    def scores_jointly(self) -> bool:
        return self.prompt_mode == "joint"

    def joint_text(self, prompt: str, checks: list[str]) -> tuple[str, list[int], list[int]]:
        """(chat text, reference answer ids, index in those ids of each check's value token) for one video."""
        user = joint_question(checks, prompt, self.joint_template)
        text = render_prompt(self.processor, user, self.system_prompt)
        answer, starts = joint_answer(len(checks), self.answer)
        ids, positions = answer_token_positions(self.processor.tokenizer, answer, starts)
        return text, ids, positions

    def _suffix_log_probs(
        self, inputs: Any, texts: list[str], suffixes: list[list[int]], picks: list[list[list[int]]]
    ) -> list[torch.Tensor]:
        """One forward over a batch: per sequence r a tensor [len(picks[r])] of summed teacher-forced log-probs.

        texts[r] holds one video token (the video of `inputs` row r); suffixes[r] the appended answer ids;
        picks[r][g] the indices into suffixes[r] whose log-probs make score g.
        """
        laid_out = layout_texts(texts, inputs, self.video_settings, self.tokens)
        prompt_ids = tokenize_texts(self.processor.tokenizer, laid_out)
        seqs = [ids + suffix for ids, suffix in zip(prompt_ids, suffixes)]
        input_ids, attention_mask = pad_sequences(seqs, self.tokens.pad_token_id, self.padding_side)
        kwargs = self.forward_kwargs(input_ids, attention_mask, inputs)
        hidden = self.model.model(**kwargs).last_hidden_state  # [b, L, D]
        length = input_ids.shape[1]
        out = []
        for r, seq in enumerate(seqs):
            offset = length - len(seq) if self.padding_side == "left" else 0
            first = offset + len(prompt_ids[r])  # position of the first suffix token
            index = torch.arange(len(suffixes[r]), device=hidden.device)
            log_probs = torch.log_softmax(self.model.lm_head(hidden[r, first - 1 + index]).float(), dim=-1)
            token = log_probs.gather(-1, torch.tensor(suffixes[r], device=hidden.device)[:, None]).squeeze(-1)
            scores = torch.stack([token[g].sum() for g in picks[r]])
            out.append(scores.exp() if self.score_type == "prob" else scores)
        return out

    def score_with_maps(self, video, prompts, checks, space):
        """(scores[B, K], maps or None): per-check or joint scoring, maps w.r.t. pixels or the critic's patches.

        space None: scores only; "pixels": maps[B, K, F, H, W] = |d score_k / d video| summed over colour;
        "critic": maps[B, K, Tc, Hc, Wc] = |d score_k / d patches| summed per patch, merge packing undone
        (rewards/qwen_credit.py). Joint mode: one forward per video, one gradient call per check index.
        """
        questions = self.questions(checks)
        b, k = len(prompts), max((len(q) for q in questions), default=0)
        if self.scores_jointly:
            units = [(i, list(range(len(questions[i])))) for i in range(b)]
        else:
            units = [(i, [j]) for i in range(b) for j in range(len(questions[i]))]
        scores = torch.zeros(b, k)
        maps: torch.Tensor | None = None
        for start in range(0, len(units), self.batch_size):
            batch = units[start : start + self.batch_size]
            rows = video[torch.tensor([i for i, _ in batch])].to(self.device)
            leaf = rows.clone().requires_grad_(True) if space == "pixels" else rows
            inputs = preprocess_videos(leaf, self.video_settings, self.video_fps)
            if space == "critic":
                inputs.pixel_values_videos = inputs.pixel_values_videos.detach().requires_grad_(True)
                leaf = inputs.pixel_values_videos
            texts, suffixes, picks = [], [], []
            for i, js in batch:
                if self.scores_jointly:
                    text, ids, positions = self.joint_text(prompts[i], questions[i])
                    texts.append(text), suffixes.append(ids), picks.append([[p] for p in positions])
                else:
                    texts.append(self.prompt_text(prompts[i], questions[i][js[0]]))
                    suffixes.append(list(self.answer_ids)), picks.append([list(range(len(self.answer_ids)))])
            per_unit = self._suffix_log_probs(inputs, texts, suffixes, picks)
            for (i, js), unit_scores in zip(batch, per_unit):
                scores[i, js] = unit_scores.detach().float().cpu()
            if space is None:
                continue
            width = max(len(js) for _, js in batch)
            for g in range(width):
                total = sum(u[g] for u in per_unit if len(u) > g)
                (grad,) = torch.autograd.grad(total, leaf, retain_graph=g < width - 1)
                if space == "pixels":
                    unit_maps = list(grad.abs().sum(dim=2).float())
                else:
                    unit_maps = patch_credit(grad, inputs.video_grid_thw, self.video_settings.merge_size)
                if maps is None:
                    maps = torch.zeros(b, k, *unit_maps[0].shape)
                for (i, js), m in zip(batch, unit_maps):
                    if len(js) > g:
                        maps[i, js[g]] = m.cpu()
        return scores.to(video.device), None if maps is None else maps.to(video.device)

    def score(self, video, prompts, checks):
        """Scores [B, K]; in joint mode from one joint sequence per video (detached: use score_with_maps for maps)."""
        if self.scores_jointly:
            return self.score_with_maps(video, prompts, checks, None)[0]
        return super().score(video, prompts, checks)

    def sampled_frames(self, num_frames: int) -> list[int]:
        """The frames the processor keeps from a num_frames-frame video (2 fps: 4 of 33 frames)."""
        return sample_frame_indices(self.video_settings, num_frames, self.video_fps)

    def prompt_text(self, prompt: str, question: str) -> str:
        """The rendered chat text (one video token) for a pair, before the video tokens are expanded."""
        key = (prompt, question)
        if key not in self._prompt_cache:
            user_text = self.question_template.format(question=question, prompt=prompt)
            text = render_prompt(self.processor, user_text, self.system_prompt)
            if text.count(self.tokens.video_token) != 1:
                raise ValueError(
                    f"the chat template of this checkpoint wrote {text.count(self.tokens.video_token)} "
                    f"'{self.tokens.video_token}' tokens for one video; expected exactly one"
                )
            self._prompt_cache[key] = text
        return self._prompt_cache[key]

    def model_inputs(self, videos: torch.Tensor, texts: list[str]) -> tuple[dict[str, Any], torch.Tensor]:
        """Model keyword arguments for videos[b, F, 3, H, W] and their chat texts, with the answer appended.

        Returns (kwargs for `model.model(...)`, prompt lengths [b] in tokens, before the answer).
        """
        inputs = preprocess_videos(videos, self.video_settings, self.video_fps)
        laid_out = layout_texts(texts, inputs, self.video_settings, self.tokens)
        prompt_ids = tokenize_texts(self.processor.tokenizer, laid_out)
        input_ids, attention_mask = pad_sequences(
            [ids + self.answer_ids for ids in prompt_ids], self.tokens.pad_token_id, self.padding_side
        )
        kwargs = self.forward_kwargs(input_ids, attention_mask, inputs)
        return kwargs, torch.tensor([len(ids) for ids in prompt_ids])

    def forward_kwargs(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, inputs: Any) -> dict[str, Any]:
        """The model's keyword inputs for padded input_ids[b, L] and attention_mask[b, L] with the preprocessed
        videos `inputs` (pixel values, grid sizes and, for Qwen2.5-VL, seconds per temporal patch)."""
        device = self.device
        kwargs: dict[str, Any] = {
            "input_ids": input_ids.to(device),
            "attention_mask": attention_mask.to(device),
            "mm_token_type_ids": mm_token_type_ids(input_ids, self.tokens).to(device),
            "pixel_values_videos": inputs.pixel_values_videos,
            "video_grid_thw": inputs.video_grid_thw.to(device),
            "use_cache": False,
        }
        if self.model_type == "qwen2_5_vl":
            kwargs["second_per_grid_ts"] = torch.tensor(
                inputs.second_per_grid_ts(self.video_settings.temporal_patch_size), device=device
            )
        return kwargs

    def _score_batch(self, videos: torch.Tensor, texts: list[str]) -> torch.Tensor:
        """Scores [b] (float32) for videos[b, F, 3, H, W] on the model's device and their chat texts."""
        kwargs, prompt_lengths = self.model_inputs(videos, texts)
        hidden = self.model.model(**kwargs).last_hidden_state  # [b, L, D]
        b, length = kwargs["input_ids"].shape
        n_answer = len(self.answer_ids)
        ends = (
            torch.full((b,), length)
            if self.padding_side == "left"
            else prompt_lengths + n_answer
        )
        # Hidden state at position j predicts token j + 1: the answer's tokens are predicted from the n_answer
        # positions before each sequence's end.
        positions = (ends[:, None] - n_answer - 1 + torch.arange(n_answer)[None, :]).to(hidden.device)
        picked = hidden[torch.arange(b, device=hidden.device)[:, None], positions]  # [b, A, D]
        log_probs = torch.log_softmax(self.model.lm_head(picked).float(), dim=-1)
        target = torch.tensor(self.answer_ids, device=hidden.device)[None, :, None].expand(b, -1, 1)
        total = log_probs.gather(-1, target).squeeze(-1).sum(-1)
        return total.exp() if self.score_type == "prob" else total

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """Scores [P] for videos[P, F, 3, H, W] in [0, 1]: log p(answer | video_p, question_p) (or p).

        Differentiable w.r.t. `videos`; pairs are scored in batches of `batch_size`.
        """
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"expected videos[P, F, 3, H, W], got shape {tuple(videos.shape)}")
        if not (len(prompts) == len(questions) == videos.shape[0]):
            raise ValueError(
                f"got {videos.shape[0]} videos, {len(prompts)} prompts and {len(questions)} questions; "
                "score_pairs needs one prompt and one question per video"
            )
        texts = [self.prompt_text(p, q) for p, q in zip(prompts, questions)]
        on_device = videos.to(self.device)
        recompute = self.recompute_in_backward and torch.is_grad_enabled() and videos.requires_grad
        scores = []
        for start in range(0, videos.shape[0], self.batch_size):
            chunk = on_device[start : start + self.batch_size]
            chunk_texts = texts[start : start + self.batch_size]
            if recompute:
                scores.append(checkpoint(self._score_batch, chunk, chunk_texts, use_reentrant=False))
            else:
                scores.append(self._score_batch(chunk, chunk_texts))
        return torch.cat(scores).to(videos.device)
