"""The toy blind study (3 prompts x 2 seeds, TVRL against GRPO), logged once per test session."""

from __future__ import annotations

import pytest

from tests.annotate.helpers import ToyStudy, log_toy_study


@pytest.fixture(scope="session")
def toy_study(tmp_path_factory) -> ToyStudy:
    return log_toy_study(tmp_path_factory.mktemp("annotate_mlflow"))


@pytest.fixture
def open_session(toy_study, tmp_path):
    """open_session(store_path=None, **options) -> AnnotationSession of TVRL vs GRPO over the toy study."""
    from tvrl_bench.annotate.session import AnnotationSession
    from tvrl_bench.annotate.store import VoteStore

    stores = []

    def make(store_path=None, annotators=("alice", "bob"), **options):
        store = VoteStore(store_path or tmp_path / "judgments.sqlite")
        stores.append(store)
        media = tmp_path / f"media{len(stores)}"
        return AnnotationSession.open(store, toy_study.study, "TVRL", "GRPO", media, annotators=annotators,
                                      tracking_uri=toy_study.uri, **options)

    yield make
    for store in stores:
        store.close()
