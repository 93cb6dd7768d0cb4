"""Template filters for numbers as the benchmark states them, and highlighted source."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from leaderboard import highlighting
from leaderboard.formatting import speedup_text

register = template.Library()


@register.filter
def highlight(source: str, language: str = "python") -> SafeString:
    """A query's SQL or TorchPlan as highlighted HTML (a kernel's is stored: `Kernel.highlighted`);
    Pygments escapes every token, so the result is safe."""
    return mark_safe(highlighting.cached_html(source or "", language))  # noqa: S308


@register.filter
def speedup(value: float | None) -> str:
    return speedup_text(value)


@register.filter
def percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


@register.filter
def ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


@register.filter
def speedup_class(value: float | None) -> str:
    """A CSS class for how a speedup reads: faster, about even, or slower than the baseline."""
    if value is None:
        return "na"
    if value >= 1.05:
        return "faster"
    if value > 0.95:
        return "even"
    return "slower"
