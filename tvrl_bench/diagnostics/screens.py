"""The statistics of the three credit screens (diagnostics/screen_*.py): can a regime show credit at all?

Routed credit acts like a larger batch, and only where training is limited by gradient noise, errors are local and
several parts of the reward fail independently. The screens measure each before any trial hours are spent:

- noise-limited (`paired_gain`): uniform credit's gain with more rollouts per step minus its gain at the trial's,
  paired by seed (or by prompt for one seed);
- gradient quality (`cosines_to_reference`): the cosine of each router's batch gradients with a reference gradient
  (uniform credit's mean over many rollouts);
- locality (`effective_fraction`, `local_share`, `outcome_correlation`, `variance_shares`): how much of the video a
  failed check's evidence covers, how strongly checks fail together, and which checks carry the within-group reward
  variance that advantages are made of.

All functions are pure: tensors in, numbers out; shapes are in their docstrings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from tvrl_bench.report.stats import DeltaStat, paired_delta


def paired_gain(treated: dict[str, float], baseline: dict[str, float]) -> DeltaStat:
    """Mean of treated[key] - baseline[key] over the shared keys (seeds, or prompts for one seed) with its 95%
    t-interval, the statistic of the noise-limited screen."""
    return paired_delta(treated, baseline)


@dataclass(frozen=True)
class CosineStat:
    """Mean cosine of n batch gradients with a reference, its standard error over the batches, and the per-batch
    cosines[n]."""

    mean: float
    se: float
    n: int
    values: torch.Tensor


def cosines_to_reference(grads: torch.Tensor, reference: torch.Tensor) -> CosineStat:
    """CosineStat of grads[n, D] (one flat gradient per batch) against reference[D]."""
    cos = torch.nn.functional.cosine_similarity(grads.to(torch.float64), reference.to(torch.float64)[None], dim=1)
    n = int(cos.numel())
    se = float(cos.std(unbiased=True)) / math.sqrt(n) if n > 1 else float("nan")
    return CosineStat(float(cos.mean()), se, n, cos)


def ratio_interval(treated: torch.Tensor, baseline: torch.Tensor, level: float = 0.95, draws: int = 4000,
                   seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(treated) / mean(baseline) over paired samples treated[n], baseline[n]
    (the same batches serve both routers, so a batch is redrawn for both at once)."""
    g = torch.Generator().manual_seed(seed)
    n = treated.numel()
    picks = torch.randint(n, (draws, n), generator=g)
    ratios = treated.double()[picks].mean(1) / baseline.double()[picks].mean(1)
    low, high = torch.quantile(ratios, torch.tensor([(1 - level) / 2, (1 + level) / 2], dtype=torch.float64))
    return float(low), float(high)


def effective_fraction(maps: torch.Tensor) -> torch.Tensor:
    """The effective fraction of tokens a non-negative map covers, 1 / (N sum_n p_n^2) with p = w / sum(w): 1 for a
    uniform map, f for a map uniform on a fraction f of the tokens. maps[..., N] -> [...]; an all-zero map counts
    as uniform (a router makes a map with no gradient uniform)."""
    w = maps.to(torch.float64).clamp_min(0)
    total = w.sum(-1, keepdim=True)
    p = torch.where(total > 0, w / total.clamp_min(1e-300), torch.full_like(w, 1.0 / w.shape[-1]))
    return 1.0 / (p.pow(2).sum(-1) * w.shape[-1])


def local_share(failed: torch.Tensor, fractions: torch.Tensor, threshold: float) -> float:
    """The share of failed checks whose evidence map covers at most `threshold` of the tokens.

    failed[B, K] bool (False for padded checks), fractions[B, K] (effective_fraction of each check's map). NaN when
    no check failed."""
    n = int(failed.sum())
    if n == 0:
        return float("nan")
    return float((fractions[failed] <= threshold).sum()) / n


def group_centred(values: torch.Tensor, groups: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """values[B, ...] minus the mean of their group (rollouts sharing groups[B]); with mask[B, ...] the mean is over
    the masked entries and unmasked entries are 0."""
    values = values.to(torch.float64)
    m = torch.ones_like(values) if mask is None else mask.to(torch.float64)
    out = torch.zeros_like(values)
    for g in torch.unique(groups):
        rows = groups == g
        count = m[rows].sum(0).clamp_min(1)
        mean = (values[rows] * m[rows]).sum(0) / count
        out[rows] = (values[rows] - mean) * m[rows]
    return out


def outcome_correlation(outcomes: torch.Tensor, mask: torch.Tensor, groups: torch.Tensor) -> float:
    """How strongly the checks of one rollout pass and fail together: the pooled correlation of within-group
    centred outcomes over every pair of distinct checks of a rollout.

    outcomes[B, K] (1 passed, 0 failed; any float), mask[B, K] the real checks, groups[B]. With x = the outcome minus
    its check's mean over the group, every ordered pair (k, j), k != j, of a rollout's checks is one sample (x_k,
    x_j), and r is their Pearson correlation about 0: sum x_k x_j / sqrt(sum x_k^2 sum x_j^2), where the two sums of
    squares are equal because each pair is listed both ways (for two checks a and b, 2 sum ab / (sum a^2 + sum
    b^2)). A check that varies alone contributes nothing to the numerator; 0 when nothing varies."""
    x = group_centred(outcomes, groups, mask)  # [B, K]
    m = mask.to(torch.float64)
    pair = m[:, :, None] * m[:, None, :] * (1 - torch.eye(x.shape[1], dtype=torch.float64))  # [B, K, K]
    cross = (x[:, :, None] * x[:, None, :] * pair).sum()
    squares = (x.pow(2)[:, :, None] * pair).sum()  # the same sum for either member of a pair, by symmetry
    return float(cross / squares) if squares > 0 else 0.0


def variance_shares(scores: torch.Tensor, mask: torch.Tensor, groups: torch.Tensor,
                    labels: list[list[str]]) -> dict[str, float]:
    """Each label's share of the within-group variance of the reward R_i = mean of rollout i's check scores.

    scores[B, K], mask[B, K], groups[B], labels[B][k] (a check's kind, say). With s' and R' centred within their
    group, Var(R') = sum_i R'_i^2 = sum_i sum_k s'_ik R'_i / K_i: check (i, k) contributes s'_ik R'_i / K_i and a
    label's share is the sum of its checks' contributions over the total, so the shares sum to 1 (a share may be
    negative for a check that moves against the rest). {} when the reward does not vary within any group."""
    m = mask.to(torch.float64)
    k = m.sum(1).clamp_min(1)  # [B]
    s = group_centred(scores, groups, mask)  # [B, K]
    r = (s * m).sum(1) / k  # [B], the centred reward
    total = float(r.pow(2).sum())
    if total <= 0:
        return {}
    contribution = s * r[:, None] / k[:, None] * m  # [B, K]
    shares: dict[str, float] = {}
    for i, row in enumerate(labels):
        for j, label in enumerate(row):
            if mask[i, j]:
                shares[label] = shares.get(label, 0.0) + float(contribution[i, j]) / total
    return dict(sorted(shares.items()))


def variance_parts(scores: torch.Tensor, mask: torch.Tensor, groups: torch.Tensor) -> float:
    """How many checks of a prompt carry its reward variance: per group, the participation ratio
    (sum_k v_k)^2 / sum_k v_k^2 of the checks' within-group variances v_k, averaged over the groups whose reward
    varies. scores[B, K], mask[B, K], groups[B]. K for K equally varying checks, 1 when one check carries it all;
    NaN when nothing varies."""
    s = group_centred(scores, groups, mask)
    ratios = []
    for g in torch.unique(groups):
        v = s[groups == g].pow(2).sum(0)  # [K]
        if float(v.sum()) > 1e-12:
            ratios.append(float(v.sum() ** 2 / v.pow(2).sum()))
    return sum(ratios) / len(ratios) if ratios else float("nan")
