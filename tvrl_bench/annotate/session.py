"""One blind study being annotated: its pairs, videos, annotators, their lists and votes (no HTTP here).

Every annotator judges every pair, in their own random order, each pair with its own random side for method A;
order and sides are drawn once and stored (annotate_assignments), so a restarted server shows everyone the same
list and continues at their first unjudged pair. Pairs that appear later (more runs finished, a larger
--prompts) are appended to each list; pairs no longer selected are left out of it (their votes stay stored).

What the browser gets about an item (`item`) is the prompt, the opaque pair id, the opaque ids of the left and
right videos and the annotator's current choice: never a method name, run or file name.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from tvrl_bench.annotate import AnnotateError
from tvrl_bench.annotate.pairs import BlindPair, build_pairs, opaque_id
from tvrl_bench.annotate.store import Assignment, VoteStore
from tvrl_bench.annotate.annotators import judge_name, looks_like_token
from tvrl_bench.report.winrate.judgments import CHOICES, Judgment, verdict_from_choice

VOTE_FIELDS = ("position", "pair", "choice")


@dataclass(frozen=True)
class Slot:
    """One position of an annotator's list: the pair and whether method A is on the left."""

    pair: BlindPair
    a_left: bool

    @property
    def left_method(self) -> str:
        return self.pair.method_a if self.a_left else self.pair.method_b

    @property
    def left_video(self) -> str:
        return self.pair.video_a if self.a_left else self.pair.video_b

    @property
    def right_video(self) -> str:
        return self.pair.video_b if self.a_left else self.pair.video_a


class AnnotationSession:
    """The pairs of A against B in one study, with the annotators' lists and votes in a VoteStore."""

    def __init__(self, store: VoteStore, study: str, method_a: str, method_b: str, pairs: list[BlindPair],
                 videos: Mapping[str, Path], annotators: Iterable[str] = ()) -> None:
        self.store = store
        self.study = study
        self.method_a = method_a
        self.method_b = method_b
        self.record = store.session(study, method_a, method_b)
        self.pairs = list(pairs)
        self.videos = dict(videos)
        for name in annotators:
            store.add_annotator(self.record.id, name)
        if not store.annotators(self.record.id):
            store.add_annotator(self.record.id, "annotator1")
        self._tokens = {token: name for name, token in store.annotators(self.record.id).items()}
        self._slots = {name: self._list_of(name) for name in self._tokens.values()}

    @classmethod
    def open(cls, store: VoteStore, study: str, a: str | Mapping[str, str], b: str | Mapping[str, str],
             folder: str | Path, *, annotators: Iterable[str] = (), tracking_uri: str | None = None,
             prompts: int | None = None, seeds: Iterable[str] | None = None,
             match: tuple[str, ...] = ("policy", "sampler", "reward"), labels: tuple[str, str] | None = None,
             client: Any = None) -> "AnnotationSession":
        """Build the pair list of A against B from the study's runs (videos downloaded under `folder`).

        labels: the names A and B get in the judgments (default: the method names, or the filter values joined
        by "/"); the win-rate table of tvrl-report matches them against its `method` and opponents.
        """
        from tvrl_bench.report.winrate.pairs import method_labels

        label_a, label_b = method_labels(a, b, labels)
        if label_a == label_b:
            raise AnnotateError(f"methods A and B are both called '{label_a}'; pass two different --labels")
        secret = store.session(study, label_a, label_b).secret
        pairs, videos = build_pairs(study, a, b, folder, secret, labels=(label_a, label_b), tracking_uri=tracking_uri,
                                    prompts=prompts, seeds=seeds, match=match, client=client)
        return cls(store, study, label_a, label_b, pairs, videos, annotators)

    # ---- annotators -----------------------------------------------------------------------------------------------

    def annotators(self) -> dict[str, str]:
        """{name: token}."""
        return {name: token for token, name in self._tokens.items()}

    def authenticate(self, token: str) -> str:
        """The annotator holding `token`; an AnnotateError (403) naming the problem otherwise."""
        if not looks_like_token(token):
            raise AnnotateError("malformed annotator token in the link: open the exact link tvrl-bench annotate "
                                "printed for you", 403)
        name = self._tokens.get(token)
        if name is None:
            raise AnnotateError("unknown annotator token: this link is not one of this study's; ask for the link "
                                "tvrl-bench annotate printed for you", 403)
        return name

    def _list_of(self, name: str) -> list[Slot]:
        """The annotator's stored list restricted to the current pairs, with new pairs appended (and stored)."""
        by_id = {p.pair_id: p for p in self.pairs}
        stored = self.store.assignments(self.record.id, name)
        known = {a.pair_id for a in stored}
        fresh = [p for p in self.pairs if p.pair_id not in known]
        if fresh:
            start = max((a.position for a in stored), default=-1) + 1
            rng = random.Random(opaque_id(self.record.secret, "order", name, start))
            rng.shuffle(fresh)
            added = [Assignment(start + i, p.pair_id, rng.choice("ab")) for i, p in enumerate(fresh)]
            self.store.add_assignments(self.record.id, name, added)
            stored = stored + added
        return [Slot(by_id[a.pair_id], a.left_side == "a") for a in stored if a.pair_id in by_id]

    # ---- progress and items -------------------------------------------------------------------------------------

    def _verdicts(self, name: str) -> dict[tuple[str, str, int], tuple[str, str]]:
        return self.store.verdicts(self.study, self.method_a, self.method_b, judge_name(name))

    def state(self, name: str) -> dict[str, int]:
        """{"done", "total", "next"}: pairs judged, pairs in the list, first unjudged position (total when all)."""
        slots = self._slots[name]
        verdicts = self._verdicts(name)
        judged = [s.pair.key in verdicts for s in slots]
        next_position = judged.index(False) if False in judged else len(slots)
        return {"done": sum(judged), "total": len(slots), "next": next_position}

    def _position(self, name: str, position: Any) -> int:
        total = len(self._slots[name])
        if isinstance(position, str) and position.strip().lstrip("-").isdigit():
            position = int(position)
        if isinstance(position, bool) or not isinstance(position, int):
            raise AnnotateError(f"position must be an integer from 0 to {total - 1}, got {position!r}")
        if not 0 <= position < total:
            raise AnnotateError(f"position {position} is outside this list (0 to {total - 1})", 404)
        return position

    def item(self, name: str, position: Any) -> dict[str, Any]:
        """What the page shows at `position`: prompt, opaque pair and video ids, the current choice (or None)."""
        index = self._position(name, position)
        slot = self._slots[name][index]
        recorded = self._verdicts(name).get(slot.pair.key)
        return {
            **self.state(name),
            "position": index,
            "pair": slot.pair.pair_id,
            "prompt": slot.pair.prompt,
            "left": slot.left_video,
            "right": slot.right_video,
            "choice": None if recorded is None else _shown_choice(recorded, slot),
        }

    def vote(self, name: str, body: Any) -> dict[str, int]:
        """Store a vote {"position": int, "pair": id, "choice": "left" | "right" | "tie"}; returns the new state.

        The vote is committed to SQLite before this returns. Malformed votes are AnnotateErrors naming the field.
        """
        if not isinstance(body, dict):
            raise AnnotateError('a vote is a JSON object: {"position": 0, "pair": "<id>", "choice": "left"}')
        unknown = sorted(set(body) - set(VOTE_FIELDS))
        missing = [f for f in VOTE_FIELDS if f not in body]
        if unknown:
            raise AnnotateError(f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} in the vote "
                                f"(fields: {', '.join(VOTE_FIELDS)})")
        if missing:
            raise AnnotateError(f"the vote lacks {', '.join(missing)} (fields: {', '.join(VOTE_FIELDS)})")
        choice = body["choice"]
        if choice not in CHOICES:
            raise AnnotateError(f"choice must be one of {', '.join(CHOICES)}, got {choice!r}")
        if not isinstance(body["position"], int) or isinstance(body["position"], bool):
            raise AnnotateError(f"position must be an integer, got {body['position']!r}")
        slot = self._slots[name][self._position(name, body["position"])]
        if body["pair"] != slot.pair.pair_id:
            raise AnnotateError(f"pair {str(body['pair'])[:40]!r} is not the pair at position {body['position']} of "
                                "your list; reload the page", 409)
        pair = slot.pair
        left = slot.left_method
        self.store.add_vote(
            Judgment(self.study, pair.prompt, pair.seed, pair.method_a, pair.method_b, left, judge_name(name),
                     verdict_from_choice(choice, left, pair.method_a), pair.sample, pair.run_a, pair.run_b)
        )
        return self.state(name)

    def video(self, video_id: str) -> Path:
        """The local mp4 behind an opaque video id (404 AnnotateError when there is none)."""
        path = self.videos.get(video_id)
        if path is None:
            raise AnnotateError("no such video", 404)
        return path


def _shown_choice(recorded: tuple[str, str], slot: Slot) -> str:
    """The button that gives the recorded (left, verdict) with the slot's current sides."""
    _, verdict = recorded
    if verdict == "tie":
        return "tie"
    winner = slot.pair.method_a if verdict == "win" else slot.pair.method_b
    return "left" if winner == slot.left_method else "right"
