"""The official joint-prompt critic mode and patch-space credit maps, on a tiny real Qwen3.5 checkpoint."""

from __future__ import annotations

import json

import pytest
import torch

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen_credit import patch_credit
from tvrl_bench.rewards.qwen_joint import answer_token_positions, joint_answer, joint_question
from tvrl_bench.rewards.qwen_video import QwenVideoSettings, patchify
from tvrl_bench.rewards.qwen_vl import QwenVLAnswerLikelihood, render_prompt
from tvrl_bench.training.scoring import score_videos

CHECKS = [["Is there a red ball?", "Does it roll left?", "Is it night?", "Blue?", "Is the table wooden?"],
          ["Is there a cat?", "Is it walking?"]]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return str(tiny_qwen.save_tiny_qwen(tmp_path_factory.mktemp("tiny_qwen3_5") / "qwen3_5", "qwen3_5"))


def _critic(path, **overrides):
    params = {"dtype": "float32", "device": "cpu", "fps": 2.0, "video_fps": 4.0, "batch_size": 2}
    return QwenVLAnswerLikelihood(path, **{**params, **overrides})


def _videos(n=2, seed=0):
    return torch.rand(n, 9, 3, 20, 28, generator=torch.Generator().manual_seed(seed))


def test_reference_answer_is_all_yes_json_and_value_tokens_are_the_yes_tokens():
    tokenizer = tiny_qwen.build_tokenizer("qwen3_5")  # the real Qwen3.5 tokenizer class, built here
    text, starts = joint_answer(5)
    assert [a["answer"] for a in json.loads(text)] == ["Yes"] * 5
    assert [a["id"] for a in json.loads(text)] == ["q1", "q2", "q3", "q4", "q5"]
    ids, positions = answer_token_positions(tokenizer, text, starts)
    yes = tokenizer.convert_tokens_to_ids("Yes")
    assert positions == [j for j, t in enumerate(ids) if t == yes]  # found independently: where "Yes" sits
    question = json.loads(joint_question(CHECKS[0]).split("\n")[2])
    assert [q["id"] for q in question] == ["q1", "q2", "q3", "q4", "q5"]
    assert all(q["answer_type"] == "yes_no" for q in question)


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


def test_patch_credit_undoes_the_merge_packing():
    settings = QwenVideoSettings(family="qwen3_vl", patch_size=2, temporal_patch_size=2, merge_size=2)
    frames = torch.rand(4, 3, 8, 12, requires_grad=True)
    patches, grid = patchify(frames, settings)
    g = torch.randn_like(patches)
    (dframes,) = torch.autograd.grad((patches * g).sum(), frames)
    expected = dframes.abs().reshape(2, 2, 3, 4, 2, 6, 2).sum(dim=(1, 2, 4, 6))  # [t, rows, cols] of 2x2 pixels
    got = patch_credit(g, torch.tensor([grid]), merge=2)[0]
    torch.testing.assert_close(got, expected)


def test_score_follows_the_prompt_mode(checkpoint):
    critic = _critic(checkpoint, prompt_mode="joint")
    videos = _videos()
    joint = critic.score(videos, ["a", "b"], CHECKS)
    torch.testing.assert_close(joint, critic.score_with_maps(videos, ["a", "b"], CHECKS, None)[0])
    with pytest.raises(ValueError, match="prompt_mode"):
        _critic(checkpoint, prompt_mode="both")


def test_official_critic_input_is_20_frames_of_32_x_64_for_352_x_624_rollouts():
    from tvrl_bench.rewards.qwen_video import resized_size, sample_frame_indices

    settings = QwenVideoSettings(family="qwen3_vl", patch_size=16, merge_size=2, temporal_patch_size=2).with_overrides(
        num_frames=20, min_pixels=20480, max_pixels=50176)  # Qwen3.5's own min_pixels (131072) exceeds the budget
    indices = sample_frame_indices(settings, 81, 24.0)
    assert indices == [round(i * 80 / 19 + 1e-9) for i in range(20)] and len(indices) == 20
    assert resized_size(settings, 20, 352, 624) == (32, 64)
