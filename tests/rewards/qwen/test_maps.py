"""Scores with gradient maps (rewards/qwen/maps.py): the official joint-prompt critic mode and per-check mode,
maps w.r.t. the pixels or the critic's patches, on a tiny real Qwen3.5 checkpoint."""

from __future__ import annotations

import pytest
import torch

from tests.rewards import tiny_qwen
from tests.rewards.tiny_qwen import build_critic
from tvrl_bench.rewards.qwen.answer_likelihood import QwenVLAnswerLikelihood
from tvrl_bench.rewards.qwen.chat import render_prompt
from tvrl_bench.rewards.qwen.joint import joint_answer, joint_question
from tvrl_bench.training.scoring import score_videos

CHECKS = [["Is there a red ball?", "Does it roll left?", "Is it night?", "Blue?", "Is the table wooden?"],
          ["Is there a cat?", "Is it walking?"]]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return str(tiny_qwen.save_tiny_qwen(tmp_path_factory.mktemp("tiny_qwen3_5") / "qwen3_5", "qwen3_5"))


def _critic(path, **overrides):
    params = {"dtype": "float32", "device": "cpu", "fps": 2.0, "video_fps": 4.0, "batch_size": 2}
    return build_critic(QwenVLAnswerLikelihood, path, **{**params, **overrides})


def _videos(n=2, seed=0):
    return torch.rand(n, 9, 3, 20, 28, generator=torch.Generator().manual_seed(seed))


def test_joint_scores_are_the_yes_log_probs_at_each_value_token(checkpoint):
    critic = _critic(checkpoint, prompt_mode="joint")
    videos = _videos()
    scores, maps = critic.score_with_maps(videos, ["a red ball", "a cat"], CHECKS, None)
    assert maps is None and scores.shape == (2, 5) and (scores[1, 2:] == 0).all()
    # Independently: the whole chat text + reference answer through the processor's own encoding and the model's
    # logits; check k's score is log_softmax at the position before its value token, read at "Yes".
    processor = critic.processor
    yes = processor.tokenizer.convert_tokens_to_ids("Yes")
    for i, (prompt, checks) in enumerate(zip(["a red ball", "a cat"], CHECKS)):
        chat = render_prompt(processor, joint_question(checks, prompt))
        answer, _ = joint_answer(len(checks))
        encoded = processor(text=[chat + answer], videos=[videos[i]], return_tensors="pt", videos_kwargs={
            "do_rescale": False, "do_sample_frames": True, "fps": 2.0,
            "video_metadata": [{"total_num_frames": 9, "fps": 4.0}]})
        with torch.no_grad():
            logits = critic.model(**encoded).logits[0].float()
        ids = encoded["input_ids"][0].tolist()
        answer_start = len(ids) - len(processor.tokenizer(answer, add_special_tokens=False)["input_ids"])
        value_positions = [j for j in range(answer_start, len(ids)) if ids[j] == yes]
        assert len(value_positions) == len(checks)
        expected = torch.stack([torch.log_softmax(logits[j - 1], dim=-1)[yes] for j in value_positions])
        torch.testing.assert_close(scores[i, : len(checks)], expected, rtol=1e-4, atol=1e-4)


def test_per_check_mode_through_score_with_maps_equals_the_pair_path(checkpoint):
    critic = _critic(checkpoint)
    videos = _videos()
    checks = [c[:2] for c in CHECKS]
    pair = score_videos(critic, videos, ["p", "q"], checks, need_grads=True)
    scores, maps = critic.score_with_maps(videos, ["p", "q"], checks, "pixels")
    torch.testing.assert_close(scores, pair.scores, rtol=1e-5, atol=1e-5)
    # pixel maps from score_with_maps are raw; score_videos fills the skipped frames afterwards
    from tvrl_bench.training.scoring import _fill

    torch.testing.assert_close(_fill(maps, critic, 9), pair.grads, rtol=1e-4, atol=1e-6)


def test_joint_critic_space_maps_have_the_critic_grid_and_one_map_per_check(checkpoint):
    critic = _critic(checkpoint, prompt_mode="joint")
    scored = score_videos(critic, _videos(), ["a", "b"], CHECKS, need_grads=True, space="critic")
    b, k, t, h, w = scored.grads.shape
    assert (b, k) == (2, 5) and t == 2  # 4 sampled frames / temporal patch 2
    assert (scored.grads[0].sum(dim=(-3, -2, -1)) > 0).all() and (scored.grads[1, 2:] == 0).all()
    assert not torch.allclose(scored.grads[0, 0], scored.grads[0, 1])


def test_score_follows_the_prompt_mode(checkpoint):
    critic = _critic(checkpoint, prompt_mode="joint")
    videos = _videos()
    joint = critic.score(videos, ["a", "b"], CHECKS)
    torch.testing.assert_close(joint, critic.score_with_maps(videos, ["a", "b"], CHECKS, None)[0])
    with pytest.raises(ValueError, match="prompt_mode"):
        _critic(checkpoint, prompt_mode="both")
