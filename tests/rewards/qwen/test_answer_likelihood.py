"""The qwen_vl answer-likelihood critic on tiny real Qwen3.5 / Qwen3-VL / Qwen2.5-VL checkpoints."""

from __future__ import annotations

import pytest
import torch

from tests.rewards import tiny_qwen
from tests.rewards.tiny_qwen import build_critic
from tvrl_bench import registry
from tvrl_bench.config import load_config
from tvrl_bench.rewards.qwen.answer_likelihood import QwenVLAnswerLikelihood
from tvrl_bench.rewards.qwen.chat import render_prompt

VIDEO_FPS = 4.0
QUESTIONS = ["Is there a red ball?", "Does the ball roll to the left of the frame?", "Is it night?", "Blue?"]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_qwen")
    return {kind: str(tiny_qwen.save_tiny_qwen(root / kind, kind)) for kind in tiny_qwen.KINDS}


def _critic(path: str, **overrides) -> QwenVLAnswerLikelihood:
    params = {"dtype": "float32", "device": "cpu", "fps": 2.0, "video_fps": VIDEO_FPS, "batch_size": 3}
    return build_critic(QwenVLAnswerLikelihood, path, **{**params, **overrides})


def _videos(n: int = 4, seed: int = 0) -> torch.Tensor:
    return torch.rand(n, 9, 3, 20, 28, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("kind", tiny_qwen.KINDS)
def test_scores_are_finite_and_reach_the_pixels(checkpoints, kind):
    critic = _critic(checkpoints[kind])
    assert critic.model_type == kind
    assert not any(p.requires_grad for p in critic.parameters()) and not critic.model.training
    videos = _videos().requires_grad_(True)
    scores = critic.score_pairs(videos, ["a prompt"] * 4, QUESTIONS)
    assert scores.shape == (4,) and torch.isfinite(scores).all() and (scores < 0).all()
    scores.sum().backward()
    assert videos.grad is not None and videos.grad.abs().sum() > 0
    assert torch.isfinite(videos.grad).all()
    assert not any(p.grad is not None for p in critic.parameters())


@pytest.mark.parametrize("kind", ["qwen3_5", "qwen2_5_vl"])
@pytest.mark.parametrize("padding_side", ["left", "right"])
def test_batches_equal_single_pairs(checkpoints, kind, padding_side):
    critic = _critic(checkpoints[kind], padding_side=padding_side)
    videos = _videos(seed=1).requires_grad_(True)
    batched = critic.score_pairs(videos, ["p"] * 4, QUESTIONS)  # batches of 3 and 1, checkpointed
    batched.sum().backward()
    batched_grad = videos.grad.clone()

    singles, single_grads = [], []
    for i in range(4):
        one = videos[i : i + 1].detach().clone().requires_grad_(True)
        score = critic.score_pairs(one, ["p"], [QUESTIONS[i]])
        score.sum().backward()
        singles.append(score.detach())
        single_grads.append(one.grad)
    torch.testing.assert_close(batched.detach(), torch.cat(singles), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(batched_grad, torch.cat(single_grads), atol=1e-6, rtol=1e-4)

    # The same scores without recomputation in backward.
    plain = _critic(checkpoints[kind], padding_side=padding_side, recompute_in_backward=False)
    torch.testing.assert_close(plain.score_pairs(videos.detach(), ["p"] * 4, QUESTIONS), batched.detach())


@pytest.mark.parametrize("kind", ["qwen3_5", "qwen2_5_vl"])
def test_equals_processor_and_full_model_forward(checkpoints, kind):
    """Independent path: the real processor's __call__ and the model's own logits, log-softmax by hand."""
    critic = _critic(checkpoints[kind], answer="Yes.")
    processor, model = critic.processor, critic.model
    videos = _videos(2, seed=2)
    questions = QUESTIONS[:2]
    texts = [
        render_prompt(processor, critic.question_template.format(question=q, prompt="")) + "Yes." for q in questions
    ]
    if kind == "qwen3_5":  # thinking is off: the generation prompt ends with an empty think block
        assert all(t.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\nYes.") for t in texts)
    inputs = processor(
        text=texts,
        videos=list(videos),
        video_metadata=[{"total_num_frames": 9, "fps": VIDEO_FPS}] * 2,
        videos_kwargs={"do_rescale": False, **critic.video_settings.processor_kwargs()},
        padding=True,
        padding_side="right",
        return_tensors="pt",
    )
    answer = processor.tokenizer("Yes.", add_special_tokens=False)["input_ids"]
    assert len(answer) == 2
    with torch.no_grad():
        logits = model(**inputs).logits.float()
    expected = []
    for row in range(2):
        end = int(inputs["attention_mask"][row].sum())
        assert inputs["input_ids"][row, end - 2 : end].tolist() == answer
        logp = torch.log_softmax(logits[row, end - 3 : end - 1], dim=-1)
        expected.append(logp[0, answer[0]] + logp[1, answer[1]])
    with torch.no_grad():
        scores = critic.score_pairs(videos, ["", ""], questions)
    torch.testing.assert_close(scores, torch.stack(expected), atol=1e-5, rtol=1e-5)


def test_probability_option_and_score_grid(checkpoints):
    log_critic = _critic(checkpoints["qwen3_5"])
    prob_critic = _critic(checkpoints["qwen3_5"], score_type="prob")
    videos = _videos(2, seed=3)
    with torch.no_grad():
        log_scores = log_critic.score_pairs(videos, ["p", "p"], QUESTIONS[:2])
        probs = prob_critic.score_pairs(videos, ["p", "p"], QUESTIONS[:2])
    torch.testing.assert_close(probs, log_scores.exp())

    grid_videos = videos.clone().requires_grad_(True)
    checks = [QUESTIONS[:3], QUESTIONS[3:]]
    grid = log_critic.score(grid_videos, ["first prompt", "second prompt"], checks)
    assert grid.shape == (2, 3)
    mask = log_critic.score_mask(checks)
    assert mask.tolist() == [[True, True, True], [True, False, False]]
    assert torch.isfinite(grid[mask]).all() and (grid[~mask] == 0).all()
    grid[mask].sum().backward()
    assert (grid_videos.grad.abs().sum(dim=(1, 2, 3, 4)) > 0).all()


def test_bfloat16_weights(checkpoints):
    critic = _critic(checkpoints["qwen3_5"], dtype="bfloat16")
    assert next(critic.model.parameters()).dtype == torch.bfloat16
    videos = _videos(2, seed=4).requires_grad_(True)
    scores = critic.score_pairs(videos, ["p", "p"], QUESTIONS[:2])
    assert scores.dtype == torch.float32 and torch.isfinite(scores).all()
    scores.sum().backward()
    assert videos.grad.dtype == torch.float32 and videos.grad.abs().sum() > 0


def test_declared_preprocessing(checkpoints):
    critic = _critic(checkpoints["qwen3_5"], fps=None, frames=6, max_pixels=2048)
    assert (critic.frames, critic.fps, critic.size) == (6, None, None)
    assert critic.video_settings.max_pixels == 2048
    default = _critic(checkpoints["qwen3_5"], fps=None)
    assert (default.frames, default.fps) == (None, 2)  # the checkpoint's own video processor: 2 fps


def test_question_template_and_thinking_switch(checkpoints):
    critic = _critic(checkpoints["qwen3_5"], question_template="Video for '{prompt}'. {question}")
    text = critic.prompt_text("a red ball", "Is it red?")
    assert "Video for 'a red ball'. Is it red?<|im_end|>" in text
    assert text.endswith("<think>\n\n</think>\n\n")
    qwen25 = _critic(checkpoints["qwen2_5_vl"])
    assert qwen25.prompt_text("p", "Red?").endswith("<|im_start|>assistant\n")
    with pytest.raises(ValueError, match="question_template"):
        _critic(checkpoints["qwen3_5"], question_template="{answer}")


def test_bad_parameters_name_the_fix(tmp_path, checkpoints):
    with pytest.raises(ValueError, match=r"rewards\.qwen_vl\.path='.*missing' is not a folder"):
        _critic(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no config.json"):
        _critic(str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="not both"):
        _critic(checkpoints["qwen3_5"], frames=4, fps=2.0)
    with pytest.raises(ValueError, match="score_type"):
        _critic(checkpoints["qwen3_5"], score_type="logit")
    critic = _critic(checkpoints["qwen3_5"])
    with pytest.raises(ValueError, match="one prompt and one question per video"):
        critic.score_pairs(_videos(2), ["p"], ["q"])


@pytest.mark.parametrize("preset", ["qwen3_5_4b", "qwen3_5_9b"])
def test_presets_build_the_critic_from_gin(checkpoints, preset):
    loaded = load_config(
        [f"components/rewards/{preset}.gin"],
        [
            f"rewards.qwen_vl.path = '{checkpoints['qwen3_5']}'",
            "rewards.qwen_inputs.dtype = 'float32'",
            "rewards.qwen_inputs.device = 'cpu'",
        ],
    )
    assert loaded.files
    critic = registry.build("REWARD")
    assert isinstance(critic, QwenVLAnswerLikelihood) and critic.model_type == "qwen3_5"
    assert critic.answer == "Yes" and critic.fps == 2.0 and critic.video_fps == 24.0
