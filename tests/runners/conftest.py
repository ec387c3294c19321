"""Fixtures for runner tests."""

import pytest

from runners import bert


@pytest.fixture(scope="session")
def tiny_weights() -> str:
    return str(bert.weights_file(bert.size("tiny"), 1234))
