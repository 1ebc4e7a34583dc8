"""Every parameter of every component the default profile builds changes what the trial produces, or is refused.

A knob that is accepted, logged as a param and changes nothing (issue 52: `datasets.toy_slots.size`) is a wrong
result waiting to be published. Method, cheap (no training, about a minute on one core):

1. The components: those the default profile (components/profiles/toy.gin) builds (config/trial_components.py),
   and `training.trial`, `training.schedule`, `training.optimizer`.
2. For each parameter, one probe value that differs from the profile's: a bool flipped, a number doubled (an int 0
   made 1, a float 0 made 0.5), and for strings, tuples and None the value in PROBES (every such parameter must
   have one: the test fails on a parameter it cannot probe).
3. The probe is bound on the command line and the config checked as tvrl-train checks it (`load_config` and
   `check_values`). A refused value passes: the knob cannot silently do nothing (a video knob of the dataset that
   is not the policy's, a parameter of the sprite world's checks on this slot-world profile).
4. An accepted value must change the component's fingerprint, computed from the component built from that config:
   - datasets: the prompts and checks of the train and eval splits and of the first 100 wider eval prompts;
   - rewards: the scores of a fixed batch of videos (the first eval prompts' ground truth, and copies with noise,
     with colours moved towards grey, with squares of 3 px, with the first two frames blank: each exposes
     thresholds that ground truth alone would not);
   - evaluators: their metrics and per-check answers on the same videos;
   - everything else (the policy, sampler, credit router, objective, the trial's settings): the state it holds
     (attributes and tensors): the value must reach the built object.
What it does not see: a value that reaches an object that then ignores it in one of its modes; such a value needs a
relation in the component's CHECKS (as `objectives.tvrl_official` refuses KL settings under `kl = 'none'`, found
by this test: its `refresh_every` reached no object).
"""

from __future__ import annotations

import math

import gin
import pytest
import torch

from tvrl_bench import registry
from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.config.trial_components import trial_components
from tvrl_bench.policies.toy_bases import SHIPPED_BASES
from tvrl_bench.training.trial.checks import check_values
from tvrl_bench.world.slots import parse_slot_prompt, render_slots, sample_slot_scene, slot_world

PROFILE = "components/profiles/toy.gin"
TRIAL = ("training.trial", "training.schedule", "training.optimizer")
# Probes for parameters a rule cannot make (strings, tuples, None), by binding name.
PROBES = {
    "policies.toy.path": repr(str(SHIPPED_BASES["slots_clean"])), "policies.toy.train": "('transformer_blocks',)",
    "policies.toy.base": "'slots_clean'",
    "rewards.toy_oracle.difficulty": "'hard'", "rewards.toy_oracle.min_size": "6", "rewards.toy_oracle.max_size": "9",
    "rewards.toy_oracle.shapes": "('circle',)", "rewards.toy_oracle.speed": "2",
    "rewards.toy_oracle.shape_measure": "'component'", "rewards.toy_oracle.score": "'log_prob'",
    "rewards.toy_oracle.component_values": "'hard'",
    "credit.window.combine": "'max'",
    "objectives.tvrl_official.mode": "'video_adv'", "objectives.tvrl_official.kl": "'moving_stepwise'",
    "datasets.toy_slots.frames": "16", "datasets.toy_slots.size": "8", "datasets.toy_slots.rows": "1",
    "datasets.toy_slots.cols": "1", "datasets.toy_slots.colours": "('red', 'green', 'blue', 'yellow', 'magenta')",
    "datasets.toy_slots.min_size": "3", "datasets.toy_slots.max_size": "4",
    "training.trial.advantage_std": "'global'", "training.trial.eval_subset": "16",
    "training.schedule.sde_window": "(0, 3)", "training.schedule.noise_block": "(1, 2, 2)",
    "training.optimizer.kind": "'muon_adamw'", "training.optimizer.betas": "(0.8, 0.99)",
}
SKIPPED = {"training.trial": {"policy", "sampler", "reward", "credit", "objective", "evaluator", "dataset", "schedule",
                              "optimizer"}}  # the components themselves, each walked on its own


def probe(qualified: str, param: str, value) -> str:
    """The probe of `param` (see the module docstring) as gin text."""
    if f"{qualified}.{param}" in PROBES:
        return PROBES[f"{qualified}.{param}"]
    if isinstance(value, bool):
        return repr(not value)
    if isinstance(value, int):
        return repr(value * 2 if value else 1)
    if isinstance(value, float):
        return repr(value * 2 if value else 0.5)
    raise AssertionError(f"{qualified}.{param} = {value!r}: add a probe value to PROBES")


def videos_and_checks() -> tuple[torch.Tensor, list[str], list[tuple[str, ...]]]:
    """A fixed batch: 4 eval prompts' ground truth, then noisy, greyed, small-square and late-starting copies."""
    from tvrl_bench.datasets.toy_slots import slot_prompt_set

    items = slot_prompt_set().eval[:4]
    colourings = [parse_slot_prompt(i.prompt)[0] for i in items]
    clean = render_slots([sample_slot_scene(k, colours=c) for k, c in enumerate(colourings)])
    small = render_slots([sample_slot_scene(k, slot_world(min_size=3, max_size=3), c) for k, c in enumerate(colourings)])
    noisy = (clean + 0.25 * torch.randn(clean.shape, generator=torch.Generator().manual_seed(0))).clamp(0, 1)
    late = clean.clone()
    late[:, :2] = 0  # the squares appear in the third frame
    videos = torch.cat([clean, noisy, 0.55 * clean + 0.2, small, late])
    prompts = [i.prompt for i in items] * 5
    return videos, prompts, [tuple(i.checks) for i in items] * 5


def state(obj, depth: int = 0):
    """What an object holds: tensors summarised, modules by their state and public attributes, objects by theirs."""
    if isinstance(obj, torch.Tensor):
        values = obj.detach().double()
        return ("tensor", tuple(obj.shape), float(values.sum()), float(values.abs().sum()))
    if isinstance(obj, (bool, int, float, str, type(None))):
        return ("float", repr(obj)) if isinstance(obj, float) and math.isnan(obj) else obj
    if isinstance(obj, (list, tuple)):
        return tuple(state(v, depth + 1) for v in obj)
    if isinstance(obj, dict):
        return tuple(sorted((str(k), state(v, depth + 1)) for k, v in obj.items()))
    if depth > 3:
        return type(obj).__name__
    held = {k: v for k, v in vars(obj).items() if not k.startswith("_")} if hasattr(obj, "__dict__") else {}
    if isinstance(obj, torch.nn.Module):  # its weights, and which of them train
        held["state_dict"] = dict(obj.state_dict())
        held["trained"] = [name for name, p in obj.named_parameters() if p.requires_grad]
    return (type(obj).__name__, state(held, depth + 1))


def fingerprint(qualified: str, component, batch):
    family = qualified.split(".")[0]
    if family == "datasets":
        return state([component.train, component.eval, component.held_out(100)[0]])
    videos, prompts, checks = batch
    with torch.no_grad():
        if family == "rewards":
            return state(component.score(videos, prompts, checks))
        if family == "evaluators":
            return state(component.evaluate_detailed(videos, prompts, checks))
    return state(component)


def build(qualified: str, built: dict):
    """The component as the parsed config binds it (a trial's settings around the components already built)."""
    target = registry.get(qualified).target
    if qualified == "training.trial":
        return target(**{axis: built[axis] for axis in SKIPPED["training.trial"] - {"schedule", "optimizer"}})
    return target()


@pytest.fixture(scope="module")
def default():
    """(components: qualified -> axis, fingerprints of the profile's own build, the built components by axis)."""
    torch.set_num_threads(1)
    batch = videos_and_checks()
    check_values(load_config([PROFILE]))
    components = {p.qualified: p.axis for p in trial_components()} | {q: q for q in TRIAL}
    built = {axis: build(q, {}) for q, axis in components.items() if q not in TRIAL}
    prints = {q: fingerprint(q, build(q, built) if q in TRIAL else built[axis], batch)
              for q, axis in components.items()}
    gin.clear_config()
    return components, prints, built, batch


def parameters() -> list[tuple[str, str]]:
    registry.import_components()
    load_config([PROFILE])
    found = [(p.qualified, name) for p in trial_components() for name, _ in registry.get(p.qualified).parameters()]
    found += [(q, name) for q in TRIAL for name, _ in registry.get(q).parameters() if name not in SKIPPED.get(q, ())]
    gin.clear_config()
    return found


@pytest.mark.parametrize("qualified, param", parameters(), ids=lambda v: v)
def test_a_parameter_changes_what_the_trial_produces_or_is_refused(qualified, param, default):
    components, prints, built, batch = default
    from tvrl_bench.config.trial_components import configured_values

    load_config([PROFILE])
    value = configured_values(qualified)[param]
    binding = f"{qualified}.{param} = {probe(qualified, param, value)}"
    try:
        check_values(load_config([PROFILE], [binding]))
    except ConfigError:
        return  # refused: it cannot silently change nothing
    try:
        component = build(qualified, built)
        changed = fingerprint(qualified, component, batch) != prints[qualified]
    finally:
        gin.clear_config()
    assert changed, f"{binding} is accepted and changes nothing the trial produces: make it act, or refuse it"
