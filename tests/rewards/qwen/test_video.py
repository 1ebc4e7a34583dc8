"""The differentiable Qwen video preprocessing equals the real transformers video processors (resize included)."""

from __future__ import annotations

import pytest
import torch

from tests.rewards import tiny_qwen
from tvrl_bench.rewards.qwen.video import preprocess_video, preprocess_videos
from tvrl_bench.rewards.qwen.video_sampling import resized_size, sample_frame_indices
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings

VIDEO_FPS = 4.0


def _processor_run(vp, videos, settings, fps=VIDEO_FPS, scale=1.0, **call):
    """The real processor on `videos` (a list of [F, 3, H, W]) with the settings' sampling and budget."""
    rates = [fps] * len(videos) if isinstance(fps, float) else fps
    metadata = [{"total_num_frames": int(v.shape[0]), "fps": r} for v, r in zip(videos, rates)]
    kwargs = {**settings.processor_kwargs(), "return_metadata": True, **call}
    return vp(videos=[v * scale if scale != 1.0 else v for v in videos], video_metadata=metadata, **kwargs)


# (family kind, settings overrides, video shape): every case needs a resize except where noted.
CASES = [
    ("qwen3_vl", {}, (9, 3, 20, 28)),  # fps sampling (2 fps of 4 fps video), downscale by the all-frame budget
    ("qwen3_vl", {}, (13, 3, 7, 41)),  # extreme aspect, upscale of the short side
    ("qwen3_vl", {"num_frames": 5}, (11, 3, 30, 22)),  # odd frame count: last frame repeated in the last patch
    ("qwen3_vl", {"cap_pixels_per_frame": True}, (17, 3, 24, 40)),  # qwen-vl-utils' per-frame cap
    ("qwen3_vl", {"do_sample_frames": False}, (5, 3, 6, 5)),  # sides below the factor: scaled up first
    ("qwen2_vl", {"fps": 2.0, "do_sample_frames": True}, (9, 3, 20, 28)),
    ("qwen2_vl", {"num_frames": 6, "do_sample_frames": True}, (13, 3, 7, 41)),
    ("qwen2_vl", {}, (5, 3, 30, 22)),  # no sampling (Qwen2-VL's default): 5 frames, padded to 6
    ("qwen2_vl", {"cap_pixels_per_frame": True, "max_video_tokens": 40, "fps": 2.0, "do_sample_frames": True},
     (16, 3, 24, 40)),
]


def _settings(family: str, overrides: dict) -> tuple[object, QwenVideoSettings]:
    vp = tiny_qwen.build_video_processor("qwen3_5" if family == "qwen3_vl" else "qwen2_5_vl")
    for key, value in overrides.items():
        setattr(vp, key, value)
    if "num_frames" in overrides:
        vp.fps = None
    return vp, QwenVideoSettings.from_processor(vp)


@pytest.mark.parametrize("family, overrides, shape", CASES)
def test_matches_processor_on_float_frames(family, overrides, shape):
    torch.manual_seed(sum(shape))
    vp, settings = _settings(family, overrides)
    assert settings.family == family
    video = torch.rand(shape)
    mine = preprocess_video(video, settings, VIDEO_FPS)

    # Convention 1 (exact): the same [0, 1] float frames, processor told not to rescale.
    ref = _processor_run(vp, [video], settings, do_rescale=False)
    assert mine.video_grid_thw.tolist() == ref["video_grid_thw"].tolist()
    assert mine.pixel_values_videos.shape == ref["pixel_values_videos"].shape
    torch.testing.assert_close(mine.pixel_values_videos, ref["pixel_values_videos"], atol=1e-6, rtol=0)
    ref_indices = ref["video_metadata"][0].frames_indices
    expected_indices = list(range(shape[0])) if ref_indices is None else [int(i) for i in ref_indices]
    assert mine.frame_indices == [expected_indices]

    # Convention 2: frames scaled to [0, 255] with the processor's default rescale (fused into normalisation).
    ref255 = _processor_run(vp, [video], settings, scale=255.0)
    torch.testing.assert_close(mine.pixel_values_videos, ref255["pixel_values_videos"], atol=1e-6, rtol=1e-6)

    # A resize really happened (except the no-resize cases listed separately).
    t, h, w = ref["video_grid_thw"][0].tolist()
    assert (h * settings.patch_size, w * settings.patch_size) != tuple(shape[-2:])


def test_uint8_frames_match_without_resize_and_differ_by_rounding_with_it():
    _, settings = _settings("qwen3_vl", {})
    vp = tiny_qwen.build_video_processor("qwen3_5")
    levels = torch.randint(0, 256, (5, 3, 16, 16), generator=torch.Generator().manual_seed(3))
    # 16 x 16 with 4 sampled frames is inside the pixel budget and a multiple of the factor: no resize.
    assert resized_size(settings, 4, 16, 16) == (16, 16)
    mine = preprocess_video(levels.float() / 255, settings, VIDEO_FPS)
    ref = _processor_run(vp, [levels.to(torch.uint8)], settings)
    torch.testing.assert_close(mine.pixel_values_videos, ref["pixel_values_videos"], atol=1e-6, rtol=1e-6)

    # With a resize, torchvision resizes uint8 frames with its fixed-point kernel and rounds (and clamps) the
    # result to integers: a few intensity levels away from the float pipeline, never 1e-6.
    levels = torch.randint(0, 256, (9, 3, 20, 28), generator=torch.Generator().manual_seed(4))
    mine = preprocess_video(levels.float() / 255, settings, VIDEO_FPS)
    ref = _processor_run(vp, [levels.to(torch.uint8)], settings)
    gap = (mine.pixel_values_videos - ref["pixel_values_videos"]).abs().max().item()
    assert 1e-6 < gap <= 3 / 255 / min(settings.image_std)


@pytest.mark.parametrize("kind", ["qwen3_5", "qwen2_5_vl"])
def test_batch_of_videos_matches_processor(kind):
    vp = tiny_qwen.build_video_processor(kind)
    settings = QwenVideoSettings.from_processor(vp).with_overrides(fps=2.0)
    torch.manual_seed(1)
    videos = [torch.rand(9, 3, 20, 28), torch.rand(12, 3, 16, 30), torch.rand(9, 3, 20, 28)]
    rates = [4.0, 6.0, 4.0]
    mine = preprocess_videos(videos, settings, rates)
    ref = _processor_run(vp, videos, settings, fps=rates, do_rescale=False)
    assert mine.video_grid_thw.tolist() == ref["video_grid_thw"].tolist()
    torch.testing.assert_close(mine.pixel_values_videos, ref["pixel_values_videos"], atol=1e-6, rtol=0)
    assert mine.frame_indices == [[int(i) for i in m.frames_indices] for m in ref["video_metadata"]]
    assert mine.sampled_fps() == pytest.approx([m.sampled_fps for m in ref["video_metadata"]])
    # A [B, F, 3, H, W] tensor batch is the same as its list of videos.
    stacked = preprocess_videos(torch.stack([videos[0], videos[2]]), settings, 4.0)
    pair = preprocess_videos([videos[0], videos[2]], settings, [4.0, 4.0])
    assert torch.equal(stacked.pixel_values_videos, pair.pixel_values_videos)


def test_gradients_reach_the_sampled_pixels():
    _, settings = _settings("qwen3_vl", {})
    video = torch.rand(9, 3, 20, 28, requires_grad=True)
    out = preprocess_video(video, settings, VIDEO_FPS)
    weights = torch.randn_like(out.pixel_values_videos)
    (out.pixel_values_videos * weights).sum().backward()
    per_frame = video.grad.abs().sum(dim=(1, 2, 3))
    sampled = out.frame_indices[0]
    assert all(per_frame[i] > 0 for i in sampled)
    assert all(per_frame[i] == 0 for i in range(9) if i not in sampled)


def test_preprocessing_is_differentiable_in_float64():
    # Qwen2 family: per-frame budget forces a resize of a 10 x 6 frame to 8 x 8 (bicubic, antialiased).
    _, settings = _settings("qwen2_vl", {"num_frames": 2, "do_sample_frames": True})
    video = torch.rand(3, 3, 10, 6, dtype=torch.float64, requires_grad=True)
    assert resized_size(settings, 2, 10, 6) != (10, 6)
    assert torch.autograd.gradcheck(lambda v: preprocess_video(v, settings, VIDEO_FPS).pixel_values_videos, (video,))


def test_sampling_rules_by_hand():
    _, qwen3 = _settings("qwen3_vl", {})
    # 2 fps of a 24-frame video at 4 fps: int(24 / 4 * 2) = 12 frames, round(linspace(0, 23, 12)).
    assert sample_frame_indices(qwen3, 24, 4.0) == [0, 2, 4, 6, 8, 10, 13, 15, 17, 19, 21, 23]
    # Too few by fps: raised to min_frames = 4.
    assert sample_frame_indices(qwen3, 6, 4.0) == [0, 2, 3, 5]
    _, qwen2 = _settings("qwen2_vl", {"fps": 2.0, "do_sample_frames": True})
    # 24 / 4 * 2 = 12 frames: arange(0, 24, 2).
    assert sample_frame_indices(qwen2, 24, 4.0) == list(range(0, 24, 2))
    with pytest.raises(ValueError, match="mutually exclusive"):
        sample_frame_indices(QwenVideoSettings(family="qwen3_vl", num_frames=4, fps=2.0), 10, 4.0)
    with pytest.raises(ValueError, match="cannot sample 8 frames"):
        sample_frame_indices(qwen2.with_overrides(num_frames=8), 6, 4.0)


def test_official_critic_input_is_20_frames_of_32_x_64_for_352_x_624_rollouts():
    settings = QwenVideoSettings(family="qwen3_vl", patch_size=16, merge_size=2, temporal_patch_size=2).with_overrides(
        num_frames=20, min_pixels=20480, max_pixels=50176)  # Qwen3.5's own min_pixels (131072) exceeds the budget
    indices = sample_frame_indices(settings, 81, 24.0)
    assert indices == [round(i * 80 / 19 + 1e-9) for i in range(20)] and len(indices) == 20
    assert resized_size(settings, 20, 352, 624) == (32, 64)
