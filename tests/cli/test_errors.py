"""How commands end: a lost peer process is named as such, a real bug as a bug."""

from __future__ import annotations

from tvrl_bench.cli.errors import BUG, USAGE, UserError, explain


def test_a_collective_whose_peer_died_is_reported_as_a_lost_process_not_a_bug():
    exc = RuntimeError("[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:29500")
    message, code = explain(exc)
    assert code == BUG and "another process of this trial failed or was lost" in message
    assert "bug" not in message and "resumes from its last checkpoint" in message


def test_an_unexpected_error_is_still_a_bug_and_a_user_error_a_usage_error():
    message, code = explain(KeyError("x"))
    assert code == BUG and message.startswith("internal error") and "bug" in message
    assert explain(UserError("set training.trial.steps"))[1] == USAGE


def test_a_missing_file_is_blamed_on_the_config_only_when_a_component_was_being_built():
    message, code = explain(FileNotFoundError(2, "No such file or directory", "/x/critic.pt"))
    assert code == USAGE and message.endswith("check the path (a checkpoint or data file) given by a flag or named "
                                              "in your config")
    built = FileNotFoundError("/x/critic.pt\n  In call to configurable 'rewards.toy_learned' (<class 'X'>)")
    message, _ = explain(built)
    assert message == ("building rewards.toy_learned: /x/critic.pt; check the path (a checkpoint or data file) bound "
                       "in your config")
