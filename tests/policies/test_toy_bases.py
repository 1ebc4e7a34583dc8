"""The shipped toy bases: each loads by name, has its recipe's architecture, and records the recipe that made it."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from tvrl_bench.policies.toy import SHIPPED_BASES, ToyPolicy
from tvrl_bench.policies.toy_bases import bases_of, configured_world
from tvrl_bench.world.declaration import CheckpointWorld, VideoSize
from tvrl_bench.recipes.pretrain_policy import RECIPES


@pytest.mark.parametrize("base, grid", [("v1", (4, 8, 8)), ("v2", (2, 8, 8)), ("v2_18k", (2, 8, 8)),
                                        ("v2_noisy_captions", (2, 8, 8)), ("slots_clean", (2, 8, 8)), ("slots", (2, 8, 8))])
def test_each_shipped_base_loads_by_name_and_records_its_recipe(base, grid):
    policy = ToyPolicy(base=base)
    assert policy.latent_shape() == (3, 8, 16, 16)
    assert policy.token_grid.grid_from_latent((1, *policy.latent_shape())) == grid
    record = json.loads((SHIPPED_BASES[base] / "pretrain.json").read_text())
    recipe = asdict(RECIPES[base])  # v1's record predates the recipe's later fields, which keep v1's behaviour
    assert record["seed"] == 0 and record["recipe"] == {k: recipe[k] for k in record["recipe"]}


def test_an_unknown_base_names_the_choices():
    with pytest.raises(ValueError, match=r"policies\.toy\.base = 'v9'.*'v1', 'v2', 'v2_18k'"):
        ToyPolicy(base="v9")


@pytest.mark.parametrize("base", list(SHIPPED_BASES))
def test_each_shipped_base_states_its_world_and_video(base):
    """What the trial's world check reads (policies/toy_bases.py): recipe.world and video in its pretrain.json."""
    record = json.loads((SHIPPED_BASES[base] / "pretrain.json").read_text())
    world = "slots" if base.startswith("slots") else "sprites"
    assert record["recipe"]["world"] == world and record["video"] == {"frames": 8, "height": 16, "width": 16}
    assert configured_world(base, None) == CheckpointWorld(world, VideoSize(8, 16, 16))
    assert base in bases_of(world)


@pytest.mark.parametrize("record, reason", [
    ("{not json", "Expecting property name"),
    ('{"recipe": {"world": "moon"}}', "recipe.world = 'moon' is not a world"),
    ("[1, 2]", "it holds a list, not a JSON object"),
    ('{"recipe": {"world": "slots"}, "video": {"frames": 8}}', "no 'height' in video"),
    ('{"recipe": "slots"}', "no attribute"),
])
def test_a_damaged_record_is_the_users_file_named_with_the_fix(tmp_path, record, reason):
    """A corrupt or edited pretrain.json is a ConfigError (exit 2) naming the file and the fix, also from the
    parsed config of a trial that points policies.toy.path at it, not an internal error."""
    from tvrl_bench.config import ConfigError, load_config
    from tvrl_bench.training.trial.checks import check_values

    (tmp_path / "pretrain.json").write_text(record)
    with pytest.raises(ConfigError) as err:
        configured_world("slots", str(tmp_path))
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'pretrain.json'}: ") and reason in message and len(message.splitlines()) == 1
    assert "prepare-toy --what policy" in message and "policies.toy.path" in message
    with pytest.raises(ConfigError, match="pretrain.json: the toy policy checkpoint's record cannot be read"):
        check_values(load_config(["components/profiles/toy.gin"], [f"policies.toy.path = '{tmp_path}'"]))
