"""Can the policy learn what its critic prefers? The ceiling of learning from the critic's rankings, no RL estimator.

Samples `--group` rollouts for each of `--prompts` training prompts (`--candidates ode`: deterministically, as the
evaluation samples; `training`: with the profile's stochastic steps, as training does), scores them with the
critic, and keeps each group's critic-best rollout; a second set keeps a rollout of each group drawn at random (the
null control: as many of the policy's own samples, no ranking). Each set is then distilled into a copy of the base
by its own pretraining loss (the recipe's flow-matching loss on the conditional prediction, with its prompt dropout
and noise-level distribution: what classifier-free guidance expects) for `--steps` AdamW steps, and the base and
both copies are scored on held-out prompts exactly as a trial's evaluation scores them. `--truth` adds an arm
fine-tuned the same way on as many ground-truth videos of fresh scenes of the profile's world: what the same steps
give with perfect data. The recipe (`--recipe`) is by default the one that made the profile's base (its world's
default recipe for a checkpoint folder: 'slots' or 'v2'); a recipe of another world than the base's is refused.
`--rounds` > 1 repeats sample / select / distil from the distilled policies (iterated rejection-sampling
fine-tuning; the null arm iterates on its own random picks).

The evaluator's `overall` is paired prompt by prompt (the same evaluation noise for every policy): best - base,
random - base, best - random (and truth - base), x 100, with 95% t-intervals over prompts.
best - random is what the critic's ranking is worth to this policy; random - base what fitting its own samples
costs by itself; truth - base what the steps could give at all.

Last line: best_minus_base=<> random_minus_base=<> best_minus_random=<> [truth_minus_base=<>] (x 100)
selected_gain=<evaluator overall of the critic's picks - the groups' mean>

    python diagnostics/distill_ceiling.py --profile components/profiles/toy.gin --truth \\
        [--prompts 256] [--group 8] [--steps 400]
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import time

import gin
import torch
from tqdm.auto import tqdm

from tvrl_bench.cli.errors import UserError
from tvrl_bench.cli.script import above, at_least, must, run_script, script_parser
from tvrl_bench.config import load_config
from tvrl_bench.recipes.flow_matching import draw_noise, drop_prompts, flow_matching_loss, to_latents
from tvrl_bench.recipes.pretrain_policy import RECIPES
from tvrl_bench.recipes.worlds import pretrain_world
from tvrl_bench.report.stats import paired_delta
from tvrl_bench.sweeps.wide_eval import wider_eval_items
from tvrl_bench.training.trial.built import BuiltTrial
from tvrl_bench.training.trial.world_check import policy_world
from tvrl_bench.world.declaration import WORLD_ADJECTIVES, WORLD_WORDS


@torch.no_grad()
def sample_and_rank(trial: BuiltTrial, policy, items: list, group: int, seed: int, round_: int, candidates: str):
    """`group` rollouts of `policy` for every item, sampled by the built trial as training samples them
    (`candidates` 'training') or as the evaluation does (deterministic, 'ode'), scored a few groups at a time: (x0
    latents [P*G, 3, F, H, W], prompts [P*G], critic rewards [P*G], evaluator overall [P*G])."""
    prompts = [it.prompt for it in items for _ in range(group)]
    checks = [list(it.checks) for it in items for _ in range(group)]
    x0, rewards, overall = [], [], []
    g = trial.noise("distill", round_, seed=seed)
    for start in range(0, len(prompts), 8 * group):  # keep memory flat: a few groups at a time
        c = slice(start, min(start + 8 * group, len(prompts)))
        if candidates == "training":
            videos = trial.sample(prompts[c], g, group=group, policy=policy).videos
        else:
            videos = trial.generate(prompts[c], g, policy=policy)
        x0.append(to_latents(videos))  # the clean sample as the evaluator sees it (decoding clamps to [0, 1])
        rewards.append(trial.score(videos, prompts[c], checks[c]).rewards())
        _, records = trial.evaluate(videos, prompts[c], checks[c])
        overall.append(torch.tensor([float(r["score"]) for r in records]))
    return torch.cat(x0), prompts, torch.cat(rewards), torch.cat(overall)


def pick(rewards: torch.Tensor, group: int, generator_: torch.Generator | None) -> torch.Tensor:
    """Index of each group's critic-best rollout (generator None) or of a rollout drawn at random [P]."""
    by_group = rewards.reshape(-1, group)
    if generator_ is None:
        within = by_group.argmax(dim=1)
    else:
        within = torch.randint(group, (len(by_group),), generator=generator_)
    return torch.arange(len(by_group)) * group + within


def distil(policy, x0: torch.Tensor, prompts: list[str], recipe, steps: int, batch: int, lr: float, seed: int,
           label: str):
    """`policy` fine-tuned in place by the recipe's flow-matching loss on clean latents x0[K, 3, F, H, W] with
    their prompts, `steps` AdamW steps of `batch` samples drawn with replacement."""
    params = [p for p in policy.transformer.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=recipe.weight_decay)
    g = torch.Generator().manual_seed(seed)
    policy.train()
    for _ in tqdm(range(steps), desc=f"distil {label}", unit="step", leave=False):
        idx = torch.randint(len(x0), (batch,), generator=g)
        chosen = x0[idx]
        noise, sigma = draw_noise(chosen, g, recipe)
        text = drop_prompts(tuple(prompts[i] for i in idx.tolist()), g, recipe.prompt_dropout)
        loss = flow_matching_loss(policy, chosen, text, noise, sigma, recipe)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, recipe.grad_clip)
        optimizer.step()
    policy.eval()
    return policy


def ground_truth(world, count: int, seed: int, exclude: list) -> tuple[torch.Tensor, list[str]]:
    """`count` fresh scenes of the recipe's world (recipes/worlds.py), rendered: (x0 latents [count, 3, F, H, W],
    prompts), none of them the scene of a prompt in `exclude` (PromptItems)."""
    batch = world.batch(count, random.Random(seed), world.signatures(exclude))
    return to_latents(batch.videos), list(batch.prompts)


def per_prompt_overall(trial: BuiltTrial, policy, items: list) -> torch.Tensor:
    """The evaluator's overall of each held-out item [E] by `policy`, sampled as the trial's evaluation samples."""
    with torch.no_grad():
        return torch.tensor([float(r["score"]) for r in trial.evaluation(items, policy=policy).full().records])


def paired(a: torch.Tensor, b: torch.Tensor) -> tuple[float, float]:
    """(mean of a[E] - b[E], half-width of its 95% t-interval over the E prompts), x 100."""
    stat = paired_delta(dict(enumerate((a * 100).tolist())), dict(enumerate((b * 100).tolist())))
    return stat.delta, stat.ci_high - stat.delta


def main(argv: list[str] | None = None) -> int:
    parser = script_parser(__file__, __doc__)
    parser.add_argument("files", nargs="*", help="gin files after the profile (presets to swap in)")
    parser.add_argument("--profile", default="components/profiles/toy_v2.gin", help="the training profile (default: toy_v2)")
    parser.add_argument("--gin_bindings", nargs="*", default=[], help="extra gin bindings, e.g. \"policies.toy.base = 'v2_18k'\"")
    parser.add_argument("--recipe", default=None, choices=sorted(RECIPES),
                        help="the pretraining recipe whose loss distils (its loss weighting, noise levels, prompt "
                             "dropout; default: the recipe of the profile's base)")
    parser.add_argument("--prompts", type=int, default=256, action=at_least(1),
                        help="training prompts sampled per round (default 256)")
    parser.add_argument("--group", type=int, default=8, action=must(lambda v: v >= 2, "2 or more (the critic picks one)"),
                        help="rollouts per prompt, the critic picks the best (default 8)")
    parser.add_argument("--candidates", default="ode", choices=["ode", "training"],
                        help="how the rollouts the critic ranks are sampled: as the evaluation samples (ode, the default) "
                             "or as training does (the profile's stochastic steps)")
    parser.add_argument("--steps", type=int, default=400, action=at_least(1),
                        help="distillation steps per round (default 400)")
    parser.add_argument("--batch", type=int, default=32, action=at_least(1),
                        help="samples per distillation step (default 32)")
    parser.add_argument("--lr", type=float, default=1e-4, action=above(0),
                        help="AdamW learning rate of the distillation (default 1e-4)")
    parser.add_argument("--truth", action="store_true",
                        help="add an arm fine-tuned the same way on as many ground-truth videos of fresh scenes (what the steps give with perfect data)")
    parser.add_argument("--rounds", type=int, default=1, action=at_least(1), help="sample / select / distil rounds (default 1)")
    parser.add_argument("--eval_prompts", type=int, default=512, action=at_least(1),
                        help="held-out prompts drawn for the evaluation (those the dataset trains on are dropped; default 512)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the rollouts, the random picks and the distillation (default 0)")
    return run_script(parser, distil_ceiling, argv)


def profile_recipe(given: str | None) -> str:
    """The recipe to distil with for the parsed profile: `given` (--recipe) when it is of the base's world, else
    the base's own recipe (a shipped base) or its world's default ('slots', 'v2'). UserError for a recipe of another
    world than the profile's base."""
    found = policy_world()
    if found is None:  # a checkpoint that does not say its world: the recipe decides
        return given or "v2"
    setting, value, checkpoint = found
    if given is None:
        return value if setting.endswith(".base") and value in RECIPES else {"slots": "slots"}.get(checkpoint.world, "v2")
    if RECIPES[given].world != checkpoint.world:
        ours = [name for name, recipe in RECIPES.items() if recipe.world == checkpoint.world]
        raise UserError(f"--recipe {given} is a {WORLD_ADJECTIVES[RECIPES[given].world]} recipe, but the profile's "
                        f"policy is {WORLD_WORDS[checkpoint.world]}'s ({setting} = {value!r}); leave --recipe out (the "
                        f"base's recipe) or give one of {', '.join(ours)}")
    return given


def distil_ceiling(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    try:
        loaded = load_config([args.profile, *args.files], args.gin_bindings)
        recipe = RECIPES[profile_recipe(args.recipe)]
        trial = BuiltTrial.of(loaded)
        s = trial.settings
    finally:
        gin.clear_config()
    world = pretrain_world(recipe.world)
    print(f"recipe {recipe.world} world: loss {recipe.loss}, ground truth of {world.frames} x {world.height} x "
          f"{world.width}" if args.truth else f"recipe loss {recipe.loss}", flush=True)
    train_items = list(s.dataset.train)
    eval_items, dropped = wider_eval_items(s, args.eval_prompts, flag="--eval_prompts")
    started = time.perf_counter()
    base_overall = per_prompt_overall(trial, s.policy, eval_items)
    print(f"base: overall {base_overall.mean():.4f} on {len(eval_items)} held-out prompts ({dropped} trained-on dropped)")
    arms = {"best": copy.deepcopy(s.policy), "random": copy.deepcopy(s.policy)}
    if args.truth:
        arms["truth"] = copy.deepcopy(s.policy)
    random_picks = torch.Generator().manual_seed(args.seed)
    selected_gain = []
    for round_ in range(args.rounds):
        start = (round_ * args.prompts) % len(train_items)
        items = (train_items[start:] + train_items[:start])[: args.prompts]
        first_round = None
        for name, policy in arms.items():
            if name == "truth":
                x0, prompts = ground_truth(world, len(items), args.seed + round_, [*eval_items, *items])
                print(f"round {round_ + 1} truth: {len(x0)} ground-truth videos", flush=True)
                distil(policy, x0, prompts, recipe, args.steps, args.batch, args.lr, args.seed + 1000 * round_,
                       f"truth r{round_ + 1}")
                continue
            if round_ == 0 and first_round is not None:  # both arms start from the base: one sample serves both
                x0, prompts, rewards, overall = first_round
            else:
                x0, prompts, rewards, overall = sample_and_rank(trial, policy, items, args.group, args.seed, round_, args.candidates)
                first_round = (x0, prompts, rewards, overall)
            keep = pick(rewards, args.group, None if name == "best" else random_picks)
            gain = float(overall[keep].mean() - overall.mean())
            if name == "best":
                selected_gain.append(gain)
            print(f"round {round_ + 1} {name}: {len(x0)} rollouts, mean overall {overall.mean():.4f}, "
                  f"kept {len(keep)} with overall {overall[keep].mean():.4f} ({gain:+.4f})", flush=True)
            distil(policy, x0[keep], [prompts[i] for i in keep.tolist()], recipe, args.steps, args.batch, args.lr,
                   args.seed + 1000 * round_, f"{name} r{round_ + 1}")
    scores = {name: per_prompt_overall(trial, policy, eval_items) for name, policy in arms.items()}
    for name, value in scores.items():
        print(f"{name}: overall {value.mean():.4f}")
    rows = {"best_minus_base": paired(scores["best"], base_overall),
            "random_minus_base": paired(scores["random"], base_overall),
            "best_minus_random": paired(scores["best"], scores["random"])}
    if args.truth:
        rows["truth_minus_base"] = paired(scores["truth"], base_overall)
    for name, (mean, half) in rows.items():
        print(f"{name.replace('_', ' ')}: {mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}] (x 100, 95% over prompts)")
    print(f"wall {time.perf_counter() - started:.0f} s")
    print(" ".join(f"{name}={mean:.2f}" for name, (mean, _) in rows.items())
          + f" selected_gain={sum(selected_gain) / len(selected_gain):.4f}")


if __name__ == "__main__":
    sys.exit(main())
