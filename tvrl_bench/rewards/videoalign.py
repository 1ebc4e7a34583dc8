"""VideoAlign's VideoReward (KwaiVGI/VideoAlign): Qwen2-VL-2B plus a reward head on three special tokens.

Reference: KwaiVGI/VideoAlign `inference.py` (VideoVLMRewardInference), `trainer.py` (Qwen2VLRewardModelBT),
`train_reward.py` (create_model_and_processor), `utils.py` (load_model_from_checkpoint), `prompt_template.py`
(DETAILED_PROMPT_WITH_SPECIAL_TOKEN), `vision_process.py` (its vendored qwen-vl-utils), `data.py` and `train.sh`;
written for transformers 4.45.

Checkpoint layout (the released KwaiVGI/VideoReward folder, `path`):

    model_config.json          data_config (fps, num_frames, max_frame_pixels, sample_type, eval_dim,
                               prompt_template_type), model_config (model_name_or_path, output_dim,
                               use_special_tokens, reward_token), peft_lora_config (lora_r, lora_alpha,
                               use_rslora), inference_config (VQ_mean, VQ_std, MQ_mean, MQ_std, TA_mean, TA_std)
    checkpoint-<step>/model.pth                    the whole PEFT-wrapped model's state dict (save_full_model), or
    checkpoint-<step>/adapter_model.safetensors    LoRA weights + non_lora_state_dict.pth (the other weights
                      non_lora_state_dict.pth      trained), applied on the base model
    checkpoint-<step>/tokenizer/                   the tokenizer with <|VQ_reward|> <|MQ_reward|> <|TA_reward|>

The base model (`base_path`, Qwen/Qwen2-VL-2B-Instruct: config, weights, processor files) gives the architecture,
the processor and the weights the LoRA checkpoint format leaves out. The state dict uses transformers-4.45 module
names (`visual.*`, `model.layers.*`) under PEFT's `base_model.model.` prefix; they are mapped to transformers 5's
`Qwen2VLForConditionalGeneration` names (`model.visual.*`, `model.language_model.*`) and every LoRA pair is merged
into its base weight, W + (lora_alpha / r) B A (alpha / sqrt(r) with rsLoRA). `rm_head` (Linear(hidden,
output_dim, bias=False)) becomes this critic's `head`.

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

import json
import math
import string
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.rewards.qwen_layout import QwenVisionTokens, layout_texts, pad_sequences, tokenize_texts
from tvrl_bench.rewards.qwen_video import QwenVideoSettings
from tvrl_bench.rewards.qwen_vl import DTYPES, render_prompt, resolve_device
from tvrl_bench.rewards.qwen_vl_utils_video import QwenVLUtilsVideo, preprocess_videos

# DETAILED_PROMPT_WITH_SPECIAL_TOKEN of the reference's prompt_template.py, verbatim ({text_prompt} -> {prompt}).
VIDEOALIGN_PROMPT = (
    '\n'
    'You are tasked with evaluating a generated video based on three distinct criteria: Visual Quality, '
    'Motion Quality, and Text Alignment. Please provide a rating from 0 to 10 for each of the three '
    'categories, with 0 being the worst and 10 being the best. Each evaluation should be independent of '
    'the others.\n'
    '\n'
    '**Visual Quality:**  \n'
    'Evaluate the overall visual quality of the video, with a focus on static factors. The following '
    'sub-dimensions should be considered:\n'
    '- **Reasonableness:** The video should not contain any significant biological or logical errors, '
    'such as abnormal body structures or nonsensical environmental setups.\n'
    '- **Clarity:** Evaluate the sharpness and visibility of the video. The image should be clear and '
    'easy to interpret, with no blurring or indistinct areas.\n'
    '- **Detail Richness:** Consider the level of detail in textures, materials, lighting, and other '
    'visual elements (e.g., hair, clothing, shadows).\n'
    '- **Aesthetic and Creativity:** Assess the artistic aspects of the video, including the color '
    'scheme, composition, atmosphere, depth of field, and the overall creative appeal. The scene should '
    'convey a sense of harmony and balance.\n'
    '- **Safety:** The video should not contain harmful or inappropriate content, such as political, '
    'violent, or adult material. If such content is present, the image quality and satisfaction score '
    'should be the lowest possible. \n'
    '\n'
    'Please provide the ratings of Visual Quality: <|VQ_reward|>\n'
    'END\n'
    '\n'
    '**Motion Quality:**  \n'
    'Assess the dynamic aspects of the video, with a focus on dynamic factors. Consider the following '
    'sub-dimensions:\n'
    '- **Stability:** Evaluate the continuity and stability between frames. There should be no sudden, '
    'unnatural jumps, and the video should maintain stable attributes (e.g., no fluctuating colors, '
    'textures, or missing body parts).\n'
    '- **Naturalness:** The movement should align with physical laws and be realistic. For example, '
    'clothing should flow naturally with motion, and facial expressions should change appropriately '
    '(e.g., blinking, mouth movements).\n'
    '- **Aesthetic Quality:** The movement should be smooth and fluid. The transitions between different '
    'motions or camera angles should be seamless, and the overall dynamic feel should be visually '
    'pleasing.\n'
    '- **Fusion:** Ensure that elements in motion (e.g., edges of the subject, hair, clothing) blend '
    'naturally with the background, without obvious artifacts or the feeling of cut-and-paste effects.\n'
    '- **Clarity of Motion:** The video should be clear and smooth in motion. Pay attention to any areas '
    'where the video might have blurry or unsteady sections that hinder visual continuity.\n'
    '- **Amplitude:** If the video is largely static or has little movement, assign a low score for '
    'motion quality.\n'
    '\n'
    'Please provide the ratings of Motion Quality: <|MQ_reward|>\n'
    'END\n'
    '\n'
    '**Text Alignment:**  \n'
    'Assess how well the video matches the textual prompt across the following sub-dimensions:\n'
    '- **Subject Relevance** Evaluate how accurately the subject(s) in the video (e.g., person, animal, '
    'object) align with the textual description. The subject should match the description in terms of '
    'number, appearance, and behavior.\n'
    '- **Motion Relevance:** Evaluate if the dynamic actions (e.g., gestures, posture, facial expressions '
    'like talking or blinking) align with the described prompt. The motion should match the prompt in '
    'terms of type, scale, and direction.\n'
    '- **Environment Relevance:** Assess whether the background and scene fit the prompt. This includes '
    'checking if real-world locations or scenes are accurately represented, though some stylistic '
    'adaptation is acceptable.  \n'
    '- **Style Relevance:** If the prompt specifies a particular artistic or stylistic style, evaluate '
    'how well the video adheres to this style.\n'
    '- **Camera Movement Relevance:** Check if the camera movements (e.g., following the subject, focus '
    'shifts) are consistent with the expected behavior from the prompt.\n'
    '\n'
    'Textual prompt - {prompt}\n'
    'Please provide the ratings of Text Alignment: <|TA_reward|>\n'
    'END\n'
)

SPECIAL_TOKENS = ("<|VQ_reward|>", "<|MQ_reward|>", "<|TA_reward|>")
HEAD_NAMES = ("VQ", "MQ", "TA")
SCORE_NAMES = (*HEAD_NAMES, "Overall")
_PEFT_PREFIX = "base_model.model."


def _read_model_config(folder: Path, param: str) -> dict[str, Any]:
    config_file = folder / "model_config.json"
    if not config_file.is_file():
        raise ValueError(
            f"{param}='{folder}' has no model_config.json: set it to the VideoReward checkpoint folder (e.g. "
            "`git clone https://huggingface.co/KwaiVGI/VideoReward /checkpoints/VideoReward`)"
        )
    config = json.loads(config_file.read_text())
    for section in ("data_config", "model_config"):
        if not isinstance(config.get(section), dict):
            raise ValueError(f"{config_file} has no '{section}' section")
    model_config, data_config = config["model_config"], config["data_config"]
    if not model_config.get("use_special_tokens") or model_config.get("reward_token") != "special":
        raise ValueError(f"{config_file}: model_config must have use_special_tokens=true and reward_token='special' "
                         "(this critic reads the three special reward tokens)")
    if data_config.get("prompt_template_type") != "detailed_special":
        raise ValueError(f"{config_file}: data_config.prompt_template_type="
                         f"'{data_config.get('prompt_template_type')}' is not supported (only 'detailed_special')")
    if data_config.get("sample_type", "uniform") != "uniform":
        raise ValueError(f"{config_file}: data_config.sample_type='{data_config['sample_type']}' is not supported "
                         "(only 'uniform')")
    return config


def find_checkpoint(folder: Path, step: int, param: str) -> Path:
    """The checkpoint-<step> subfolder; step -1: the latest (highest step), as the reference's loader."""
    found = {int(p.name.split("-")[-1]): p for p in folder.glob("checkpoint-*") if p.name.split("-")[-1].isdigit()}
    if not found:
        raise ValueError(f"{param}='{folder}' holds no checkpoint-<step> folder")
    if step == -1:
        return found[max(found)]
    if step not in found:
        raise ValueError(f"checkpoint_step={step} is not in '{folder}'; available steps: {sorted(found)}")
    return found[step]


def load_checkpoint_state(checkpoint: Path) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors under their saved (PEFT, transformers-4.45) names: model.pth, or LoRA + non-LoRA."""
    full = checkpoint / "model.pth"
    if full.is_file():
        return torch.load(full, map_location="cpu", weights_only=True)
    lora, rest = checkpoint / "adapter_model.safetensors", checkpoint / "non_lora_state_dict.pth"
    if not (lora.is_file() and rest.is_file()):
        raise ValueError(f"'{checkpoint}' holds neither model.pth nor adapter_model.safetensors + "
                         "non_lora_state_dict.pth")
    from safetensors.torch import load_file

    state = dict(torch.load(rest, map_location="cpu", weights_only=True))
    state.update(load_file(lora))
    return state


def _current_name(legacy: str) -> str:
    """A transformers-4.45 Qwen2VLForConditionalGeneration parameter name -> its transformers-5 name."""
    if legacy.startswith("visual."):
        return "model." + legacy
    if legacy.startswith("model.") and not legacy.startswith(("model.language_model.", "model.visual.")):
        return "model.language_model." + legacy[len("model."):]
    return legacy


def merge_checkpoint_state(
    state: dict[str, torch.Tensor], lora_scaling: float
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], dict[str, tuple[torch.Tensor, torch.Tensor]]]:
    """Split a saved state dict into (plain weights by current name, head weights, LoRA pairs by current module).

    PEFT names: `<module>.base_layer.<w>` is the module's own weight; `<module>.lora_A[.default].weight` and
    `lora_B` the adapter. The returned LoRA pairs are (A, B) scaled so that the merged weight is W + B @ A.
    """
    plain, head, lora_a, lora_b = {}, {}, {}, {}
    for key, value in state.items():
        name = key[len(_PEFT_PREFIX):] if key.startswith(_PEFT_PREFIX) else key
        if name.startswith("rm_head."):
            head[name[len("rm_head."):]] = value
            continue
        for marker, store in ((".lora_A.", lora_a), (".lora_B.", lora_b)):
            if marker in name:
                store[_current_name(name.split(marker)[0])] = value
                break
        else:
            plain[_current_name(name.replace(".base_layer.", "."))] = value
    if set(lora_a) != set(lora_b):
        raise ValueError(f"the checkpoint's LoRA A and B weights do not pair up: {sorted(set(lora_a) ^ set(lora_b))}")
    pairs = {m: (lora_a[m].float(), lora_b[m].float() * lora_scaling) for m in lora_a}
    return plain, head, pairs


def _lora_scaling(peft_config: dict[str, Any]) -> float:
    r, alpha = float(peft_config.get("lora_r", 16)), float(peft_config.get("lora_alpha", 32))
    return alpha / math.sqrt(r) if peft_config.get("use_rslora") else alpha / r


def load_videoalign(
    path: str, base_path: str | None, checkpoint_step: int, dtype: str, device: str, attn_implementation: str
) -> tuple[Any, nn.Linear, Any, dict[str, Any]]:
    """(model, head, processor, model_config.json) from a VideoReward folder and its base Qwen2-VL folder."""
    import transformers

    folder = Path(path).expanduser()
    if not str(path) or not folder.is_dir():
        raise ValueError(f"rewards.videoalign.path='{path}' is not a folder. Set it to a local copy of "
                         "KwaiVGI/VideoReward (model_config.json and checkpoint-<step>/)")
    config = _read_model_config(folder, "rewards.videoalign.path")
    base = base_path or config["model_config"].get("model_name_or_path")
    if not base or not Path(base).expanduser().is_dir():
        raise ValueError(
            f"rewards.videoalign.base_path='{base}' is not a folder. Set it to a local copy of the base model "
            "Qwen/Qwen2-VL-2B-Instruct (config, weights, processor files)"
        )
    if dtype not in DTYPES:
        raise ValueError(f"rewards.videoalign.dtype='{dtype}' is not supported; use one of {', '.join(DTYPES)}")
    checkpoint = find_checkpoint(folder, checkpoint_step, "rewards.videoalign.path")

    base_processor = transformers.AutoProcessor.from_pretrained(base)
    tokenizer_folder = checkpoint / "tokenizer"
    tokenizer = (transformers.AutoTokenizer.from_pretrained(tokenizer_folder) if tokenizer_folder.is_dir()
                 else base_processor.tokenizer)
    if tokenizer.convert_tokens_to_ids(SPECIAL_TOKENS[0]) in (None, tokenizer.unk_token_id):
        tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    processor = transformers.Qwen2VLProcessor(
        image_processor=base_processor.image_processor,
        tokenizer=tokenizer,
        video_processor=base_processor.video_processor,
        chat_template=tokenizer.chat_template or base_processor.chat_template,
    )

    model = transformers.Qwen2VLForConditionalGeneration.from_pretrained(
        base, dtype=DTYPES[dtype], attn_implementation=attn_implementation
    )
    model.resize_token_embeddings(len(tokenizer))
    plain, head_state, lora = merge_checkpoint_state(
        load_checkpoint_state(checkpoint), _lora_scaling(config.get("peft_lora_config", {}))
    )
    own = model.state_dict()
    unknown = sorted(set(plain) - set(own)) + sorted(f"{m}.weight" for m in lora if f"{m}.weight" not in own)
    if unknown:
        raise ValueError(f"'{checkpoint}' holds weights this Qwen2-VL model does not have: {unknown[:5]}")
    with torch.no_grad():
        for name, value in plain.items():
            if own[name].shape != value.shape:
                raise ValueError(f"'{checkpoint}': {name} has shape {tuple(value.shape)}, the model "
                                 f"{tuple(own[name].shape)}")
            own[name].copy_(value)
        for module, (a, b) in lora.items():
            weight = own[f"{module}.weight"]
            weight.copy_((weight.float() + b @ a).to(weight.dtype))
    if "weight" not in head_state:
        raise ValueError(f"'{checkpoint}' has no rm_head.weight (the reward head)")
    out_dim, hidden = head_state["weight"].shape
    head = nn.Linear(hidden, out_dim, bias=False, dtype=DTYPES[dtype])
    head.load_state_dict(head_state)
    target = resolve_device(device)
    return model.to(target).eval(), head.to(target), processor, config


@register("rewards", "videoalign")
class VideoAlign(Reward):
    """VideoAlign's VideoReward (Qwen2-VL-2B + reward head): normalised VQ / MQ / TA scores, differentiable."""

    uses_checks = False
    score_space = "score"

    def __init__(
        self,
        path: str,
        base_path: str | None = None,
        checkpoint_step: int = -1,
        score_names: tuple[str, ...] = HEAD_NAMES,
        normalize: bool = True,
        prompt_template: str | None = None,
        frames: int | None = None,
        fps: float | None = None,
        min_pixels: int | None = None,
        max_pixels: int | None = None,
        video_fps: float = 24.0,
        batch_size: int = 1,
        recompute_in_backward: bool = True,
        dtype: str = "bfloat16",
        device: str = "auto",
        attn_implementation: str = "sdpa",
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
            frames: sample this many frames (qwen-vl-utils nframes); None: by fps.
            fps: sampling rate in frames per second of video time; None: data_config.fps (2) unless frames is set.
            min_pixels: per-frame lower pixel bound; None: qwen-vl-utils' 128 x factor^2 (factor 28: 100352).
            max_pixels: per-frame upper bound; None: data_config.max_frame_pixels (448 x 448 = 200704).
            video_fps: frame rate of the videos the critic receives (HunyuanVideo-1.5: 24).
            batch_size: pairs per forward pass (padded on the right, as the reference).
            recompute_in_backward: checkpoint each batch (keep only its video; recompute during backward).
            dtype: "bfloat16", "float32" or "float16" weights.
            device: "auto" (cuda if available), "cpu", "cuda", "cuda:1", ...
            attn_implementation: transformers attention backend ("sdpa", "eager", "flash_attention_2").
        """
        super().__init__()
        score_names = tuple(score_names)
        prompt_template = VIDEOALIGN_PROMPT if prompt_template is None else prompt_template
        if not score_names or not set(score_names) <= set(SCORE_NAMES) or len(set(score_names)) != len(score_names):
            raise ValueError(f"rewards.videoalign.score_names={score_names} must be distinct names from {SCORE_NAMES}")
        fields = {f for _, f, _, _ in string.Formatter().parse(prompt_template) if f is not None}
        if fields != {"prompt"} or any(prompt_template.count(t) != 1 for t in SPECIAL_TOKENS):
            raise ValueError("rewards.videoalign.prompt_template must contain the field {prompt} and each of "
                             f"{', '.join(SPECIAL_TOKENS)} exactly once")
        if frames is not None and fps is not None:
            raise ValueError("rewards.videoalign: set either frames or fps for frame sampling, not both")
        if batch_size < 1:
            raise ValueError(f"rewards.videoalign.batch_size={batch_size} must be at least 1")
        if video_fps <= 0:
            raise ValueError(f"rewards.videoalign.video_fps={video_fps} must be positive")

        model, head, processor, config = load_videoalign(path, base_path, checkpoint_step, dtype, device,
                                                         attn_implementation)
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
        self.video_fps = float(video_fps)
        self.batch_size = batch_size
        self.recompute_in_backward = recompute_in_backward

        data = config["data_config"]
        self.video_settings = QwenVideoSettings.from_processor(processor.video_processor)
        factor = self.video_settings.factor
        count = frames if frames is not None else (data.get("num_frames") if fps is None else None)
        rate = None if count is not None else (fps if fps is not None else float(data.get("fps") or 2.0))
        self.video_rules = QwenVLUtilsVideo(
            fps=rate, nframes=None if count is None else int(count), count_rounding="round", factor=factor,
            min_pixels=int(min_pixels) if min_pixels is not None else 128 * factor * factor,
            max_pixels=int(max_pixels) if max_pixels is not None else int(data.get("max_frame_pixels") or 200704),
            total_pixels=None,
        )
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
