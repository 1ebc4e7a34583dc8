"""What `tvrl-bench critic-card` refuses before it measures anything, each in one line naming the flag and the fix.

- a number below 1, a seed or a critic named twice (a critic is named by its file's stem: two files of one name
  would give one card two rows sets under one name), a `--csv` that is a folder;
- a critic preset that is not found where config files are looked for (the current folder, $TVRL_BENCH_PATH, the
  checkout: config/paths.py, so the default critics resolve from any folder), or that binds no critic (`REWARD`):
  any other preset (a credit router's) would give the profile's own critic a card under the preset's name;
- `--prompts` beyond the profile's training prompts (the card would silently measure fewer);
- `--trained` without a checkpoint, or whose trained tensors are not `--profile`'s policy's (a trial of another
  world or policy: its weights cannot be loaded into this policy);
- `--study` whose trials ran a profile of another world than `--profile`'s (its page would show critics measured
  on another world's videos).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from tvrl_bench.cli.errors import UserError


def _twice(values: list) -> list:
    return [v for v, n in Counter(values).items() if n > 1]


def check_args(args: argparse.Namespace) -> None:
    """Refuse bad flags (see the module docstring); `args.critics` becomes the resolved preset paths."""
    for flag, value in (("--prompts", args.prompts), ("--group", args.group), ("--timing-videos", args.timing_videos)):
        if value < 1:
            raise UserError(f"{flag} must be >= 1, got {value}")
    if repeated := _twice(args.seeds):
        raise UserError(f"--seeds names {', '.join(map(str, repeated))} twice: each seed's rollouts would be measured "
                        "and averaged twice; name each seed once")
    args.critics = [str(critic_preset(preset)) for preset in args.critics]
    if repeated := _twice([Path(p).stem for p in args.critics]):
        raise UserError(f"critic {repeated[0]} is named twice (critics are named by their file's stem): its rows "
                        "would be counted twice; name each critic preset once")
    if args.trained is not None and not (args.trained / "state.pt").is_file():
        raise UserError(f"--trained {args.trained}: no state.pt there; pass a trial's checkpoint folder (the one "
                        "holding state.pt and trial.json, under the trial's --out runs/)")
    if args.csv.is_dir():
        raise UserError(f"--csv {args.csv} is a folder; name a file, e.g. --csv critic_card.csv")


def critic_preset(preset: str) -> Path:
    """The preset file, found as config files are; UserError when there is none or it binds no critic."""
    from tvrl_bench import registry
    from tvrl_bench.config import ConfigError, LoadedConfig, binding_locations, resolve, search_paths

    try:
        path = resolve(preset)
    except ConfigError:
        searched = ", ".join(str(p) for p in search_paths())
        raise UserError(f"critic preset {preset}: no such file (searched {searched}); name a file of "
                        "components/rewards/") from None
    macro = registry.FAMILIES["rewards"].macro
    bound = {selector for (_, selector, param) in binding_locations(LoadedConfig([str(path)], [])) if not param}
    if macro not in bound:
        raise UserError(f"critic preset {preset} binds no critic ({macro} = @rewards.<name>()): the card would measure "
                        f"the profile's own critic under this file's name; name a critic preset of components/rewards/")
    return path


def check_prompts(prompts: int, settings, profile: str) -> None:
    """UserError when `prompts` exceeds the profile's training prompts."""
    available = len(settings.dataset.train)
    if prompts > available:
        raise UserError(f"--prompts {prompts}: {profile}'s dataset has {available} training prompts; pass --prompts "
                        f"{available} or fewer")


def check_trained_fits(trained: Path, saved: dict, policy, profile: str) -> None:
    """UserError when the checkpoint's trained tensors {str(i): tensor} are not `policy`'s trainable parameters."""
    mine = [tuple(p.shape) for p in policy.trainable_parameters()]
    theirs = [tuple(saved[k].shape) for k in sorted(saved, key=int)] if all(k.isdigit() for k in saved) else None
    if theirs == mine:
        return
    differs = (f"{len(theirs)} trained tensors against {len(mine)}" if theirs is None or len(theirs) != len(mine) else
               next(f"tensor {i} is {list(a)}, the policy's {list(b)}" for i, (a, b) in enumerate(zip(theirs, mine))
                    if a != b))
    raise UserError(f"--trained {trained}: its checkpoint is not {profile}'s policy ({differs}): a trial of another "
                    "world or policy; pass a trial of this profile, or the trial's own profile as --profile")


def profile_world(profile: str) -> str | None:
    """The world of a profile's policy (its checkpoint's), or None when the profile cannot be read or does not say."""
    import gin

    from tvrl_bench.config import ConfigError, load_config
    from tvrl_bench.training.trial.world_check import policy_world

    try:
        load_config([profile])
        found = policy_world()
    except ConfigError:
        return None
    finally:
        gin.clear_config()
    return None if found is None else found[2].world


def check_study_world(study: str, tracker, profile: str) -> None:
    """UserError when the study's recorded profile is of another world than `profile`'s."""
    from tvrl_bench.sweeps.stage_record import PROFILE_TAG

    recorded = tracker.client.get_run(tracker.parent_run_id).data.tags.get(PROFILE_TAG)
    if not recorded:
        return
    theirs, ours = profile_world(recorded), profile_world(profile)
    if theirs is not None and ours is not None and theirs != ours:
        raise UserError(f"--study {study}: its trials ran {recorded} ({theirs} world) and this card measures {profile} "
                        f"({ours} world): its page would show critics judged on another world's videos; pass "
                        f"--profile {recorded}, or log the card on a study of the {ours} world")
