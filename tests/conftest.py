"""Shared test setup: one torch thread per process, and a clean gin config around every test."""

from __future__ import annotations

import gin
import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def clean_gin():
    gin.clear_config()
    yield
    gin.clear_config()
