"""Muon on matrices + AdamW on the rest equals running the two optimizers separately; `training.optimizer` owns
the optimizer's settings: each profile's effective values, an old `training.trial` binding refused by name."""

from __future__ import annotations

import gin
import pytest
import torch

from tvrl_bench.config import PROJECT_ROOT, ConfigError, load_config
from tvrl_bench.training.muon import Muon
from tvrl_bench.training.optimizers import MuonWithAdamW, OptimizerChoice


def test_split_optimizer_matches_muon_and_adamw_run_apart():
    torch.manual_seed(0)
    a = [torch.nn.Parameter(torch.randn(4, 3)), torch.nn.Parameter(torch.randn(3))]
    b = [torch.nn.Parameter(p.detach().clone()) for p in a]
    grads = [torch.randn_like(p) for p in a]
    mine = MuonWithAdamW(a, lr=1e-2, weight_decay=0.01, betas=(0.95, 0.95))
    muon = Muon([b[0]], lr=1e-2, weight_decay=0.01, momentum=0.95)
    adamw = torch.optim.AdamW([b[1]], lr=1e-2, betas=(0.95, 0.95), weight_decay=0.01)
    for _ in range(2):
        for p, q, g in zip(a, b, grads):
            p.grad, q.grad = g.clone(), g.clone()
        mine.step(), muon.step(), adamw.step()
    for p, q in zip(a, b):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    assert len(mine.state_dict()["optimizers"]) == 2

# What each profile trained with before the settings moved from training.trial to training.optimizer:
# (kind, learning rate, weight decay, AdamW betas).
PROFILE_OPTIMIZERS = {
    "components/profiles/toy_v1.gin": ("adamw", 1e-4, 0.0, (0.9, 0.999)),
    "components/profiles/toy_v2.gin": ("adamw", 1e-4, 0.0, (0.9, 0.999)),
    "components/profiles/paper.gin": ("muon_adamw", 1e-5, 0.01, (0.95, 0.95)),
}


def bound_optimizer() -> OptimizerChoice:
    """The optimizer choice a trial gets from the parsed config, as TrialSettings takes it: the bound
    training.trial.optimizer, else a `training.optimizer` built from its bindings."""
    try:
        reference = gin.query_parameter("training.trial.optimizer")
    except ValueError:
        reference = None
    return reference.scoped_configurable_fn() if reference is not None else OptimizerChoice()


@pytest.mark.parametrize("profile", list(PROFILE_OPTIMIZERS))
def test_each_profile_builds_the_optimizer_it_trained_with_before(profile):
    kind, lr, weight_decay, betas = PROFILE_OPTIMIZERS[profile]
    load_config([profile])
    choice = bound_optimizer()
    assert choice.kind == kind
    layer = torch.nn.Linear(3, 4)  # a matrix (Muon under muon_adamw) and a vector (always AdamW)
    optimizer = choice.build(list(layer.parameters()))
    groups = optimizer.param_groups
    assert len(groups) == (2 if kind == "muon_adamw" else 1)
    assert all(g["lr"] == lr and g["weight_decay"] == weight_decay for g in groups)
    assert [tuple(g["betas"]) for g in groups if "betas" in g] == [betas]
    assert isinstance(optimizer, MuonWithAdamW if kind == "muon_adamw" else torch.optim.AdamW)


def test_the_middle_window_sweep_still_lowers_the_learning_rate():
    text = (PROJECT_ROOT / "sweeps" / "experiments" / "middle_window.gin").read_text(encoding="utf-8")
    assert "'training.optimizer.learning_rate = 3e-5'" in text
    load_config(["components/profiles/toy_v1.gin"], ["training.optimizer.learning_rate = 3e-5"])
    assert bound_optimizer().build([torch.nn.Parameter(torch.zeros(2))]).param_groups[0]["lr"] == 3e-5


@pytest.mark.parametrize("name, value", [("learning_rate", "3e-5"), ("betas", "(0.9, 0.99)"), ("weight_decay", "0.1")])
def test_an_old_trial_binding_is_one_line_naming_its_file_line_and_new_binding(tmp_path, name, value):
    config = tmp_path / "mine.gin"
    config.write_text(f"include 'components/profiles/toy_v1.gin'\ntraining.trial.{name} = {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_config([str(config)])
    message = str(caught.value)
    assert message.startswith(f"{config}:2: ") and len(message.splitlines()) == 1
    assert f"'training.trial.{name}' has moved to 'training.optimizer.{name}'" in message
    assert f"training.optimizer.{name} = ..." in message

    with pytest.raises(ConfigError, match=rf"^--gin_bindings 'training\.trial\.{name} = .*training\.optimizer\.{name}"):
        load_config(["components/profiles/toy_v1.gin"], [f"training.trial.{name} = {value}"])


def test_a_bad_learning_rate_names_its_file_line_and_binding_before_anything_is_built(tmp_path):
    config = tmp_path / "mine.gin"
    config.write_text("include 'components/profiles/toy_v1.gin'\ntraining.optimizer.learning_rate = 0.0\n")
    with pytest.raises(ConfigError) as caught:
        load_config([str(config)])  # the declared checks run as the config is read
    assert str(caught.value) == (f"{config}:2: training.optimizer.learning_rate = 0.0 must be a number > 0, "
                                 "e.g. training.optimizer.learning_rate = 1e-4")


def test_a_bad_learning_rate_bound_past_the_early_check_is_refused_when_built(tiny_policy_path):
    """A value that reaches the build without the config-time check (bound in code after loading) is refused by
    the same declared rule as the optimizer is constructed."""
    import gin

    from tvrl_bench.training.trial.build import build_settings

    loaded = load_config(["components/profiles/toy_v1.gin"], [f"policies.toy.path = '{tiny_policy_path}'"])
    gin.bind_parameter("training.optimizer.learning_rate", -1.0)
    with pytest.raises(ConfigError, match=r"training\.optimizer\.learning_rate = -1\.0 must be a number > 0"):
        build_settings(loaded)
