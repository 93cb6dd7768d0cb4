"""The scale factors of an evaluation's further correctness trials, from one spec (the command line's
`--check-sf`, the site's DKB_CHECK_SCALE_FACTORS): parsed here only. Plain Python: the site's settings
read it without importing torch."""

from __future__ import annotations


def check_scale_factors(spec: str, scale_factor: float) -> tuple[float, ...]:
    """The scale factors of further correctness trials, from a command line's `--check-sf`.

    `auto`: a tenth of the main one when it is at least 1 (SF1 beside SF10), none below (CPU runs at
    SF0.01 stay quick); `none`; or a comma-separated list, e.g. `1,0.1`.
    """
    spec = spec.strip().lower()
    if spec == "auto":
        return (scale_factor / 10,) if scale_factor >= 1 else ()
    if spec in ("none", ""):
        return ()
    try:
        values = tuple(float(part) for part in spec.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"{spec!r}: give auto, none or scale factors such as 1,0.1") from None
    if any(v <= 0 for v in values):
        raise ValueError(f"{spec!r}: scale factors are positive")
    return values
