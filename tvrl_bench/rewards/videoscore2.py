"""VideoScore2 (TIGER-Lab/VideoScore2, Qwen2.5-VL-7B): expected 1-5 scores on its three dimensions.

Reference: TIGER-AI-Lab/VideoScore2 `vs2_inference.py` (= the model card's inference code; transformers 4.53,
qwen-vl-utils) and `eval/eval_methods/vs2_float.py`; training answers in `data/data_rl.py` / `data/data_grpo.py`.

- Prompt: the published query `VS2_QUERY_TEMPLATE` (kept verbatim, indentation and en dashes included), one user
  turn with the video first, the checkpoint's chat template (Qwen2.5-VL's default system message).
- Video: qwen-vl-utils `fetch_video` at fps 2 (`infer_fps = 2.0`): frame count floor-rounded to a multiple of 2 in
  [4, 768] (qwen-vl-utils >= 0.0.11), uniform indices, each frame resized by smart_resize (factor 28,
  128 * 28 * 28 <= pixels <= 768 * 28 * 28, capped by 128000 * 28 * 28 * 0.9 / n * 2); the processor then only
  normalises; the script passes `fps=2.0` to the processor, so `second_per_grid_ts = 2 / 2.0` (`rope_fps = 2`).
- Score: the reference generates (thinking, then the scores) and reads the logits at each score digit. Here the
  answer is teacher-forced instead (choice, documented, `answer_template`): an empty think block and the score
  lines in the format of the released training answers, `(1) visual quality: X` / `(2) text-to-video alignment:
  Y` / `(3) physical/common-sense consistency: Z`. Per dimension the score is the expected digit under the
  softmax over the tokens 1-5 (`ll_based_soft_score_weighted` in vs2_float.py); `score_type = "max_normed"` gives
  the model card's soft score instead (best digit x its renormalised probability). Earlier dimensions' digits
  are the greedy ones (`context = "greedy"`) or a fixed digit.

`score_names = ("visual_quality", "t2v_alignment", "physical_consistency")`: K = 3 scores per video, each in
[1, 5], differentiable w.r.t. the video pixels.
"""

from __future__ import annotations


from tvrl_bench.registry import register
from tvrl_bench.rewards.qwen.digit_scores import QwenDigitScoreCritic
from tvrl_bench.rewards.qwen.inputs import QwenInputs

VS2_PROMPT = (
    "\n    You are an expert for evaluating AI-generated videos from three dimensions:\n"
    "    (1) visual quality \u2013 clarity, smoothness, artifacts;\n"
    "    (2) text-to-video alignment \u2013 fidelity to the prompt;\n"
    "    (3) physical/common-sense consistency \u2013 naturalness and physics plausibility.\n"
    "\n"
    "    Video prompt: {prompt}\n"
    "\n"
    "    Please output in this format:\n"
    "    visual quality: <v_score>; \n"
    "    text-to-video alignment: <t_score>, \n"
    "    physical/common-sense consistency: <p_score>\n"
    "    "
)
VS2_ANSWER = (
    "<think>\n</think>\n\n"
    "(1) visual quality: {visual_quality}\n"
    "(2) text-to-video alignment: {t2v_alignment}\n"
    "(3) physical/common-sense consistency: {physical_consistency}"
)
VS2_SCORE_NAMES = ("visual_quality", "t2v_alignment", "physical_consistency")


@register("rewards", "videoscore2")
class VideoScore2(QwenDigitScoreCritic):
    """VideoScore2 (Qwen2.5-VL): expected 1-5 visual quality / alignment / physics scores, teacher-forced."""

    component_name = "videoscore2"

    def __init__(
        self,
        path: str,
        prompt_template: str | None = None,
        answer_template: str | None = None,
        score_names: tuple[str, ...] = VS2_SCORE_NAMES,
        score_type: str = "expected",
        context: str | int = "greedy",
        max_total_tokens: int | None = 128000,
        rope_fps: float | None = 2.0,
        system_prompt: str | None = None,
        inputs: QwenInputs | None = None,
    ) -> None:
        """
        Args:
            path: local VideoScore2 checkpoint folder (config.json, weights, tokenizer, processor, chat template).
            prompt_template: the user text after the video, field {prompt}; None: the published query (VS2_PROMPT).
            answer_template: the teacher-forced answer, one field per score name where its digit goes; None:
                VS2_ANSWER.
            score_names: the names of the answer's score fields (the critic's K "questions").
            score_type: "expected" (expected digit) or "max_normed" (the model card's soft score).
            context: digits written in earlier fields: "greedy" (the model's argmax) or a fixed digit 1-5.
            max_total_tokens: qwen-vl-utils' MODEL_SEQ_LEN cap on all frames' pixels (None: no cap).
            rope_fps: fps given to the processor for Qwen2.5-VL's temporal positions (None: the sampled rate).
            system_prompt: a system message, or None for the chat template's default.
            inputs: the shared `rewards.qwen_inputs` settings: frames (qwen-vl-utils `nframes`) or fps (None: 2,
                the reference's), video_fps, per-frame pixel budget (None: qwen-vl-utils' 128 / 768 tokens x 28 x
                28), batch_size (None: 1), padding_side, recompute_in_backward, dtype, device, attn_implementation.
        """
        super().__init__(
            path=path, prompt_template=VS2_PROMPT if prompt_template is None else prompt_template,
            answer_template=VS2_ANSWER if answer_template is None else answer_template, score_names=score_names,
            digits=(1, 5), decimal_places=0, context=context, score_type=score_type, vision="video",
            max_total_tokens=max_total_tokens, count_rounding="floor", rope_fps=rope_fps,
            system_prompt=system_prompt, inputs=inputs,
        )
