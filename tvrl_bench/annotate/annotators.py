"""Annotators: names, their judge names ("human:<name>") and the secret tokens in their personal links."""

from __future__ import annotations

import re
import secrets

from tvrl_bench.annotate import AnnotateError

JUDGE_PREFIX = "human:"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,128}$")


def new_token() -> str:
    """A fresh unguessable token (128 random bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def looks_like_token(text: str) -> bool:
    """True when `text` has the shape of a token (checked before any database lookup)."""
    return bool(_TOKEN.match(text))


def check_name(name: str) -> str:
    """`name` when it is a valid annotator name (letters, digits, _ . -; up to 64), else an AnnotateError."""
    if not _NAME.match(name):
        raise AnnotateError(
            f"annotator name {name!r} is not valid: use letters, digits, '_', '.', '-' (up to 64 characters, "
            "starting with a letter or digit), e.g. --annotators alice bob"
        )
    return name


def annotator_names(spec: list[str] | None) -> list[str]:
    """Names from `--annotators`: one number N gives annotator1..annotatorN, otherwise the names themselves."""
    if not spec:
        return []
    if len(spec) == 1 and spec[0].isdigit():
        count = int(spec[0])
        if count < 1:
            raise AnnotateError("--annotators: give at least 1 (a number of annotators, or their names)")
        return [f"annotator{i}" for i in range(1, count + 1)]
    names = [check_name(n) for n in spec]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise AnnotateError(f"--annotators: {', '.join(repeated)} given more than once")
    return names


def judge_name(name: str) -> str:
    """The judge name of an annotator's judgments: "human:<name>"."""
    return JUDGE_PREFIX + name


def link(base_url: str, token: str) -> str:
    """The personal page of the annotator holding `token`."""
    return f"{base_url.rstrip('/')}/a/{token}/"
