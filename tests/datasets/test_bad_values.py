"""Every parameter of the toy datasets (and the slot world's knobs) fed a bad value: one line naming where it was bound,
the binding and the fix, exit 2, before anything is built or written; never "internal error".

In-process through tvrl-train's entry point (what a user runs), so a case costs the config's reading, not a start
of Python. Each parameter of `datasets.toy_slots` and `datasets.toy` has at least one case (checked below), and so
has each case of issue 52 that a config can make: parts of the other world, and the std floor of 0.
"""

from __future__ import annotations

import pytest

from tvrl_bench import registry
from tvrl_bench.cli import train as train_cli

SLOTS, SPRITES = "components/profiles/toy.gin", "components/profiles/toy_v3.gin"
POLICY_DRAWS = "the videos are the policy's, so this value would change nothing; remove the binding"

CASES = [
    # the slot world's dataset (the default profile)
    (SLOTS, "datasets.toy_slots.seed = 'one'", "datasets.toy_slots.seed = 'one' is a str"),
    (SLOTS, "datasets.toy_slots.n_train = -1", "datasets.toy_slots.n_train = -1 must be an integer >= 0"),
    (SLOTS, "datasets.toy_slots.n_train = 1240", "datasets.toy_slots.n_train = 1240 and datasets.toy_slots.n_eval = 64 "
     "ask for 1,304 distinct scenes (train and eval share none), but the slot world has 1,296 (6 colours ^ 4 slots); "
     "ask for fewer, e.g. datasets.toy_slots.n_train = 1232"),
    (SLOTS, "datasets.toy_slots.n_eval = -2", "datasets.toy_slots.n_eval = -2 must be an integer >= 0"),
    (SLOTS, "datasets.toy_slots.n_eval = 2000", "ask for 2,512 distinct scenes"),
    (SLOTS, "datasets.toy_slots.frames = 0", "datasets.toy_slots.frames = 0 must be an integer >= 1"),
    (SLOTS, "datasets.toy_slots.frames = 16", "datasets.toy_slots.frames = 16 makes videos of 16 frames, but the policy "
     "(policies.toy.base = 'slots') draws 8 frames of 16 x 16: " + POLICY_DRAWS),
    (SLOTS, "datasets.toy_slots.size = 8", "datasets.toy_slots.size = 8 makes frames 8 px high, but the policy "
     "(policies.toy.base = 'slots') draws 8 frames of 16 x 16: " + POLICY_DRAWS),
    (SLOTS, "datasets.toy_slots.rows = 3", "datasets.toy_slots.rows = 3 must be one of 1, 2 (a slot grid of 1 or 2 "
     "rows) or None, e.g. datasets.toy_slots.rows = 1"),
    (SLOTS, "datasets.toy_slots.cols = 0", "datasets.toy_slots.cols = 0 must be one of 1, 2"),
    (SLOTS, "datasets.toy_slots.colours = ('red', 'pink')", "datasets.toy_slots.colours = ('red', 'pink') must be 2 "
     "or more distinct colour names of ('red', 'green', 'blue', 'yellow', 'magenta', 'cyan', 'orange', 'purple')"),
    (SLOTS, "datasets.toy_slots.colours = ('red', 'green')", "but the slot world of datasets.toy_slots.colours = "
     "('red', 'green') has 16 (2 colours ^ 4 slots); give more colours"),
    (SLOTS, "datasets.toy_slots.min_size = 7", "datasets.toy_slots.min_size = 7 makes squares at least 7 px wide, but "
     "the policy (policies.toy.base = 'slots') draws squares of 4-5 px: " + POLICY_DRAWS),
    (SLOTS, "datasets.toy_slots.max_size = 9", "datasets.toy_slots.max_size = 9 makes squares at most 9 px wide"),
    # the sprite world's dataset (components/profiles/toy_v3.gin)
    (SPRITES, "datasets.toy.seed = 1.5", "datasets.toy.seed = 1.5"),
    (SPRITES, "datasets.toy.n_train = 1300", "datasets.toy.n_train = 1300 and datasets.toy.n_eval = 64 ask for 1,364 "
     "distinct scenes (train and eval share none), but the sprite world of datasets.toy.difficulty = 'default' has "
     "1,344; ask for fewer, e.g. datasets.toy.n_train = 1280"),
    (SPRITES, "datasets.toy.n_eval = -1", "datasets.toy.n_eval = -1 must be an integer >= 0"),
    (SPRITES, "datasets.toy.difficulty = 'medium'", "datasets.toy.difficulty = 'medium' must be one of 'default', "
     "'hard'"),
    (SPRITES, "datasets.toy.difficulty = 'hard'", "datasets.toy.difficulty = 'hard' makes frames 32 px high, but the "
     "policy (policies.toy.base = 'v2_noisy_captions') draws 8 frames of 16 x 16: " + POLICY_DRAWS),
    (SPRITES, "datasets.toy.size = 32", "datasets.toy.size = 32 makes frames 32 px high"),
    (SPRITES, "datasets.toy.frames = 1", "datasets.toy.frames = 1 must be an integer >= 2 (motion needs 2 frames)"),
    (SPRITES, "datasets.toy.min_sprites = 3", "datasets.toy.min_sprites = 3: invalid toy-world Difficulty: "
     "min_sprites=3, max_sprites=2"),
    (SPRITES, "datasets.toy.max_sprites = 4", "datasets.toy.max_sprites = 4 must be an integer in [1, 3]"),
    (SPRITES, "datasets.toy.n_colours = 9", "datasets.toy.n_colours = 9 must be an integer in [1, 8]"),
    (SPRITES, "datasets.toy.n_colours = 2", "but the sprite world of datasets.toy.n_colours = 2 has 264"),
    (SPRITES, "datasets.toy.n_backgrounds = 0", "datasets.toy.n_backgrounds = 0 must be an integer in [1, 4]"),
    (SPRITES, "datasets.toy.shapes = ('hexagon',)", "datasets.toy.shapes = ('hexagon',) must be distinct shape names "
     "of ('circle', 'square', 'triangle')"),
    (SPRITES, "datasets.toy.shapes = ('triangle',)", "triangles need sprites of at least 8 px"),
    (SPRITES, "datasets.toy.min_size = 6", "datasets.toy.min_size = 6 makes sprites at least 6 px wide, but the policy "
     "(policies.toy.base = 'v2_noisy_captions') draws sprites of 5-7 px moving 1 px per frame"),
    (SPRITES, "datasets.toy.max_size = 9", "datasets.toy.max_size = 9 makes sprites at most 9 px wide"),
    (SPRITES, "datasets.toy.speed = 2", "datasets.toy.speed = 2 makes sprites moving 2 px per frame"),
    (SPRITES, "datasets.toy.count_checks = 'yes'", "datasets.toy.count_checks = 'yes'"),
    # parts of the other world, and the std floor (issue 52, items 3 and 5)
    (SLOTS, "include 'components/rewards/toy_learned.gin'", "components/rewards/toy_learned.gin:9: "
     "rewards.toy_learned answers sprite-world checks; components/profiles/toy.gin is the slot world "
     "(policies.toy.base = 'slots'): use rewards.toy_oracle, rewards.toy_verdicts"),
    (SLOTS, "policies.toy.base = 'v2'", "policies.toy.base = 'v2' is a sprite-world base, but datasets.toy_slots"),
    (SPRITES, "policies.toy.base = 'slots'", "policies.toy.base = 'slots' is a slot-world base, but datasets.toy"),
    (SLOTS, "objectives.tvrl_official.advantage_eps = 0", "objectives.tvrl_official.advantage_eps = 0 must be a "
     "number > 0"),
]


def test_every_dataset_parameter_has_a_bad_value_case():
    registry.import_components()
    for name in ("datasets.toy_slots", "datasets.toy"):
        params = {p for p, _ in registry.get(name).parameters()}
        covered = {b.split("=")[0].strip().rsplit(".", 1)[1] for _, b, _ in CASES if b.startswith(name + ".")}
        assert params == covered, f"{name}: no bad-value case for {sorted(params - covered)}"


@pytest.mark.parametrize("profile, binding, needle", CASES, ids=[c[1] for c in CASES])
def test_a_bad_value_is_one_line_exit_2_before_anything_is_written(profile, binding, needle, tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = train_cli.main([profile, "--steps", "1", "--tracking-uri", f"sqlite:///{tmp_path / 't.db'}",
                           "--out", str(tmp_path / "out"), "--no-progress", "--gin_bindings", binding])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("tvrl-train: error: ") and needle in lines[0], lines[0]
    assert "internal error" not in lines[0] and not list(tmp_path.iterdir())  # no store, no run folder
