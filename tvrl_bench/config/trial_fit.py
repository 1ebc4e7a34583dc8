"""A trial's objective reads only what its critic gives, refused in one line from the parsed config when it does not.

An objective may read the critic's answer to each check (`Objective.reads_check_scores(values)`: the official loss
in mode 'question', one advantage per check); a critic with score heads instead of answers (`uses_checks = False`:
a scalar scorer such as rewards.toy_scorer_slots or VideoAlign) gives none, so such a trial would train on per-head
advantages no check asked for. Every critic the trial builds is asked (a combined critic's too), from the config
alone (config/trial_components.py), before anything is built; the line names where the user chose the critic or
the objective's mode (the command line first, then their own files) and the fix.
"""

from __future__ import annotations

from tvrl_bench import registry
from tvrl_bench.config.component_checks import preferred_place
from tvrl_bench.config.errors import ConfigError
from tvrl_bench.config.statements import LoadedConfig, locate, short_origin
from tvrl_bench.config.trial_components import TrialComponent, configured_values, trial_components


def _chosen_at(loaded: LoadedConfig | None, part: TrialComponent) -> list[str | None]:
    """Where the config chose a component: its family's macro, or the trial's binding of its axis."""
    family = registry.FAMILIES[part.qualified.split(".")[0]]
    return [locate(loaded, family.macro, ""), locate(loaded, "training.trial", part.axis)]


def check_objective_reads_the_critic(loaded: LoadedConfig | None = None) -> None:
    """ConfigError when the trial's objective reads an answer per check and one of its critics gives none."""
    parts = trial_components()
    objective = next((p for p in parts if p.axis == "objective"), None)
    reads = getattr(objective.target, "reads_check_scores", None) if objective is not None else None
    values = configured_values(objective.qualified) if reads is not None else {}
    why = reads(values) if reads is not None else None
    if why is None:
        return
    for critic in (p for p in parts if p.axis == "reward"):
        if getattr(critic.target, "uses_checks", True):
            continue
        param = why.split(" ", 1)[0]
        where = preferred_place(loaded, [*_chosen_at(loaded, critic), locate(loaded, objective.qualified, param)])
        heads = configured_values(critic.qualified).get("score_names") or getattr(critic.target, "score_names", ())
        raise ConfigError(
            f"{short_origin(where) + ': ' if where else ''}{critic.qualified} scores the whole video "
            f"({', '.join(heads) or 'its score heads'}) and answers no check, but {objective.qualified}.{why}; train "
            "it with one advantage per video (components/objectives/tvrl_video.gin), or use a critic that answers "
            "each check (`tvrl-bench list rewards`)"
        )
