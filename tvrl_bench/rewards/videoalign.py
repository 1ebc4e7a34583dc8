"""VideoAlign's VideoReward (KwaiVGI/VideoAlign): Qwen2-VL-2B plus a reward head on three special tokens.

Reference: KwaiVGI/VideoAlign `inference.py` (VideoVLMRewardInference), `trainer.py` (Qwen2VLRewardModelBT),
`train_reward.py` (create_model_and_processor), `utils.py` (load_model_from_checkpoint), `prompt_template.py`
(DETAILED_PROMPT_WITH_SPECIAL_TOKEN), `vision_process.py` (its vendored qwen-vl-utils), `data.py` and `train.sh`;
written for transformers 4.45.

The checkpoint (the released VideoReward folder `path`, LoRA or full state dict, and the base Qwen2-VL-2B-Instruct
folder `base_path`) is loaded by rewards/videoalign_checkpoint.py; the prompt is in rewards/videoalign_prompt.py.
Frame sampling, pixel budget, batching, weights and placement are the shared `rewards.qwen_inputs` settings
(rewards/qwen/inputs.py); None values fall back to the checkpoint's data_config.

Scoring, as the reference computes it (each step tested against an independent computation):
- prompt: one user turn, the video then DETAILED_PROMPT_WITH_SPECIAL_TOKEN with the generation prompt (kept
  verbatim), Qwen2-VL's chat template (default system message), generation prompt appended;
- video: the vendored qwen-vl-utils: frames sampled at `fps` (data_config.fps, 2) with the count rounded to a
  multiple of 2 in [4, 768] and capped at the video length (or `num_frames`), indices round(linspace(0, F - 1,
  n)), each frame resized by smart_resize (factor 28, 128 * 28 * 28 <= pixels <= data_config.max_frame_pixels),
  bicubic with antialias; the processor then normalises (CLIP mean/std) and patchifies;
- positions: the reward model calls the language model with `inputs_embeds` and no position ids, so transformers
  4.45 used plain sequential positions 0..L-1 on all three M-RoPE axes (no 3D video positions), with the batch
  padded on the right: this critic passes exactly those positions;
- reward: the final-norm hidden state at each special token through `head`; with output_dim 1 the three tokens
  (in prompt order VQ, MQ, TA) give VQ, MQ, TA; with output_dim 3 the diagonal (token k's output k);
- normalisation (`normalize`, the reference's use_norm): (r - mean) / std with inference_config's statistics (raw
  when the checkpoint has none); "Overall" = VQ + MQ + TA of the normalised scores, as the reference reports it.

`score_names` defaults to ("VQ", "MQ", "TA"): K = 3 scores per video; add "Overall" for a fourth. Each pair is one
forward pass (a pair's score depends on its own video copy, so per-score gradients stay separate).
"""

from __future__ import annotations


import torch
from torch.utils.checkpoint import checkpoint

from tvrl_bench.config.rules import Checks, Rule, optional, template
from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.rewards.qwen.chat import render_prompt
from tvrl_bench.rewards.qwen.inputs import QwenInputs, resolve_inputs
from tvrl_bench.rewards.qwen.layout import QwenVisionTokens, layout_texts, pad_sequences, tokenize_texts
from tvrl_bench.rewards.qwen.preprocess_video import preprocess_videos
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings
from tvrl_bench.rewards.videoalign_checkpoint import load_videoalign, video_rules
from tvrl_bench.rewards.videoalign_prompt import HEAD_NAMES, SCORE_NAMES, SPECIAL_TOKENS, VIDEOALIGN_PROMPT


@register("rewards", "videoalign")
class VideoAlign(Reward):
    """VideoAlign's VideoReward (Qwen2-VL-2B + reward head): normalised VQ / MQ / TA scores, differentiable."""

    uses_checks = False
    score_space = "score"

    CHECKS = Checks(
        score_names=Rule(lambda v: isinstance(v, (list, tuple)) and bool(v) and set(v) <= set(SCORE_NAMES)
                         and len(set(v)) == len(v), f"distinct names from {', '.join(SCORE_NAMES)}", repr(HEAD_NAMES)),
        prompt_template=optional(template({"prompt"}, example="None", extra="holding each of "
                                          + ", ".join(SPECIAL_TOKENS) + " exactly once",
                                          also=lambda text: all(text.count(t) == 1 for t in SPECIAL_TOKENS))),
    )

    def __init__(
        self,
        path: str,
        base_path: str | None = None,
        checkpoint_step: int = -1,
        score_names: tuple[str, ...] = HEAD_NAMES,
        normalize: bool = True,
        prompt_template: str | None = None,
        inputs: QwenInputs | None = None,
    ) -> None:
        """
        Args:
            path: local VideoReward folder (model_config.json, checkpoint-<step>/ with model.pth or LoRA files and
                tokenizer/).
            base_path: local Qwen2-VL-2B-Instruct folder; None: model_config.json's model_name_or_path if local.
            checkpoint_step: which checkpoint-<step> to load; -1: the latest.
            score_names: the scores returned, from VQ, MQ, TA, Overall (K = len(score_names)).
            normalize: standardise with the checkpoint's inference_config statistics (the reference's use_norm).
            prompt_template: the user text after the video, with the field {prompt} and the three special tokens;
                None: the reference's DETAILED_PROMPT_WITH_SPECIAL_TOKEN (VIDEOALIGN_PROMPT).
            inputs: the shared `rewards.qwen_inputs` settings: frames (qwen-vl-utils nframes) or fps (None:
                data_config.fps, 2), video_fps, per-frame min_pixels (None: 128 x factor^2 = 100352) and
                max_pixels (None: data_config.max_frame_pixels, 448 x 448 = 200704), batch_size (None: 1; always
                padded on the right, as the reference), recompute_in_backward, dtype, device, attn_implementation.
        """
        super().__init__()
        self.inputs = resolve_inputs("rewards.videoalign", inputs)
        score_names = tuple(score_names)
        prompt_template = VIDEOALIGN_PROMPT if prompt_template is None else prompt_template

        model, head, processor, config = load_videoalign(path, base_path, checkpoint_step, self.inputs)
        self.model, self.head, self.processor, self.checkpoint_config = model, head, processor, config
        if head.out_features not in (1, len(HEAD_NAMES)):
            raise ValueError(f"the reward head has output_dim {head.out_features}; VideoAlign's special-token head "
                             "has 1 or 3")
        self.score_names = score_names
        self.normalize = normalize
        stats = config.get("inference_config") or {}
        self.has_statistics = all(f"{n}_{s}" in stats for n in HEAD_NAMES for s in ("mean", "std"))
        self.register_buffer("mean", torch.tensor([float(stats.get(f"{n}_mean", 0.0)) for n in HEAD_NAMES]))
        self.register_buffer("std", torch.tensor([float(stats.get(f"{n}_std", 1.0)) for n in HEAD_NAMES]))
        self.tokens = QwenVisionTokens.from_processor(processor)
        self.special_ids = [int(processor.tokenizer.convert_tokens_to_ids(t)) for t in SPECIAL_TOKENS]
        self.prompt_template = prompt_template
        self.video_fps = float(self.inputs.video_fps)
        self.batch_size = self.inputs.batch(1)
        self.recompute_in_backward = self.inputs.recompute_in_backward
        self.video_settings = QwenVideoSettings.from_processor(processor.video_processor)
        self.video_rules = video_rules(config, self.inputs, self.video_settings.factor)
        self.frames, self.fps, self.size = self.video_rules.nframes, self.video_rules.fps, None
        self._prompt_cache: dict[str, str] = {}
        self.freeze()

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def prompt_text(self, prompt: str) -> str:
        """The rendered chat text (one video token, the three special tokens) for a generation prompt."""
        if prompt not in self._prompt_cache:
            text = render_prompt(self.processor, self.prompt_template.format(prompt=prompt))
            if text.count(self.tokens.video_token) != 1:
                raise ValueError(f"the chat template wrote {text.count(self.tokens.video_token)} video tokens; "
                                 "expected exactly one")
            self._prompt_cache[prompt] = text
        return self._prompt_cache[prompt]

    def head_scores(self, videos: torch.Tensor, prompts: list[str]) -> torch.Tensor:
        """[b, 3] VQ, MQ, TA rewards (normalised when `normalize`) for videos[b, F, 3, H, W]. Differentiable."""
        inputs = preprocess_videos(videos, self.video_rules, self.video_settings, self.video_fps)
        texts = layout_texts([self.prompt_text(p) for p in prompts], inputs, self.video_settings, self.tokens)
        input_ids, attention_mask = pad_sequences(tokenize_texts(self.processor.tokenizer, texts),
                                                  self.tokens.pad_token_id, "right")
        device = self.device
        b, length = input_ids.shape
        # The reference feeds inputs_embeds without position ids: sequential positions on all three M-RoPE axes.
        positions = torch.arange(length, device=device).view(1, 1, length).expand(3, b, length)
        hidden = self.model.model(
            input_ids=input_ids.to(device),
            attention_mask=attention_mask.to(device),
            pixel_values_videos=inputs.pixel_values_videos,
            video_grid_thw=inputs.video_grid_thw.to(device),
            position_ids=positions,
            use_cache=False,
        ).last_hidden_state
        special = torch.isin(input_ids, torch.tensor(self.special_ids))
        if not bool((special.sum(dim=1) == len(SPECIAL_TOKENS)).all()):
            raise ValueError("every sequence must hold each special reward token once; the tokenizer split them")
        rows, cols = special.nonzero(as_tuple=True)  # row-major: per sequence, in prompt order
        picked = hidden[rows.to(device), cols.to(device)].reshape(b, len(SPECIAL_TOKENS), -1)
        rewards = self.head(picked.to(self.head.weight.dtype)).float()  # [b, 3, out_dim]
        rewards = rewards[..., 0] if rewards.shape[-1] == 1 else rewards.diagonal(dim1=1, dim2=2)
        if self.normalize and self.has_statistics:
            rewards = (rewards - self.mean.to(rewards.device)) / self.std.to(rewards.device)
        return rewards

    def _score_batch(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """Scores [b] for videos[b, F, 3, H, W]: each pair's named score (a head, or Overall = their sum)."""
        heads = self.head_scores(videos, prompts)
        columns = [heads.sum(dim=1) if q == "Overall" else heads[:, HEAD_NAMES.index(q)] for q in questions]
        return torch.stack([col[i] for i, col in enumerate(columns)])

    def score_pairs(self, videos: torch.Tensor, prompts: list[str], questions: list[str]) -> torch.Tensor:
        """Scores [P] for videos[P, F, 3, H, W] in [0, 1]: each pair's named score (VQ, MQ, TA or Overall).

        Differentiable w.r.t. `videos`; pairs are scored in batches of `batch_size`.
        """
        if videos.dim() != 5 or videos.shape[2] != 3:
            raise ValueError(f"expected videos[P, F, 3, H, W], got shape {tuple(videos.shape)}")
        if not (len(prompts) == len(questions) == videos.shape[0]):
            raise ValueError(f"got {videos.shape[0]} videos, {len(prompts)} prompts and {len(questions)} questions; "
                             "score_pairs needs one prompt and one score name per video")
        unknown = sorted(set(questions) - set(SCORE_NAMES))
        if unknown:
            raise ValueError(f"rewards.videoalign scores {SCORE_NAMES}; unknown score names {unknown}")
        on_device = videos.to(self.device)
        recompute = self.recompute_in_backward and torch.is_grad_enabled() and videos.requires_grad
        scores = []
        for start in range(0, videos.shape[0], self.batch_size):
            chunk = on_device[start : start + self.batch_size]
            args = (chunk, prompts[start : start + self.batch_size], questions[start : start + self.batch_size])
            scores.append(checkpoint(self._score_batch, *args, use_reentrant=False) if recompute
                          else self._score_batch(*args))
        return torch.cat(scores).to(videos.device)
