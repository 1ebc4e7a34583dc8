"""The annotation session without HTTP: pairs from a real MLflow study, lists, sides, votes as judgments."""

from __future__ import annotations

import re
import sqlite3

import pytest

from tests.annotate.helpers import log_toy_study, sha256
from tvrl_bench.annotate import AnnotateError
from tvrl_bench.annotate.pairs import BlindPair, opaque_id, parse_method
from tvrl_bench.annotate.session import AnnotationSession
from tvrl_bench.annotate.store import VoteStore
from tvrl_bench.annotate.annotators import annotator_names


def synthetic_pairs(n: int) -> list[BlindPair]:
    """n pairs of A=TVRL against B=GRPO (data only: these tests never look at the videos)."""
    return [
        BlindPair(f"p{i:04d}", "s", f"prompt {i}", str(i % 3), 0, "TVRL", "GRPO", f"ra{i}", f"rb{i}", f"va{i}",
                  f"vb{i}")
        for i in range(n)
    ]


def lists(session: AnnotationSession) -> dict[str, list[tuple[str, bool]]]:
    return {name: [(s.pair.pair_id, s.a_left) for s in session._slots[name]] for name in session.annotators()}


def test_pairs_come_from_the_study_runs_by_seed_and_prompt(open_session, toy_study):
    session = open_session()
    assert len(session.pairs) == 6
    assert {p.key for p in session.pairs} == {(pr, s, 0) for pr in toy_study.prompts for s in toy_study.seeds}
    for pair in session.pairs:
        assert (pair.method_a, pair.method_b) == ("TVRL", "GRPO")
        assert toy_study.runs[pair.run_a]["method"] == "TVRL" and toy_study.runs[pair.run_a]["seed"] == pair.seed
        assert toy_study.runs[pair.run_b]["method"] == "GRPO" and toy_study.runs[pair.run_b]["seed"] == pair.seed
        for video_id, method in ((pair.video_a, "TVRL"), (pair.video_b, "GRPO")):
            assert toy_study.videos[sha256(session.video(video_id).read_bytes())] == (method, pair.prompt, pair.seed)
    ids = [p.pair_id for p in session.pairs] + [p.video_a for p in session.pairs] + [p.video_b for p in session.pairs]
    assert len(set(ids)) == 18 and all(re.fullmatch(r"[0-9a-f]{24}", i) for i in ids)  # opaque lowercase hex


def test_prompts_and_seeds_narrow_the_pairs(open_session, toy_study):
    two = open_session(prompts=2)
    assert {p.prompt for p in two.pairs} == set(toy_study.prompts[:2]) and len(two.pairs) == 4
    one_seed = open_session(seeds=["1"])
    assert {p.seed for p in one_seed.pairs} == {"1"} and len(one_seed.pairs) == 3
    with pytest.raises(AnnotateError, match="--prompts must be at least 1"):
        open_session(prompts=0)


def test_pairs_that_would_be_the_same_judgment_are_an_error(toy_study, tmp_path):
    """Two samplers give two TVRL/GRPO trial pairs with seed 0: one judgment record cannot hold both."""
    study = log_toy_study(toy_study.root, study="blind_two_samplers", n_prompts=1, seeds=(0,),
                          samplers=("sage", "flow"))
    with VoteStore(tmp_path / "j.sqlite") as store:
        with pytest.raises(AnnotateError, match=r"narrow --a / --b .*--a method=TVRL,sampler=sage"):
            AnnotationSession.open(store, study.study, "TVRL", "GRPO", tmp_path / "m", tracking_uri=study.uri)
        narrowed = AnnotationSession.open(store, study.study, parse_method("method=TVRL,sampler=flow"),
                                          parse_method("method=GRPO,sampler=flow"), tmp_path / "m2",
                                          tracking_uri=study.uri, labels=("TVRL", "GRPO"))
        assert len(narrowed.pairs) == 1 and (narrowed.method_a, narrowed.method_b) == ("TVRL", "GRPO")


def test_lists_are_random_per_annotator_recorded_and_the_same_after_a_restart(tmp_path):
    pairs = synthetic_pairs(200)
    store = VoteStore(tmp_path / "j.sqlite")
    first = lists(AnnotationSession(store, "s", "TVRL", "GRPO", pairs, {}, ["alice", "bob"]))
    store.close()
    alice, bob = first["alice"], first["bob"]
    assert sorted(p for p, _ in alice) == sorted(p.pair_id for p in pairs) == sorted(p for p, _ in bob)
    assert [p for p, _ in alice] != [p for p, _ in bob]  # each annotator has their own order
    assert [p for p, _ in alice] != [p.pair_id for p in pairs]
    a_left = sum(left for _, left in alice)
    assert 60 <= a_left <= 140  # Binomial(200, 1/2): outside this range with probability < 1e-8
    assert dict(alice) != dict(bob)  # sides are drawn per annotator too
    with sqlite3.connect(tmp_path / "j.sqlite") as conn:
        rows = conn.execute("SELECT position, pair_id, left_side FROM annotate_assignments WHERE name = 'alice' "
                            "ORDER BY position").fetchall()
    assert [(p, side == "a") for _, p, side in rows] == alice and [r[0] for r in rows] == list(range(200))
    with VoteStore(tmp_path / "j.sqlite") as store:
        again = AnnotationSession(store, "s", "TVRL", "GRPO", list(reversed(pairs)), {})
        assert lists(again) == first  # the stored annotators, lists and sides come back
        assert again.annotators().keys() == {"alice", "bob"}


def test_new_pairs_are_appended_and_unselected_pairs_left_out(tmp_path):
    pairs = synthetic_pairs(30)
    with VoteStore(tmp_path / "j.sqlite") as store:
        before = lists(AnnotationSession(store, "s", "TVRL", "GRPO", pairs[:20], {}, ["alice"]))["alice"]
        grown = lists(AnnotationSession(store, "s", "TVRL", "GRPO", pairs, {}))["alice"]
        assert grown[:20] == before and {p for p, _ in grown[20:]} == {p.pair_id for p in pairs[20:]}
        shrunk = lists(AnnotationSession(store, "s", "TVRL", "GRPO", pairs[:10], {}))["alice"]
        kept = {p.pair_id for p in pairs[:10]}
        assert shrunk == [s for s in grown if s[0] in kept]


def test_choices_become_verdicts_from_a_and_a_new_vote_replaces_the_old(tmp_path):
    pairs = synthetic_pairs(4)
    with VoteStore(tmp_path / "j.sqlite") as store:
        session = AnnotationSession(store, "s", "TVRL", "GRPO", pairs, {}, ["alice"])
        slots = session._slots["alice"]
        expected = {}
        for position, choice in enumerate(["left", "right", "tie", "left"]):
            slot = slots[position]
            shown_left = "TVRL" if slot.a_left else "GRPO"
            winner = {"left": shown_left, "right": "GRPO" if shown_left == "TVRL" else "TVRL"}.get(choice)
            expected[slot.pair.key] = (shown_left, "tie" if winner is None else ("win" if winner == "TVRL" else "loss"))
            state = session.vote("alice", {"position": position, "pair": slot.pair.pair_id, "choice": choice})
            assert session.item("alice", position)["choice"] == choice
        assert state == {"done": 4, "total": 4, "next": 4}
        assert store.verdicts("s", "TVRL", "GRPO", "human:alice") == expected
        session.vote("alice", {"position": 0, "pair": slots[0].pair.pair_id, "choice": "tie"})
        frame = store.judgments.frame("s")
        assert len(frame) == 4 and set(frame["judge"]) == {"human:alice"}
        assert frame.set_index("prompt").loc[slots[0].pair.prompt, "verdict"] == "tie"


def test_opaque_ids_annotator_names_and_method_filters():
    assert opaque_id("k", "pair", "x") == opaque_id("k", "pair", "x") != opaque_id("k2", "pair", "x")
    assert annotator_names(["2"]) == ["annotator1", "annotator2"] and annotator_names(["alice", "b.o-b"])
    for bad, message in ((["al ice"], "not valid"), (["a", "a"], "more than once"), (["0"], "at least 1")):
        with pytest.raises(AnnotateError, match=message):
            annotator_names(bad)
    assert parse_method("TVRL") == "TVRL" and parse_method("method=TVRL, credit=frame") == {"method": "TVRL",
                                                                                              "credit": "frame"}
    with pytest.raises(AnnotateError, match="is not param=value"):
        parse_method("method=TVRL,credit")


def test_vote_store_uses_write_ahead_logging(tmp_path):
    with VoteStore(tmp_path / "j.sqlite") as store:
        assert store.journal_mode() == "wal"
    with sqlite3.connect(tmp_path / "j.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent in the file
