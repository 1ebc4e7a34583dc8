"""The HTTP API on a real uvicorn server: bad tokens and malformed votes rejected clearly, votes stored once, blind.

Which method a video shows is found from its bytes (the toy study's file hashes), never from the server.
"""

from __future__ import annotations

import json

import pytest
import requests

from tests.annotate.helpers import ThreadServer, sha256
from tvrl_bench.annotate.page import PAGE_HTML

pytestmark = pytest.mark.integration


@pytest.fixture
def served(open_session):
    session = open_session()
    with ThreadServer(session) as server:
        yield session, server


def url(server: ThreadServer, token: str, path: str = "") -> str:
    return f"{server.url}/a/{token}/{path}"


def test_invalid_tokens_are_rejected_with_a_clear_message(served):
    session, server = served
    video = session.pairs[0].video_a
    for token, message in (("Q" * 22, "unknown annotator token"), ("no", "malformed annotator token")):
        for path in ("api/state", "api/item/0", f"v/{video}"):
            r = requests.get(url(server, token, path))
            assert r.status_code == 403 and message in r.json()["error"], (path, r.text)
        r = requests.post(url(server, token, "api/vote"), json={"position": 0, "pair": "x", "choice": "left"})
        assert r.status_code == 403 and message in r.json()["error"]
        page = requests.get(url(server, token))
        assert page.status_code == 403 and message in page.text and "text/html" in page.headers["content-type"]
    root = requests.get(server.url + "/")
    assert root.status_code == 404 and "personal link" in root.json()["error"]
    assert len(session.store.judgments.frame()) == 0


def test_malformed_votes_are_rejected_and_nothing_is_stored(served):
    session, server = served
    token = session.annotators()["alice"]
    first, second = (session.item("alice", i)["pair"] for i in (0, 1))
    cases = [
        (b"not json", 400, "not valid JSON"),
        (b"", 400, "a vote is a JSON object"),
        ([0, first, "left"], 400, "a vote is a JSON object"),
        ({"position": 0, "pair": first}, 400, "the vote lacks choice"),
        ({"position": 0, "pair": first, "choice": "up"}, 400, "choice must be one of left, right, tie, got 'up'"),
        ({"position": 0, "pair": first, "choice": "left", "who": "TVRL"}, 400, "unknown field who"),
        ({"position": "0", "pair": first, "choice": "left"}, 400, "position must be an integer, got '0'"),
        ({"position": True, "pair": first, "choice": "left"}, 400, "position must be an integer"),
        ({"position": 99, "pair": first, "choice": "left"}, 404, "position 99 is outside this list (0 to 5)"),
        ({"position": 1, "pair": first, "choice": "left"}, 409, "is not the pair at position 1"),
    ]
    for body, status, message in cases:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        r = requests.post(url(server, token, "api/vote"), data=data, headers={"Content-Type": "application/json"})
        assert r.status_code == status and message in r.json()["error"], (body, r.status_code, r.text)
    for path, status, message in (("api/item/abc", 400, "position must be an integer"),
                                  ("api/item/-1", 404, "outside this list"), ("v/0123456789abcdef01234567", 404,
                                                                                "no such video")):
        r = requests.get(url(server, token, path))
        assert r.status_code == status and message in r.json()["error"], (path, r.text)
    assert len(session.store.judgments.frame()) == 0
    assert second != first


def test_requests_for_another_host_name_are_refused(served):
    session, server = served
    token = session.annotators()["alice"]
    r = requests.get(url(server, token, "api/state"), headers={"Host": "annotate.example.com"})
    assert r.status_code == 400


def method_on(server: ThreadServer, token: str, video_id: str, toy_study) -> str:
    return toy_study.videos[sha256(requests.get(url(server, token, f"v/{video_id}")).content)][0]


def test_one_judgment_per_annotator_and_pair_and_a_new_vote_replaces_it(served, toy_study):
    session, server = served
    tokens = session.annotators()
    item = requests.get(url(server, tokens["alice"], "api/item/0")).json()
    left = method_on(server, tokens["alice"], item["left"], toy_study)
    right = method_on(server, tokens["alice"], item["right"], toy_study)
    assert {left, right} == {"TVRL", "GRPO"}
    for choice in ("left", "right"):
        r = requests.post(url(server, tokens["alice"], "api/vote"),
                          json={"position": 0, "pair": item["pair"], "choice": choice})
        assert r.status_code == 200 and r.json() == {"done": 1, "total": 6, "next": 1}
        # answered only after the commit: a fresh connection sees the vote
        frame = session.store.judgments.frame(toy_study.study)
        assert len(frame) == 1 and frame.loc[0, "verdict"] == ("win" if (left if choice == "left" else right)
                                                               == "TVRL" else "loss")
        assert frame.loc[0, "left"] == left and frame.loc[0, "judge"] == "human:alice"
    assert requests.get(url(server, tokens["alice"], "api/item/0")).json()["choice"] == "right"
    bob_state = requests.get(url(server, tokens["bob"], "api/state")).json()
    assert bob_state == {"done": 0, "total": 6, "next": 0}
    frame = session.store.judgments.frame(toy_study.study)
    row = frame.iloc[0]
    assert toy_study.runs[row["run_a"]]["method"] == "TVRL" and toy_study.runs[row["run_b"]]["method"] == "GRPO"
    assert toy_study.runs[row["run_a"]]["seed"] == row["seed"] == toy_study.videos[
        sha256(requests.get(url(server, tokens["alice"], f"v/{item['left']}")).content)][2]


def test_nothing_the_api_sends_reveals_a_method(served, toy_study):
    """Page, states, every item and every video of both annotators: no method name, run id or name, credit preset."""
    session, server = served
    forbidden = toy_study.forbidden()
    received: list[tuple[str, bytes]] = []
    for name, token in session.annotators().items():
        paths = ["", "api/state"] + [f"api/item/{i}" for i in range(6)]
        for path in paths:
            r = requests.get(url(server, token, path))
            assert r.status_code == 200
            received.append((r.url + " " + json.dumps(dict(r.headers)), r.content))
            if path.startswith("api/item"):
                for side in ("left", "right"):
                    v = requests.get(url(server, token, f"v/{r.json()[side]}"))
                    assert v.status_code == 200 and v.headers["content-type"] == "video/mp4"
                    assert "content-disposition" not in v.headers
                    received.append((v.url + " " + json.dumps(dict(v.headers)), v.content))
        r = requests.post(url(server, token, "api/vote"), json={"position": 0, "pair": "bad", "choice": "tie"})
        received.append((r.url + " " + json.dumps(dict(r.headers)), r.content))
    assert received[0][1].decode() == PAGE_HTML
    modified = {json.loads(where.split(" ", 1)[1])["last-modified"] for where, _ in received if "/v/" in where}
    assert len(modified) == 1  # one time stamp for all videos: the headers do not tell which run came first
    leaks = [(word, where[:120]) for where, body in received for word in forbidden
             if word.lower() in where.lower() or word.lower().encode() in body.lower()]
    assert leaks == []
    items = [json.loads(body) for where, body in received if "/api/item/" in where]
    assert all(set(i) == {"done", "total", "next", "position", "pair", "prompt", "left", "right", "choice"}
               for i in items)
