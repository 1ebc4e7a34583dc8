"""Answer-likelihood critic on Qwen VL models: r = log p(answer | video, question), teacher-forced.

Loads a Qwen3.5, Qwen3-VL, Qwen2.5-VL or Qwen2-VL checkpoint and its processor from a local folder
(rewards/qwen/loading.py); the model is frozen. For each (video, question) pair the chat template renders one user
turn holding the video and the question (`question_template`), then the generation prompt with thinking off where
the template has the switch (rewards/qwen/chat.py). The reference answer's tokens ("Yes") are appended and scored
teacher-forced: the score is the sum over the answer tokens of log p(token | everything before), or its
exponential with `score_type="prob"` (docs/method.md: log-prob default).

The video goes through the differentiable preprocessing of `qwen/video.py` (identical to the checkpoint's video
processor) and the token layout of `qwen/layout.py` (identical to the processor's text), so the score is
differentiable w.r.t. the video pixels. Frame sampling, pixel budget, batching, weights and placement are the
shared `rewards.qwen_inputs` settings (rewards/qwen/inputs.py). Pairs are scored in batches of `batch_size`,
padded on `padding_side`; position ids (M-RoPE) come from the model's own code through `mm_token_type_ids`. With
`recompute_in_backward`, each batch's forward is checkpointed: only the batch's video is kept and the forward is
recomputed during the backward pass, so the memory held until backward is one batch's activations, not all P
pairs'. The critic's collaborators: the chat texts (`answer_prompts.AnswerPrompts`), the model inputs
(`prompt_encoder.VideoPromptEncoder`), the teacher-forced forward (`answer_scorer.AnswerScorer`) and scores with
gradient maps, per check or from one joint prompt per video (`maps.ScoreMaps`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.checkpoint import checkpoint

from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.rules import Checks, one_of, template
from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.rewards.qwen.answer_prompts import AnswerPrompts
from tvrl_bench.rewards.qwen.answer_scorer import SCORE_TYPES, AnswerScorer
from tvrl_bench.rewards.qwen.inputs import QwenInputs, resolve_inputs
from tvrl_bench.rewards.qwen.joint import DEFAULT_JOINT_TEMPLATE
from tvrl_bench.rewards.qwen.layout import QwenVisionTokens
from tvrl_bench.rewards.qwen.loading import load_qwen_vl
from tvrl_bench.rewards.qwen.maps import ScoreMaps
from tvrl_bench.rewards.qwen.prompt_encoder import VideoPromptEncoder
from tvrl_bench.rewards.qwen.video import QwenVideoInputs
from tvrl_bench.rewards.qwen.video_sampling import sample_frame_indices
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings

DEFAULT_QUESTION_TEMPLATE = "{question} Please answer Yes or No."
PROMPT_MODES = ("per_check", "joint")


@register("rewards", "qwen_vl")
class QwenVLAnswerLikelihood(Reward):
    """Qwen3.5 / Qwen3-VL / Qwen2.5-VL critic: teacher-forced log p("Yes" | video, question), differentiable."""

    grad_spaces = ("pixels", "critic")

    CHECKS = Checks(
        score_type=one_of(*SCORE_TYPES),
        question_template=template({"question"}, {"prompt"}, example=repr(DEFAULT_QUESTION_TEMPLATE)),
        prompt_mode=one_of(*PROMPT_MODES),
        joint_template=template({"questions"}, {"prompt"}, example="'Answer each question:\\n{questions}'"),
    )

    def __init__(
        self,
        path: str,
        answer: str = "Yes",
        score_type: str = "log_prob",
        question_template: str = DEFAULT_QUESTION_TEMPLATE,
        system_prompt: str | None = None,
        prompt_mode: str = "per_check",
        joint_template: str = DEFAULT_JOINT_TEMPLATE,
        inputs: QwenInputs | None = None,
    ) -> None:
        """
        Args:
            path: local checkpoint folder (config.json, weights, tokenizer, processor, chat template).
            answer: the reference answer whose tokens are scored.
            score_type: "log_prob" (sum of the answer tokens' log-probs) or "prob" (its exponential).
            question_template: the user text after the video; fields {question} (the check) and {prompt}.
            system_prompt: a system message, or None for the template's default.
            prompt_mode: "per_check" (one sequence per (video, check), the answer scored alone) or "joint" (the
                official TVRL prompt: one sequence per video listing all checks as JSON, teacher-forced on the
                all-"Yes" JSON answer; check k scores the token starting its value; rewards/qwen/joint.py).
                In joint mode `batch_size` counts videos, and answer / score_type apply per check token.
            joint_template: the joint user text; fields {questions} (the JSON list) and {prompt}.
            inputs: frame sampling (frames / fps; both None: the checkpoint's video processor rule), video_fps,
                pixel budget (None: the processor's), batch_size (None: 4), padding_side, recompute_in_backward,
                dtype, device, attn_implementation; None: `rewards.qwen_inputs` as bound in gin.
        """
        super().__init__()
        self.inputs = resolve_inputs("rewards.qwen_vl", inputs)

        model, processor, model_type = load_qwen_vl(path, self.inputs, param="rewards.qwen_vl.path")
        self.model = model
        self.processor = processor
        self.model_type = model_type
        self.video_settings = self.inputs.video_settings(QwenVideoSettings.from_processor(processor.video_processor))
        self.tokens = QwenVisionTokens.from_processor(processor)
        self.answer = answer
        self.answer_prompts = AnswerPrompts(
            processor, self.tokens.video_token, answer, question_template, joint_template, system_prompt
        )
        self.answer_ids = self.answer_prompts.answer_ids
        if not self.answer_ids:
            raise ConfigError(f"rewards.qwen_vl.answer={answer!r} has no tokens; give the answer word, e.g. "
                              "rewards.qwen_vl.answer = 'Yes'")
        self.score_type = score_type
        self.score_space = score_type  # "log_prob" or "prob": what a score is (rewards/base.py)
        self.question_template = question_template
        self.system_prompt = system_prompt
        self.video_fps = float(self.inputs.video_fps)
        self.batch_size = self.inputs.batch(4)
        self.padding_side = self.inputs.padding_side
        self.recompute_in_backward = self.inputs.recompute_in_backward
        self.prompt_mode = prompt_mode
        self.joint_template = joint_template
        self.encoder = VideoPromptEncoder(
            processor.tokenizer, self.tokens, self.video_settings, self.video_fps, self.padding_side,
            seconds_per_grid=model_type == "qwen2_5_vl",
        )
        self.scorer = AnswerScorer(model, self.encoder, score_type)
        self.maps = ScoreMaps(self.scorer, self.encoder, self.answer_prompts, self.scores_jointly, self.batch_size)
        # Declared preprocessing: frames sampled (None: by fps), fps sampled at, size chosen per input by
        # smart_resize within [min_pixels, max_pixels] (see video_settings), hence None here.
        s = self.video_settings
        self.frames = s.num_frames if s.do_sample_frames else None
        self.fps = s.fps if s.do_sample_frames and s.num_frames is None else None
        self.size = None
        self.freeze()

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def scores_jointly(self) -> bool:
        return self.prompt_mode == "joint"

    def joint_text(self, prompt: str, checks: list[str]) -> tuple[str, list[int], list[int]]:
        """(chat text, reference answer ids, index in those ids of each check's value token) for one video."""
        return self.answer_prompts.joint_text(prompt, checks)

    def score_with_maps(self, video, prompts, checks, space):
        """(scores[B, K], maps or None) for video[B, F, 3, H, W]: per-check or joint scoring, maps w.r.t. the
        pixels ([B, K, F, H, W]) or the critic's patches ([B, K, Tc, Hc, Wc]); rewards/qwen/maps.py."""
        return self.maps(video, prompts, self.questions(checks), space)

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
        return self.answer_prompts.pair_text(prompt, question)

    def model_inputs(self, videos: torch.Tensor, texts: list[str]) -> tuple[dict[str, Any], torch.Tensor]:
        """Model keyword arguments for videos[b, F, 3, H, W] and their chat texts, with the answer appended.

        Returns (kwargs for `model.model(...)`, prompt lengths [b] in tokens, before the answer).
        """
        return self.encoder.model_inputs(videos, texts, self.answer_ids, self.device)

    def forward_kwargs(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, inputs: QwenVideoInputs
    ) -> dict[str, Any]:
        """The model's keyword inputs for padded input_ids[b, L] and attention_mask[b, L] with the preprocessed
        videos `inputs` (pixel values, grid sizes and, for Qwen2.5-VL, seconds per temporal patch)."""
        return self.encoder.forward_kwargs(input_ids, attention_mask, inputs, self.device)

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
                scores.append(checkpoint(self.scorer.answer_scores, chunk, chunk_texts, self.answer_ids,
                                         use_reentrant=False))
            else:
                scores.append(self.scorer.answer_scores(chunk, chunk_texts, self.answer_ids))
        return torch.cat(scores).to(videos.device)
