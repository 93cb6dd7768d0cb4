from __future__ import annotations

import pytest

from leaderboard.formatting import speedup_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0044, "0.0044×"),
        (0.00441, "0.0044×"),
        (0.67, "0.67×"),
        (0.1, "0.10×"),
        (1.0, "1.00×"),
        (2.114, "2.11×"),
        (None, "–"),
    ],
)
def test_a_speedup_keeps_two_significant_figures_below_1x_and_two_decimals_above(
    value: float | None, text: str
) -> None:
    assert speedup_text(value) == text


def test_a_slow_passing_kernel_never_reads_as_zero() -> None:
    assert speedup_text(0.00001) != "0.00×"
    assert float(speedup_text(0.00001).rstrip("×")) == pytest.approx(0.00001)
