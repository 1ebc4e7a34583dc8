"""FSDP2 sharding (training/parallel/sharding.py): the units and mixed precision the config asks for, on
accelerate's path and torch's; gathered checkpoints; and real trials over 2 CPU processes (gloo) that end with the
parameters of the same trial trained without sharding, uninterrupted and after a resume from a sharded checkpoint."""

from __future__ import annotations

import socket
import types
from pathlib import Path

import pytest
import torch

from tests.cli.test_train import bindings, digests, runs, train
from tests.support import console_script
from tvrl_bench.config import ConfigError
from tvrl_bench.training.parallel.sharding import BLOCK_CLASS, ShardingSettings, shard_policy

LAUNCH = ["launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no",
          "--dynamo_backend", "no", "-m", "tvrl_bench.cli.train"]
SHARDED = ["training.sharding.enabled = True"]
# Both sides run diffusers' forward (sharding switches the toy policy to it) and recompute the trained transitions
# (a sharded policy does not keep the rollout's graph), so only the gradient reduction and the norm for clipping
# differ: sharded sums over shards, replicated over whole tensors.
SAME_FORWARD = ["policies.toy.fast = False", "training.trial.keep_rollout_graph = False",
                "training.trial.checkpoint_every = 1"]


@pytest.fixture
def one_process_group():
    """A gloo process group of world size 1 in this process (fully_shard needs one), removed afterwards."""
    import torch.distributed as dist

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def processes(accelerate: bool, settings: ShardingSettings):
    """What shard_policy reads of training/processes.py's Processes; for accelerate's path a stand-in of the
    Accelerator with the plugin (accelerate itself runs CPU processes without FSDP)."""
    accelerator = types.SimpleNamespace(state=types.SimpleNamespace(fsdp_plugin=settings.accelerate_plugin()),
                                        mixed_precision="no", is_main_process=True, device=torch.device("cpu"))
    return types.SimpleNamespace(world=1, uses_accelerate_fsdp=accelerate, accelerator=accelerator,
                                 device=torch.device("cpu"))


@pytest.mark.parametrize("accelerate", [False, True], ids=["torch", "accelerate"])
def test_units_mixed_precision_and_checkpointing_are_what_the_config_asks(tiny_policy_path, one_process_group, accelerate):
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import CheckpointWrapper
    from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy
    from torch.distributed.tensor import DTensor

    from tvrl_bench.policies.toy import ToyPolicy

    settings = ShardingSettings(enabled=True, param_dtype="bfloat16", reduce_dtype="float32", master_dtype="float32",
                                activation_checkpointing=True)
    plugin = settings.accelerate_plugin()
    assert plugin.fsdp_version == 2 and plugin.transformer_cls_names_to_wrap == [BLOCK_CLASS]
    assert plugin.activation_checkpointing and plugin.reshard_after_forward is True
    expected = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    assert plugin.mixed_precision_policy == expected

    policy = ToyPolicy(tiny_policy_path)
    assert policy.fast and shard_policy(policy, settings, processes(accelerate, settings))
    assert not policy.fast  # the lean forward reads block weights directly: diffusers' forward instead
    transformer = policy.transformer
    units = {name: module for name, module in transformer.named_modules() if isinstance(module, FSDPModule)}
    assert "" in units  # the root
    block = transformer.transformer_blocks[0]
    assert isinstance(block, CheckpointWrapper) and isinstance(block, FSDPModule)  # checkpointed, its own unit
    block_params = {id(p) for p in block.parameters()}
    owners = [name for name, unit in units.items() if name.startswith("transformer_blocks.0")
              and any(id(p) in block_params for p in unit.parameters())]
    assert owners, units.keys()  # every block parameter lives in a block-level unit
    for unit in units.values():
        state = unit._get_fsdp_state()
        assert state._mp_policy == expected
        assert all(group.post_forward_mesh_info is not None for group in state._fsdp_param_groups)  # reshards
    trained = policy.trainable_parameters()
    assert trained and all(isinstance(p, DTensor) and p.dtype == torch.float32 for p in trained)

    cond = policy.encode(["a red circle", "a blue square"])
    x = torch.randn(2, *policy.latent_shape())
    v = policy.velocity(x, torch.tensor([0.5, 0.7]), cond)
    assert v.shape == x.shape and v.dtype == torch.float32
    v.square().mean().backward()  # through the checkpointed block, gathered in bfloat16
    assert all(p.grad is not None and isinstance(p.grad, DTensor) for p in trained if p.grad is not None)
    assert any(p.grad is not None for p in trained)


def test_gathered_state_round_trips_into_a_fresh_sharded_policy_with_muon(tiny_policy_path, one_process_group):
    from tvrl_bench.objectives.reference import MovingReference
    from tvrl_bench.policies.toy import ToyPolicy
    from tvrl_bench.training.optimizers import MuonWithAdamW
    from tvrl_bench.training.parallel.sharded_state import (gather_tree, load_parameters, parameter_digest,
                                                   shard_optimizer_state, shard_tree)

    settings = ShardingSettings(enabled=True)

    def trained_pair():
        policy = ToyPolicy(tiny_policy_path)
        shard_policy(policy, settings, processes(False, settings))
        return policy, MuonWithAdamW(policy.trainable_parameters(), lr=1e-3, weight_decay=0.01,
                                     betas=(0.95, 0.95))

    def step(policy, optimizer, seed):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(2, *policy.latent_shape(), generator=g)
        policy.velocity(x, torch.tensor([0.5, 0.7]), policy.encode(["a red circle", "a blue square"])).square().mean().backward()
        for p in policy.trainable_parameters():  # as Processes.average_gradients leaves them
            p.grad = torch.zeros_like(p) if p.grad is None else p.grad
        optimizer.step()
        optimizer.zero_grad()

    policy, optimizer = trained_pair()
    reference = MovingReference(policy.trainable_parameters())  # the official KL's snapshot of sharded parameters
    step(policy, optimizer, 0)
    params = gather_tree({str(i): p for i, p in enumerate(policy.trainable_parameters())}, keep=True)
    state = gather_tree(optimizer.state_dict(), keep=True)
    snapshot = gather_tree(reference.state_dict(), keep=True)
    assert all(type(t) is torch.Tensor for t in params.values())  # plain full tensors: loadable anywhere
    assert all(type(v) is torch.Tensor for o in state["optimizers"] for s in o["state"].values() for v in s.values())
    assert all(type(t) is torch.Tensor for t in snapshot["snapshot"])

    fresh, fresh_optimizer = trained_pair()
    fresh_reference = MovingReference(fresh.trainable_parameters())
    load_parameters(fresh.trainable_parameters(), params)
    fresh_optimizer.load_state_dict(shard_optimizer_state(fresh_optimizer, state))
    fresh_reference.load_state_dict(shard_tree(snapshot, fresh_reference.state_dict()))
    assert parameter_digest(fresh.trainable_parameters()) == parameter_digest(policy.trainable_parameters())
    assert parameter_digest(fresh_reference.snapshot) == parameter_digest(reference.snapshot)
    assert parameter_digest(fresh_reference.snapshot) != parameter_digest(fresh.trainable_parameters())
    step(policy, optimizer, 1)
    step(fresh, fresh_optimizer, 1)
    assert parameter_digest(fresh.trainable_parameters()) == parameter_digest(policy.trainable_parameters())


@pytest.mark.parametrize("kwargs, words", [
    ({"param_dtype": "bf16"}, ["training.sharding.param_dtype = 'bf16'", "'bfloat16'"]),
    ({"master_dtype": "float32"}, ["training.sharding.master_dtype", "add training.sharding.param_dtype"]),
    ({"units": [], "activation_checkpointing": True}, ["training.sharding.activation_checkpointing", BLOCK_CLASS]),
])
def test_bad_settings_name_the_binding_and_the_fix(kwargs, words):
    with pytest.raises(ConfigError) as caught:
        ShardingSettings(enabled=True, **kwargs)
    assert all(w in str(caught.value) for w in words), str(caught.value)


def test_a_root_or_unit_the_policy_lacks_is_named_with_what_it_has(tiny_policy_path, one_process_group):
    from tvrl_bench.policies.toy import ToyPolicy

    policy = ToyPolicy(tiny_policy_path)
    with pytest.raises(ConfigError, match=r"training.sharding.root = 'unet'.*'transformer'"):
        settings = ShardingSettings(enabled=True, root="unet")
        shard_policy(policy, settings, processes(False, settings))
    with pytest.raises(ConfigError, match=r"training.sharding.units names \['Block'\].*AdaLayerNorm"):
        settings = ShardingSettings(enabled=True, units=["Block"])
        shard_policy(policy, settings, processes(False, settings))


@pytest.fixture(scope="module")
def replicated(tmp_path_factory, tiny_policy_path):
    """The trial on 2 processes without sharding (replicated policy, all-reduced gradients): its final state."""
    folder = tmp_path_factory.mktemp("replicated")
    result = two_processes(folder, tiny_policy_path)
    assert result.returncode == 0, result.stderr[-3000:]
    return final_state(folder)


def two_processes(folder: Path, policy: str, *extra: str, env: dict | None = None):
    config = folder / "faulty.gin"  # the toy oracle, with a fault the resume test switches on by environment
    config.write_text("import tests.training.faults\ninclude 'components/profiles/toy_v1.gin'\nREWARD = @rewards.faulty_oracle()\n")
    return train(folder, str(config), "--cpu", "--steps", "2", *bindings(policy, *SAME_FORWARD, *extra),
                 launcher=[console_script("accelerate"), *LAUNCH], env={"OMP_NUM_THREADS": "1", **(env or {})})


def final_state(folder: Path) -> dict:
    """The trial's checkpoint, read as a single process reads it."""
    (trial,) = (folder / "runs" / "trials").iterdir()
    return torch.load(trial / "state.pt", map_location="cpu", weights_only=False)


def assert_same_parameters(state: dict, reference: dict) -> None:
    assert state["step"] == reference["step"] == 2
    assert state["parameters"].keys() == reference["parameters"].keys()
    for key, value in reference["parameters"].items():
        assert type(state["parameters"][key]) is torch.Tensor and state["parameters"][key].shape == value.shape
        torch.testing.assert_close(state["parameters"][key], value, rtol=0, atol=1e-6)
    moments = [(s["exp_avg"], r["exp_avg"]) for s, r in zip(state["optimizer"]["state"].values(),
                                                            reference["optimizer"]["state"].values())]
    assert len(moments) == len(reference["parameters"])
    for mine, theirs in moments:
        torch.testing.assert_close(mine, theirs, rtol=0, atol=1e-7)


@pytest.mark.integration
def test_fsdp_over_two_cpu_processes_stopped_and_resumed_ends_with_the_parameters_of_unsharded_training(
        tmp_path, tiny_policy_path, replicated):
    # One sharded trial covers both claims (a separate uninterrupted run would add a minute of process start-up):
    # SIGTERM in the first step's scoring (on both ranks) stops it after step 1 with a gathered checkpoint, and
    # the resumed trial must end where the unsharded 2-process trial ends.
    stopped = two_processes(tmp_path, tiny_policy_path, *SHARDED, env={"TVRL_FAULT": "sigterm", "TVRL_FAULT_AT": "1"})
    assert stopped.returncode != 0 and "rerun the same command to resume" in stopped.stderr, stopped.stderr[-3000:]
    assert "sharded transformer over 2 processes with torch fully_shard: 1 units" in stopped.stderr
    (trial,) = (tmp_path / "runs" / "trials").iterdir()
    assert '"step": 1' in (trial / "trial.json").read_text()
    checkpoint = torch.load(trial / "state.pt", map_location="cpu", weights_only=False)  # one process reads it
    assert [v.shape for v in checkpoint["parameters"].values()] == [v.shape for v in replicated["parameters"].values()]

    resumed = two_processes(tmp_path, tiny_policy_path, *SHARDED)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "from step 1 (attempt 2" in resumed.stderr
    found = digests(resumed.stderr)
    assert len(found) == 2 and found[0] == found[1]  # both ranks gather the same full parameters
    assert_same_parameters(final_state(tmp_path), replicated)
    _, trial_runs = runs(tmp_path)
    assert sorted(r.info.status for r in trial_runs) == ["FINISHED", "KILLED"]
    (finished,) = [r for r in trial_runs if r.info.status == "FINISHED"]
    assert finished.data.params["training.sharding.enabled"] == "True"
    assert "eval/overall" in finished.data.metrics  # evaluated with every rank in the forwards
