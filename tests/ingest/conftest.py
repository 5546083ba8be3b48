from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def fixture_text():
    def read(relative: str) -> str:
        return (FIXTURES / relative).read_text(encoding="utf-8")

    return read
