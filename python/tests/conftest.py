"""Shared pytest fixtures for the tensogram Python tests."""

import os
import pathlib

import numpy as np
import pytest

# CTest passes TENSOGRAM_FIXTURES; run by hand, the fixtures sit beside the
# checkout (../shared/fixtures), as in CI.
FIXTURES = pathlib.Path(
    os.environ.get("TENSOGRAM_FIXTURES", pathlib.Path(__file__).resolve().parents[3] / "shared" / "fixtures")
)


@pytest.fixture(scope="session")
def fixtures_dir() -> pathlib.Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {FIXTURES} (set TENSOGRAM_FIXTURES)")
    return FIXTURES


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
