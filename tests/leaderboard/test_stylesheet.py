"""The stylesheet's colours: small muted text stays readable on every light background it declares."""

from __future__ import annotations

import re
from pathlib import Path

CSS = (Path(__file__).resolve().parents[2] / "static" / "leaderboard" / "site.css").read_text()
WCAG_AA_SMALL_TEXT = 4.5


def _luminance(colour: str) -> float:
    """WCAG 2's relative luminance of a #rrggbb colour."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _light_backgrounds() -> set[str]:
    """Every colour a `background` declaration names, directly or through a variable, that dark text
    sits on (the dark header and buttons carry white text, not muted)."""
    variables = dict(re.findall(r"(--[a-z-]+):\s*(#[0-9a-f]{6})", CSS))
    found = set()
    for declaration in re.findall(r"background(?:-color)?:\s*([^;}]+)", CSS):
        found |= {variables[v] for v in re.findall(r"var\((--[a-z-]+)\)", declaration) if v in variables}
        found |= set(re.findall(r"#[0-9a-f]{6}", declaration))
    return {colour for colour in found if _luminance(colour) > 0.5}


def test_muted_text_passes_wcag_aa_for_small_text_on_every_light_background() -> None:
    (muted,) = re.findall(r"--muted:\s*(#[0-9a-f]{6})", CSS)
    backgrounds = _light_backgrounds()
    assert {"#ffffff", "#fbfcfd", "#f5f7f9", "#eef1f4"} <= backgrounds  # panels, page, table heads, badges
    worst = min(backgrounds, key=lambda background: _contrast(muted, background))
    assert _contrast(muted, worst) >= WCAG_AA_SMALL_TEXT, (worst, round(_contrast(muted, worst), 2))
