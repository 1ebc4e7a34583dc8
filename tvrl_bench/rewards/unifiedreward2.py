"""UnifiedReward-2.0 (CodeGoat24/UnifiedReward-2.0-qwen-7b, Qwen2.5-VL): pointwise video alignment / physics /
style scores, the expected value over the score tokens.

Reference: CodeGoat24/UnifiedReward `inference_qwen/UnifiedReward-2.0-inference/point_score_APS_video_generation.py`
(and `vllm_qwen/vllm_request.py`, the request it sends to a vLLM server running the checkpoint).

- Prompt: the published pointwise video ("APS") prompt, verbatim, with the caption in `Text Caption: [...]`.
- Video: the script takes 16 frames at indices int(i * total / 16) and sends them as 16 images (JPEG, quality
  95) before the text; the server's processor resizes each image by the checkpoint's image processor rule
  (smart_resize, factor 28, its per-image pixel budget) and normalises it. Here: the same frames and resize,
  differentiably (`vision = "images"`, `num_images = 16`); the JPEG round trip is left out (not differentiable).
- Scores: the model writes `Alignment Score (1-5): 2.4036` etc. (the script's example output), greedily
  (`do_sample: False`). The answer is teacher-forced in that format; a score is the expected leading digit under
  the softmax over the tokens 1-5, plus (`decimal_places = 1`, choice) a tenth of the expected first decimal
  digit (0-9) read after the greedy leading digit and the point. Earlier scores' digits are the greedy ones
  (`context = "greedy"`: leading digit, point, `decimal_places` decimals) or a fixed digit.

`score_names = ("alignment", "physics", "style")`: K = 3 scores per video in [1, 5.9], differentiable w.r.t. the
video pixels. The same class loads the Qwen3-VL / Qwen3.5 releases of UnifiedReward-2.0 (thinking off).
"""

from __future__ import annotations


from tvrl_bench.registry import register
from tvrl_bench.rewards.qwen.digit_scores import QwenDigitScoreCritic
from tvrl_bench.rewards.qwen.inputs import QwenInputs

UR2_PROMPT = (
    "You are presented with a generated video and its associated text caption. "
    "Your task is to analyze the video across multiple dimensions in relation to the caption. Specifically:\n"
    "Provide overall assessments for the video along the following axes (each rated from 1 to 5):\n"
    "- Alignment Score: How well the video matches the caption in terms of content.\n"
    "- Physics Score: How well the gravity, movements, collisions, and interactions make physical sense.\n"
    "- Style Score: How visually appealing the video looks, regardless of caption accuracy.\n\n"
    "Output your evaluation using the format below:\n\n"
    "Alignment Score (1-5): X\n"
    "Physics Score (1-5): Y\n"
    "Style Score (1-5): Z\n\n"
    "Your task is provided as follows:\n"
    "Text Caption: [{prompt}]"
)
UR2_ANSWER = "Alignment Score (1-5): {alignment}\nPhysics Score (1-5): {physics}\nStyle Score (1-5): {style}"
UR2_SCORE_NAMES = ("alignment", "physics", "style")


@register("rewards", "unifiedreward2")
class UnifiedReward2(QwenDigitScoreCritic):
    """UnifiedReward-2.0 pointwise video critic: expected alignment / physics / style scores (1-5), teacher-forced."""

    component_name = "unifiedreward2"

    def __init__(
        self,
        path: str,
        prompt_template: str | None = None,
        answer_template: str | None = None,
        score_names: tuple[str, ...] = UR2_SCORE_NAMES,
        decimal_places: int = 1,
        context: str | int = "greedy",
        vision: str = "images",
        num_images: int = 16,
        rope_fps: float | None = None,
        system_prompt: str | None = None,
        inputs: QwenInputs | None = None,
    ) -> None:
        """
        Args:
            path: local UnifiedReward-2.0 checkpoint folder (config.json, weights, tokenizer, processor files).
            prompt_template: the user text after the frames, field {prompt}; None: the published prompt (UR2_PROMPT).
            answer_template: the teacher-forced answer, one field per score name where its number goes;
                None: UR2_ANSWER.
            score_names: the names of the answer's score fields (the critic's K "questions").
            decimal_places: decimal digits read after the leading digit (0: the leading digit only).
            context: numbers written in earlier fields: "greedy" (the model's argmax digits) or a fixed digit 1-5.
            vision: "images" (the reference: frames as separate images) or "video" (qwen-vl-utils video input).
            num_images: frames taken as images (the reference: 16).
            rope_fps: vision = "video" on Qwen2.5-VL: fps for the temporal positions (None: the sampled rate).
            system_prompt: a system message, or None for the chat template's default.
            inputs: the shared `rewards.qwen_inputs` settings: frames / fps (qwen-vl-utils sampling for vision =
                "video"; fps None: 2), video_fps, the pixel budget per image (None: the checkpoint's image
                processor) or per video frame (None: qwen-vl-utils' 128 / 768 tokens), batch_size (None: 1),
                padding_side, recompute_in_backward, dtype, device, attn_implementation.
        """
        super().__init__(
            path=path, prompt_template=UR2_PROMPT if prompt_template is None else prompt_template,
            answer_template=UR2_ANSWER if answer_template is None else answer_template, score_names=score_names,
            digits=(1, 5), decimal_places=decimal_places, context=context, score_type="expected", vision=vision,
            num_images=num_images, max_total_tokens=128000, count_rounding="floor", rope_fps=rope_fps,
            system_prompt=system_prompt, inputs=inputs,
        )
