"""What is refused before a trial trains: values out of range and unreadable prompt files (from the parsed config,
before anything is built), and prompts the built trial cannot use."""

from __future__ import annotations

from tvrl_bench import config as gin_config, registry
from tvrl_bench.config.trial_fit import check_objective_reads_the_critic
from tvrl_bench.training.settings import TrialSettings
from tvrl_bench.training.trial.world_check import check_worlds


def check_values(loaded: gin_config.LoadedConfig | None = None, trains: bool = True) -> None:
    """Every component's config-time checks (the bound prompt files readable, ...), the trial's world check (its
    parts serve its policy's world: training/trial/world_check.py) and, when the config `trains`, that its
    objective reads only what its critic gives (config/trial_fit.py; False for a tool that only scores with the
    critic, critic-card), from the parsed config alone; the declared value checks (CHECKS, `training.trial` and
    `training.optimizer` included) ran when it was loaded. `loaded` lets a problem name the file and line that
    bound it."""
    registry.run_config_checks()
    check_worlds(loaded)
    if trains:
        check_objective_reads_the_critic(loaded)


def check_prompts(settings: TrialSettings) -> None:
    """Prompts the trial cannot use, refused before training with the file and line each was read from.

    A critic that scores a prompt's checks gets nothing to score from a prompt without checks: a training
    prompt's group would have equal rewards and advantages 0 (training silently learns nothing from it), and an
    evaluation prompt would silently drop out of eval/overall. A prompt with words the policy's text encoder does
    not know (the toy policy reads only the toy grammar) would fail in the middle of training.
    """
    locations = getattr(settings.dataset, "locations", None) or {}
    train = list(settings.dataset.train)
    evaluated = list(settings.dataset.eval)[: settings.eval_prompts]
    roles = [
        ("training", train, "these prompts would train nothing (advantage 0)"),
        ("evaluation", evaluated, "these prompts would silently be left out of eval/overall"),
    ]
    for role, items, effect in roles if getattr(settings.reward, "uses_checks", False) else []:
        lacking = [item for item in items if not item.checks]
        if not lacking:
            continue
        where = locations.get(lacking[0].prompt) or f"dataset '{settings.dataset.name}'"
        raise gin_config.ConfigError(
            f"{where}: {role} prompt {lacking[0].prompt!r} has no checks ({len(lacking)} of {len(items)} {role} "
            f"prompts have none), but the critic {type(settings.reward).__name__} scores each prompt's yes/no checks, "
            f"so {effect}; add a `checks` column or field, or write them with "
            "`tvrl-bench decompose PROMPTS --model QWEN_PATH --out checks.jsonl` and bind datasets.file.checks_path"
        )
    tokenize = getattr(getattr(settings.policy, "text_encoder", None), "tokenize", None)
    if not callable(tokenize):
        return
    prompts = list(dict.fromkeys(i.prompt for i in [*train, *evaluated]))
    try:
        tokenize(prompts)  # one call for the whole set; the prompt at fault is looked for only when it fails
    except gin_config.ConfigError:
        for item in prompts:
            try:
                tokenize([item])
            except gin_config.ConfigError as exc:
                where = locations.get(item) or f"dataset '{settings.dataset.name}'"
                raise gin_config.ConfigError(
                    f"{where}: {exc}; rewrite the prompt in those words or remove it, or use a policy that reads "
                    "any text (components/policies/hunyuan_video15_480p.gin)"
                ) from None
