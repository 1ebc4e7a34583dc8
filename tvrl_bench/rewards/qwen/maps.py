"""Scores with gradient maps for the answer-likelihood critic (`rewards.qwen_vl`): per-check or joint scoring
units, maps w.r.t. the video pixels or the critic's own input patches (the official TVRL credit source).

A unit is one sequence: a (video, check) pair in "per_check" mode, a video with all its checks in "joint" mode
(rewards/qwen/joint.py). Units are scored in batches of the critic's `batch_size`; each batch is one forward
with one gradient call per check index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from tvrl_bench.rewards.qwen.credit import patch_credit
from tvrl_bench.rewards.qwen.layout import layout_texts, pad_sequences, tokenize_texts
from tvrl_bench.rewards.qwen.video import QwenVideoInputs, preprocess_videos

if TYPE_CHECKING:
    from tvrl_bench.rewards.qwen.answer_likelihood import QwenVLAnswerLikelihood


def suffix_log_probs(
    critic: QwenVLAnswerLikelihood,
    inputs: QwenVideoInputs,
    texts: list[str],
    suffixes: list[list[int]],
    picks: list[list[list[int]]],
) -> list[torch.Tensor]:
    """One forward over a batch: per sequence r a tensor [len(picks[r])] of summed teacher-forced log-probs
    (probabilities with score_type "prob").

    texts[r] holds one video token (the video of `inputs` row r); suffixes[r] the appended answer ids;
    picks[r][g] the indices into suffixes[r] whose log-probs make score g.
    """
    laid_out = layout_texts(texts, inputs, critic.video_settings, critic.tokens)
    prompt_ids = tokenize_texts(critic.processor.tokenizer, laid_out)
    seqs = [ids + suffix for ids, suffix in zip(prompt_ids, suffixes)]
    input_ids, attention_mask = pad_sequences(seqs, critic.tokens.pad_token_id, critic.padding_side)
    kwargs = critic.forward_kwargs(input_ids, attention_mask, inputs)
    hidden = critic.model.model(**kwargs).last_hidden_state  # [b, L, D]
    length = input_ids.shape[1]
    out = []
    for r, seq in enumerate(seqs):
        offset = length - len(seq) if critic.padding_side == "left" else 0
        first = offset + len(prompt_ids[r])  # position of the first suffix token
        index = torch.arange(len(suffixes[r]), device=hidden.device)
        log_probs = torch.log_softmax(critic.model.lm_head(hidden[r, first - 1 + index]).float(), dim=-1)
        token = log_probs.gather(-1, torch.tensor(suffixes[r], device=hidden.device)[:, None]).squeeze(-1)
        scores = torch.stack([token[g].sum() for g in picks[r]])
        out.append(scores.exp() if critic.score_type == "prob" else scores)
    return out


def _unit_texts(critic: QwenVLAnswerLikelihood, batch, prompts, questions) -> tuple[list, list, list]:
    """(chat texts, answer suffix ids, per-score picks into the suffix) for a batch of units."""
    texts: list[str] = []
    suffixes: list[list[int]] = []
    picks: list[list[list[int]]] = []
    for i, js in batch:
        if critic.scores_jointly:
            text, ids, positions = critic.joint_text(prompts[i], questions[i])
            texts.append(text)
            suffixes.append(ids)
            picks.append([[p] for p in positions])
        else:
            texts.append(critic.prompt_text(prompts[i], questions[i][js[0]]))
            suffixes.append(list(critic.answer_ids))
            picks.append([list(range(len(critic.answer_ids)))])
    return texts, suffixes, picks


def score_with_maps(
    critic: QwenVLAnswerLikelihood, video: torch.Tensor, prompts: list[str], checks: list[Any], space: str | None
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(scores[B, K], maps or None) for video[B, F, 3, H, W] in [0, 1].

    space None: scores only; "pixels": maps[B, K, F, H, W] = |d score_k / d video| summed over colour;
    "critic": maps[B, K, Tc, Hc, Wc] = |d score_k / d patches| summed per patch, merge packing undone
    (rewards/qwen/credit.py).
    """
    questions = critic.questions(checks)
    b, k = len(prompts), max((len(q) for q in questions), default=0)
    if critic.scores_jointly:
        units = [(i, list(range(len(questions[i])))) for i in range(b)]
    else:
        units = [(i, [j]) for i in range(b) for j in range(len(questions[i]))]
    scores = torch.zeros(b, k)
    maps: torch.Tensor | None = None
    for start in range(0, len(units), critic.batch_size):
        batch = units[start : start + critic.batch_size]
        rows = video[torch.tensor([i for i, _ in batch])].to(critic.device)
        leaf = rows.clone().requires_grad_(True) if space == "pixels" else rows
        inputs = preprocess_videos(leaf, critic.video_settings, critic.video_fps)
        if space == "critic":
            inputs.pixel_values_videos = inputs.pixel_values_videos.detach().requires_grad_(True)
            leaf = inputs.pixel_values_videos
        per_unit = suffix_log_probs(critic, inputs, *_unit_texts(critic, batch, prompts, questions))
        for (i, js), unit_scores in zip(batch, per_unit):
            scores[i, js] = unit_scores.detach().float().cpu()
        if space is None:
            continue
        width = max(len(js) for _, js in batch)
        for g in range(width):
            total = sum(u[g] for u in per_unit if len(u) > g)
            (grad,) = torch.autograd.grad(total, leaf, retain_graph=g < width - 1)
            if space == "pixels":
                unit_maps = list(grad.abs().sum(dim=2).float())
            else:
                unit_maps = patch_credit(grad, inputs.video_grid_thw, critic.video_settings.merge_size)
            if maps is None:
                maps = torch.zeros(b, k, *unit_maps[0].shape)
            for (i, js), m in zip(batch, unit_maps):
                if len(js) > g:
                    maps[i, js[g]] = m.cpu()
    return scores.to(video.device), None if maps is None else maps.to(video.device)
