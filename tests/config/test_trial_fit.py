"""A critic that answers no check (a scalar scorer) is refused under an objective that reads an answer per check,
in one line naming where it was chosen and the fix (config/trial_fit.py); with one advantage per video it trains."""

from __future__ import annotations

import pytest

from tvrl_bench.config import ConfigError, load_config
from tvrl_bench.training.trial.checks import check_values

TOY = "components/profiles/toy.gin"
SCORER = "components/rewards/toy_scorer_slots.gin"


def checked(files: list[str], bindings: list[str] = (), trains: bool = True) -> None:
    check_values(load_config(files, list(bindings)), trains=trains)


@pytest.mark.parametrize("files, bindings, where", [
    ([TOY, SCORER], [], "components/rewards/toy_scorer_slots.gin:"),
    ([TOY], ["REWARD = @rewards.toy_scorer_slots()"], "--gin_bindings"),
    ([TOY, "components/objectives/tvrl_video.gin", SCORER], ["objectives.tvrl_official.mode = 'question'"],
     "--gin_bindings"),
    ([TOY, "components/rewards/videoalign.gin"], [], "components/rewards/videoalign.gin:"),
])
def test_a_critic_with_no_answer_per_check_is_refused_under_per_check_advantages(files, bindings, where):
    with pytest.raises(ConfigError) as err:
        checked(files, bindings)
    message = str(err.value)
    assert len(message.splitlines()) == 1 and message.startswith(where), message
    assert "answers no check" in message and "mode = 'question'" in message
    assert "components/objectives/tvrl_video.gin" in message


def test_with_one_advantage_per_video_or_outside_training_it_is_accepted():
    checked([TOY, "components/objectives/tvrl_video.gin", SCORER])
    checked([TOY, SCORER], trains=False)  # critic-card scores with it, trains nothing
    checked([TOY])
