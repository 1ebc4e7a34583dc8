"""The HunyuanVideo-1.5 policy on a tiny pipeline of the real classes, saved and loaded through the policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.policies.tiny_hunyuan import save_tiny_hunyuan
from tvrl_bench import registry
from tvrl_bench.policies.hunyuan_video15 import HunyuanVideo15Policy
from tvrl_bench.tokens import TokenGrid, pixels_to_tokens

PROMPTS = ["a red ball rolls to the left", 'a neon sign that says "open" flickers']


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return save_tiny_hunyuan(tmp_path_factory.mktemp("tiny_hunyuan"))


@pytest.fixture(scope="module")
def policy(tiny):
    return HunyuanVideo15Policy(tiny.path, **tiny.policy_kwargs)


def make_policy(tiny, **overrides):
    return HunyuanVideo15Policy(tiny.path, **{**tiny.policy_kwargs, **overrides})


def latents(policy, batch, seed=0):
    return torch.randn(batch, *policy.latent_shape(), generator=torch.Generator().manual_seed(seed))


def assert_grads_reach_lora(policy, nonzero: bool) -> None:
    """Every LoRA weight on the path to the video output has a gradient; no base weight has one."""
    # The last block's text-stream outputs (its text queries and to_add_out) never reach the video output.
    last = f"transformer_blocks.{policy.transformer.get_base_model().config.num_layers - 1}.attn."
    dead = (last + "add_q_proj.", last + "to_add_out.")
    for name, p in policy.named_parameters():
        if "lora_" not in name:
            assert p.grad is None, name
        elif not any(d in name for d in dead):
            assert p.grad is not None, name
            # with lora_B = 0 (peft's init) only lora_B receives a non-zero gradient
            if nonzero or "lora_B" in name:
                assert p.grad.abs().sum() > 0, name


def test_loads_the_saved_pipeline_with_its_shapes_and_grid(policy):
    assert policy.latent_shape() == (4, 3, 2, 2)  # 9 frames of 32 x 32 over a 4 x 16 x 16 VAE
    assert policy.token_grid == TokenGrid((1, 1, 1), (4, 16, 16), causal_first_frame=True)
    assert policy.scheduler_shift == 5.0
    assert policy.num_train_timesteps == 1000


def test_matches_the_diffusers_pipeline_denoising_and_decoding(tiny, policy):
    """Euler steps with policy.velocity reproduce HunyuanVideo15Pipeline's own loop (timestep, sign, CFG, t2v input)."""
    from diffusers import HunyuanVideo15Pipeline

    pipe = HunyuanVideo15Pipeline.from_pretrained(tiny.path)
    pipe.vae.enable_slicing()
    pipe.tokenizer_max_length = policy.text_max_length
    pipe.tokenizer_2_max_length = policy.byt5_max_length
    pipe.prompt_template_encode_start_idx = policy.prompt_template_crop
    pipe.guider.guidance_scale = policy.guidance_scale
    steps = 3
    x_start = latents(policy, 2, seed=1)
    common = dict(prompt=PROMPTS, height=32, width=32, num_frames=9, num_inference_steps=steps)
    expected = pipe(**common, latents=x_start.clone(), output_type="latent").frames
    expected_video = pipe(**common, latents=x_start.clone(), output_type="pt").frames

    pipe.scheduler.set_timesteps(sigmas=np.linspace(1.0, 0.0, steps + 1)[:-1])
    sigmas = pipe.scheduler.sigmas  # shifted levels and the final 0
    cond = policy.encode(PROMPTS)
    x = x_start.clone()
    with torch.no_grad():
        for i in range(steps):
            v = policy.velocity(x, sigmas[i].expand(2), cond)
            x = x + (sigmas[i + 1] - sigmas[i]) * v  # tvrl-bench's Euler step: x' = x + v dt
        video = policy.decode(x)
    torch.testing.assert_close(x, expected, atol=2e-5, rtol=1e-4)
    assert video.shape == expected_video.shape == (2, 9, 3, 32, 32)
    torch.testing.assert_close(video, expected_video, atol=2e-5, rtol=1e-4)


def test_velocity_shape_dtype_and_batched_cfg(tiny, policy):
    x = latents(policy, 2)
    sigma = torch.tensor([0.9, 0.4])
    cond = policy.encode(PROMPTS)
    with torch.no_grad():
        guided = policy.velocity(x, sigma, cond)
        plain = make_policy(tiny, guidance_scale=1.0)
        v_cond = plain.velocity(x, sigma, cond)
        swapped = {**cond, **{k: cond[f"neg_{k}"] for k in ("embeds", "mask", "embeds_2", "mask_2")}}
        v_uncond = plain.velocity(x, sigma, swapped)
    assert guided.shape == x.shape and guided.dtype == torch.float32
    assert not torch.allclose(v_cond, v_uncond)
    g = policy.guidance_scale
    torch.testing.assert_close(guided, v_uncond + g * (v_cond - v_uncond), atol=1e-5, rtol=1e-4)


def test_decode_range_frames_and_token_grid(tiny):
    wide = make_policy(tiny, frames=13, width=64)
    assert wide.latent_shape() == (4, 4, 2, 4)
    x = latents(wide, 1)
    with torch.no_grad():
        video = wide.decode(x)
    t = x.shape[2]
    assert video.shape == (1, 4 * (t - 1) + 1, 3, 32, 64)
    assert video.dtype == torch.float32 and video.min() >= 0 and video.max() <= 1
    grid = wide.token_grid
    assert grid.grid_from_video(video[:, :, 0].shape) == grid.grid_from_latent(x.shape) == (4, 2, 4)
    assert pixels_to_tokens(video.mean(dim=2), grid).shape == (1, 4, 2, 4)


def test_batch_decode_uses_slicing(policy):
    x = latents(policy, 2, seed=3)
    with torch.no_grad():
        batched = policy.decode(x)
        single = torch.cat([policy.decode(x[i : i + 1]) for i in range(2)])
        torch.testing.assert_close(batched, single)
        # The diffusers 0.42 limitation the slicing default works around (docs/real_models.md).
        policy.vae.disable_slicing()
        try:
            with pytest.raises(RuntimeError):
                policy.decode(x)
        finally:
            policy.vae.enable_slicing()


def test_only_lora_trains_and_reference_is_the_base_model(tiny):
    policy = make_policy(tiny)
    trainable = policy.trainable_parameters()
    requires_grad = [n for n, p in policy.named_parameters() if p.requires_grad]
    assert trainable and len(requires_grad) == len(trainable)
    assert all("lora_" in n for n in requires_grad)
    assert any("add_q_proj.lora_A" in n for n in requires_grad) and any("to_out.0.lora_B" in n for n in requires_grad)

    x, sigma, cond = latents(policy, 2), torch.tensor([0.8, 0.3]), policy.encode(PROMPTS)
    with torch.no_grad():
        base = policy.velocity(x, sigma, cond)
        for name, p in policy.transformer.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5, generator=torch.Generator().manual_seed(len(name)))
        adapted = policy.velocity(x, sigma, cond)
        with policy.reference():
            reference = policy.velocity(x, sigma, cond)
        after = policy.velocity(x, sigma, cond)
    assert not torch.allclose(adapted, base, atol=1e-4)
    torch.testing.assert_close(reference, base)
    torch.testing.assert_close(after, adapted)

    policy.velocity(x, sigma, cond).square().mean().backward()
    assert_grads_reach_lora(policy, nonzero=True)


def test_prompt_embeddings_are_cached(tiny):
    policy = make_policy(tiny)
    calls = []
    policy.text_encoder.register_forward_hook(lambda *_: calls.append(1))
    first = policy.encode(PROMPTS)
    assert len(calls) == 1 and policy.cache_misses == 3  # two prompts and the negative prompt, one batch
    second = policy.encode(list(reversed(PROMPTS)))
    assert len(calls) == 1 and policy.cache_hits == 3
    torch.testing.assert_close(second["embeds"][1], first["embeds"][0])
    torch.testing.assert_close(second["neg_embeds"], first["neg_embeds"])
    assert first["mask"].shape == first["embeds"].shape[:2] and first["mask_2"][1].sum() > 0  # quoted glyph text


def test_text_encoder_offload_keeps_the_encoders_out_of_the_module(tiny, policy):
    offloaded = make_policy(tiny, text_encoder_offload=True)
    names = {n.split(".")[0] for n, _ in offloaded.named_parameters()}
    assert names == {"vae", "transformer"}
    assert all(p.device.type == "cpu" for m in offloaded._text_encoders for p in m.parameters())
    torch.testing.assert_close(offloaded.encode(PROMPTS), policy.encode(PROMPTS))


def test_bf16_with_gradient_checkpointing_trains_float32_lora(tiny):
    policy = make_policy(tiny, dtype="bfloat16", gradient_checkpointing=True)
    assert policy.transformer.get_base_model().gradient_checkpointing
    assert policy.transformer.get_base_model().dtype == torch.bfloat16 and policy.vae.dtype == torch.bfloat16
    assert all(p.dtype == torch.float32 for p in policy.trainable_parameters())
    v = policy.velocity(latents(policy, 1), torch.tensor([0.5]), policy.encode(PROMPTS[:1]))
    assert v.dtype == torch.float32 and torch.isfinite(v).all()
    v.square().mean().backward()
    assert_grads_reach_lora(policy, nonzero=False)


def test_bad_parameters_name_the_setting(tiny, tmp_path):
    with pytest.raises(FileNotFoundError, match="policies.hunyuan_video15.path"):
        HunyuanVideo15Policy(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="frames=10"):
        make_policy(tiny, frames=10)
    with pytest.raises(ValueError, match="width=40"):
        make_policy(tiny, width=40)
    with pytest.raises(ValueError, match="lora_targets"):
        make_policy(tiny, lora_targets=("qkv",))
    with pytest.raises(ValueError, match="dtype"):
        make_policy(tiny, dtype="int8")


def test_preset_builds_the_policy_through_gin(tiny):
    
    from tvrl_bench.config import load_config

    overrides = [b for b in tiny.gin_bindings()]
    load_config(["components/policies/hunyuan_video15_480p.gin"], overrides)
    policy = registry.build("POLICY")
    assert isinstance(policy, HunyuanVideo15Policy)
    assert policy.path == tiny.path and policy.latent_shape() == (4, 3, 2, 2)
