"""`training.trial`: everything one trial is made of, as gin builds it from a profile and presets."""

from __future__ import annotations

from typing import Any

from tvrl_bench import registry
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.rules import Checks, Relation, Values, integer, number, one_of, optional, positive
from tvrl_bench.config.takes_effect import takes_effect_when
from tvrl_bench.credit.base import CreditRouter
from tvrl_bench.evaluators.base import Evaluator
from tvrl_bench.objectives.base import Objective
from tvrl_bench.policies.base import Policy
from tvrl_bench.prompts import PromptSet
from tvrl_bench.registry import register
from tvrl_bench.rewards.base import Reward
from tvrl_bench.samplers.base import Sampler
from tvrl_bench.training.optimizers import OptimizerChoice
from tvrl_bench.training.schedule import Schedule


def _minibatches_divide_the_step(v: Values) -> str | None:
    rollouts = v["prompts_per_step"] * v["group_size"]
    if rollouts % v["minibatches"]:
        return (f"{v.binding('minibatches')} must divide the {rollouts} rollouts of a step (prompts_per_step x "
                "group_size)")
    return None


def _no_evaluation_subset(v: Values):
    if v["eval_every"] == 0:
        return f"{v.binding('eval_every')} evaluates only at the end, on every eval prompt", \
            f"set {v.name('eval_every')} to a number of steps"
    if v["eval_subset"] is not None and v["eval_subset"] >= v["eval_prompts"]:
        return (f"the periodic evaluations already use every one of the {v.binding('eval_prompts')}",
                f"bind it below {v['eval_prompts']}")
    return None


def _wide_covers_the_final_evaluation(v: Values) -> str | None:
    wide, final = v["wide_eval_prompts"], v["eval_prompts"]
    if 0 < wide < final:
        return (f"{v.binding('wide_eval_prompts')}: fewer than the final evaluation's eval_prompts = {final}; bind "
                f"it to 0 (none) or at least {final}")
    return None


@register("training", "trial")
class TrialSettings:
    """A complete TVRL trial: its components and training hyperparameters.

    policy, sampler, reward, credit, objective, evaluator, dataset: one component of each trial family (see
    `registry.trial_families`); a component not passed is built from its family's macro (`REWARD = @...()`,
    which each preset binds), and each must honour its family's contract (`Reward`, `CreditRouter`, ...).

    steps: optimizer steps (one per RL iteration when minibatches = 1).
    prompts_per_step x group_size rollouts per step (across all processes); group_size rollouts share a prompt.
    micro_batch: rollouts per policy forward (the same split is used when sampling and training).
    minibatches: optimizer updates per step, each on a slice of the step's rollouts.
    advantage_std: 'group' (per-prompt std), 'global' or 'none'; advantage_clip: |A| bound (None: no clip). Where
    the objective or critic makes one of them change nothing (per-check advantages, GDPO, an objective that reads
    only their order), another value than its default is refused (config/takes_effect.py).
    ratio_tolerance: how far the recomputed log-probs may be from the rollout's before an update (0: exact).
    keep_rollout_graph: run the trained steps of the rollout with gradients and backpropagate through that forward
    instead of recomputing it in the update (the same gradients to float rounding, one forward per trained
    transition less; memory holds every trained step's activations until the update, so keep it for small
    policies). It applies when the step makes one update without a KL term, every rollout trains the same steps
    and the policy is not sharded; otherwise the update recomputes as usual.
    eval_prompts: eval-set prompts generated at the end (deterministic ODE, generation seed = seed);
    eval_every: also evaluate every this many steps and before the first (0: only at the end), on the first
    eval_subset eval prompts (None: all eval_prompts; refused where it changes nothing: eval_every = 0, or at least
    eval_prompts) with the same fixed noise, logging eval/* curves and
    eval/critic_reward (the critic's own score of the same videos, so reward hacking shows) and, for a critic that
    answers each check, eval/critic_false_yes (the share of checks it says yes to and the evaluator no);
    wide_eval_prompts: after the final evaluation, score the final policy again on this many held-out prompts of
    the toy dataset's eval split (its scenes the trial trained on dropped; the first eval_prompts of them are the
    final evaluation's own), logged as wide_eval/* (0: none; toy datasets only). Its deltas are what the tables read.
    sample_videos: videos logged to MLflow at the start and the end.
    anchor_weight: weight of the velocity anchor (training/step/anchor.py): the mean squared difference between the
    policy's and the pretrained policy's velocity at one untrained step per micro-batch (0: off), which keeps
    the steps RL does not train from drifting.
    num_gpus: GPUs the trial asks of a sweep executor (more than 1: launched with accelerate over that many).
    optimizer: the optimizer and its learning rate, betas and weight decay (`training.optimizer.*`); None builds
    `training.optimizer` from its bindings (AdamW, lr 1e-4, betas (0.9, 0.999), no weight decay by default).
    """

    CHECKS = Checks(
        steps=integer(0, example="10", note="0 evaluates the untrained policy"),
        seed=integer(example="0"),
        prompts_per_step=integer(1, example="2"),
        group_size=integer(2, example="4", note="advantages compare rollouts of a group"),
        micro_batch=integer(1, example="8"),
        minibatches=integer(1, example="1"),
        max_grad_norm=positive("1.0"),
        advantage_std=one_of("group", "global", "none"),
        advantage_eps=positive("1e-4", note="the std floor: a group whose rewards are all equal has std 0"),
        advantage_clip=optional(positive("5.0")),
        ratio_tolerance=number(0, example="0.0"),
        keep_rollout_graph=one_of(True, False),
        anchor_weight=number(0, example="0.0"),
        eval_prompts=integer(1, example="32", note="the final evaluation needs prompts"),
        eval_every=integer(0, example="20", note="0: evaluate only at the end"),
        eval_subset=optional(integer(1, example="16")),
        wide_eval_prompts=integer(0, example="1000", note="0: no wide evaluation; toy datasets: prompts drawn "
                                  "before the trained scenes are dropped"),
        sample_videos=integer(0, example="4"),
        checkpoint_every=integer(1, example="10"),
        log_media_every=integer(1, example="10"),
        num_gpus=integer(0, example="0"),
        relations=[Relation(("minibatches", "prompts_per_step", "group_size"), _minibatches_divide_the_step),
                   Relation(("wide_eval_prompts", "eval_prompts"), _wide_covers_the_final_evaluation),
                   takes_effect_when(("eval_subset",), ("eval_every", "eval_prompts"), _no_evaluation_subset)],
    )

    def __init__(
        self,
        policy: Policy | None = None,
        sampler: Sampler | None = None,
        reward: Reward | None = None,
        credit: CreditRouter | None = None,
        objective: Objective | None = None,
        evaluator: Evaluator | None = None,
        dataset: PromptSet | None = None,
        schedule: Schedule | None = None,
        steps: int = 100,
        seed: int = 0,
        prompts_per_step: int = 2,
        group_size: int = 4,
        micro_batch: int = 8,
        minibatches: int = 1,
        max_grad_norm: float = 1.0,
        advantage_std: str = "group",
        advantage_eps: float = 1e-4,
        advantage_clip: float | None = 5.0,
        ratio_tolerance: float = 0.0,
        keep_rollout_graph: bool = False,
        anchor_weight: float = 0.0,
        eval_prompts: int = 32,
        eval_every: int = 0,
        eval_subset: int | None = None,
        wide_eval_prompts: int = 0,
        sample_videos: int = 4,
        checkpoint_every: int = 10,
        log_media_every: int = 10,
        num_gpus: int = 0,
        optimizer: OptimizerChoice | None = None,
    ):
        given = {"policy": policy, "sampler": sampler, "reward": reward, "credit": credit, "objective": objective,
                 "evaluator": evaluator, "dataset": dataset}
        for family in registry.trial_families():
            setattr(self, family.axis, _component(family, given[family.axis]))
        self.schedule = schedule or Schedule()
        self.steps, self.seed = steps, seed
        self.prompts_per_step, self.group_size = prompts_per_step, group_size
        self.micro_batch, self.minibatches = micro_batch, minibatches
        self.max_grad_norm = max_grad_norm
        self.advantage_std, self.advantage_eps, self.advantage_clip = advantage_std, advantage_eps, advantage_clip
        self.ratio_tolerance = ratio_tolerance
        self.keep_rollout_graph = keep_rollout_graph
        self.anchor_weight = anchor_weight
        self.eval_prompts, self.sample_videos = eval_prompts, sample_videos
        self.eval_every, self.eval_subset = eval_every, eval_subset
        self.wide_eval_prompts = wide_eval_prompts
        self.checkpoint_every, self.log_media_every = checkpoint_every, log_media_every
        self.num_gpus = num_gpus
        self.optimizer = optimizer if optimizer is not None else OptimizerChoice()  # validates its own values
        self.validate()

    def validate(self) -> None:
        """What needs the built components (ranges and relations of the values are CHECKS, checked earlier)."""
        self.schedule.validate(self.sampler)
        if self.wide_eval_prompts and not self.dataset.name.startswith("toy-"):
            raise ConfigError(
                f"training.trial.wide_eval_prompts = {self.wide_eval_prompts}: a wide evaluation redraws the toy "
                f"dataset's eval split, and this trial's dataset is {self.dataset.name!r}; bind it to 0"
            )


def _component(family: registry.Family, value: Any) -> Any:
    """The trial's component of `family`: the one given, else the one its macro binds; checked against the
    family's contract."""
    component = value if value is not None else registry.build(family.macro)
    contract = family.contract_class()
    if contract is not None and not isinstance(component, contract):
        raise registry.RegistryError(
            f"training.trial.{family.axis}: {type(component).__name__} is not a {contract.__name__}; bind "
            f"{family.macro} to a {family.name} component (`tvrl-bench list {family.name}`)"
        )
    return component
