"""The blinded pair list of a study: one entry per (prompt, seed, sample) that both methods generated.

Pairing is `tvrl_bench.report.winrate.pairs.sample_pairs` (the rule `judge_study` uses: trials of A and B share the seed
and the match params; samples pair by prompt through `samples/final/index.json`). Every pair and every video gets
an opaque id, an HMAC of what it stands for under the session's secret: stable across restarts, and revealing
nothing about the method, run or file behind it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from tvrl_bench.annotate import AnnotateError

DEFAULT_MATCH = ("policy", "sampler", "reward")


@dataclass(frozen=True)
class BlindPair:
    """One comparison: the sample of method A and of method B for the same prompt, trial seed and sample k.

    pair_id, video_a, video_b are opaque ids (what the browser sees); the rest stays on the server.
    """

    pair_id: str
    study: str
    prompt: str
    seed: str
    sample: int
    method_a: str
    method_b: str
    run_a: str
    run_b: str
    video_a: str
    video_b: str

    @property
    def key(self) -> tuple[str, str, int]:
        """(prompt, seed, sample): with the study and the two methods, what identifies a judgment."""
        return (self.prompt, self.seed, self.sample)


def opaque_id(secret: str, *parts: Any) -> str:
    """24 hex digits of HMAC-SHA256(secret, parts): the same parts give the same id, and the id reveals nothing."""
    message = "\x1f".join(str(p) for p in parts).encode("utf-8")
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()[:24]


def parse_method(text: str) -> str | dict[str, str]:
    """`--a` / `--b`: a `method` param value ("TVRL") or a param filter ("method=TVRL,credit=frame")."""
    text = text.strip()
    if not text:
        raise AnnotateError(
            "--a / --b must name a method (e.g. TVRL) or a param filter (e.g. method=TVRL,credit=frame)"
        )
    if "=" not in text:
        return text
    flt: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise AnnotateError(f"--a / --b: '{part}' in '{text}' is not param=value (e.g. method=TVRL,credit=frame)")
        flt[key.strip()] = value.strip()
    return flt


def build_pairs(
    study: str,
    a: str | Mapping[str, str],
    b: str | Mapping[str, str],
    folder: str | Path,
    secret: str,
    *,
    labels: tuple[str, str],
    tracking_uri: str | None = None,
    prompts: int | None = None,
    seeds: Iterable[str] | None = None,
    match: tuple[str, ...] = DEFAULT_MATCH,
    stage: str = "final",
    client: Any = None,
) -> tuple[list[BlindPair], dict[str, Path]]:
    """(pairs, {video id: local mp4 path}) for A against B in `study`, the videos downloaded under `folder`.

    prompts: keep the first N prompts (in the order A's runs logged them); seeds: keep only these trial seeds.
    Two pairs with the same (prompt, seed, sample) would be the same judgment record, so that is an error asking
    for narrower --a / --b filters.
    """
    from tvrl_bench.report.winrate.pairs import sample_pairs

    if prompts is not None and prompts < 1:
        raise AnnotateError(f"--prompts must be at least 1, got {prompts}")
    found = sample_pairs(study, a, b, folder, tracking_uri=tracking_uri, match=match, stage=stage, seeds=seeds,
                         client=client)
    if prompts is not None:
        keep = set(list(dict.fromkeys(p.prompt for p in found))[:prompts])
        found = [p for p in found if p.prompt in keep]
    label_a, label_b = labels
    pairs: list[BlindPair] = []
    videos: dict[str, Path] = {}
    seen: dict[tuple[str, str, int], tuple[str, str]] = {}
    for p in found:
        key = (p.prompt, p.seed, p.sample)
        if key in seen:
            raise AnnotateError(
                f"study '{study}': two trial pairs ({seen[key][0]} / {seen[key][1]} and {p.run_a} / {p.run_b}) both "
                f"give seed {p.seed}, prompt {p.prompt!r}, and a judgment records only study, prompt, seed and "
                "methods: narrow --a / --b to one trial of each method per seed (e.g. --a method=TVRL,sampler=sage "
                "--b method=GRPO,sampler=sage --labels TVRL GRPO)"
            )
        seen[key] = (p.run_a, p.run_b)
        ids = []
        for run_id, entry in ((p.run_a, p.entry_a), (p.run_b, p.entry_b)):
            path = Path(entry["path"])
            if path.suffix.lower() != ".mp4" or not path.is_file():
                raise AnnotateError(
                    f"run {run_id}: samples/{stage}/{entry.get('file')} is not an mp4 file; the page plays the mp4 "
                    "samples trials log (tvrl_bench.videoio.write_mp4)"
                )
            video_id = opaque_id(secret, "video", run_id, entry["file"])
            videos[video_id] = path
            ids.append(video_id)
        pairs.append(
            BlindPair(
                pair_id=opaque_id(secret, "pair", study, label_a, label_b, *key),
                study=study,
                prompt=p.prompt,
                seed=p.seed,
                sample=p.sample,
                method_a=label_a,
                method_b=label_b,
                run_a=p.run_a,
                run_b=p.run_b,
                video_a=ids[0],
                video_b=ids[1],
            )
        )
    # One modification time for every file: Last-Modified / ETag headers must not tell which run was fetched first.
    stamp = int(time.time())
    for path in videos.values():
        os.utime(path, (stamp, stamp))
    if not pairs:
        raise AnnotateError(f"study '{study}': no sample of {label_a} has a matching sample of {label_b} (same prompt)")
    return pairs, videos
