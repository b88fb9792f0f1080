import pytest

from mcp_harness import demo_repo


@pytest.fixture()
def repo(tmp_path):
    """A copy of the demo repository beside a sentinel file outside it."""
    return demo_repo(tmp_path)
