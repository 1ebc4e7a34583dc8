"""The settings every Qwen-family critic shares (`rewards.qwen_inputs`): bound once in gin, seen by each critic
(tiny real checkpoints); gin scopes, and errors that name the parameter and the fix."""

from __future__ import annotations

import gin
import pytest
import torch

from tests.rewards import tiny_qwen
from tests.rewards.tiny_videoalign import save_tiny_videoalign
from tvrl_bench import registry
from tvrl_bench.config import ConfigError, check_unused, load_config
from tvrl_bench.rewards.qwen.answer_likelihood import QwenVLAnswerLikelihood
from tvrl_bench.rewards.qwen.inputs import QwenInputs, resolve_inputs
from tvrl_bench.rewards.qwen.video_settings import QwenVideoSettings
from tvrl_bench.rewards.unifiedreward2 import UnifiedReward2
from tvrl_bench.rewards.videoalign import VideoAlign
from tvrl_bench.rewards.videoscore2 import VideoScore2

SHARED = [
    "rewards.qwen_inputs.min_pixels = 64",
    "rewards.qwen_inputs.max_pixels = 320",
    "rewards.qwen_inputs.batch_size = 3",
    "rewards.qwen_inputs.video_fps = 8.0",
    "rewards.qwen_inputs.dtype = 'float32'",
    "rewards.qwen_inputs.device = 'cpu'",
]


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("qwen_inputs")
    return {
        "qwen3_5": str(tiny_qwen.save_tiny_qwen(root / "qwen3_5", "qwen3_5")),
        "qwen2_5_vl": str(tiny_qwen.save_tiny_qwen(root / "qwen2_5_vl", "qwen2_5_vl")),
        "videoalign": str(save_tiny_videoalign(root / "videoalign").reward_dir),
    }


def test_one_binding_is_what_every_qwen_critic_uses(paths):
    loaded = load_config([], SHARED)
    critics = {
        "qwen_vl": QwenVLAnswerLikelihood(paths["qwen3_5"]),
        "videoscore2": VideoScore2(paths["qwen2_5_vl"]),
        "unifiedreward2": UnifiedReward2(paths["qwen2_5_vl"]),
        "videoalign": VideoAlign(paths["videoalign"]),
    }
    assert len({critic.inputs for critic in critics.values()}) == 1  # one equal settings record
    for name, critic in critics.items():
        s = critic.inputs
        assert (s.min_pixels, s.max_pixels, s.batch_size, s.video_fps, s.dtype, s.device) == (
            64, 320, 3, 8.0, "float32", "cpu"), name
        assert critic.batch_size == 3 and critic.video_fps == 8.0, name
        assert next(critic.model.parameters()).dtype == torch.float32 and critic.device == torch.device("cpu"), name
    # Where each critic applies the shared pixel budget.
    settings = critics["qwen_vl"].video_settings
    assert (settings.min_pixels, settings.max_pixels) == (64, 320)
    for name in ("videoscore2", "videoalign"):
        assert (critics[name].video_rules.min_pixels, critics[name].video_rules.max_pixels) == (64, 320), name
    images = critics["unifiedreward2"].image_settings
    assert (images.min_pixels, images.max_pixels) == (64, 320)
    check_unused(loaded)  # the shared bindings count as used


def test_gin_scopes_keep_two_critics_apart(paths):
    load_config([], SHARED + [
        f"rewards.qwen_vl.path = '{paths['qwen3_5']}'",
        "REWARD = @rewards.qwen_vl()",
        "judges.vlm.reward = @judge/rewards.qwen_vl()",
        "JUDGE = @judges.vlm()",
        "judge/rewards.qwen_inputs.batch_size = 5",
        f"rewards.videoscore2.path = '{paths['qwen2_5_vl']}'",
        "vs2/rewards.qwen_inputs.max_pixels = 256",
    ])
    training, judge = registry.build("REWARD"), registry.build("JUDGE").reward
    assert training.batch_size == 3 and judge.batch_size == 5  # the scoped binding reaches the judge's critic only
    assert training.inputs.max_pixels == judge.inputs.max_pixels == 320
    with gin.config_scope("vs2"):
        videoscore2 = VideoScore2()
    assert videoscore2.video_rules.max_pixels == 256 and videoscore2.batch_size == 3  # only its scope changed


def test_inputs_given_explicitly_and_a_field_bound_on_a_critic(paths):
    inputs = QwenInputs(max_pixels=384, batch_size=2, dtype="float32", device="cpu")
    critic = QwenVLAnswerLikelihood(paths["qwen3_5"], inputs=inputs)
    assert critic.inputs is inputs and critic.video_settings.max_pixels == 384 and critic.batch_size == 2
    # the shared fields belong to rewards.qwen_inputs: bound on a critic they fail at parse time, with the fix
    with pytest.raises(ConfigError, match="'rewards.qwen_vl' has no parameter 'max_pixels'"):
        load_config([], ["rewards.qwen_vl.max_pixels = 384"])


def test_bad_settings_name_the_parameter_and_the_fix():
    with pytest.raises(ValueError, match=r"rewards\.qwen_inputs: set either frames or fps .*not both"):
        QwenInputs(frames=4, fps=2.0)
    with pytest.raises(ValueError, match=r"rewards\.qwen_inputs\.dtype='fp8' is not supported; use one of"):
        QwenInputs(dtype="fp8")
    with pytest.raises(ValueError, match=r"rewards\.qwen_inputs\.padding_side='middle'"):
        QwenInputs(padding_side="middle")
    with pytest.raises(ValueError, match=r"rewards\.qwen_inputs\.batch_size=0 must be at least 1"):
        QwenInputs(batch_size=0)
    with pytest.raises(ValueError, match=r"rewards\.qwen_inputs\.min_pixels=512 exceeds max_pixels=256"):
        QwenInputs(min_pixels=512, max_pixels=256)
    with pytest.raises(TypeError, match=r"rewards\.qwen_vl\.inputs must be a QwenInputs"):
        resolve_inputs("rewards.qwen_vl", {"fps": 2.0})
    with pytest.raises(ConfigError, match="'rewards.qwen_inputs' has no parameter 'max_pixel'"):
        load_config([], ["rewards.qwen_inputs.max_pixel = 3"])


def test_the_processor_settings_with_a_critics_choices():
    processor = QwenVideoSettings(family="qwen3_vl", fps=2.0, min_pixels=256, max_pixels=4096)
    assert QwenInputs().video_settings(processor) == processor  # None everywhere: the processor's own
    chosen = QwenInputs(frames=6, max_pixels=2048).video_settings(processor)
    assert (chosen.num_frames, chosen.fps, chosen.max_pixels, chosen.do_sample_frames) == (6, None, 2048, True)
    assert QwenInputs(batch_size=None).batch(4) == 4 and QwenInputs(batch_size=2).batch(4) == 2
